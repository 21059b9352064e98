// A merge record and whether its survivor is still live (why an unmerge was refused).
MATCH (rec:Merge {id: $mergeID, accountID: $accountID, environment: $environment})
MATCH (s:Entity {id: rec.survivorID})
RETURN rec.undoneAt AS undoneAt, s.mergedInto AS survivorMergedInto, rec.survivorID AS survivorID
