//! A statement carrying large lists runs on Neo4j in a transaction of its own (neo4rs's `Txn`,
//! see `Carried` in src/store/graph/neo4j/mod.rs). When it fails, the adapter drops that
//! transaction without a ROLLBACK (neo4rs cannot send one after a FAILURE) and its connection
//! goes back to the pool. These tests hold what that relies on: Neo4j rolls the transaction
//! back at the failure itself, so its locks do not wait for the connection's next use and a
//! retry on another connection is not blocked by them. Neo4j pass only
//! (`CANON_TEST_NEO4J_URI`); off it each test says SKIPPED.

use crate::helpers::spawn_app;
use serde_json::{json, Map, Value};
use std::time::Duration;

fn params(value: Value) -> Map<String, Value> {
    let Value::Object(map) = value else { panic!("params must be an object") };
    map
}

/// Sets the node's `v` (taking its write lock) and then divides by zero for each listed value:
/// 64 values make it a large statement.
const LOCK_THEN_FAIL: &str =
    "MATCH (n:FailedTxProbe {k: $k}) SET n.v = 1 WITH n UNWIND $values AS x RETURN n.v / (x - x) AS boom";

#[tokio::test]
async fn a_failed_large_statement_on_neo4j_holds_no_lock_a_write_on_another_connection_waits_for() {
    let Ok(uri) = std::env::var("CANON_TEST_NEO4J_URI") else {
        println!("SKIPPED: the transaction is Neo4j's (CANON_TEST_NEO4J_URI)");
        return;
    };
    let app = spawn_app().await;
    let engine = app.app().state.graph.engine().clone();
    let key = ulid::Ulid::new().to_string();
    engine
        .run("CREATE (:FailedTxProbe {k: $k, v: 0})", &params(json!({ "k": key })))
        .await
        .expect("the probe node is created");

    let values: Vec<i64> = (0..64).collect();
    let failed = engine.run(LOCK_THEN_FAIL, &params(json!({ "k": key, "values": values }))).await;
    assert!(failed.is_err(), "the statement divides by zero: {failed:?}");

    // A connection of its own, so the failed transaction's (back in the engine's pool, not
    // reset yet) cannot be the one that writes next.
    let user = std::env::var("CANON_TEST_NEO4J_USER").unwrap_or_else(|_| "neo4j".into());
    let password = std::env::var("CANON_TEST_NEO4J_PASSWORD").unwrap_or_default();
    let config = neo4rs::ConfigBuilder::default()
        .uri(uri.trim_start_matches("bolt://"))
        .user(user)
        .password(password)
        .max_connections(1)
        .build()
        .expect("a Neo4j configuration");
    let other = neo4rs::Graph::connect(config).await.expect("a second connection to Neo4j");
    let write =
        other.run(neo4rs::query("MATCH (n:FailedTxProbe {k: $k}) SET n.v = 2").param("k", key.as_str()));
    tokio::time::timeout(Duration::from_secs(10), write)
        .await
        .expect("the write is not kept waiting on the failed transaction's lock")
        .expect("the write succeeds");

    let rows = engine
        .run("MATCH (n:FailedTxProbe {k: $k}) RETURN n.v AS v", &params(json!({ "k": key })))
        .await
        .expect("the engine's pool still answers after the failure");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get("v"), Some(&json!(2)), "the other connection's write stands");
    engine
        .run("MATCH (n:FailedTxProbe {k: $k}) DELETE n", &params(json!({ "k": key })))
        .await
        .expect("the probe is removed");
}
