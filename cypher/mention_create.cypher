// Records a mention of a live entity in a document; its surface joins the entity's surface
// forms as an `extracted` synonym (or as one more spelling of a name it already has). A key
// keeps at most 100 spellings (FORMS_PER_KEY in src/graph/entities.rs): each new one is
// checked against and copied with the others, so a tenant's ever new variants of one name
// (case, punctuation) made each mention of it slower than the last.
MATCH (e:Entity {id: $entityID, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
WHERE e.mergedInto IS NULL
CREATE (m:Mention {id: $id, entityID: e.id, bucketID: e.bucketID, accountID: $accountID,
  environment: $environment, referenceID: $referenceID, transformationID: $transformationID,
  page: $page, sectionLabel: $sectionLabel, surface: $surface, createdAt: $now})
MERGE (k:Key {key: $key})
ON CREATE SET k.id = $keyID, k.entityID = e.id, k.text = $surface, k.normalized = $normalized,
  k.source = 'extracted', k.accountID = $accountID, k.environment = $environment,
  k.bucketID = e.bucketID, k.createdAt = $now, k.forms = [$surface]
ON MATCH SET k.forms = CASE WHEN k.entityID = e.id AND size(coalesce(k.forms, [k.text])) < 100
    AND NOT $surface IN coalesce(k.forms, [k.text])
  THEN coalesce(k.forms, [k.text]) + $surface ELSE k.forms END
SET e.updatedAt = $now
RETURN m.id AS mentionID, m.entityID AS entityID, m.referenceID AS referenceID,
  m.transformationID AS transformationID, m.page AS page, m.sectionLabel AS sectionLabel,
  m.surface AS surface, m.createdAt AS createdAt
