// The synonyms of each of $ids (the batched form of entity_synonyms, for loaders): each
// entity's live keys but canonical names, oldest first, its first $limit (ties by ID).
UNWIND $ids AS id
MATCH (k:Key {entityID: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK k:Key(entityID)
WHERE k.key IS NOT NULL AND coalesce(k.source, '') <> 'canonical'
WITH id, k
ORDER BY id, k.createdAt, k.id
WITH id, collect(k)[..$limit] AS keys
UNWIND keys AS k
RETURN id AS entityID, k.id AS synonymID, k.text AS text, k.normalized AS normalizedText,
  k.source AS source, k.locale AS locale, k.createdAt AS createdAt
