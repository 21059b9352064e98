// Records that every entity has its idKey (see src/graph/id_keys.rs).
MERGE (m:GraphMigration {name: 'entity idKey'})
SET m.done = true
