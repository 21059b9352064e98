// Merges one live entity into a live survivor of the same bucket, in one statement: its
// surface-form keys, mentions and relation edges move to the survivor (edges are re-created
// with the same ID and properties), it becomes `merged` with a MERGED_INTO edge, and a Merge
// record keeps exactly what moved, and who did it, so the merge can be undone.
// The tenant's lock first (see cypher/schema/neo4j.cypher, TenantLock): on Neo4j the reads below
// would otherwise see the graph before a concurrent writer's commit and act on it; on FalkorDB,
// which runs writes one at a time, it costs one indexed MERGE.
MERGE (lock:TenantLock {key: $accountID + '/' + $environment})
SET lock.at = $now
WITH 1 AS locked
// Both in $bucketID (the survivor's, as the service read it): with `m.bucketID = s.bucketID`
// Neo4j found the survivor by the merged entity's bucket, an index seek over the whole bucket.
MATCH (s:Entity {id: $survivorID, accountID: $accountID, environment: $environment})
USING INDEX SEEK s:Entity(id)
WHERE s.mergedInto IS NULL AND s.bucketID = $bucketID
MATCH (m:Entity {id: $mergedID, accountID: $accountID, environment: $environment})
USING INDEX SEEK m:Entity(id)
WHERE m.mergedInto IS NULL AND m.id <> s.id AND m.bucketID = $bucketID
CREATE (rec:Merge {id: $mergeID, survivorID: s.id, mergedID: m.id, accountID: $accountID,
  environment: $environment, previousStatus: m.status, mergedBy: $actor, mergedAt: $now})
CREATE (m)-[mi:MERGED_INTO {mergeID: $mergeID}]->(s)
SET m.mergedInto = s.id, m.status = 'merged', m.updatedAt = $now, s.updatedAt = $now
WITH s, m, rec
OPTIONAL MATCH (k:Key {entityID: m.id})
USING INDEX SEEK k:Key(entityID)
SET k.entityID = s.id
WITH s, m, rec, collect(k.id) AS keyIDs
OPTIONAL MATCH (mn:Mention {entityID: m.id})
USING INDEX SEEK mn:Mention(entityID)
SET mn.entityID = s.id
WITH s, m, rec, keyIDs, collect(mn.id) AS mentionIDs
OPTIONAL MATCH (m)-[ro:RELATES_TO]->(t:Entity)
WITH s, m, rec, keyIDs, mentionIDs, ro, t, ro.id AS rid
FOREACH (x IN CASE WHEN ro IS NULL THEN [] ELSE [t] END |
  CREATE (s)-[nr:RELATES_TO]->(x) SET nr = properties(ro))
FOREACH (x IN CASE WHEN ro IS NULL THEN [] ELSE [ro] END | DELETE x)
WITH s, m, rec, keyIDs, mentionIDs, collect(rid) AS outIDs
OPTIONAL MATCH (o:Entity)-[ri:RELATES_TO]->(m)
WITH s, m, rec, keyIDs, mentionIDs, outIDs, ri, o, ri.id AS rid
FOREACH (x IN CASE WHEN ri IS NULL THEN [] ELSE [o] END |
  CREATE (x)-[nr:RELATES_TO]->(s) SET nr = properties(ri))
FOREACH (x IN CASE WHEN ri IS NULL THEN [] ELSE [ri] END | DELETE x)
WITH rec, keyIDs, mentionIDs, outIDs, collect(rid) AS inIDs
SET rec.keyIDs = keyIDs, rec.mentionIDs = mentionIDs, rec.outIDs = outIDs, rec.inIDs = inIDs
RETURN rec.id AS mergeID, size(keyIDs) AS keysMoved, size(mentionIDs) AS mentionsMoved,
  size(outIDs) + size(inIDs) AS relationsMoved
