//! A stalled or killed FalkorDB is an answer (503 with Retry-After), not a hang; requests
//! that do not need the graph keep working, and canon recovers on its own.

use crate::helpers::{json, spawn_app_with, TestApp};
use canon::jobs::Handlers;
use std::time::{Duration, Instant};

/// The FalkorDB child's PID, checked to be a live process (never 0: kill(0) signals the
/// whole process group, the test runner included).
async fn falkordb_pid(app: &TestApp) -> libc::pid_t {
    let pid = app.app().falkordb_pid().await.expect("canon runs a FalkorDB child") as libc::pid_t;
    assert!(pid > 0, "a real PID: {pid}");
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists(), "FalkorDB {pid} is running");
    pid
}

fn signal(pid: libc::pid_t, signal: libc::c_int) {
    assert!(pid > 0);
    // SAFETY: plain kill(2) on the FalkorDB child this test's canon started (checked above).
    unsafe { libc::kill(pid, signal) };
}

/// Wakes the child if the test fails while it is stopped, so it does not stay frozen.
struct Resume(libc::pid_t);

impl Drop for Resume {
    fn drop(&mut self) {
        signal(self.0, libc::SIGCONT);
    }
}

/// Polls `path` until it answers 200, at most `within`; returns how long it took.
async fn answers_again(app: &TestApp, path: &str, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let response = app.get(path).await;
        let status = response.status();
        if status == 200 {
            return started.elapsed();
        }
        assert_eq!(status, 503, "{path} answers 503 meanwhile (Retry-After), never a 500");
        assert!(started.elapsed() < within, "{path} still answers {status} after {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_stopped_falkordb_gets_graph_requests_a_503_with_retry_after_within_10_s_other_requests_work_and_sigcont_recovers(
) {
    // The supervisor's hung limit is well past the test: this is about answering while it waits.
    let app = spawn_app_with(Handlers::default(), |config| {
        config.neo4j_uri = None; // the embedded FalkorDB child on every pass
        config.falkordb_hung_seconds = 120.0;
    })
    .await;
    let bucket = app.create_bucket("Stalled").await;
    let graph_path = format!("/v3/buckets/{bucket}");
    let pid = falkordb_pid(&app).await;

    signal(pid, libc::SIGSTOP);
    let resume = Resume(pid);
    let started = Instant::now();
    let (graph, functions) = tokio::join!(app.get(&graph_path), async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let response = app.get("/v3/functions").await;
        (response.status(), started.elapsed())
    });
    let waited = started.elapsed();
    assert_eq!(graph.status(), 503, "a graph request on a stalled engine");
    assert!(waited < Duration::from_secs(10), "the 503 came after {waited:?}");
    let retry_after = graph.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_string);
    assert!(retry_after.as_deref().is_some_and(|v| v.parse::<u64>().is_ok()), "Retry-After: {retry_after:?}");
    let body = json(graph).await;
    assert!(body["message"].as_str().unwrap_or_default().contains("not answering"), "{body}");
    let (functions_status, functions_at) = functions;
    assert_eq!(functions_status, 200, "listing functions needs no graph");
    assert!(functions_at < waited, "functions answered ({functions_at:?}) while the graph request waited");

    // Once known stalled, a request does not wait out the stall again.
    let again = Instant::now();
    assert_eq!(app.get(&graph_path).await.status(), 503);
    assert!(again.elapsed() < Duration::from_secs(5), "second 503 after {:?}", again.elapsed());
    assert_eq!(app.get("/v3/functions").await.status(), 200);

    drop(resume);
    let took = answers_again(&app, &graph_path, Duration::from_secs(15)).await;
    println!("graph answered again {took:?} after SIGCONT");
    assert_eq!(falkordb_pid(&app).await, pid, "the same child serves: it was resumed, not replaced");
    assert_eq!(json(app.get(&graph_path).await).await["name"], "Stalled");
}

/// 5,000 entities written through the API, then the child is killed as a crash (or the OOM
/// killer) would: the supervisor restarts it from its files and graph requests answer again.
/// The figure it prints is the crash-restart time the README states.
#[tokio::test]
async fn a_killed_falkordb_with_5000_entities_is_restarted_and_answers_graph_requests_again_within_20_s() {
    let app = spawn_app_with(Handlers::default(), |config| config.neo4j_uri = None).await;
    let bucket = app.create_bucket("Before the kill").await;
    for batch in 0..100 {
        let rows: Vec<_> = (0..50)
            .map(|i| serde_json::json!({ "canonical": format!("Killed Company {batch} {i}"), "type": "Company" }))
            .collect();
        app.seed(serde_json::json!(rows)).await;
    }
    let aof = app.config.data_dir.join("falkordb/appendonlydir");
    let sizes: Vec<(String, u64)> = std::fs::read_dir(&aof)
        .unwrap()
        .filter_map(Result::ok)
        .map(|f| (f.file_name().to_string_lossy().into_owned(), f.metadata().map(|m| m.len()).unwrap_or(0)))
        .collect();
    println!("append-only files before the kill: {sizes:?}");
    let pid = falkordb_pid(&app).await;

    signal(pid, libc::SIGKILL);
    let graph_path = format!("/v3/buckets/{bucket}");
    assert_eq!(app.get("/v3/functions").await.status(), 200, "non-graph requests answer meanwhile");
    let took = answers_again(&app, &graph_path, Duration::from_secs(20)).await;
    println!("graph answered again {took:?} after kill -9 of FalkorDB with 5,000 entities");
    assert_ne!(falkordb_pid(&app).await, pid, "a new child serves");
    let count = app
        .cypher(
            "MATCH (e:Entity) WHERE e.canonical STARTS WITH 'Killed Company' RETURN count(e) AS n",
            serde_json::json!({}),
        )
        .await;
    assert_eq!(count[0]["n"], 5000, "every acknowledged entity survived the kill");
}

