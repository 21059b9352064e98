// Records that the one-time graph migration $name has run.
MERGE (m:GraphMigration {name: $name})
SET m.done = true
