// Neo4j's review_queue.cypher: the page's candidates after $after in entityID order, read in
// one statement. Neo4j's range index on (accountID, environment, id) (entity_tenant_id) hands
// the tenant's IDs out in order, so the statement reads only the tenant's rows and stops at the
// page's end ($limit rows that pass the filters), or after $scan of the tenant's rows, whichever
// comes first: a filter that matches nothing (a fully reviewed queue) read every entity after
// the cursor. A page that comes back short asks where the scan stopped
// (entity_scan_end_ordered.cypher) and, when it stopped before the tenant's end, is read again
// up to there ($until; else the greatest ID), so that the page and its end agree whatever was
// deleted between the two statements; the page ends there, short. FalkorDB's index does not hand IDs out in order (a range
// scan reads its whole range), so there the service walks creation-time windows with
// review_queue.cypher, a statement each, within a time bound. The filters are
// review_queue.cypher's.
// The hint keeps the plan: cached from its first run, one made on a small tenant (seek the
// tenant, then sort) would read and sort a whole large tenant for every page. The ORDER BY
// names the index's own order (the same as e.id's within one tenant), so no sort is planned,
// and the rows after it keep that order (each clause below reads them one by one, lazily).
MATCH (e:Entity)
USING INDEX e:Entity(accountID, environment, id)
WHERE e.accountID = $accountID AND e.environment = $environment AND e.id > $after AND e.id <= $until
WITH e
ORDER BY e.accountID, e.environment, e.id
LIMIT $scan
WITH e
WHERE e.status IN $statuses
  AND ($bucketID IS NULL OR e.bucketID = $bucketID)
  AND ($since IS NULL OR e.createdAt >= $since)
  AND ($typeIDs IS NULL OR e.typeID IN $typeIDs OR (e.typeID IS NULL AND e.typeName IN $typeNames))
RETURN e.id AS entityID
LIMIT $limit
