// Review-queue counters under the queue's filters (status aside): entities per status, and
// per status how many a person decided since $today (RFC 3339 prefix of today, UTC; count,
// not sum: FalkorDB sums to a float).
MATCH (e:Entity)
WHERE e.accountID = $accountID AND e.environment = $environment
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($since IS NULL OR e.createdAt >= $since)
  AND ($typeIDs IS NULL OR e.typeID IN $typeIDs OR (e.typeID IS NULL AND e.typeName IN $typeNames))
RETURN e.status AS status, count(e) AS entities,
  count(CASE WHEN e.validatedAt >= $today THEN 1 END) AS decidedToday
