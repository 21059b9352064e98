// Live, unrejected entities with what duplicate detection compares: effective type, bucket,
// normalised name and every normalised surface form.
MATCH (e:Entity {accountID: $accountID, environment: $environment})
WHERE e.mergedInto IS NULL AND e.status <> 'rejected'
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
OPTIONAL MATCH (t:EntityType {id: e.typeID})
OPTIONAL MATCH (k:Key {entityID: e.id})
WHERE k.key IS NOT NULL
RETURN e.id AS entityID, e.bucketID AS bucketID, e.normalized AS normalized,
  coalesce(t.name, e.typeName) AS type, collect(k.normalized) AS forms
