// Makes a surface form the canonical name of a live entity. The new name's key must be free
// or already the entity's own (the caller attached it first with entity_add_key).
MATCH (e:Entity {id: $entityID, accountID: $accountID, environment: $environment})
WHERE e.mergedInto IS NULL
MATCH (k:Key {key: $key, entityID: e.id})
SET e.canonical = k.text, e.normalized = k.normalized, e.updatedAt = $now
RETURN e.id AS entityID
