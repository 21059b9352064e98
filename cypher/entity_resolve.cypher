// The live entity an ID stands for: itself, or the survivor at the end of its merges.
MATCH (start:Entity {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK start:Entity(id)
OPTIONAL MATCH (start)-[m:MERGED_INTO*1..]->(s:Entity)
WHERE s.mergedInto IS NULL
WITH coalesce(s, start) AS e
OPTIONAL MATCH (t:EntityType {id: e.typeID})
USING INDEX SEEK t:EntityType(id)
RETURN e.id AS entityID, e.bucketID AS bucketID, e.status AS status, coalesce(t.name, e.typeName) AS type
