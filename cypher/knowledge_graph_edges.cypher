// The tenant's edges with IDs in [$from, $to) (a creation-time window the idKey index
// answers: [$fromKey, $toKey) holds the window, see src/graph/id_keys.rs), in relation-ID
// order; an edge is kept only when both of its endpoints pass the
// entity filters (node set, effective type). The endpoints are left unlabelled (only
// entities have RELATES_TO edges) so FalkorDB plans an edge index scan, not a label scan.
// The exact bounds are on toString(r.id), which no index answers: FalkorDB would read the
// window by its imprecise string range instead of by key.
MATCH (a)-[r:RELATES_TO]->(b)
WHERE r.idKey >= $fromKey AND r.idKey < $toKey
  AND toString(r.id) >= $from AND toString(r.id) < $to
  AND r.accountID = $accountID AND r.environment = $environment
  AND ($bucketID IS NULL OR r.bucketID = $bucketID)
  AND ($since IS NULL OR r.createdAt >= $since)
  AND ($nodeIDs IS NULL OR (a.id IN $nodeIDs AND b.id IN $nodeIDs))
  AND ($typeIDs IS NULL OR (
    (a.typeID IN $typeIDs OR (a.typeID IS NULL AND a.typeName IN $typeNames)) AND
    (b.typeID IN $typeIDs OR (b.typeID IS NULL AND b.typeName IN $typeNames))))
RETURN r.id AS relationID, r.relationType AS relationType, r.mentionCount AS mentionCount,
  a.id AS sourceId, b.id AS targetId
ORDER BY r.id
LIMIT $limit
