// Makes a surface form the canonical name of a live entity. The new name's key must be free
// or already the entity's own (the caller attached it first with entity_add_key). The key of
// the canonical name is the one with source 'canonical' (never shown as a synonym, never
// removed): the former canonical name becomes a customer_defined synonym.
MATCH (e:Entity {id: $entityID, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
WHERE e.mergedInto IS NULL
MATCH (k:Key {key: $key, entityID: e.id})
USING INDEX SEEK k:Key(key)
OPTIONAL MATCH (former:Key {key: $formerKey, entityID: e.id})
USING INDEX SEEK former:Key(key)
WHERE former.id <> k.id
FOREACH (x IN CASE WHEN former IS NULL THEN [] ELSE [former] END | SET x.source = 'customer_defined')
SET k.source = 'canonical', e.canonical = k.text, e.normalized = k.normalized, e.updatedAt = $now
RETURN e.id AS entityID
