// The compared attributes ($keys) of the given entities (bulk seed compares a row with the
// entity its name already names, and with that name's homonyms): only those leave the engine.
UNWIND $ids AS id
MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
WITH e, coalesce(e.attributeKeys, []) AS attributeKeys
RETURN e.id AS entityID, [k IN attributeKeys WHERE k IN $keys] AS attributeKeys,
  [j IN range(0, size(attributeKeys) - 1) WHERE attributeKeys[j] IN $keys | e.attributeValues[j]]
    AS attributeValues
