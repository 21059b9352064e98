// Neo4j's entity_candidates.cypher, the same rows, reading the tenant's part of
// entity_tenant_id in ID order and stopping at the page's end, where FalkorDB's reads the
// tenant's entities and sorts them. (Until 2026-12-04 it was also the statement whose hints
// kept its seeks on an index's empty statistics right after a bulk load, which had scanned
// every key for each entity, 10,000 entities in 12-30 s; every shared statement now carries
// its hints, see store::graph::falkordb::without_index_hints.)
MATCH (e:Entity)
USING INDEX SEEK e:Entity(accountID, environment, id)
WHERE e.accountID = $accountID AND e.environment = $environment AND e.id > coalesce($after, '')
  AND e.mergedInto IS NULL AND e.status <> 'rejected'
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
WITH e ORDER BY e.accountID, e.environment, e.id
LIMIT $limit
OPTIONAL MATCH (t:EntityType {id: e.typeID})
USING INDEX SEEK t:EntityType(id)
OPTIONAL MATCH (k:Key {entityID: e.id})
USING INDEX SEEK k:Key(entityID)
WHERE k.key IS NOT NULL
WITH e, t, collect(k.normalized) AS forms
RETURN e.id AS entityID, e.bucketID AS bucketID, e.normalized AS normalized,
  coalesce(t.name, e.typeName) AS type, forms, e.canonical AS canonical,
  e.attributeKeys AS attributeKeys, e.attributeValues AS attributeValues,
  t.attributeSchema AS attributeSchema
ORDER BY entityID
