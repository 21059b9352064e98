MATCH (b:Bucket {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK b:Bucket(id)
WHERE b.deletedAt IS NULL
RETURN b.id AS bucketID, b.name AS name, b.description AS description, b.isDefault AS isDefault, b.createdAt AS createdAt, b.updatedAt AS updatedAt
