// The merge records any of $ids took part in, newest first (the batched form of
// entity_merges, for loaders).
MATCH (rec:Merge {accountID: $accountID, environment: $environment})
WHERE rec.survivorID IN $ids OR rec.mergedID IN $ids
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
ORDER BY rec.id DESC
