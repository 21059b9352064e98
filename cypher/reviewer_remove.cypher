// Removes a reviewer assignment; no row when there was none.
MATCH (u:User {id: $userID})-[r:REVIEWS]->(t:EntityType {id: $typeID, accountID: $accountID, environment: $environment})
USING INDEX SEEK u:User(id)
WITH r, u.id AS userID
DELETE r
RETURN userID
