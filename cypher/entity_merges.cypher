// The merge records an entity took part in, as survivor or as merged (the caller sorts them
// newest first). Two indexed lookups joined by UNION: one OR across both properties scanned
// every merge of the account (32 ms a read at 15,000 merges, and growing).
MATCH (rec:Merge {survivorID: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(survivorID)
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
UNION
MATCH (rec:Merge {mergedID: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(mergedID)
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
