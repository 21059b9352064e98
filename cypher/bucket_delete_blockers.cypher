// Why a bucket delete did not happen: missing, default, or not empty.
MATCH (b:Bucket {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK b:Bucket(id)
WHERE b.deletedAt IS NULL
OPTIONAL MATCH (e:Entity {bucketID: b.id})
USING INDEX SEEK e:Entity(bucketID)
RETURN b.isDefault AS isDefault, count(e) AS entities
