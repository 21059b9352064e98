// Since when (ms) every entity ID of the tenant has its IdBlock: created on the tenant's
// first use by a canon that keeps blocks; entities minted before then may have none.
MERGE (m:IdBlocks {tenantKey: $blockKey})
ON CREATE SET m.since = $now
RETURN m.since AS since
