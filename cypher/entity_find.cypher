// Live canonical entities ($live; false only where the walk looks for where the tenant's
// entities begin) with IDs in [$from, $to) for `POST /v3/fs` op=find (a creation-time window
// the idKey index answers, see src/graph/window.rs), in entityID order: optionally one
// bucket, one effective type (the assigned type's name, else the inferred one), created since,
// and a case-insensitive substring of the canonical name. It read the tenant's every entity
// after the cursor, and looked up each one's type, for every page.
MATCH (e:Entity)
WHERE e.idKey >= $fromKey AND e.idKey < $toKey
  AND toString(e.id) >= $from AND toString(e.id) < $to
  AND e.accountID = $accountID AND e.environment = $environment
  AND (NOT $live OR e.status <> 'merged')
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($since IS NULL OR e.createdAt >= $since)
  AND ($search IS NULL OR toLower(e.canonical) CONTAINS $search)
OPTIONAL MATCH (t:EntityType {id: e.typeID})
USING INDEX SEEK t:EntityType(id)
WITH e, coalesce(t.name, e.typeName) AS type
WHERE $type IS NULL OR type = $type
RETURN e.id AS entityID
ORDER BY e.id
LIMIT $limit
