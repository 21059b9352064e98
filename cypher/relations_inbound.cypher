// One page of an entity's inbound edges in relation-ID order.
MATCH (o:Entity)-[r:RELATES_TO]->(e:Entity {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK e:Entity(id)
WHERE ($relationType IS NULL OR r.relationType = $relationType)
  AND ($cursor IS NULL OR r.id > $cursor)
  AND ($bucketID IS NULL OR r.bucketID = $bucketID)
// The page is cut before the far ends' types are read: a hub's every edge looked its far
// end's type up only for the page to keep $limit of them.
WITH r, o
ORDER BY r.id
LIMIT $limit
OPTIONAL MATCH (t:EntityType {id: o.typeID})
USING INDEX SEEK t:EntityType(id)
RETURN r.id AS relationID, r.relationType AS relationType, r.mentionCount AS mentionCount,
  r.firstSeenAt AS firstSeenAt, o.id AS otherID, o.canonical AS otherCanonical,
  coalesce(t.name, o.typeName) AS otherType
ORDER BY relationID
