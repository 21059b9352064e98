// entity_merge.cypher for many pairs in one statement ($merges: [{survivorID, mergedID,
// mergeID, bucketID}]), each pair as that file merges one: a pair whose entities are no longer both
// live (a concurrent change) is left out of the result and nothing of it is written.
// The caller sends no entity as `mergedID` that is a survivor or merged elsewhere in the same
// list (survivors may repeat): each collect() below is a barrier across all pairs, so with
// that rule every pair moves exactly what it would have moved alone, in list order.
// The tenant's lock first (see cypher/schema/neo4j.cypher, TenantLock).
MERGE (lock:TenantLock {key: $accountID + '/' + $environment})
SET lock.at = $now
WITH 1 AS locked
UNWIND $merges AS pair
// Both in the pair's bucket (the survivor's, as read): with `m.bucketID = s.bucketID` Neo4j
// found the survivor by the merged entity's bucket, an index seek over the whole bucket for
// each pair.
MATCH (s:Entity {id: pair.survivorID, accountID: $accountID, environment: $environment})
USING INDEX SEEK s:Entity(id)
WHERE s.mergedInto IS NULL AND s.bucketID = pair.bucketID
MATCH (m:Entity {id: pair.mergedID, accountID: $accountID, environment: $environment})
USING INDEX SEEK m:Entity(id)
WHERE m.mergedInto IS NULL AND m.id <> s.id AND m.bucketID = pair.bucketID
CREATE (rec:Merge {id: pair.mergeID, survivorID: s.id, mergedID: m.id, accountID: $accountID,
  environment: $environment, previousStatus: m.status, mergedBy: $actor, mergedAt: $now})
CREATE (m)-[mi:MERGED_INTO {mergeID: pair.mergeID}]->(s)
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
RETURN rec.id AS mergeID
