// Compact node records (knowledge graph) for the given entity IDs.
UNWIND $ids AS id
MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
OPTIONAL MATCH (t:EntityType {id: e.typeID})
USING INDEX SEEK t:EntityType(id)
OPTIONAL MATCH (mn:Mention {entityID: e.id})
USING INDEX SEEK mn:Mention(entityID)
RETURN e.id AS id, e.canonical AS canonical, coalesce(t.name, e.typeName) AS type, count(mn) AS mentionCount
