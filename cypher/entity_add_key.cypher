// Attaches a surface form (a resolution key) to a live entity. If the key already exists the
// existing one is returned, whoever owns it (the caller compares owners and refuses a
// canonical name); a new spelling joins the forms of the entity's own synonym only, up to 100
// (FORMS_PER_KEY in src/graph/entities.rs).
MATCH (e:Entity {id: $entityID, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
WHERE e.mergedInto IS NULL
MERGE (k:Key {key: $key})
ON CREATE SET k.id = $keyID, k.entityID = e.id, k.text = $text, k.normalized = $normalized,
  k.source = $source, k.locale = $locale, k.accountID = $accountID, k.environment = $environment,
  k.bucketID = e.bucketID, k.createdAt = $now, k.forms = [$text]
ON MATCH SET k.forms = CASE WHEN k.entityID = e.id AND k.source <> 'canonical'
    AND size(coalesce(k.forms, [k.text])) < 100 AND NOT $text IN coalesce(k.forms, [k.text])
  THEN coalesce(k.forms, [k.text]) + $text ELSE k.forms END
SET e.updatedAt = CASE WHEN k.id = $keyID THEN $now ELSE e.updatedAt END
RETURN k.id AS synonymID, k.entityID AS entityID, k.text AS text, k.normalized AS normalizedText,
  k.source AS source, k.locale AS locale, k.createdAt AS createdAt
