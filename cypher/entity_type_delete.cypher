// Soft-deletes a type that no live child type and no live (unmerged) entity uses; frees its
// name for reuse. One live entity is enough to refuse: a refused delete of a type of millions
// summed them all, holding the engine's writer.
MATCH (t:EntityType {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK t:EntityType(id)
WHERE t.deletedAt IS NULL
OPTIONAL MATCH (c:EntityType)-[r:CHILD_OF]->(t)
WITH t, sum(CASE WHEN r IS NOT NULL AND c.deletedAt IS NULL THEN 1 ELSE 0 END) AS liveChildren
OPTIONAL MATCH (e:Entity {typeID: t.id})
USING INDEX SEEK e:Entity(typeID)
WHERE e.mergedInto IS NULL
WITH t, liveChildren, e
LIMIT 1
WITH t, liveChildren, e
WHERE liveChildren = 0 AND e IS NULL
SET t.deletedAt = $now, t.updatedAt = $now, t.liveNameKey = null
RETURN t.id AS typeID
