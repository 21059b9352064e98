// Why a bucket delete did not happen: missing, default, or not empty (its entities counted
// up to $countUpTo: the answer says "more than" past it rather than read a bucket of millions).
MATCH (b:Bucket {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK b:Bucket(id)
WHERE b.deletedAt IS NULL
OPTIONAL MATCH (e:Entity {bucketID: b.id})
USING INDEX SEEK e:Entity(bucketID)
WITH b, e
LIMIT $countUpTo
RETURN b.isDefault AS isDefault, count(e) AS entities
