// The merge records whose merge or undoing an entity's timeline page may show: on each side
// the $limit latest merged, and the $limit latest undone (an undoing comes after its merge, so
// the two orders differ), before the page's cursor ($beforeAt, RFC 3339, and $beforeKey, as
// the timeline orders items: a merge by its ID, its undoing by its ID and '.undo'; null: the
// newest). The caller cuts the page; UNION drops a record found twice.
MATCH (rec:Merge {survivorID: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(survivorID)
WHERE $beforeAt IS NULL OR rec.mergedAt < $beforeAt
  OR (rec.mergedAt = $beforeAt AND rec.id < $beforeKey)
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
ORDER BY mergeID DESC
LIMIT $limit
UNION
MATCH (rec:Merge {survivorID: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(survivorID)
WHERE rec.undoneAt IS NOT NULL AND ($beforeAt IS NULL OR rec.undoneAt < $beforeAt
  OR (rec.undoneAt = $beforeAt AND rec.id + '.undo' < $beforeKey))
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
ORDER BY undoneAt DESC
LIMIT $limit
UNION
MATCH (rec:Merge {mergedID: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(mergedID)
WHERE $beforeAt IS NULL OR rec.mergedAt < $beforeAt
  OR (rec.mergedAt = $beforeAt AND rec.id < $beforeKey)
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
ORDER BY mergeID DESC
LIMIT $limit
UNION
MATCH (rec:Merge {mergedID: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(mergedID)
WHERE rec.undoneAt IS NOT NULL AND ($beforeAt IS NULL OR rec.undoneAt < $beforeAt
  OR (rec.undoneAt = $beforeAt AND rec.id + '.undo' < $beforeKey))
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
ORDER BY undoneAt DESC
LIMIT $limit
