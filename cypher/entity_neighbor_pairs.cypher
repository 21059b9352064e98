// The entities one hop from each of $ids, either direction, optionally over one relation
// type, paired with the entity they neighbour (one step of a batched neighbourhood walk).
// At most $perEntity per entity, lowest IDs first: a hub with a million edges answers a
// bounded number of rows.
UNWIND $ids AS id
MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})-[r:RELATES_TO]-(o:Entity)
USING INDEX SEEK e:Entity(id)
WHERE $relationType IS NULL OR r.relationType = $relationType
WITH e, o.id AS other ORDER BY other
WITH e, collect(DISTINCT other)[0..$perEntity] AS found
UNWIND found AS entityID
RETURN e.id AS fromID, entityID
