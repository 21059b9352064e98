// Names of the given live types (the review-queue and graph type filters match by them).
MATCH (t:EntityType {accountID: $accountID, environment: $environment})
WHERE t.id IN $ids AND t.deletedAt IS NULL
RETURN t.id AS typeID, t.name AS name
