// Neo4j's entity_find.cypher: the page after $after in entityID order in one statement, as
// review_queue_ordered.cypher reads the review queue (the tenant's IDs handed out in order by
// the entity_tenant_id index, the statement stopping at the page's end or after $scan of the
// tenant's rows). The filters are entity_find.cypher's.
MATCH (e:Entity)
USING INDEX e:Entity(accountID, environment, id)
WHERE e.accountID = $accountID AND e.environment = $environment AND e.id > $after AND e.id <= $until
WITH e
ORDER BY e.accountID, e.environment, e.id
LIMIT $scan
WITH e
WHERE (NOT $live OR e.status <> 'merged')
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($since IS NULL OR e.createdAt >= $since)
  AND ($search IS NULL OR toLower(e.canonical) CONTAINS $search)
OPTIONAL MATCH (t:EntityType {id: e.typeID})
USING INDEX SEEK t:EntityType(id)
WITH e, coalesce(t.name, e.typeName) AS type
WHERE $type IS NULL OR type = $type
RETURN e.id AS entityID
LIMIT $limit
