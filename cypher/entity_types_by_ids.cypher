// The live entity types of $ids (for loaders that batch parent look-ups).
UNWIND $ids AS id
MATCH (t:EntityType {id: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK t:EntityType(id)
WHERE t.deletedAt IS NULL
OPTIONAL MATCH (t)-[r:CHILD_OF]->(p:EntityType)
RETURN t.id AS typeID, t.name AS name, t.description AS description, t.attributeSchema AS attributeSchema, coalesce(p.id, '') AS parentTypeID, t.createdAt AS createdAt, t.updatedAt AS updatedAt, r IS NOT NULL AS hasParent
