// The first $limit mentions (in mention-ID order) of each of $ids, for loaders that batch
// many entities into one statement. Each entity's mentions are sorted as references and cut
// to $limit before their records are built: a hub's 300,000 mentions took FalkorDB 535 ms
// read whole, 185 ms so.
UNWIND $ids AS id
MATCH (mn:Mention {entityID: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK mn:Mention(entityID)
WITH id, mn
ORDER BY mn.id
WITH id, collect(mn)[0..$limit] AS kept
UNWIND kept AS mn
WITH id, mn
ORDER BY mn.id
WITH id, collect({mentionID: mn.id, entityID: mn.entityID, referenceID: mn.referenceID,
  transformationID: mn.transformationID, page: mn.page, sectionLabel: mn.sectionLabel,
  surface: mn.surface, createdAt: mn.createdAt}) AS mentions
RETURN id AS entityID, mentions
