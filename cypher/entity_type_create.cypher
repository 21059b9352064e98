// Creates an entity type unless a live one of the tenant has this name (liveNameKey is
// unique), linking it to its parent when one is given and live.
OPTIONAL MATCH (p:EntityType {id: $parentTypeID, accountID: $accountID, environment: $environment})
WITH p WHERE $parentTypeID IS NULL OR (p IS NOT NULL AND p.deletedAt IS NULL)
MERGE (t:EntityType {liveNameKey: $liveNameKey})
ON CREATE SET t.id = $id, t.accountID = $accountID, t.environment = $environment,
  t.name = $name, t.description = $description, t.attributeSchema = $attributeSchema,
  t.createdAt = $now, t.updatedAt = $now
FOREACH (x IN CASE WHEN p IS NULL OR t.id <> $id THEN [] ELSE [p] END | CREATE (t)-[:CHILD_OF]->(x))
RETURN t.id AS typeID
