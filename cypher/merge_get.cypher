// A merge record and whether its survivor is still live (why an unmerge was refused).
MATCH (rec:Merge {id: $mergeID, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(id)
MATCH (s:Entity {id: rec.survivorID})
USING INDEX SEEK s:Entity(id)
RETURN rec.undoneAt AS undoneAt, s.mergedInto AS survivorMergedInto, rec.survivorID AS survivorID
