// Live, unrejected entities with what duplicate detection compares: effective type and its
// attributeSchema, bucket, the canonical name as written, the normalised name, every
// normalised surface form and the attributes. In ID order, so a refresh is reproducible; a
// page of at most $limit after $after (null: from the start), entities limited before their
// keys are read, so a page costs its own rows and not the tenant's. Chosen entities:
// entity_candidates_by_id.cypher; on Neo4j, pages: entity_candidates_ordered.cypher.
MATCH (e:Entity {accountID: $accountID, environment: $environment})
WHERE e.mergedInto IS NULL AND e.status <> 'rejected'
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($after IS NULL OR e.id > $after)
WITH e ORDER BY e.id LIMIT $limit
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
