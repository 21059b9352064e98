// Every type above $id (its parent, the parent's parent, …): a new parent must not be the
// type itself or one of its descendants, i.e. the type must not be among the parent's ancestors.
MATCH (t:EntityType {id: $id, accountID: $accountID, environment: $environment})-[r:CHILD_OF*1..]->(a:EntityType)
USING INDEX SEEK t:EntityType(id)
RETURN DISTINCT a.id AS typeID
