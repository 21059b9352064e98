// The first $limit entities (in ID order: creation order) whose canonical name or any surface
// form contains $search, case-insensitively. The tenant's names are scanned (CONTAINS has no
// index), but only $limit IDs are kept: a search for one letter matched nearly every entity.
MATCH (k:Key {accountID: $accountID, environment: $environment})
WHERE k.key IS NOT NULL
  AND any(f IN coalesce(k.forms, [k.text]) WHERE toLower(f) CONTAINS toLower($search))
  AND ($bucketID IS NULL OR k.bucketID = $bucketID)
RETURN DISTINCT k.entityID AS entityID
ORDER BY entityID
LIMIT $limit
