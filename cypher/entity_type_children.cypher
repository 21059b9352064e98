// The live direct children of each of $ids, the first $limit of each in typeID order (for
// loaders; a type may have any number of children, and GET /v3/entity-types?parentTypeID=
// pages them all). Read from each parent by its index, the children sorted as references and
// cut before their schemas (up to 64 KB each) are read: the tenant's types were scanned,
// and every child of the page's types read whole.
UNWIND $ids AS parentID
MATCH (p:EntityType {id: parentID, accountID: $accountID, environment: $environment})
USING INDEX SEEK p:EntityType(id)
MATCH (t:EntityType)-[r:CHILD_OF]->(p)
WHERE t.deletedAt IS NULL
WITH p, t, r
ORDER BY t.id ASC
WITH p, collect([t, r])[0..$limit] AS kept
UNWIND kept AS child
WITH p, child[0] AS t, child[1] AS r
RETURN t.id AS typeID, t.name AS name, t.description AS description, t.attributeSchema AS attributeSchema, p.id AS parentTypeID, t.createdAt AS createdAt, t.updatedAt AS updatedAt, r IS NOT NULL AS hasParent
ORDER BY typeID ASC
