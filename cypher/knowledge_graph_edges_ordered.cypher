// Neo4j's knowledge_graph_edges.cypher: the page's edges after $after in relation-ID order,
// read in one statement. Neo4j's range index on RELATES_TO(accountID, environment, id)
// (relation_tenant_id) hands the tenant's IDs out in order, so the statement reads only the
// tenant's edges and stops at the page's end; FalkorDB's does not, so there the service walks
// creation-time windows with knowledge_graph_edges.cypher (see review_queue_ordered.cypher).
// The filters are knowledge_graph_edges.cypher's; the hint keeps the plan whatever the
// tenant it was first made for, and the ORDER BY is the index's own (no sort).
MATCH (a)-[r:RELATES_TO]->(b)
USING INDEX r:RELATES_TO(accountID, environment, id)
WHERE r.accountID = $accountID AND r.environment = $environment AND r.id > $after
  AND ($bucketID IS NULL OR r.bucketID = $bucketID)
  AND ($since IS NULL OR r.createdAt >= $since)
  AND ($nodeIDs IS NULL OR (a.id IN $nodeIDs AND b.id IN $nodeIDs))
  AND ($typeIDs IS NULL OR (
    (a.typeID IN $typeIDs OR (a.typeID IS NULL AND a.typeName IN $typeNames)) AND
    (b.typeID IN $typeIDs OR (b.typeID IS NULL AND b.typeName IN $typeNames))))
RETURN r.id AS relationID, r.relationType AS relationType, r.mentionCount AS mentionCount,
  a.id AS sourceId, b.id AS targetId
ORDER BY r.accountID, r.environment, r.id
LIMIT $limit
