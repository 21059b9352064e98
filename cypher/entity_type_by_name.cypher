MATCH (t:EntityType {accountID: $accountID, environment: $environment, name: $name})
WHERE t.deletedAt IS NULL
RETURN t.id AS typeID, t.attributeSchema AS attributeSchema
