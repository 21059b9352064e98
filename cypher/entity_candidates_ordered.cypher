// Neo4j's entity_candidates.cypher, the same rows, with its indexes named. Neo4j plans a
// statement once and keeps the plan until its statistics change enough; right after a bulk
// load (a new database's first seed, say) an index's samples still say "empty", and the plan
// made then read the candidates' keys by scanning every Key with a key (Key(key) IS NOT NULL)
// for each entity: 10,000 entities took 12-30 s (a refresh 55 s), 0.8 s with these hints
// (USING INDEX SEEK: a plain USING INDEX was met by a scan of the whole index).
// A page of $limit after $after reads the tenant's part of entity_tenant_id in ID order and
// stops at the page's end; with $ids (a decision's pair: entity_candidates_by_id.cypher on
// FalkorDB, where that one's key lookup, unhinted, scanned every key on Neo4j's empty
// samples) the first part reads nothing (LIMIT 0) and the second seeks each ID.
CALL {
  MATCH (e:Entity)
  USING INDEX SEEK e:Entity(accountID, environment, id)
  WHERE e.accountID = $accountID AND e.environment = $environment AND e.id > coalesce($after, '')
    AND e.mergedInto IS NULL AND e.status <> 'rejected'
    AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  RETURN e ORDER BY e.accountID, e.environment, e.id
  LIMIT CASE WHEN $ids IS NULL THEN $limit ELSE 0 END
  UNION ALL
  MATCH (e:Entity)
  USING INDEX SEEK e:Entity(accountID, environment, id)
  WHERE e.accountID = $accountID AND e.environment = $environment AND e.id IN coalesce($ids, [])
    AND e.mergedInto IS NULL AND e.status <> 'rejected'
    AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  RETURN e
}
OPTIONAL MATCH (t:EntityType {id: e.typeID})
OPTIONAL MATCH (k:Key)
USING INDEX SEEK k:Key(entityID)
WHERE k.entityID = e.id AND k.key IS NOT NULL
WITH e, t, collect(k.normalized) AS forms
RETURN e.id AS entityID, e.bucketID AS bucketID, e.normalized AS normalized,
  coalesce(t.name, e.typeName) AS type, forms, e.canonical AS canonical,
  e.attributeKeys AS attributeKeys, e.attributeValues AS attributeValues,
  t.attributeSchema AS attributeSchema
ORDER BY entityID
