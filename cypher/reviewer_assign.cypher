// Makes a user a reviewer of a live entity type; assigning again returns the existing assignment.
MATCH (t:EntityType {id: $typeID, accountID: $accountID, environment: $environment})
USING INDEX SEEK t:EntityType(id)
WHERE t.deletedAt IS NULL
MERGE (u:User {id: $userID})
ON CREATE SET u.accountID = $accountID, u.environment = $environment
MERGE (u)-[r:REVIEWS]->(t)
ON CREATE SET r.assignedAt = $now, r.assignedBy = $actor
RETURN t.id AS typeID, u.id AS userID, r.assignedAt AS assignedAt
