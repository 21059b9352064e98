// entity_candidates.cypher's rows for the entities $ids only (the pair a person decided on):
// each found by its ID, through the unique index, so two records cost two seeks whatever the
// tenant's size. Read with the page statement's filters, they had read every entity of the
// tenant to keep two (50 ms at 200,000 on FalkorDB).
UNWIND $ids AS wanted
MATCH (e:Entity {id: wanted})
USING INDEX SEEK e:Entity(id)
WHERE e.accountID = $accountID AND e.environment = $environment
  AND e.mergedInto IS NULL AND e.status <> 'rejected'
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
