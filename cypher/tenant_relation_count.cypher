// How many relations the tenant holds, for its bound (src/graph/tenant_size.rs): the edges
// leaving its entities, as relations are indexed by ID only. Read at most once a minute per
// tenant and instance (every ten minutes while under half the bound).
MATCH (e:Entity)-[r:RELATES_TO]->()
WHERE e.accountID = $accountID AND e.environment = $environment
RETURN count(r) AS held
