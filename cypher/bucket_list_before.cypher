// One page of live buckets in bucketID order, walking backwards from endingBefore (the caller reverses the page).
MATCH (b:Bucket {accountID: $accountID, environment: $environment})
WHERE b.deletedAt IS NULL
  AND ($nameSubstring IS NULL OR toLower(b.name) CONTAINS toLower($nameSubstring))
  AND ($startingAfter IS NULL OR b.id > $startingAfter)
  AND ($endingBefore IS NULL OR b.id < $endingBefore)
RETURN b.id AS bucketID, b.name AS name, b.description AS description, b.isDefault AS isDefault, b.createdAt AS createdAt, b.updatedAt AS updatedAt
ORDER BY b.id DESC
LIMIT $limit
