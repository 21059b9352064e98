// Curation transitions: extracted|proposed → approved|rejected, for each given live entity.
// Returns each ID with its status before and whether it moved.
UNWIND $ids AS id
OPTIONAL MATCH (e:Entity {id: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
WHERE ($bucketID IS NULL OR e.bucketID = $bucketID)
WITH id, e, e.status AS before,
  e IS NOT NULL AND e.mergedInto IS NULL AND e.status IN ['extracted', 'proposed'] AS allowed
FOREACH (x IN CASE WHEN allowed THEN [e] ELSE [] END |
  SET x.status = $status, x.validatedAt = $now, x.validatedByUserID = $userID, x.updatedAt = $now)
RETURN id AS entityID, e IS NOT NULL AS found, before, allowed, e.mergedInto AS mergedInto,
  e.typeName AS typeName
