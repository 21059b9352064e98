// How many mentions the tenant holds, for its bound (src/graph/tenant_size.rs): through its
// buckets, as mentions are indexed by bucket, not by tenant. Read at most once a minute per
// tenant and instance (every ten minutes while under half the bound).
MATCH (b:Bucket)
WHERE b.accountID = $accountID AND b.environment = $environment
MATCH (m:Mention {bucketID: b.id})
USING INDEX SEEK m:Mention(bucketID)
RETURN count(m) AS held
