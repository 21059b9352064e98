//! The relations the knowledge-graph page is read over: the first 20,000 as observations
//! through the service (`create_relation`, as a pipeline records them), any beyond that
//! straight to the engine in batches (the service's one-edge-per-statement would take hours
//! for a million).

use canon::graph::{GraphService, Tenant};
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};

/// Relations written through the service before the rest go straight to the engine.
const THROUGH_SERVICE: usize = 20_000;
const BATCH: usize = 1_000;

/// The edge written directly: the same properties `cypher/relation_create.cypher` sets on a
/// new edge, one statement per batch. Pairs are distinct, so CREATE is MERGE here.
const RAW_RELATIONS: &str = "UNWIND $rows AS row \
    MATCH (a:Entity {id: row.a, accountID: $accountID, environment: $environment}) \
    MATCH (b:Entity {id: row.b, accountID: $accountID, environment: $environment}) \
    CREATE (a)-[r:RELATES_TO {relationType: row.type}]->(b) \
    SET r.id = row.id, r.idKey = row.idKey, r.bucketID = a.bucketID, r.accountID = $accountID, \
      r.environment = $environment, r.mentionCount = 1, r.firstSeenAt = $now, r.createdAt = $now \
    RETURN count(r) AS written";

/// Writes `count` relations between `ids` (the service's first, then the engine's); the
/// number written straight to the engine.
pub async fn create(
    graph: &GraphService,
    tenant: &Tenant,
    ids: &[String],
    count: usize,
) -> anyhow::Result<usize> {
    let n = ids.len();
    anyhow::ensure!(n > 1, "relations need at least two entities");
    // Edge i joins ids[i % n] to the entity (1 + i / n) further on: distinct pairs up to n².
    let pair = |i: usize| (&ids[i % n], &ids[(i % n + 1 + i / n) % n]);
    let kind = |i: usize| if i.is_multiple_of(2) { "supplies" } else { "owns" };
    stream::iter(0..count.min(THROUGH_SERVICE))
        .map(|i| {
            let (a, b) = pair(i);
            async move { graph.create_relation(tenant, a, b, kind(i)).await }
        })
        .buffer_unordered(16)
        .for_each(|r| async move { r.map(|_| ()).unwrap_or_else(|e| eprintln!("relation: {e}")) })
        .await;
    let raw: Vec<usize> = (THROUGH_SERVICE..count).collect();
    let batches = raw.chunks(BATCH).map(|batch| {
        let rows: Vec<Value> = batch
            .iter()
            .map(|&i| {
                let (a, b) = pair(i);
                let id = canon::ids::new_id("rel");
                json!({"a": a, "b": b, "type": kind(i), "idKey": canon::graph::id_keys::id_key(&id), "id": id})
            })
            .collect();
        let params = json!({
            "accountID": tenant.account_id, "environment": tenant.environment.as_str(),
            "now": canon::ids::now_rfc3339(), "rows": rows,
        });
        let Value::Object(params) = params else { unreachable!() };
        (batch.len(), params)
    });
    stream::iter(batches)
        .map(|(expected, params)| async move {
            let rows =
                graph.engine().run(RAW_RELATIONS, &params).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            let written = rows.first().and_then(|r| r["written"].as_u64()).unwrap_or_default() as usize;
            anyhow::ensure!(written == expected, "the engine wrote {written} of {expected} relations");
            Ok(())
        })
        .buffer_unordered(2)
        .collect::<Vec<anyhow::Result<()>>>()
        .await
        .into_iter()
        .collect::<anyhow::Result<Vec<()>>>()?;
    Ok(raw.len())
}
