// The merge records each of $ids took part in that the first page of its history or of its
// timeline may show (the batched form of entity_merges and entity_merges_timeline, for
// loaders): on each side the $limit newest, and the $limit latest undone. Records are sorted
// as references and cut before they are read; the caller takes what it shows, UNION drops a
// record found twice.
UNWIND $ids AS id
MATCH (rec:Merge {survivorID: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(survivorID)
WHERE true
WITH id, rec
ORDER BY rec.id DESC
WITH id, collect(rec)[0..$limit] AS kept
UNWIND kept AS rec
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
UNION
UNWIND $ids AS id
MATCH (rec:Merge {survivorID: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(survivorID)
WHERE rec.undoneAt IS NOT NULL
WITH id, rec
ORDER BY rec.undoneAt DESC
WITH id, collect(rec)[0..$limit] AS kept
UNWIND kept AS rec
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
UNION
UNWIND $ids AS id
MATCH (rec:Merge {mergedID: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(mergedID)
WHERE true
WITH id, rec
ORDER BY rec.id DESC
WITH id, collect(rec)[0..$limit] AS kept
UNWIND kept AS rec
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
UNION
UNWIND $ids AS id
MATCH (rec:Merge {mergedID: id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(mergedID)
WHERE rec.undoneAt IS NOT NULL
WITH id, rec
ORDER BY rec.undoneAt DESC
WITH id, collect(rec)[0..$limit] AS kept
UNWIND kept AS rec
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
