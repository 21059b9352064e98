// Name keys whose entity does not exist, with their tenant: a bucket's cascade delete left
// its entities' keys behind before it removed them too (see src/graph/orphan_keys.rs, which
// deletes them once, at the first start that looks). A read: each tenant's keys are then
// deleted under its lock, by orphan_keys_delete.cypher.
MATCH (k:Key)
OPTIONAL MATCH (e:Entity {id: k.entityID})
USING INDEX SEEK e:Entity(id)
WITH k, e
WHERE e IS NULL
RETURN DISTINCT k.accountID AS accountID, k.environment AS environment, k.entityID AS entityID
LIMIT $limit
