// Entities and relations without an idKey (created before keys existed).
MATCH (e:Entity)
WHERE e.idKey IS NULL
RETURN e.id AS id
UNION ALL
MATCH ()-[r:RELATES_TO]->()
WHERE r.idKey IS NULL
RETURN r.id AS id
