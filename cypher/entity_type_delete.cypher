// Soft-deletes a type that no live child type and no live (unmerged) entity uses; frees its
// name for reuse.
MATCH (t:EntityType {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK t:EntityType(id)
WHERE t.deletedAt IS NULL
OPTIONAL MATCH (c:EntityType)-[r:CHILD_OF]->(t)
WITH t, sum(CASE WHEN r IS NOT NULL AND c.deletedAt IS NULL THEN 1 ELSE 0 END) AS liveChildren
OPTIONAL MATCH (e:Entity {typeID: t.id})
USING INDEX SEEK e:Entity(typeID)
WITH t, liveChildren, sum(CASE WHEN e IS NOT NULL AND e.mergedInto IS NULL THEN 1 ELSE 0 END) AS liveEntities
WHERE liveChildren = 0 AND liveEntities = 0
SET t.deletedAt = $now, t.updatedAt = $now, t.liveNameKey = null
RETURN t.id AS typeID
