//! `make bench` (cargo bench --bench platform): platform speed, printed as ratios against
//! limits measured in the same run.
//!
//! 1. With 10,000 buckets present, `GET /v3/buckets?limit=50`: median and p99, next to the
//!    same page's Cypher sent straight to the engine.
//! 2. Authenticated `GET /v3/buckets/{id}` requests/s against a bare axum handler returning
//!    the same JSON in the same process (goal: ratio ≥ 0.5). A bucket read by ID is served
//!    from memory for a second, so the same ID over and over measures authentication and
//!    the HTTP stack; a second line walks all 10,000 IDs and says what share of its reads
//!    reached the engine.

mod common;

use axum::routing::get;
use canon::graph::buckets::NewBucket;
use common::{ms, percentile};
use futures::stream::{self, StreamExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BUCKETS: usize = 10_000;
const LIST_SAMPLES: usize = 300;
const LOAD_SECONDS: u64 = 5;
const CONCURRENCY: usize = 16;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let bench = common::start(|_| {}).await?;
    let (app, base, key, tenant) = (&bench.app, bench.base.clone(), bench.key.clone(), bench.tenant.clone());
    let account_id = tenant.account_id.clone();
    let started = Instant::now();
    let graph = app.state.graph.clone();
    let ids: Vec<String> = stream::iter(0..BUCKETS)
        .map(|i| {
            let graph = graph.clone();
            let tenant = tenant.clone();
            async move {
                let new = NewBucket { name: format!("bucket-{i:05}"), description: None };
                graph.create_bucket(&tenant, new).await.map(|b| b.bucket_id)
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let present = app
        .state
        .graph
        .list_buckets(
            &tenant,
            &canon::pagination::PageRequest { limit: 1, cursor: canon::pagination::Cursor::First },
            None,
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    anyhow::ensure!(present.total_count == BUCKETS as i64 + 1, "expected {BUCKETS} buckets and the default");
    println!("setup: {BUCKETS} buckets created in {:.1} s", started.elapsed().as_secs_f64());

    let client = reqwest::Client::builder().pool_max_idle_per_host(CONCURRENCY * 2).build()?;

    // 1. Listing 50 of 10,000.
    let list_url = format!("{base}/v3/buckets?limit=50&startingAfter={}", ids[ids.len() / 2]);
    let mut http = Vec::with_capacity(LIST_SAMPLES);
    for _ in 0..LIST_SAMPLES {
        let t = Instant::now();
        let response = client.get(&list_url).header("x-api-key", &key).send().await?;
        anyhow::ensure!(response.status() == 200, "list failed: {}", response.status());
        response.bytes().await?;
        http.push(t.elapsed());
    }
    let engine = app.state.graph.engine().clone();
    let mut raw = Vec::with_capacity(LIST_SAMPLES);
    for _ in 0..LIST_SAMPLES {
        let params = canon::params! {
            "accountID" => account_id, "environment" => "sandbox", "nameSubstring" => None::<String>,
            "startingAfter" => ids[ids.len() / 2], "endingBefore" => None::<String>, "limit" => 50,
        };
        let t = Instant::now();
        engine.run(canon::graph::queries::BUCKET_LIST_AFTER, &params).await?;
        engine.run(canon::graph::queries::BUCKET_COUNT, &params).await?;
        raw.push(t.elapsed());
    }
    let (http_p50, http_p99) = (percentile(&mut http, 0.50), percentile(&mut http, 0.99));
    let (raw_p50, raw_p99) = (percentile(&mut raw, 0.50), percentile(&mut raw, 0.99));
    println!("list 50 of {BUCKETS} buckets over HTTP: p50 {} ms, p99 {} ms", ms(http_p50), ms(http_p99));
    println!("  same page + count as Cypher on the engine: p50 {} ms, p99 {} ms", ms(raw_p50), ms(raw_p99));
    println!(
        "  ratio engine/HTTP: p50 {:.2}, p99 {:.2}",
        raw_p50.as_secs_f64() / http_p50.as_secs_f64(),
        raw_p99.as_secs_f64() / http_p99.as_secs_f64()
    );

    // 2. Authenticated GET by ID against a bare axum handler.
    let sample = client.get(format!("{base}/v3/buckets/{}", ids[0])).header("x-api-key", &key).send().await?;
    let body: serde_json::Value = sample.json().await?;
    let bare = axum::Router::new().route("/bucket", get(move || async move { axum::Json(body.clone()) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let bare_addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, bare).await });

    let same = vec![format!("{base}/v3/buckets/{}", ids[0])];
    let canon_rps = load(&client, same, Some(key.clone())).await?;
    let bare_rps = load(&client, vec![format!("http://{bare_addr}/bucket")], None).await?;
    println!(
        "GET /v3/buckets/{{id}} with auth: {canon_rps:.0} req/s; bare axum handler: {bare_rps:.0} req/s"
    );
    println!("  ratio canon/bare: {:.2} (goal >= 0.5)", canon_rps / bare_rps);
    let every: Vec<String> = ids.iter().map(|id| format!("{base}/v3/buckets/{id}")).collect();
    let statements_before = graph.queries_run();
    let walk_rps = load(&client, every, Some(key.clone())).await?;
    let reached = (graph.queries_run() - statements_before) as f64 / (walk_rps * LOAD_SECONDS as f64);
    println!(
        "  walking all {BUCKETS} IDs: {walk_rps:.0} req/s, ratio {:.2}; {:.0} % of reads reached the engine",
        walk_rps / bare_rps,
        reached * 100.0
    );

    bench.stop().await;
    Ok(())
}

/// Requests per second at `CONCURRENCY` for `LOAD_SECONDS`, taking `urls` in turn.
async fn load(client: &reqwest::Client, urls: Vec<String>, key: Option<String>) -> anyhow::Result<f64> {
    let urls = Arc::new(urls);
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(LOAD_SECONDS);
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let (client, urls, key, done) = (client.clone(), urls.clone(), key.clone(), done.clone());
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    let turn = done.load(Ordering::Relaxed) as usize;
                    let mut request = client.get(&urls[turn % urls.len()]);
                    if let Some(key) = &key {
                        request = request.header("x-api-key", key);
                    }
                    let response = request.send().await?;
                    anyhow::ensure!(response.status() == 200, "status {}", response.status());
                    response.bytes().await?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            })
        })
        .collect();
    let started = Instant::now();
    for task in tasks {
        task.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}
