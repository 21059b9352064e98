// Undo of a curation decision: an approved or rejected live entity goes back to the queue
// with the status it had before ($status: extracted or proposed). Returns its status before
// and whether it moved.
OPTIONAL MATCH (e:Entity {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
WITH e, e.status AS before,
  e IS NOT NULL AND e.mergedInto IS NULL AND e.status IN ['approved', 'rejected'] AS allowed
FOREACH (x IN CASE WHEN allowed THEN [e] ELSE [] END |
  SET x.status = $status, x.validatedAt = NULL, x.validatedByUserID = NULL, x.updatedAt = $now)
RETURN e IS NOT NULL AS found, before, allowed, e.typeName AS typeName
