// Creates a bucket unless a live one of the tenant has this name (liveNameKey is unique);
// the caller compares the returned ID with the one it proposed to tell the two apart.
MERGE (b:Bucket {liveNameKey: $liveNameKey})
ON CREATE SET b.id = $id, b.accountID = $accountID, b.environment = $environment,
  b.name = $name, b.description = $description, b.isDefault = false,
  b.createdAt = $now, b.updatedAt = $now
RETURN b.id AS bucketID, b.name AS name, b.description AS description, b.isDefault AS isDefault, b.createdAt AS createdAt, b.updatedAt AS updatedAt