/// A write that holds FalkorDB's main thread while it commits leaves PING unanswered; the
/// supervisor must wait for it rather than abort the child as hung and lose the write (a
/// million-node CREATE under load was aborted at the 30 s limit). Here the limit is 1 s and
/// the write holds the child for longer. Reads sent meanwhile wait behind the commit: they
/// must not be answered 503 as if the engine had stalled (a bench writing relations under load
/// once got 5,804 of them).
#[tokio::test]
async fn a_write_that_silences_falkordb_longer_than_the_hung_limit_is_waited_for_not_aborted() {
    let app = spawn_app_with(Handlers::default(), |config| {
        config.neo4j_uri = None;
        config.falkordb_hung_seconds = 1.0;
    })
    .await;
    let bucket = app.create_bucket("Beside a long write").await;
    let before = falkordb_pid(&app).await;
    let started = Instant::now();
    let written = std::sync::atomic::AtomicBool::new(false);
    let write = async {
        app.cypher(
            "UNWIND range(1, 2000000) AS i CREATE (:Entity {id: 'ent_long' + toString(i), accountID: 'acc_long'})",
            serde_json::json!({}),
        )
        .await;
        written.store(true, std::sync::atomic::Ordering::Relaxed);
    };
    // Four reads a second until the write is answered: through its commit, which comes last.
    let reads = async {
        let (mut statuses, mut longest) = (Vec::new(), Duration::ZERO);
        while !written.load(std::sync::atomic::Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let sent = Instant::now();
            statuses.push(app.get(&format!("/v3/buckets/{bucket}")).await.status());
            longest = longest.max(sent.elapsed());
        }
        (statuses, longest)
    };
    let ((), (statuses, longest)) = tokio::join!(write, reads);
    println!(
        "a 2,000,000-node CREATE took {:?} with a 1 s hung limit; {} reads beside it, the longest {longest:?}",
        started.elapsed(),
        statuses.len()
    );
    assert!(statuses.iter().all(|status| *status == 200), "reads beside the write: {statuses:?}");
    assert_eq!(falkordb_pid(&app).await, before, "the child was not aborted");
    let count = app
        .cypher("MATCH (e:Entity {accountID: 'acc_long'}) RETURN count(e) AS n", serde_json::json!({}))
        .await;
    assert_eq!(count[0]["n"], 2_000_000, "the write landed whole");
}

/// A read canon would stop waiting for is stopped by FalkorDB itself at its time limit
/// (lowered here to 100 ms): it no longer holds one of the server's few threads for however
/// long it runs. A write is never cut: it runs to its end (FalkorDB does not stop writes).
#[tokio::test]
async fn a_read_past_the_time_limit_is_stopped_by_falkordb_and_a_write_runs_whole() {
    let limit = Duration::from_millis(100);
    let app = spawn_app_with(Handlers::default(), |config| {
        config.neo4j_uri = None; // the time limit is FalkorDB's (Neo4j's is its own setting)
        config.graph_read_time_limit = limit;
    })
    .await;
    app.cypher("UNWIND range(1, 3000) AS v CREATE (:TimeLimitProbe {v: v})", serde_json::json!({})).await;
    let engine = app.app().state.graph.engine().clone();
    // 9 million pairs, about 1.5 s on this machine's FalkorDB.
    let pairs = "MATCH (a:TimeLimitProbe), (b:TimeLimitProbe) WHERE a.v * b.v < 0 RETURN count(*) AS n";
    let stopped = engine.run(pairs, &serde_json::Map::new()).await;
    assert!(
        matches!(stopped, Err(canon::store::graph::GraphError::TimedOut(at)) if at == limit),
        "the read is stopped at its limit: {stopped:?}"
    );
    assert_eq!(app.cypher("RETURN 1 AS ok", serde_json::json!({})).await[0]["ok"], 1, "it answers after");

    let write = "MATCH (a:TimeLimitProbe), (b:TimeLimitProbe) WHERE a.v * b.v > 0 \
                 WITH a, count(b) AS pairs SET a.pairs = pairs RETURN count(a) AS n";
    assert_eq!(app.cypher(write, serde_json::json!({})).await[0]["n"], 3000, "the write ran to its end");
    let written = "MATCH (a:TimeLimitProbe) WHERE a.pairs = 3000 RETURN count(a) AS n";
    assert_eq!(
        app.cypher(written, serde_json::json!({})).await[0]["n"],
        3000,
        "every node holds what it set"
    );
}
