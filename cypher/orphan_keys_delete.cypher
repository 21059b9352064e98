// Deletes the name keys of the given entity IDs where no such entity exists: a bucket's
// cascade delete left its entities' keys behind before it removed them too (see
// src/graph/search.rs, which sweeps the ones a search meets). The tenant's lock first, as
// seeding takes it: a seed that meets such a key recreates the entity it names, and this
// check must see that entity if it was.
MERGE (lock:TenantLock {key: $accountID + '/' + $environment})
SET lock.at = $now
WITH 1 AS locked
UNWIND $ids AS id
OPTIONAL MATCH (e:Entity {id: id})
USING INDEX SEEK e:Entity(id)
WITH id, e
WHERE e IS NULL
MATCH (k:Key {entityID: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK k:Key(entityID)
DETACH DELETE k
RETURN count(k) AS deleted
