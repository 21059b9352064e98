// The tenant's default bucket, created on first use. MERGE on the unique defaultKey makes
// concurrent first requests agree on one bucket.
MERGE (b:Bucket {defaultKey: $defaultKey})
ON CREATE SET b.id = $id, b.accountID = $accountID, b.environment = $environment,
  b.name = $name, b.description = '', b.isDefault = true, b.liveNameKey = $liveNameKey,
  b.createdAt = $now, b.updatedAt = $now
RETURN b.id AS bucketID
