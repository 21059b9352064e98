// One merge record by its ID (the merge just made), in entity_merges' columns. By the indexed
// ID: reading a new merge back through entity_merges scanned every merge of the account.
MATCH (rec:Merge {id: $mergeID, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(id)
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
