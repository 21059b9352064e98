// Full entity records for the given IDs: effective type, surface forms, mention count and
// the first two mentions. Read in time linear in an entity's keys and mentions, holding no
// more than what it returns, since an entity may gather hundreds of thousands of either: the
// forms are unwound, not concatenated (`reduce(acc + forms)` copied the list at each key: 9 s
// for 20,000 keys on FalkorDB), and the first two mentions are the smallest IDs, found by
// `min` in two passes and read by ID, not by sorting every mention into a list of maps
// (300,000 mentions: 135 ms against 425 ms). At most $formsListed forms leave the engine (see
// SURFACE_FORMS_LISTED in src/graph/entities.rs).
UNWIND $ids AS id
MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
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
