// Neo4j: where a knowledge-graph page's scan of the tenant's edges stopped, asked when the page
// came back short: the $skip + 1-th edge after $after in ID order, the last of the $scan edges
// knowledge_graph_page_ordered.cypher read, or none when the tenant's edges ended first (see
// entity_scan_end_ordered.cypher).
MATCH (a)-[r:RELATES_TO]->(b)
USING INDEX r:RELATES_TO(accountID, environment, id)
WHERE r.accountID = $accountID AND r.environment = $environment AND r.id > $after AND r.id <= $until
WITH r
ORDER BY r.accountID, r.environment, r.id
SKIP $skip
LIMIT 1
RETURN r.id AS scannedTo
