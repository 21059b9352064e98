// Assigns (or, with null, clears) an entity's type and re-keys its surface forms under the new
// effective type; a clash with another entity's key fails on the Key.key constraint. A
// homonym's key (src/graph/seed/homonyms.rs) becomes a plain name key of the new type.
MATCH (e:Entity {id: $entityID, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
WHERE e.mergedInto IS NULL
SET e.typeID = $typeID, e.updatedAt = $now
WITH e
OPTIONAL MATCH (k:Key {entityID: e.id})
USING INDEX SEEK k:Key(entityID)
WHERE k.key IS NOT NULL
SET k.key = $keyPrefix + k.normalized, k.homonymOf = null
RETURN e.id AS entityID, count(k) AS rekeyed
