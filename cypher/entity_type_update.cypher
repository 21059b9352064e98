// Updates any subset of description, attributeSchema and parent. With $setParent the old
// parent link is replaced by one to $parentTypeID (none when it is null).
MATCH (t:EntityType {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK t:EntityType(id)
WHERE t.deletedAt IS NULL
SET t.description = coalesce($description, t.description),
    t.attributeSchema = coalesce($attributeSchema, t.attributeSchema),
    t.updatedAt = $now
WITH t
OPTIONAL MATCH (t)-[old:CHILD_OF]->(former:EntityType)
WITH t, collect(old) AS olds
FOREACH (r IN CASE WHEN $setParent THEN olds ELSE [] END | DELETE r)
WITH t
OPTIONAL MATCH (p:EntityType {id: $parentTypeID, accountID: $accountID, environment: $environment})
USING INDEX SEEK p:EntityType(id)
FOREACH (x IN CASE WHEN $setParent AND p IS NOT NULL THEN [p] ELSE [] END | CREATE (t)-[:CHILD_OF]->(x))
RETURN t.id AS typeID
