// The merge records any of $ids took part in (the batched form of entity_merges, for
// loaders; the caller sorts them newest first), by the same two indexed lookups.
UNWIND $ids AS id
MATCH (rec:Merge {survivorID: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(survivorID)
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
UNION
UNWIND $ids AS id
MATCH (rec:Merge {mergedID: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(mergedID)
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
