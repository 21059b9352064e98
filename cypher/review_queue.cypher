// Review-queue candidates with IDs in [$from, $to) (a creation-time window the idKey index
// answers: [$fromKey, $toKey) holds the window, see src/graph/id_keys.rs), in entityID
// order. The type filter matches the effective type: the assigned type's ID, or, with none
// assigned, the inferred type name. Merged entities carry the
// status `merged`, so only a request for that status sees them.
// The exact bounds are on toString(e.id), which no index answers: FalkorDB would read the
// window by its imprecise string range instead of by key.
MATCH (e:Entity)
WHERE e.idKey >= $fromKey AND e.idKey < $toKey
  AND toString(e.id) >= $from AND toString(e.id) < $to
  AND e.accountID = $accountID AND e.environment = $environment
  AND e.status IN $statuses
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($since IS NULL OR e.createdAt >= $since)
  AND ($typeIDs IS NULL OR e.typeID IN $typeIDs OR (e.typeID IS NULL AND e.typeName IN $typeNames))
RETURN e.id AS entityID
ORDER BY e.id
LIMIT $limit
