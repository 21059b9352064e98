// FalkorDB schema, applied at start (each statement separated by `;`; an index that already
// exists is not an error). FalkorDB's uniqueness constraints are not Cypher: each
// `// unique: Label(property)` line below is applied with GRAPH.CONSTRAINT CREATE by the adapter.
//
// unique: Bucket(id)
// unique: Bucket(defaultKey)
// unique: Bucket(liveNameKey)
// unique: EntityType(id)
// unique: EntityType(liveNameKey)
// unique: Entity(id)
// unique: Key(key)
// unique: Mention(id)
// unique: User(id)
CREATE INDEX FOR (b:Bucket) ON (b.accountID, b.environment);
CREATE INDEX FOR (t:EntityType) ON (t.accountID, t.environment);
CREATE INDEX FOR (e:Entity) ON (e.bucketID);
CREATE INDEX FOR (m:Mention) ON (m.bucketID);
CREATE INDEX FOR (e:Entity) ON (e.accountID, e.environment);
CREATE INDEX FOR (k:Key) ON (k.entityID);
CREATE INDEX FOR (k:Key) ON (k.id);
CREATE INDEX FOR (m:Mention) ON (m.entityID);
CREATE INDEX FOR (m:Mention) ON (m.transformationID);
CREATE INDEX FOR (g:Merge) ON (g.id);
CREATE INDEX FOR (g:Merge) ON (g.survivorID);
CREATE INDEX FOR (g:Merge) ON (g.mergedID);
CREATE INDEX FOR (e:Entity) ON (e.typeID);
// The review queue's counters count per status and today's decisions by these.
CREATE INDEX FOR (e:Entity) ON (e.status);
CREATE INDEX FOR (e:Entity) ON (e.validatedAt);
CREATE INDEX FOR (k:Key) ON (k.accountID, k.environment);
CREATE INDEX FOR ()-[r:RELATES_TO]-() ON (r.id);
CREATE INDEX FOR (k:Key) ON (k.homonymOf);
CREATE INDEX FOR (e:Entity) ON (e.idKey);
CREATE INDEX FOR ()-[r:RELATES_TO]-() ON (r.idKey);
CREATE INDEX FOR (g:GraphMigration) ON (g.name);
CREATE INDEX FOR (b:IdBlock) ON (b.tenantKey, b.at);
CREATE INDEX FOR (m:IdBlocks) ON (m.tenantKey);
CREATE INDEX FOR (l:TenantLock) ON (l.key);
