// Sets the idKey of each entity of $rows ({id, idKey}).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.idKey = row.idKey
