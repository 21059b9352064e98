// Creates an entity type unless a live one of the tenant has this name (liveNameKey is
// unique), linking it to its parent when one is given and live; no row when the parent is
// not. (collect() rather than `WITH p WHERE p IS NOT NULL`: FalkorDB pushes that filter
// into the OPTIONAL MATCH and keeps the null row.)
OPTIONAL MATCH (p:EntityType {id: $parentTypeID, accountID: $accountID, environment: $environment})
USING INDEX SEEK p:EntityType(id)
WHERE p.deletedAt IS NULL
WITH collect(p) AS parents
WHERE $parentTypeID IS NULL OR size(parents) > 0
MERGE (t:EntityType {liveNameKey: $liveNameKey})
ON CREATE SET t.id = $id, t.accountID = $accountID, t.environment = $environment,
  t.name = $name, t.description = $description, t.attributeSchema = $attributeSchema,
  t.createdAt = $now, t.updatedAt = $now
FOREACH (x IN CASE WHEN t.id = $id THEN parents ELSE [] END | CREATE (t)-[:CHILD_OF]->(x))
RETURN t.id AS typeID
