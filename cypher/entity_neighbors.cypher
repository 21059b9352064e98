// The entities one hop from any of $ids, either direction (at most $limit: the walk refuses
// a neighbourhood larger than that rather than read the tenant's whole graph).
UNWIND $ids AS id
MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})-[r:RELATES_TO]-(o:Entity)
USING INDEX SEEK e:Entity(id)
WHERE ($bucketID IS NULL OR r.bucketID = $bucketID)
RETURN DISTINCT o.id AS entityID
LIMIT $limit
