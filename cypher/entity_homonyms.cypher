// The homonyms of the given name keys (entities of the same name that their attributes keep
// apart; see src/graph/seed/homonyms.rs), in key order.
UNWIND $keys AS key
MATCH (h:Key {homonymOf: key})
USING INDEX SEEK h:Key(homonymOf)
RETURN key, h.key AS homonymKey, h.entityID AS entityID
ORDER BY homonymKey
