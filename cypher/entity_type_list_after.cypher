// One page of live entity types in typeID order; with
// $parentTypeID only its direct children.
MATCH (t:EntityType {accountID: $accountID, environment: $environment})
WHERE t.deletedAt IS NULL
  AND ($startingAfter IS NULL OR t.id > $startingAfter)
  AND ($endingBefore IS NULL OR t.id < $endingBefore)
OPTIONAL MATCH (t)-[r:CHILD_OF]->(p:EntityType)
WITH t, p, r
WHERE $parentTypeID IS NULL OR p.id = $parentTypeID
RETURN t.id AS typeID, t.name AS name, t.description AS description, t.attributeSchema AS attributeSchema, coalesce(p.id, '') AS parentTypeID, t.createdAt AS createdAt, t.updatedAt AS updatedAt, r IS NOT NULL AS hasParent
ORDER BY t.id ASC
LIMIT $limit
