// Neo4j: where a page's scan of the tenant's entities stopped, asked when the page came back
// short (fewer rows than it wanted): the $skip + 1-th entity after $after in ID order, the last
// of the $scan rows the page's statement read (review_queue_ordered.cypher and the others that
// stop after $scan rows), or none when the tenant's entities ended first. The next page goes
// on after it.
MATCH (e:Entity)
USING INDEX e:Entity(accountID, environment, id)
WHERE e.accountID = $accountID AND e.environment = $environment AND e.id > $after AND e.id <= $until
WITH e
ORDER BY e.accountID, e.environment, e.id
SKIP $skip
LIMIT 1
RETURN e.id AS scannedTo
