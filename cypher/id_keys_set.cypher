// Sets the idKey of each entity and relation of $rows ({id, idKey}).
UNWIND $rows AS row
OPTIONAL MATCH (e:Entity {id: row.id})
USING INDEX SEEK e:Entity(id)
OPTIONAL MATCH ()-[r:RELATES_TO {id: row.id}]->()
USING INDEX SEEK r:RELATES_TO(id)
FOREACH (x IN CASE WHEN e IS NULL THEN [] ELSE [e] END | SET x.idKey = row.idKey)
FOREACH (x IN CASE WHEN r IS NULL THEN [] ELSE [r] END | SET x.idKey = row.idKey)
