// The live direct children of each of $ids, in typeID order (for loaders).
MATCH (t:EntityType {accountID: $accountID, environment: $environment})-[r:CHILD_OF]->(p:EntityType)
WHERE t.deletedAt IS NULL AND p.id IN $ids
RETURN t.id AS typeID, t.name AS name, t.description AS description, t.attributeSchema AS attributeSchema, p.id AS parentTypeID, t.createdAt AS createdAt, t.updatedAt AS updatedAt, r IS NOT NULL AS hasParent
ORDER BY t.id ASC
