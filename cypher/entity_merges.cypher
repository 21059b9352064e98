// The merge records an entity took part in, newest first.
MATCH (rec:Merge {accountID: $accountID, environment: $environment})
WHERE rec.survivorID = $id OR rec.mergedID = $id
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
ORDER BY rec.id DESC
