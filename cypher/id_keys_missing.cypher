// Entities without an idKey (created before keys existed).
MATCH (e:Entity)
WHERE e.idKey IS NULL
RETURN e.id AS id
