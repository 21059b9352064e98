// Neo4j's knowledge-graph page in one statement: the page's $limit edges after $after in
// relation-ID order, from the range index (the tenant's IDs handed out in order, as
// review_queue_ordered.cypher reads entities, stopping at the page's end or after $scan of the
// tenant's edges), each with its two endpoints' node records as entity_nodes.cypher makes them
// (canonical, effective type name, mention count), so a page is one round trip instead of
// two. FalkorDB pages walk creation-time windows (knowledge_graph_edges.cypher), then read the
// nodes with entity_nodes.cypher. The filters are knowledge_graph_edges.cypher's; the final
// ORDER BY sorts the page's few rows only (the LIMITs above it read the index in order).
MATCH (a)-[r:RELATES_TO]->(b)
USING INDEX r:RELATES_TO(accountID, environment, id)
WHERE r.accountID = $accountID AND r.environment = $environment AND r.id > $after AND r.id <= $until
WITH a, r, b
ORDER BY r.accountID, r.environment, r.id
LIMIT $scan
WITH a, r, b
WHERE ($bucketID IS NULL OR r.bucketID = $bucketID)
  AND ($since IS NULL OR r.createdAt >= $since)
  AND ($nodeIDs IS NULL OR (a.id IN $nodeIDs AND b.id IN $nodeIDs))
  AND ($typeIDs IS NULL OR (
    (a.typeID IN $typeIDs OR (a.typeID IS NULL AND a.typeName IN $typeNames)) AND
    (b.typeID IN $typeIDs OR (b.typeID IS NULL AND b.typeName IN $typeNames))))
WITH a, r, b
LIMIT $limit
OPTIONAL MATCH (ta:EntityType {id: a.typeID})
USING INDEX SEEK ta:EntityType(id)
OPTIONAL MATCH (tb:EntityType {id: b.typeID})
USING INDEX SEEK tb:EntityType(id)
RETURN r.id AS relationID, r.relationType AS relationType, r.mentionCount AS mentionCount,
  a.id AS sourceId, b.id AS targetId,
  a.canonical AS sourceCanonical, coalesce(ta.name, a.typeName) AS sourceType,
  COUNT { MATCH (m:Mention {entityID: a.id}) } AS sourceMentionCount,
  b.canonical AS targetCanonical, coalesce(tb.name, b.typeName) AS targetType,
  COUNT { MATCH (m:Mention {entityID: b.id}) } AS targetMentionCount
ORDER BY relationID
