// Whether every entity and relation has its idKey (see src/graph/id_keys.rs). A read: at start, writes
// wait for the indexes FalkorDB builds after loading.
OPTIONAL MATCH (m:GraphMigration {name: 'idKey'})
USING INDEX SEEK m:GraphMigration(name)
RETURN m.done AS done
