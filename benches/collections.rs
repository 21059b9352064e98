//! `cargo bench --bench collections`: collections speed, printed as ratios against limits
//! measured in the same run.
//!
//! 1. Items embedded per second through the service (HTTP `POST /v3/collections/items` in
//!    requests of 100, the job queue, the record store, BM25, Qdrant Edge, the event) against
//!    the raw model (tokenise, forward, pool, normalise) on the same texts (goal: ≥ 0.8).
//! 2. Dense search p99 with 100,000 items in the tenant's collection (goal: ≤ 10 ms), at the
//!    vector store, and end to end over HTTP (which adds embedding the query with the model).

mod common;

use canon::app::App;
use canon::collections::names::scopes;
use canon::config::Config;
use canon::embeddings::minilm::MiniLm;
use canon::embeddings::Embedder;
use canon::graph::Tenant;
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use canon::store::vectors::{fields, point_id, Condition, Filter, Point, Query, Ranking, Sparse};
use common::percentile;
use rand::{Rng, SeedableRng};
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

const EMBED_ITEMS: usize = 1_000;
const SEARCH_ITEMS: usize = 100_000;
const STORE_QUERIES: usize = 1_000;
const HTTP_QUERIES: usize = 200;

/// Varied sentences of realistic length (10–40 words).
fn texts(count: usize) -> Vec<String> {
    let subjects = [
        "The invoice",
        "Our supplier",
        "A customer",
        "The warehouse team",
        "This contract",
        "The new policy",
        "An engineer",
        "The shipment",
    ];
    let verbs = [
        "mentions",
        "requires",
        "was delayed by",
        "confirms",
        "disputes",
        "summarises",
        "depends on",
        "replaces",
    ];
    let objects = [
        "the quarterly payment terms",
        "a damaged pallet of steel pipes",
        "the renewal of the service agreement",
        "late fees for March",
        "the safety inspection report",
        "three missing purchase orders",
        "an updated tax registration number",
        "the return of faulty sensors",
    ];
    let tails = [
        "before the end of the month.",
        "according to the attached e-mail from the regional office.",
        "and the finance department asked for a written confirmation with all supporting documents.",
        "which affects every branch in the northern region and needs approval from the board.",
        "",
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    (0..count)
        .map(|i| {
            format!(
                "{} {} {} {} (ref {i})",
                subjects[rng.gen_range(0..subjects.len())],
                verbs[rng.gen_range(0..verbs.len())],
                objects[rng.gen_range(0..objects.len())],
                tails[rng.gen_range(0..tails.len())]
            )
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let data = tempfile::tempdir()?;
    let vendor = canon::provision::source_dir().join("vendor");
    let mut config = Config::embedded(data.path(), &vendor);
    config.rate_limit_per_second = 1e9;
    config.rate_limit_burst = u32::MAX;
    let app = App::spawn(&config, Handlers::default()).await?;
    let base = format!("http://{}", app.addr);
    let records = &app.state.records;
    let account = records.ensure_account("bench").await?;
    let (_, key) = records.create_key(&account.id, Environment::Sandbox, "bench").await?;
    let tenant = Tenant { account_id: account.id.clone(), environment: Environment::Sandbox };
    let http = reqwest::Client::new();
    let service = app.state.collections.clone();
    let model = MiniLm::shared(&vendor.join("minilm"))?;

    // 1. Embedding throughput: raw model, then the service, on the same texts.
    let items = texts(EMBED_ITEMS);
    model.embed_blocking(&items[..64])?; // warm up
    let started = Instant::now();
    let raw = model.embed_blocking(&items)?;
    let raw_secs = started.elapsed().as_secs_f64();
    anyhow::ensure!(raw.len() == EMBED_ITEMS);
    let raw_rate = EMBED_ITEMS as f64 / raw_secs;

    let created = http
        .post(format!("{base}/v3/collections"))
        .header("x-api-key", &key)
        .json(&json!({ "collectionName": "bench_embed" }))
        .send()
        .await?;
    anyhow::ensure!(created.status() == 200, "create: {}", created.status());
    let started = Instant::now();
    let mut events = Vec::new();
    for batch in items.chunks(100) {
        let body = json!({
            "collectionName": "bench_embed",
            "items": batch.iter().map(|t| json!({ "data": t })).collect::<Vec<_>>(),
        });
        let ack: Value = http
            .post(format!("{base}/v3/collections/items"))
            .header("x-api-key", &key)
            .json(&body)
            .send()
            .await?
            .json()
            .await?;
        events.push(ack["eventID"].as_str().unwrap_or_default().to_string());
    }
    for event in &events {
        loop {
            match service.event(&tenant, event).await {
                Ok(Some(body)) => {
                    anyhow::ensure!(body["status"] == "success", "{body}");
                    break;
                }
                Ok(None) => tokio::time::sleep(Duration::from_millis(5)).await,
                Err(err) => anyhow::bail!("{err}"),
            }
        }
    }
    let service_secs = started.elapsed().as_secs_f64();
    let service_rate = EMBED_ITEMS as f64 / service_secs;

    println!(
        "collections benchmark ({EMBED_ITEMS} texts of 10–40 words; MiniLM on {} cores)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("  raw model:        {raw_rate:8.1} texts/s   ({raw_secs:.2} s)");
    println!(
        "  through canon:    {service_rate:8.1} items/s   ({service_secs:.2} s: 10 POSTs of 100, job queue, records, BM25, Qdrant Edge, events)"
    );
    println!("  ratio:            {:8.2}   (goal ≥ 0.80)", service_rate / raw_rate);

    // 2. Dense search with 100,000 items in one collection of the tenant (vectors from the
    //    model for the embedded texts above, random unit vectors for the rest).
    let space = service.space().clone();
    let store = service.vectors().clone();
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let mut unit = |dimension: usize| -> Vec<f32> {
        let mut v: Vec<f32> = (0..dimension).map(|_| rng.gen_range(-1.0..1.0)).collect();
        canon::embeddings::normalize(&mut v);
        v
    };
    let collection = "bench_search";
    let started = Instant::now();
    for start in (0..SEARCH_ITEMS).step_by(1_000) {
        let points: Vec<Point> = (start..start + 1_000)
            .map(|i| {
                let id = format!("itm_bench{i:06}");
                let mut payload = Map::new();
                payload.insert(fields::ACCOUNT.into(), json!(tenant.account_id));
                payload.insert(fields::ENVIRONMENT.into(), json!("sandbox"));
                payload.insert(fields::COLLECTION.into(), json!(collection));
                payload.insert(fields::SCOPE.into(), json!(scopes(collection)));
                payload.insert(fields::ITEM.into(), json!(id));
                payload.insert(fields::REVISION.into(), json!("bench"));
                Point {
                    id: point_id(&id, 0),
                    dense: unit(space.dimension),
                    sparse: Sparse::default(),
                    payload,
                }
            })
            .collect();
        store.upsert(&space, points).await?;
    }
    let insert_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    store.wait_indexed(&space).await?;
    let index_secs = started.elapsed().as_secs_f64();
    let filter = Filter::default()
        .must(Condition::keyword(fields::ACCOUNT, &tenant.account_id))
        .must(Condition::keyword(fields::ENVIRONMENT, "sandbox"))
        .must(Condition::keyword(fields::COLLECTION, collection));
    let stored = store.count(&space, &filter).await?;
    anyhow::ensure!(stored == SEARCH_ITEMS as u64, "{stored} points stored");
    let mut samples = Vec::with_capacity(STORE_QUERIES);
    for _ in 0..STORE_QUERIES {
        let query = Query {
            ranking: Ranking::Dense(unit(space.dimension)),
            filter: filter.clone(),
            limit: 10,
            score_threshold: None,
        };
        let started = Instant::now();
        let hits = store.search(&space, &query).await?;
        samples.push(started.elapsed());
        anyhow::ensure!(hits.len() == 10);
    }
    let store_p50 = percentile(&mut samples, 0.5);
    let store_p99 = percentile(&mut samples, 0.99);

    // End to end: the service needs the collection's record to search it.
    records
        .create_collection(
            canon::store::records::Owner { account_id: &tenant.account_id, environment: "sandbox" },
            "col_bench_search",
            collection,
            0,
        )
        .await?;
    let queries = texts(HTTP_QUERIES);
    let mut embed_samples = Vec::with_capacity(HTTP_QUERIES);
    for q in &queries {
        let started = Instant::now();
        model.embed(std::slice::from_ref(q)).await?;
        embed_samples.push(started.elapsed());
    }
    let mut http_samples = Vec::with_capacity(HTTP_QUERIES);
    for q in &queries {
        let started = Instant::now();
        let response = http
            .post(format!("{base}/v3/collections/search"))
            .header("x-api-key", &key)
            .json(&json!({ "collectionName": collection, "query": q, "limit": 10 }))
            .send()
            .await?;
        anyhow::ensure!(response.status() == 200, "search: {}", response.status());
        let _: Value = response.json().await?;
        http_samples.push(started.elapsed());
    }
    let embed_p50 = percentile(&mut embed_samples, 0.5);
    let http_p50 = percentile(&mut http_samples, 0.5);
    let http_p99 = percentile(&mut http_samples, 0.99);

    println!("dense search, {SEARCH_ITEMS} items in one collection (inserted in {insert_secs:.1} s, HNSW built in {index_secs:.1} s)");
    println!(
        "  vector store, filtered by tenant + collection, top 10: p50 {:.2} ms, p99 {:.2} ms   (p99 / goal 10 ms = {:.2})",
        ms(store_p50),
        ms(store_p99),
        ms(store_p99) / 10.0
    );
    println!(
        "  HTTP POST /v3/collections/search (semantic):          p50 {:.2} ms, p99 {:.2} ms   (of which embedding the query: p50 {:.2} ms)",
        ms(http_p50),
        ms(http_p99),
        ms(embed_p50)
    );
    app.stop().await;
    Ok(())
}
