// Assigns (or, with null, clears) an entity's type and re-keys its surface forms under the new
// effective type; a clash with another entity's key fails on the Key.key constraint.
MATCH (e:Entity {id: $entityID, accountID: $accountID, environment: $environment})
WHERE e.mergedInto IS NULL
SET e.typeID = $typeID, e.updatedAt = $now
WITH e
OPTIONAL MATCH (k:Key {entityID: e.id})
WHERE k.key IS NOT NULL
SET k.key = $keyPrefix + k.normalized
RETURN e.id AS entityID, count(k) AS rekeyed
