// A page of live canonical entities for `POST /v3/fs` op=find, in entityID order after
// $cursor: optionally one bucket, one effective type (the assigned type's name, else the
// inferred one), created since, and a case-insensitive substring of the canonical name.
MATCH (e:Entity)
WHERE e.accountID = $accountID AND e.environment = $environment
  AND e.status <> 'merged'
  AND ($cursor IS NULL OR e.id > $cursor)
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
