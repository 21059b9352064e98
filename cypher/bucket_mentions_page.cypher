// A page of the mentions a cascade delete of a live, non-default bucket of the tenant removes.
// The delete removes a bucket's mentions, then its entities, a page a statement
// (bucket_members_delete.cypher): one statement over a bucket of millions held the engine,
// and every tenant's writes behind it, for its whole length.
MATCH (b:Bucket {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK b:Bucket(id)
WHERE b.deletedAt IS NULL AND b.isDefault = false
MATCH (m:Mention {bucketID: b.id})
USING INDEX SEEK m:Mention(bucketID)
RETURN m.id AS id
LIMIT $limit
