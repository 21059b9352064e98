// Full entity records for the given IDs: effective type, surface forms, mention count and
// the first two mentions.
UNWIND $ids AS id
MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
OPTIONAL MATCH (k:Key {entityID: e.id})
USING INDEX SEEK k:Key(entityID)
WHERE k.key IS NOT NULL
WITH e, collect(CASE WHEN k IS NULL THEN null ELSE coalesce(k.forms, [k.text]) END) AS formLists
WITH e, reduce(acc = [], forms IN formLists | acc + forms) AS surfaceForms
OPTIONAL MATCH (mn:Mention {entityID: e.id})
USING INDEX SEEK mn:Mention(entityID)
WITH e, surfaceForms, mn
ORDER BY mn.id
WITH e, surfaceForms, count(mn) AS mentionCount,
  collect(CASE WHEN mn IS NULL THEN null ELSE {mentionID: mn.id, entityID: e.id,
    referenceID: mn.referenceID, transformationID: mn.transformationID, page: mn.page,
    sectionLabel: mn.sectionLabel, surface: mn.surface, createdAt: mn.createdAt} END) AS mentions
OPTIONAL MATCH (t:EntityType {id: e.typeID})
USING INDEX SEEK t:EntityType(id)
RETURN e.id AS entityID, e.canonical AS canonical, coalesce(t.name, e.typeName) AS type,
  e.typeID AS typeID, e.description AS description, mentionCount, surfaceForms,
  e.status AS status, e.createdAt AS createdAt, e.updatedAt AS updatedAt,
  e.validatedAt AS validatedAt, e.validatedByUserID AS validatedByUserID,
  mentions[0..2] AS previewMentions, e.bucketID AS bucketID, e.attributeKeys AS attributeKeys,
  e.attributeValues AS attributeValues, e.typeName AS inferredType
