MATCH (b:Bucket {accountID: $accountID, environment: $environment})
WHERE b.deletedAt IS NULL
  AND ($nameSubstring IS NULL OR toLower(b.name) CONTAINS toLower($nameSubstring))
RETURN count(b) AS total
