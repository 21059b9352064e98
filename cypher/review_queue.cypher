// One page of the review queue in entityID order. The type filter matches the effective
// type: the assigned type's ID, or, with none assigned, the inferred type name. Merged
// entities carry the status `merged`, so only a request for that status sees them.
MATCH (e:Entity {accountID: $accountID, environment: $environment})
WHERE e.status IN $statuses
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($since IS NULL OR e.createdAt >= $since)
  AND ($cursor IS NULL OR e.id > $cursor)
  AND ($typeIDs IS NULL OR e.typeID IN $typeIDs OR (e.typeID IS NULL AND e.typeName IN $typeNames))
RETURN e.id AS entityID
ORDER BY e.id
LIMIT $limit
