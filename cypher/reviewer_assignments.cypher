// The live entity types a user reviews.
MATCH (u:User {id: $userID, accountID: $accountID, environment: $environment})-[r:REVIEWS]->(t:EntityType)
USING INDEX SEEK u:User(id)
WHERE t.deletedAt IS NULL
RETURN t.id AS typeID, t.name AS name, r.assignedAt AS assignedAt
ORDER BY t.id
