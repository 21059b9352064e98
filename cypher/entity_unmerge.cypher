// Undoes a merge while its survivor is still live: the merged-away entity comes back with
// its previous status and exactly the keys, mentions and edges that moved.
// The tenant's lock first (see cypher/schema/neo4j.cypher, TenantLock): on Neo4j the reads below
// would otherwise see the graph before a concurrent writer's commit and act on it; on FalkorDB,
// which runs writes one at a time, it costs one indexed MERGE.
MERGE (lock:TenantLock {key: $accountID + '/' + $environment})
SET lock.at = $now
WITH 1 AS locked
MATCH (rec:Merge {id: $mergeID, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(id)
WHERE rec.undoneAt IS NULL
MATCH (m:Entity {id: rec.mergedID})-[mi:MERGED_INTO {mergeID: rec.id}]->(s:Entity {id: rec.survivorID})
USING INDEX SEEK m:Entity(id)
WHERE s.mergedInto IS NULL
DELETE mi
SET m.mergedInto = null, m.status = rec.previousStatus, m.updatedAt = $now, s.updatedAt = $now,
  rec.undoneAt = $now, rec.undoneBy = $actor
WITH rec, m, s
OPTIONAL MATCH (k:Key {entityID: s.id})
USING INDEX SEEK k:Key(entityID)
WHERE k.id IN rec.keyIDs
SET k.entityID = m.id
WITH rec, m, s, collect(k.id) AS keyIDs
OPTIONAL MATCH (mn:Mention {entityID: s.id})
USING INDEX SEEK mn:Mention(entityID)
WHERE mn.id IN rec.mentionIDs
SET mn.entityID = m.id
WITH rec, m, s, keyIDs, collect(mn.id) AS mentionIDs
OPTIONAL MATCH (s)-[ro:RELATES_TO]->(t:Entity)
WHERE ro.id IN rec.outIDs
WITH rec, m, s, keyIDs, mentionIDs, ro, t, ro.id AS rid
FOREACH (x IN CASE WHEN ro IS NULL THEN [] ELSE [t] END |
  CREATE (m)-[nr:RELATES_TO]->(x) SET nr = properties(ro))
FOREACH (x IN CASE WHEN ro IS NULL THEN [] ELSE [ro] END | DELETE x)
WITH rec, m, s, keyIDs, mentionIDs, collect(rid) AS outIDs
OPTIONAL MATCH (o:Entity)-[ri:RELATES_TO]->(s)
WHERE ri.id IN rec.inIDs
WITH rec, m, keyIDs, mentionIDs, outIDs, ri, o, ri.id AS rid
FOREACH (x IN CASE WHEN ri IS NULL THEN [] ELSE [o] END |
  CREATE (x)-[nr:RELATES_TO]->(m) SET nr = properties(ri))
FOREACH (x IN CASE WHEN ri IS NULL THEN [] ELSE [ri] END | DELETE x)
WITH rec, keyIDs, mentionIDs, outIDs, collect(rid) AS inIDs
RETURN rec.mergedID AS entityID, size(keyIDs) AS keysMoved, size(mentionIDs) AS mentionsMoved,
  size(outIDs) + size(inIDs) AS relationsMoved
