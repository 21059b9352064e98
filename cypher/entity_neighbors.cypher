// The entities one hop from any of $ids, either direction.
UNWIND $ids AS id
MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})-[r:RELATES_TO]-(o:Entity)
WHERE ($bucketID IS NULL OR r.bucketID = $bucketID)
RETURN DISTINCT o.id AS entityID
