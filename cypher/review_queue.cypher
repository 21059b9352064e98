// Review-queue candidates with IDs in [$from, $to) (a creation-time window the ID index
// answers), in entityID order. The type filter matches the effective type: the assigned
// type's ID, or, with none assigned, the inferred type name. Merged entities carry the
// status `merged`, so only a request for that status sees them.
// FalkorDB's index range scan on string IDs also yields IDs outside the range (seen: a
// window returning IDs of the next windows, so pages repeated entities); the same bounds
// on toString(e.id), which no index answers, drop those again.
MATCH (e:Entity)
WHERE e.id >= $from AND e.id < $to
  AND toString(e.id) >= $from AND toString(e.id) < $to
  AND e.accountID = $accountID AND e.environment = $environment
  AND e.status IN $statuses
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($since IS NULL OR e.createdAt >= $since)
  AND ($typeIDs IS NULL OR e.typeID IN $typeIDs OR (e.typeID IS NULL AND e.typeName IN $typeNames))
RETURN e.id AS entityID
ORDER BY e.id
LIMIT $limit
