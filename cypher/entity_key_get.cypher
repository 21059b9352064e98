// A live key of an entity by its synonym ID (why a removal was refused).
MATCH (k:Key {id: $synonymID, entityID: $entityID, accountID: $accountID, environment: $environment})
USING INDEX SEEK k:Key(id)
WHERE k.key IS NOT NULL
RETURN k.source AS source
