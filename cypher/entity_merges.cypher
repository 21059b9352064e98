// A page of the merge records an entity took part in, as survivor or as merged, newest first:
// the $limit before merge $before (null: the newest; merge IDs are time-ordered). Each side
// is one indexed lookup, joined by UNION (one OR across both properties scanned every merge
// of the account: 32 ms a read at 15,000 merges, and growing); the caller takes the newest
// $limit of the two. An entity may have taken part in any number of merges.
MATCH (rec:Merge {survivorID: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(survivorID)
WHERE $before IS NULL OR rec.id < $before
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
ORDER BY mergeID DESC
LIMIT $limit
UNION
MATCH (rec:Merge {mergedID: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK rec:Merge(mergedID)
WHERE $before IS NULL OR rec.id < $before
RETURN rec.id AS mergeID, rec.survivorID AS survivorID, rec.mergedID AS mergedID,
  rec.mergedBy AS mergedBy, rec.mergedAt AS mergedAt, rec.undoneBy AS undoneBy,
  rec.undoneAt AS undoneAt, size(rec.keyIDs) AS keysMoved, size(rec.mentionIDs) AS mentionsMoved,
  size(rec.outIDs) + size(rec.inIDs) AS relationsMoved
ORDER BY mergeID DESC
LIMIT $limit
