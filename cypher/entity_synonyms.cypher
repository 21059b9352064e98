// An entity's synonyms: its live keys but canonical names (its own and those of entities
// merged into it), oldest first, the first $limit (ties by ID, so the order is stable).
MATCH (k:Key {entityID: $entityID, accountID: $accountID, environment: $environment})
USING INDEX SEEK k:Key(entityID)
WHERE k.key IS NOT NULL AND coalesce(k.source, '') <> 'canonical'
RETURN k.id AS synonymID, k.text AS text, k.normalized AS normalizedText, k.source AS source,
  k.locale AS locale, k.createdAt AS createdAt
ORDER BY createdAt, synonymID
LIMIT $limit
