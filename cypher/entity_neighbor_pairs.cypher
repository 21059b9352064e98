// The entities one hop from each of $ids, either direction, optionally over one relation
// type, paired with the entity they neighbour (one step of a batched neighbourhood walk).
UNWIND $ids AS id
MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})-[r:RELATES_TO]-(o:Entity)
WHERE $relationType IS NULL OR r.relationType = $relationType
RETURN DISTINCT e.id AS fromID, o.id AS entityID
