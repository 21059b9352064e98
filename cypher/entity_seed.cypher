// One wave of bulk-seed rows (no two rows of a wave share a key). Each row's canonical key is
// MERGEd first and the entity is the one that key points at, so a key created concurrently
// by another writer still leads every row to one entity (the unique Key.key constraint
// rejects the loser, which retries). A new entity starts `proposed` and remembers the row
// that created it (seedTag), so a replayed row reports `created` again, not `merged-with`.
// On merge: the longer description wins, attribute keys the entity lacks are added, and
// synonyms join the surface forms (each key keeps the spellings that normalised to it, the
// first 100: FORMS_PER_KEY in src/graph/entities.rs).
//
// A row applies only while its keys point where the service's lookup saw them
// (row.expected: the keys found then, with their entity); a row a concurrent writer overtook
// is left out of the result, and the service looks it up again. A row the service did not
// look up (row.expected null: no synonyms, no compared attributes) is resolved here alone:
// its key's MERGE finds the entity the name names, or creates both. Writes run one at a time,
// so this check and the write below are one step. Where the service also looked up the
// homonyms of the row's name (row.homonymsChecked, see src/graph/seed/homonyms.rs), they
// are part of that check (row.homonymKeys and row.homonymOwners, in key order), and row.key
// may be a homonym's key (row.homonymOf set when the row creates it).
//
// The keys are looked up one by one (UNWIND, then MATCH on the indexed Key.key): FalkorDB
// answers `seen.key IN row.keys` with a scan of every Key, which made each row cost the
// size of the graph (a 100,000-entity seed ran for half an hour).
//
// $blocks are the milliseconds the rows' new IDs were minted in: each gets its IdBlock (see
// src/graph/id_blocks.rs) with the entities, so no entity is ever without one.
// The tenant's lock first (see cypher/schema/neo4j.cypher, TenantLock): on Neo4j the reads below
// would otherwise see the graph before a concurrent writer's commit and act on it; on FalkorDB,
// which runs writes one at a time, it costs one indexed MERGE.
MERGE (lock:TenantLock {key: $accountID + '/' + $environment})
SET lock.at = $now
WITH 1 AS locked
FOREACH (at IN $blocks | MERGE (:IdBlock {tenantKey: $blockKey, at: at}))
WITH 1 AS once
UNWIND $rows AS row
UNWIND row.keys AS key
OPTIONAL MATCH (seen:Key {key: key})
USING INDEX SEEK seen:Key(key)
WITH row, collect(DISTINCT seen) AS seen
OPTIONAL MATCH (h:Key {homonymOf: row.homonymsChecked})
USING INDEX SEEK h:Key(homonymOf)
WITH row, seen, h
ORDER BY h.key
// The homonyms in key order, compared with the lookup's lists whole: linear in them (each
// row of a name with H homonyms tested each against every expected one, H² a row).
WITH row, seen, collect(h.key) AS homonymKeys, collect(h.entityID) AS homonymOwners
WHERE row.expected IS NULL
  OR (size(seen) = size(row.expected)
    AND all(s IN seen WHERE any(x IN row.expected WHERE x.key = s.key AND x.entityID = s.entityID))
    AND homonymKeys = coalesce(row.homonymKeys, []) AND homonymOwners = coalesce(row.homonymOwners, []))
MERGE (k:Key {key: row.key})
ON CREATE SET k.id = row.keyID, k.entityID = row.targetID, k.text = row.canonical,
  k.normalized = row.normalized, k.source = 'canonical', k.accountID = $accountID,
  k.environment = $environment, k.bucketID = row.bucketID, k.createdAt = $now, k.forms = row.forms[..100],
  k.homonymOf = row.homonymOf
ON MATCH SET k.forms = (coalesce(k.forms, [k.text]) + [f IN row.forms WHERE NOT f IN coalesce(k.forms, [k.text])])[..100]
WITH row, k
MERGE (e:Entity {id: k.entityID})
ON CREATE SET e.accountID = $accountID, e.environment = $environment, e.bucketID = row.bucketID,
  e.canonical = row.canonical, e.normalized = row.normalized, e.typeName = row.typeName,
  e.typeID = row.typeID, e.description = row.description, e.attributeKeys = row.attrKeys,
  e.attributeValues = row.attrValues, e.status = 'proposed', e.seedTag = row.tag,
  e.idKey = row.idKey, e.createdAt = $now, e.updatedAt = $now
ON MATCH SET e.description = CASE
    WHEN size(coalesce(row.description, '')) > size(coalesce(e.description, '')) THEN row.description
    ELSE e.description END,
  e.attributeValues = coalesce(e.attributeValues, []) + [j IN range(0, size(row.attrKeys) - 1)
    WHERE NOT row.attrKeys[j] IN coalesce(e.attributeKeys, []) | row.attrValues[j]],
  e.attributeKeys = coalesce(e.attributeKeys, []) + [x IN row.attrKeys WHERE NOT x IN coalesce(e.attributeKeys, [])],
  e.updatedAt = $now
FOREACH (s IN row.synonyms |
  MERGE (sk:Key {key: s.key})
  ON CREATE SET sk.id = s.id, sk.entityID = e.id, sk.text = s.text, sk.normalized = s.normalized,
    sk.source = 'customer_defined', sk.accountID = $accountID, sk.environment = $environment,
    sk.bucketID = row.bucketID, sk.createdAt = $now, sk.forms = s.forms[..100]
  ON MATCH SET sk.forms = CASE WHEN sk.entityID = e.id
    THEN (coalesce(sk.forms, [sk.text]) + [f IN s.forms WHERE NOT f IN coalesce(sk.forms, [sk.text])])[..100]
    ELSE sk.forms END)
RETURN row.i AS i, e.id AS entityID, e.seedTag = row.tag AS created
