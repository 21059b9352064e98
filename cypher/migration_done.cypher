// Whether the one-time graph migration $name has run (see src/graph/id_keys.rs and
// src/graph/orphan_keys.rs). A read: at start, writes wait for the indexes FalkorDB builds
// after loading.
OPTIONAL MATCH (m:GraphMigration {name: $name})
USING INDEX SEEK m:GraphMigration(name)
RETURN m.done AS done
