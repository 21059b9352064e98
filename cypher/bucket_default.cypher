// The tenant's default bucket (writes without a bucket go there).
MATCH (b:Bucket {defaultKey: $defaultKey})
RETURN b.id AS bucketID
