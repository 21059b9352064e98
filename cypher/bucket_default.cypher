// The tenant's default bucket (writes without a bucket go there); it is created on the
// tenant's first request, so nothing of the tenant is older.
MATCH (b:Bucket {defaultKey: $defaultKey})
USING INDEX SEEK b:Bucket(defaultKey)
RETURN b.id AS bucketID, b.createdAt AS createdAt
