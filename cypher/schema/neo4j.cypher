// Neo4j 5 schema, applied at start; every statement is idempotent.
CREATE CONSTRAINT bucket_id IF NOT EXISTS FOR (b:Bucket) REQUIRE b.id IS UNIQUE;
CREATE CONSTRAINT bucket_default_key IF NOT EXISTS FOR (b:Bucket) REQUIRE b.defaultKey IS UNIQUE;
CREATE CONSTRAINT bucket_live_name_key IF NOT EXISTS FOR (b:Bucket) REQUIRE b.liveNameKey IS UNIQUE;
CREATE CONSTRAINT entity_type_id IF NOT EXISTS FOR (t:EntityType) REQUIRE t.id IS UNIQUE;
CREATE CONSTRAINT entity_type_live_name_key IF NOT EXISTS FOR (t:EntityType) REQUIRE t.liveNameKey IS UNIQUE;
CREATE INDEX bucket_tenant IF NOT EXISTS FOR (b:Bucket) ON (b.accountID, b.environment);
CREATE INDEX entity_type_tenant IF NOT EXISTS FOR (t:EntityType) ON (t.accountID, t.environment);
CREATE INDEX entity_bucket IF NOT EXISTS FOR (e:Entity) ON (e.bucketID);
CREATE INDEX mention_bucket IF NOT EXISTS FOR (m:Mention) ON (m.bucketID);
CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE;
CREATE CONSTRAINT key_key IF NOT EXISTS FOR (k:Key) REQUIRE k.key IS UNIQUE;
CREATE CONSTRAINT mention_id IF NOT EXISTS FOR (m:Mention) REQUIRE m.id IS UNIQUE;
CREATE INDEX entity_tenant IF NOT EXISTS FOR (e:Entity) ON (e.accountID, e.environment);
CREATE INDEX key_entity IF NOT EXISTS FOR (k:Key) ON (k.entityID);
CREATE INDEX key_id IF NOT EXISTS FOR (k:Key) ON (k.id);
CREATE INDEX mention_entity IF NOT EXISTS FOR (m:Mention) ON (m.entityID);
CREATE INDEX mention_transformation IF NOT EXISTS FOR (m:Mention) ON (m.transformationID);
CREATE INDEX merge_id IF NOT EXISTS FOR (g:Merge) ON (g.id);
CREATE INDEX merge_survivor IF NOT EXISTS FOR (g:Merge) ON (g.survivorID);
CREATE INDEX merge_merged IF NOT EXISTS FOR (g:Merge) ON (g.mergedID);
// (Not `entity_type_id`: that name is the EntityType constraint's, and Neo4j names indexes and
// constraints in one namespace, so IF NOT EXISTS skipped this index without a word.)
CREATE INDEX entity_of_type IF NOT EXISTS FOR (e:Entity) ON (e.typeID);
// The review queue's counters count per status and today's decisions by these.
CREATE INDEX entity_status IF NOT EXISTS FOR (e:Entity) ON (e.status);
CREATE INDEX entity_validated_at IF NOT EXISTS FOR (e:Entity) ON (e.validatedAt);
CREATE INDEX key_tenant IF NOT EXISTS FOR (k:Key) ON (k.accountID, k.environment);
CREATE INDEX relation_id IF NOT EXISTS FOR ()-[r:RELATES_TO]-() ON (r.id);
CREATE CONSTRAINT user_id IF NOT EXISTS FOR (u:User) REQUIRE u.id IS UNIQUE;
CREATE INDEX key_homonym_of IF NOT EXISTS FOR (k:Key) ON (k.homonymOf);
CREATE INDEX entity_id_key IF NOT EXISTS FOR (e:Entity) ON (e.idKey);
CREATE INDEX relation_id_key IF NOT EXISTS FOR ()-[r:RELATES_TO]-() ON (r.idKey);
CREATE INDEX graph_migration IF NOT EXISTS FOR (g:GraphMigration) ON (g.name);
CREATE INDEX id_block IF NOT EXISTS FOR (b:IdBlock) ON (b.tenantKey, b.at);
CREATE INDEX id_blocks_since IF NOT EXISTS FOR (m:IdBlocks) ON (m.tenantKey);
// One lock node per tenant: statements that read, decide and write (seeds, merges) set it
// first, so on Neo4j, which locks per node as it writes, they run one at a time per tenant as
// they do on FalkorDB. Unique, or two first seeds could each MERGE a lock of their own.
CREATE CONSTRAINT tenant_lock_key IF NOT EXISTS FOR (l:TenantLock) REQUIRE l.key IS UNIQUE;
// The review queue's and the knowledge graph's pages in ID order within one tenant
// (review_queue_ordered.cypher, knowledge_graph_page_ordered.cypher): seeking the tenant's
// part of the index, a page reads its own rows only. Seeking Entity.id / RELATES_TO.id alone, a
// page read every other tenant's rows after its cursor (a new tenant's first page read all
// older tenants': 1.4 s beside a tenant of 1,000,000 entities).
CREATE INDEX entity_tenant_id IF NOT EXISTS FOR (e:Entity) ON (e.accountID, e.environment, e.id);
CREATE INDEX relation_tenant_id IF NOT EXISTS FOR ()-[r:RELATES_TO]-() ON (r.accountID, r.environment, r.id);
