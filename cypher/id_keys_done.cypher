// Whether every entity has its idKey (see src/graph/id_keys.rs). A read: at start, writes
// wait for the indexes FalkorDB builds after loading.
OPTIONAL MATCH (m:GraphMigration {name: 'entity idKey'})
RETURN m.done AS done
