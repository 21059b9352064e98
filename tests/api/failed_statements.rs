//! A statement carrying large lists runs on Neo4j in a transaction of its own (neo4rs's `Txn`,
//! see `Carried` in src/store/graph/neo4j/mod.rs). When it fails, the adapter drops that
//! transaction without a ROLLBACK (neo4rs cannot send one after a FAILURE) and its connection
//! goes back to the pool. These tests hold what that relies on: Neo4j rolls the transaction
//! back at the failure itself, so its locks do not wait for the connection's next use and a
//! retry on another connection is not blocked by them. A reply neo4rs cannot read is the other
//! way a statement ends early: the adapter retires the pool, closing the connection, which is
//! what rolls that transaction back (see the last test). Neo4j pass only
//! (`CANON_TEST_NEO4J_URI`); off it each test says SKIPPED.

use crate::helpers::{spawn_app, spawn_app_with};
use canon::jobs::Handlers;
use serde_json::{json, Map, Value};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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
    write_past_the_engine(&uri, "FailedTxProbe", &key).await;

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

/// Sets `v` on the probe node (`v` = 2) over a Neo4j connection of its own, past canon's engine
/// and its pool; it must not wait on a lock another transaction kept.
async fn write_past_the_engine(uri: &str, label: &str, key: &str) {
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
    let write = other.run(neo4rs::query(&format!("MATCH (n:{label} {{k: $k}}) SET n.v = 2")).param("k", key));
    tokio::time::timeout(Duration::from_secs(10), write)
        .await
        .expect("the write is not kept waiting on the failed transaction's lock")
        .expect("the write succeeds");
}

/// A string the proxy below spoils on its way from Neo4j to canon.
const SPOILED: &[u8] = b"unreadable-row!";

/// Takes the probe node's write lock, then returns 64 rows (a large statement: a transaction of
/// its own), the last one carrying [`SPOILED`].
const LOCK_THEN_UNREADABLE: &str = "MATCH (n:UnreadableRowProbe {k: $k}) SET n.v = 1 WITH n \
     UNWIND $values AS x RETURN CASE WHEN x = 63 THEN 'unreadable-row!' ELSE 'fine' END AS r";

/// A Bolt proxy to `target` that turns the first byte of [`SPOILED`] in Neo4j's replies into 0xFF,
/// making that string invalid UTF-8: a row neo4rs cannot read, as a value of a kind it does not
/// know would be. Returns the proxy's `bolt://` URL.
async fn spoiling_proxy(target: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port for the proxy");
    let url = format!("bolt://{}", listener.local_addr().expect("its address"));
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(&target).await else { continue };
            let (mut client_read, mut client_write) = client.into_split();
            let (mut server_read, mut server_write) = server.into_split();
            tokio::spawn(async move { tokio::io::copy(&mut client_read, &mut server_write).await });
            tokio::spawn(async move {
                let (mut buffer, mut held) = (vec![0_u8; 64 * 1024], Vec::new());
                while let Ok(read @ 1..) = server_read.read(&mut buffer).await {
                    held.extend_from_slice(&buffer[..read]);
                    for at in 0..held.len().saturating_sub(SPOILED.len() - 1) {
                        if held[at..].starts_with(SPOILED) {
                            held[at] = 0xFF;
                        }
                    }
                    // Hold back an end that may be the start of SPOILED cut by the read.
                    let keep = (1..SPOILED.len()).rev().find(|n| held.ends_with(&SPOILED[..*n])).unwrap_or(0);
                    let sent: Vec<u8> = held.drain(..held.len() - keep).collect();
                    if client_write.write_all(&sent).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    url
}

#[tokio::test]
async fn a_row_neo4rs_cannot_read_leaves_no_lock_held_and_no_connection_out_of_step() {
    let Ok(uri) = std::env::var("CANON_TEST_NEO4J_URI") else {
        println!("SKIPPED: the Bolt exchange is Neo4j's (CANON_TEST_NEO4J_URI)");
        return;
    };
    let proxy = spoiling_proxy(uri.trim_start_matches("bolt://").to_string()).await;
    let app = spawn_app_with(Handlers::default(), |config| config.neo4j_uri = Some(proxy)).await;
    let engine = app.app().state.graph.engine().clone();
    let key = ulid::Ulid::new().to_string();
    engine
        .run("CREATE (:UnreadableRowProbe {k: $k, v: 0})", &params(json!({ "k": key })))
        .await
        .expect("the probe node is created");

    let values: Vec<i64> = (0..64).collect();
    let failed = engine.run(LOCK_THEN_UNREADABLE, &params(json!({ "k": key, "values": values }))).await;
    assert!(failed.is_err(), "the last row cannot be read: {failed:?}");
    // The statement's transaction took the node's lock; nothing must keep it open.
    write_past_the_engine(&uri, "UnreadableRowProbe", &key).await;

    // The same on an auto-commit statement, and then each statement gets its own answer: a
    // connection whose unread reply were still on the wire would answer the next one wrongly.
    let failed = engine.run("RETURN 'unreadable-row!' AS r", &Map::new()).await;
    assert!(failed.is_err(), "the row cannot be read: {failed:?}");
    for i in 0..20 {
        let rows = engine.run("RETURN $i AS i", &params(json!({ "i": i }))).await.expect("it answers");
        assert_eq!(rows.len(), 1, "statement {i} gets one row: {rows:?}");
        assert_eq!(rows[0].get("i"), Some(&json!(i)), "statement {i} gets its own answer");
    }
    let rows = engine
        .run("MATCH (n:UnreadableRowProbe {k: $k}) RETURN n.v AS v", &params(json!({ "k": key })))
        .await
        .expect("the probe reads back");
    assert_eq!(rows[0].get("v"), Some(&json!(2)), "the write past the engine stands");
    engine
        .run("MATCH (n:UnreadableRowProbe {k: $k}) DELETE n", &params(json!({ "k": key })))
        .await
        .expect("the probe is removed");
}
