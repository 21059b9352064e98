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
