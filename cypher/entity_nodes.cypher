// Compact node records (knowledge graph) for the given entity IDs.
UNWIND $ids AS id
MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})
OPTIONAL MATCH (t:EntityType {id: e.typeID})
OPTIONAL MATCH (mn:Mention {entityID: e.id})
RETURN e.id AS id, e.canonical AS canonical, coalesce(t.name, e.typeName) AS type, count(mn) AS mentionCount
