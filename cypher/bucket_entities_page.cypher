// A page of the entities a cascade delete of a live, non-default bucket of the tenant removes
// (see bucket_mentions_page.cypher).
MATCH (b:Bucket {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK b:Bucket(id)
WHERE b.deletedAt IS NULL AND b.isDefault = false
MATCH (e:Entity {bucketID: b.id})
USING INDEX SEEK e:Entity(bucketID)
RETURN e.id AS id
LIMIT $limit
