// Neo4j's review-queue page in one statement: review_queue_ordered.cypher's entities (the
// page's $limit rows after $after in entityID order, from the range index, among at most $scan
// of the tenant's rows), each with entity_details.cypher's record, so a page is one round trip
// instead of two (IDs, then records). FalkorDB pages walk creation-time windows (review_queue.cypher) and then read
// the records with entity_details.cypher. From `OPTIONAL MATCH (k:Key` on, this statement is
// entity_details.cypher's, word for word (a unit test holds them together). The records come
// back in no particular order (they are grouped); the service puts them in ID order.
MATCH (e:Entity)
USING INDEX e:Entity(accountID, environment, id)
WHERE e.accountID = $accountID AND e.environment = $environment AND e.id > $after AND e.id <= $until
WITH e
ORDER BY e.accountID, e.environment, e.id
LIMIT $scan
WITH e
WHERE e.status IN $statuses
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($since IS NULL OR e.createdAt >= $since)
  AND ($typeIDs IS NULL OR e.typeID IN $typeIDs OR (e.typeID IS NULL AND e.typeName IN $typeNames))
WITH e
LIMIT $limit
OPTIONAL MATCH (k:Key {entityID: e.id})
USING INDEX SEEK k:Key(entityID)
WHERE k.key IS NOT NULL
WITH e, k, coalesce(k.forms, [k.text]) AS forms
UNWIND CASE WHEN k IS NULL OR size(forms) = 0 THEN [null] ELSE forms END AS form
WITH e, collect(form)[..$formsListed] AS surfaceForms
OPTIONAL MATCH (mn:Mention {entityID: e.id})
USING INDEX SEEK mn:Mention(entityID)
WITH e, surfaceForms, count(mn) AS mentionCount, min(mn.id) AS firstID
OPTIONAL MATCH (mn:Mention {entityID: e.id})
USING INDEX SEEK mn:Mention(entityID)
WITH e, surfaceForms, mentionCount, firstID, min(CASE WHEN mn.id > firstID THEN mn.id END) AS secondID
UNWIND [firstID, secondID] AS previewID
OPTIONAL MATCH (mn:Mention {id: previewID})
USING INDEX SEEK mn:Mention(id)
WHERE mn.entityID = e.id
WITH e, surfaceForms, mentionCount, mn
ORDER BY mn.id
WITH e, surfaceForms, mentionCount,
  collect(CASE WHEN mn IS NULL THEN null ELSE {mentionID: mn.id, entityID: e.id,
    referenceID: mn.referenceID, transformationID: mn.transformationID, page: mn.page,
    sectionLabel: mn.sectionLabel, surface: mn.surface, createdAt: mn.createdAt} END) AS previewMentions
OPTIONAL MATCH (t:EntityType {id: e.typeID})
USING INDEX SEEK t:EntityType(id)
RETURN e.id AS entityID, e.canonical AS canonical, coalesce(t.name, e.typeName) AS type,
  e.typeID AS typeID, e.description AS description, mentionCount, surfaceForms,
  e.status AS status, e.createdAt AS createdAt, e.updatedAt AS updatedAt,
  e.validatedAt AS validatedAt, e.validatedByUserID AS validatedByUserID,
  previewMentions, e.bucketID AS bucketID, e.attributeKeys AS attributeKeys,
  e.attributeValues AS attributeValues, e.typeName AS inferredType
