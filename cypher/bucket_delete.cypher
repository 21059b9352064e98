// Soft-deletes a non-default bucket when it is empty, or with $cascade also removes its
// entities, the keys of their names and its mentions (their relations go with DETACH
// DELETE). One statement, so the emptiness check and the delete cannot be separated by
// another write; a cascade first removes the bucket's contents a page a statement
// (bucket_members_delete.cypher), so this one removes only what was written meanwhile.
// Without $cascade one entity is enough to refuse: the bucket's entities are not read (a
// refused delete of a bucket of millions collected them all, holding the engine's writer).
MATCH (b:Bucket {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK b:Bucket(id)
WHERE b.deletedAt IS NULL AND b.isDefault = false
OPTIONAL MATCH (held:Entity {bucketID: b.id})
USING INDEX SEEK held:Entity(bucketID)
WITH b, held
LIMIT 1
WITH b, held
WHERE held IS NULL OR $cascade
OPTIONAL MATCH (e:Entity {bucketID: b.id})
USING INDEX SEEK e:Entity(bucketID)
WITH b, collect(e) AS entities
// Unwound by ID (FalkorDB cannot match on a property of an unmatched optional node).
UNWIND CASE WHEN size(entities) = 0 THEN [null] ELSE [x IN entities | x.id] END AS entityID
OPTIONAL MATCH (k:Key {entityID: entityID})
USING INDEX SEEK k:Key(entityID)
WITH b, entities, collect(k) AS keys
OPTIONAL MATCH (m:Mention {bucketID: b.id})
USING INDEX SEEK m:Mention(bucketID)
WITH b, entities, keys, collect(m) AS mentions
FOREACH (n IN keys | DETACH DELETE n)
FOREACH (n IN entities | DETACH DELETE n)
FOREACH (n IN mentions | DETACH DELETE n)
SET b.deletedAt = $now, b.updatedAt = $now, b.liveNameKey = null
RETURN b.id AS bucketID, size(entities) AS entitiesRemoved, size(mentions) AS mentionsRemoved
