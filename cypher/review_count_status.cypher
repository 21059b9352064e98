// One status's entities under the review queue's filters (status is one of them here): a
// count the (accountID, environment, status) indexes answer without reading each entity's
// properties unless a filter needs one. One grouped count over every entity read each one's
// status instead: ~300 ms of FalkorDB at 1,000,000 entities, against ~140 ms for this.
MATCH (e:Entity)
WHERE e.accountID = $accountID AND e.environment = $environment AND e.status = $status
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($since IS NULL OR e.createdAt >= $since)
  AND ($typeIDs IS NULL OR e.typeID IN $typeIDs OR (e.typeID IS NULL AND e.typeName IN $typeNames))
RETURN count(e) AS entities
