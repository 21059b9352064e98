// Undoes a merge while its survivor is still live: the merged-away entity comes back with
// its previous status and exactly the keys, mentions and edges that moved. Each moved ID is
// sought by its index: testing every key, mention and edge of the survivor for membership in
// the record's lists cost their product (FalkorDB: a survivor of 100,000 mentions, 10,000
// moved, 3.3 s against 36 ms; 100,000 edges, 10,000 moved, 4.0 s against 34 ms), a write
// holding the tenant's lock, and on FalkorDB every tenant's writes, all along.
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
UNWIND CASE WHEN size(coalesce(rec.keyIDs, [])) = 0 THEN [null] ELSE rec.keyIDs END AS keyID
OPTIONAL MATCH (k:Key {id: keyID})
USING INDEX SEEK k:Key(id)
WHERE k.entityID = s.id
SET k.entityID = m.id
WITH rec, m, s, collect(k.id) AS keyIDs
UNWIND CASE WHEN size(coalesce(rec.mentionIDs, [])) = 0 THEN [null] ELSE rec.mentionIDs END AS mentionID
OPTIONAL MATCH (mn:Mention {id: mentionID})
USING INDEX SEEK mn:Mention(id)
WHERE mn.entityID = s.id
SET mn.entityID = m.id
WITH rec, m, s, keyIDs, collect(mn.id) AS mentionIDs
UNWIND CASE WHEN size(coalesce(rec.outIDs, [])) = 0 THEN [null] ELSE rec.outIDs END AS outID
OPTIONAL MATCH (s)-[ro:RELATES_TO {id: outID}]->(t:Entity)
USING INDEX SEEK ro:RELATES_TO(id)
WITH rec, m, s, keyIDs, mentionIDs, ro, t, ro.id AS rid
FOREACH (x IN CASE WHEN ro IS NULL THEN [] ELSE [t] END |
  CREATE (m)-[nr:RELATES_TO]->(x) SET nr = properties(ro))
FOREACH (x IN CASE WHEN ro IS NULL THEN [] ELSE [ro] END | DELETE x)
WITH rec, m, s, keyIDs, mentionIDs, collect(rid) AS outIDs
UNWIND CASE WHEN size(coalesce(rec.inIDs, [])) = 0 THEN [null] ELSE rec.inIDs END AS inID
OPTIONAL MATCH (o:Entity)-[ri:RELATES_TO {id: inID}]->(s)
USING INDEX SEEK ri:RELATES_TO(id)
WITH rec, m, keyIDs, mentionIDs, outIDs, ri, o, ri.id AS rid
FOREACH (x IN CASE WHEN ri IS NULL THEN [] ELSE [o] END |
  CREATE (x)-[nr:RELATES_TO]->(m) SET nr = properties(ri))
FOREACH (x IN CASE WHEN ri IS NULL THEN [] ELSE [ri] END | DELETE x)
WITH rec, keyIDs, mentionIDs, outIDs, collect(rid) AS inIDs
RETURN rec.mergedID AS entityID, size(keyIDs) AS keysMoved, size(mentionIDs) AS mentionsMoved,
  size(outIDs) + size(inIDs) AS relationsMoved
