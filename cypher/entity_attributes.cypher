// The stored attributes of the given entities (bulk seed compares a row with the entity its
// name already names).
UNWIND $ids AS id
MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
RETURN e.id AS entityID, e.attributeKeys AS attributeKeys, e.attributeValues AS attributeValues
