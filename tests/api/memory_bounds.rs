//! The worst inputs a tenant can send to the embedding paths keep canon within a stated
//! memory bound, measured on a `canon serve` process of its own (the test binary's memory
//! is shared by every test running beside this one).

use crate::helpers::{json, serve_process};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The bound the README states: peak resident memory of canon under these inputs.
const PEAK_RSS_LIMIT_MIB: u64 = 1_024;

/// Peak resident memory (`VmHWM`) of a process, in MiB.
fn peak_rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc status");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() / 1024
}

fn post(
    client: &reqwest::Client,
    address: &str,
    key: &str,
    path: &str,
    body: &Value,
) -> reqwest::RequestBuilder {
    client.post(format!("{address}{path}")).header("x-api-key", key).json(body)
}

#[tokio::test]
async fn the_worst_search_and_token_count_inputs_keep_canon_under_its_memory_bound() {
    let data = tempfile::tempdir().unwrap();
    let key = crate::helpers::cli_key(data.path(), "memory-co");
    let (mut child, address) = serve_process(data.path());
    let client = reqwest::Client::new();
    let created = post(&client, &address, &key, "/v3/collections", &json!({ "collectionName": "docs" }));
    assert_eq!(created.send().await.unwrap().status(), 200);
    let baseline = peak_rss_mib(child.id());

    // A query of nearly the whole 2 MB body limit is refused at once, saying the limit.
    let huge = "lorem ipsum ".repeat(150_000);
    let started = Instant::now();
    let refused = post(
        &client,
        &address,
        &key,
        "/v3/collections/search",
        &json!({ "collectionName": "docs", "query": huge }),
    );
    let refused = refused.send().await.unwrap();
    assert_eq!(refused.status(), 400);
    let body = json(refused).await;
    assert!(body["message"].as_str().unwrap().contains("at most 1000 characters"), "{body}");
    assert!(started.elapsed() < Duration::from_secs(5), "refused without embedding: {:?}", started.elapsed());

    // Queries at the cap that tokenise worst (one token per character), more at once than
    // embedding slots.
    let widest = "漢字検索".repeat(250);
    let searches = (0..8)
        .map(|_| {
            let body = json!({ "collectionName": "docs", "query": widest, "mode": "hybrid" });
            post(&client, &address, &key, "/v3/collections/search", &body).send()
        })
        .collect::<Vec<_>>();
    let started = Instant::now();
    let running = tokio::spawn(futures::future::join_all(searches));
    tokio::time::sleep(Duration::from_millis(300)).await;
    // While they run, canon answers other requests at once: embedding is off the async workers.
    let asked = Instant::now();
    let health = client.get(format!("{address}/healthz")).send().await.unwrap();
    let health_took = asked.elapsed();
    assert_eq!(health.status(), 200);
    for response in running.await.unwrap() {
        assert_eq!(response.unwrap().status(), 200);
    }
    let searches_took = started.elapsed();
    let after_searches = peak_rss_mib(child.id());
    assert!(health_took < Duration::from_secs(1), "/healthz took {health_took:?} beside the searches");

    // Token counts of a full body of long texts, several requests at once.
    let texts: Vec<String> = (0..100).map(|i| format!("word{i} ").repeat(2_500)).collect();
    let counts = (0..4).map(|_| {
        post(&client, &address, &key, "/v3/collections/token-count", &json!({ "texts": texts })).send()
    });
    for response in futures::future::join_all(counts).await {
        assert_eq!(response.unwrap().status(), 200);
    }

    let peak = peak_rss_mib(child.id());
    eprintln!(
        "canon peak RSS: {baseline} MiB at start, {after_searches} MiB after 8 capped searches \
         ({searches_took:?}; /healthz beside them {health_took:?}), {peak} MiB after the token counts"
    );
    assert!(peak < PEAK_RSS_LIMIT_MIB, "peak RSS {peak} MiB over {PEAK_RSS_LIMIT_MIB} MiB");
    // SAFETY: signalling the child process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert!(child.wait().unwrap().success());
}
