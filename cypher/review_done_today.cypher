// Entities approved or rejected since $today (RFC 3339 prefix of today, UTC) under the review
// queue's filters: the validatedAt index finds today's decisions without reading the others.
MATCH (e:Entity)
USING INDEX SEEK e:Entity(validatedAt)
WHERE e.accountID = $accountID AND e.environment = $environment AND e.validatedAt >= $today
  AND e.status IN ['approved', 'rejected']
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($since IS NULL OR e.createdAt >= $since)
  AND ($typeIDs IS NULL OR e.typeID IN $typeIDs OR (e.typeID IS NULL AND e.typeName IN $typeNames))
RETURN count(e) AS decidedToday
