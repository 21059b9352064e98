// Records one observation of a directed relation between two live entities of one bucket:
// a new edge, or one more mention of an existing edge of that type.
MATCH (a:Entity {id: $sourceID, accountID: $accountID, environment: $environment})
USING INDEX SEEK a:Entity(id)
WHERE a.mergedInto IS NULL
MATCH (b:Entity {id: $targetID, accountID: $accountID, environment: $environment})
USING INDEX SEEK b:Entity(id)
WHERE b.mergedInto IS NULL AND b.bucketID = a.bucketID
MERGE (a)-[r:RELATES_TO {relationType: $relationType}]->(b)
ON CREATE SET r.id = $id, r.idKey = $idKey, r.bucketID = a.bucketID, r.accountID = $accountID,
  r.environment = $environment, r.mentionCount = 0, r.firstSeenAt = $now, r.createdAt = $now
SET r.mentionCount = r.mentionCount + 1
RETURN r.id AS relationID, a.id AS sourceEntityID, b.id AS targetEntityID,
  r.relationType AS relationType, r.mentionCount AS mentionCount, r.firstSeenAt AS firstSeenAt,
  r.bucketID AS bucketID
