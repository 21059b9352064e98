// The reviewers of a live entity type.
MATCH (u:User)-[r:REVIEWS]->(t:EntityType {id: $typeID, accountID: $accountID, environment: $environment})
USING INDEX SEEK t:EntityType(id)
WHERE t.deletedAt IS NULL
RETURN u.id AS userID, r.assignedAt AS assignedAt
ORDER BY u.id
