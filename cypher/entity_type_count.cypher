MATCH (t:EntityType {accountID: $accountID, environment: $environment})
WHERE t.deletedAt IS NULL
OPTIONAL MATCH (t)-[r:CHILD_OF]->(p:EntityType)
WITH t, p, r
WHERE $parentTypeID IS NULL OR p.id = $parentTypeID
RETURN count(t) AS total
