//! `cargo bench --bench calls`: `wait=true` calls of a 3-node built-in workflow
//! (extract → transform → send to a local folder), p50, p99 and calls/s, against running the
//! same three engines directly on the same input in the same run (the limit: the engines
//! themselves, with no HTTP, records, job queue or events). The ratio is direct time per
//! call over time per call through the API (1.0 would mean canon adds nothing). calls/s at 8
//! in flight is printed against the engines' own calls/s at 8 in flight: on a disk where many
//! files were just deleted (ext4 without a journal checks each free inode's deletion time),
//! the send node's file creation alone fell from ~7,000 to ~1,700 calls/s between runs.
//!
//! `CANON_BENCH_CALLS` changes how many calls the concurrent phases make (default 400; more,
//! to profile them). `CANON_BENCH_OBJECT_STORE_DIR` puts the send node's folder elsewhere (a
//! tmpfs, to tell the records' disk cost from the send's).

mod common;

use canon::engines::{self, Outcome, Payload};
use canon::versions::FunctionVersion;
use futures::StreamExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const SEQUENTIAL: usize = 200;
const IN_FLIGHT: usize = 8;

const TEXT: &str = "Invoice number: INV-42\nVendor: ACME Corp.\nTotal: $1,234.50\nDue date: 2026-01-31\n\
    Contact: billing@acme.example, +1 (555) 010-2000\n";

fn functions(folder: &str) -> Vec<Value> {
    vec![
        json!({"functionName": "extract", "type": "extract", "outputSchemaName": "Invoice", "outputSchema": {
            "type": "object", "required": ["invoiceNumber", "total"], "properties": {
                "invoiceNumber": {"type": "string"}, "vendor": {"type": "string"}, "total": {"type": "number"},
                "dueDate": {"type": "string", "format": "date"}, "contact": {"type": "string", "format": "email"}}}}),
        json!({"functionName": "shape", "type": "transform", "outputSchemaName": "Row", "outputSchema": {
            "type": "object", "properties": {"invoiceNumber": {"type": "string"}, "total": {"type": "number"}}}}),
        json!({"functionName": "store", "type": "send", "destinationType": "object_store", "s3Bucket": folder}),
    ]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let concurrent = common::size("CANON_BENCH_CALLS", 400);
    let bench = common::start(|config| {
        config.object_store_dir = std::env::var_os("CANON_BENCH_OBJECT_STORE_DIR").map(Into::into)
    })
    .await?;
    let mut versions = Vec::new();
    // A folder of the tenant's own object store, under the bench's data directory.
    for function in functions("bench-out") {
        let response = bench.post("/v3/functions", &function).send().await?;
        anyhow::ensure!(response.status() == 200, "create function: {}", response.text().await?);
        versions.push(function);
    }
    let workflow = json!({"name": "bench", "mainNodeName": "extract",
        "nodes": [{"name": "extract", "function": {"name": "extract"}}, {"name": "shape", "function": {"name": "shape"}},
                  {"name": "store", "function": {"name": "store"}}],
        "edges": [{"sourceNodeName": "extract", "destinationNodeName": "shape"},
                  {"sourceNodeName": "shape", "destinationNodeName": "store"}]});
    let response = bench.post("/v3/workflows", &workflow).send().await?;
    anyhow::ensure!(response.status() == 200, "create workflow: {}", response.text().await?);
    let body = json!({"input": {"singleFile": {"inputContent": TEXT, "inputType": "text"}}});
    let call = |bench: &common::Bench| bench.post("/v3/workflows/bench/call?wait=true", &body).send();

    // Warm up, and check the workflow really completes.
    let first: Value = call(&bench).await?.json().await?;
    anyhow::ensure!(first["call"]["status"] == "completed", "the bench workflow fails: {first}");

    let mut latencies = Vec::with_capacity(SEQUENTIAL);
    for _ in 0..SEQUENTIAL {
        let started = Instant::now();
        let response = call(&bench).await?;
        anyhow::ensure!(response.status() == 200, "call answered {}", response.status());
        latencies.push(started.elapsed());
    }
    let started = Instant::now();
    let statuses: Vec<u16> = futures::stream::iter(0..concurrent)
        .map(|_| async { call(&bench).await.map(|r| r.status().as_u16()).unwrap_or(0) })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    let concurrent_elapsed = started.elapsed();
    anyhow::ensure!(statuses.iter().all(|s| *s == 200), "every concurrent call finishes within 30 s");
    let calls_per_second = concurrent as f64 / concurrent_elapsed.as_secs_f64();

    // The same engines, directly.
    let context = bench.app.state.calls.engines.context(bench.tenant.clone());
    let as_version = |body: &Value| FunctionVersion {
        function_id: "fn_bench".into(),
        function_name: body["functionName"].as_str().unwrap_or_default().into(),
        version_num: 1,
        function_type: body["type"].as_str().unwrap_or_default().into(),
        body: body.clone(),
    };
    let chain: Vec<FunctionVersion> = versions.iter().map(as_version).collect();
    let run_chain = || async {
        let mut payload =
            Payload::Document(engines::decode("text", TEXT.as_bytes()).map_err(|e| anyhow::anyhow!("{e}"))?);
        for function in &chain {
            match engines::run(function, &payload, &context).await.map_err(|e| anyhow::anyhow!("{e}"))? {
                Outcome::Output(output) | Outcome::Routed { output, .. } => payload = Payload::Json(output),
                Outcome::Items(_) => anyhow::bail!("no split in the bench workflow"),
            }
        }
        Ok(())
    };
    let mut direct = Vec::with_capacity(SEQUENTIAL);
    for _ in 0..SEQUENTIAL {
        let started = Instant::now();
        run_chain().await?;
        direct.push(started.elapsed());
    }
    // The engines' own throughput at the same concurrency: the limit of calls/s on this disk
    // (the send node creates and syncs a file per call, which costs far more on a file system
    // that has just deleted many files).
    let started = Instant::now();
    let results: Vec<anyhow::Result<()>> =
        futures::stream::iter(0..concurrent).map(|_| run_chain()).buffer_unordered(IN_FLIGHT).collect().await;
    results.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    let direct_per_second = concurrent as f64 / started.elapsed().as_secs_f64();
    let direct_mean = direct.iter().sum::<Duration>() / direct.len() as u32;
    let api_mean = latencies.iter().sum::<Duration>() / latencies.len() as u32;
    let p50 = common::percentile(&mut latencies, 0.5);
    let p99 = common::percentile(&mut latencies, 0.99);
    println!("calls: 3-node built-in workflow (extract -> transform -> send to a folder), wait=true");
    println!("  sequential: p50 {} ms, p99 {} ms over {SEQUENTIAL} calls", common::ms(p50), common::ms(p99));
    println!("  concurrent ({IN_FLIGHT} in flight): {calls_per_second:.1} calls/s over {concurrent} calls");
    println!(
        "  engines directly, {IN_FLIGHT} in flight: {direct_per_second:.1} calls/s; ratio API/engines {:.3}",
        calls_per_second / direct_per_second
    );
    println!(
        "  engines directly: mean {} ms per call ({:.1} calls/s on one task)",
        common::ms(direct_mean),
        1.0 / direct_mean.as_secs_f64()
    );
    println!(
        "  ratio engines/API per call: {:.3} (mean {} ms through the API)",
        direct_mean.as_secs_f64() / api_mean.as_secs_f64(),
        common::ms(api_mean)
    );
    bench.stop().await;
    Ok(())
}
