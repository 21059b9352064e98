// Removes a page of bucket $id's mentions or entities by ID (bucket_mentions_page.cypher,
// bucket_entities_page.cypher): an entity with the keys of its names and its relations.
// Only members of that bucket match.
UNWIND $ids AS memberID
OPTIONAL MATCH (m:Mention {id: memberID, bucketID: $id})
USING INDEX SEEK m:Mention(id)
OPTIONAL MATCH (e:Entity {id: memberID, bucketID: $id})
USING INDEX SEEK e:Entity(id)
WITH collect(m) AS mentions, collect(e) AS entities
// Unwound by ID (FalkorDB cannot match on a property of an unmatched optional node).
UNWIND CASE WHEN size(entities) = 0 THEN [null] ELSE [x IN entities | x.id] END AS entityID
OPTIONAL MATCH (k:Key {entityID: entityID})
USING INDEX SEEK k:Key(entityID)
WITH mentions, entities, collect(k) AS keys
FOREACH (n IN keys | DETACH DELETE n)
FOREACH (n IN mentions | DETACH DELETE n)
FOREACH (n IN entities | DETACH DELETE n)
RETURN size(mentions) + size(entities) AS removed
