// Records that every entity and relation has its idKey (see src/graph/id_keys.rs).
MERGE (m:GraphMigration {name: 'idKey'})
SET m.done = true
