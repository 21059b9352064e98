// Why a type delete did not happen: live child types and live entities assigned to it (those
// counted up to $countUpTo: the answer says "more than" past it).
MATCH (t:EntityType {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK t:EntityType(id)
WHERE t.deletedAt IS NULL
OPTIONAL MATCH (c:EntityType)-[r:CHILD_OF]->(t)
WITH t, sum(CASE WHEN r IS NOT NULL AND c.deletedAt IS NULL THEN 1 ELSE 0 END) AS liveChildren
OPTIONAL MATCH (e:Entity {typeID: t.id})
USING INDEX SEEK e:Entity(typeID)
WHERE e.mergedInto IS NULL
WITH t, liveChildren, e
LIMIT $countUpTo
RETURN liveChildren, count(e) AS liveEntities
