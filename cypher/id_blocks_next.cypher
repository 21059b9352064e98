// The first millisecond in [$from, $to) in which the tenant's entity IDs were minted (see
// src/graph/id_blocks.rs): one IdBlock per millisecond with entities, so this reads the
// range's blocks, not its entities.
MATCH (b:IdBlock)
WHERE b.tenantKey = $blockKey AND b.at >= $from AND b.at < $to
RETURN min(b.at) AS first
