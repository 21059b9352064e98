// Soft-deletes a non-default bucket when it is empty, or with $cascade also removes its
// entities and mentions (their relations go with DETACH DELETE). One statement, so the
// emptiness check and the delete cannot be separated by another write.
MATCH (b:Bucket {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK b:Bucket(id)
WHERE b.deletedAt IS NULL AND b.isDefault = false
OPTIONAL MATCH (e:Entity {bucketID: b.id})
USING INDEX SEEK e:Entity(bucketID)
WITH b, collect(e) AS entities
WHERE size(entities) = 0 OR $cascade
OPTIONAL MATCH (m:Mention {bucketID: b.id})
USING INDEX SEEK m:Mention(bucketID)
WITH b, entities, collect(m) AS mentions
FOREACH (n IN entities | DETACH DELETE n)
FOREACH (n IN mentions | DETACH DELETE n)
SET b.deletedAt = $now, b.updatedAt = $now, b.liveNameKey = null
RETURN b.id AS bucketID, size(entities) AS entitiesRemoved, size(mentions) AS mentionsRemoved
