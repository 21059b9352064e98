// Which entities the given resolution keys already point at (bulk seed's first look).
UNWIND $keys AS key
MATCH (k:Key {key: key})
USING INDEX SEEK k:Key(key)
RETURN k.key AS key, k.entityID AS entityID
