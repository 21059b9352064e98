// Entities whose canonical name or any surface form contains $search, case-insensitively.
MATCH (k:Key {accountID: $accountID, environment: $environment})
WHERE k.key IS NOT NULL
  AND any(f IN coalesce(k.forms, [k.text]) WHERE toLower(f) CONTAINS toLower($search))
  AND ($bucketID IS NULL OR k.bucketID = $bucketID)
RETURN DISTINCT k.entityID AS entityID
