// How many entities the tenant holds (merged ones too: they are nodes still), for its bound
// (src/graph/tenant_size.rs). Read at most once a minute per tenant and instance.
MATCH (e:Entity)
WHERE e.accountID = $accountID AND e.environment = $environment
RETURN count(e) AS held
