//! `make bench-dashboard` (cargo bench --bench dashboard): the review dashboard at 1,000,000
//! entities in Debian's chromium, driven by playwright-core (`tests/browser/pages.mjs`):
//! the time from navigation to the first queue row visible and to the first merge-suggestion
//! card visible (goal: 300 ms each), beside the server time of each page and of the REST calls
//! it is built on, as ratios. No pass or fail on time: the figures are printed.
//!
//! The graph: the small one the browser tests seed through REST (`tests/browser/seed.mjs`,
//! with its merge suggestions), then grown to `CANON_BENCH_ENTITIES` (default 1,000,000)
//! straight to the engine as `benches/graph.rs` does. `CANON_BENCH_RUNS` browser loads of each
//! page (default 20, after two warm-ups), `CANON_BENCH_SAMPLES` server calls of each (default 30).
//!
//! `CANON_DASHBOARD_SCREENSHOTS=DIR` (`make screenshots`) instead seeds only the small graph
//! and writes the README's screenshots of the queue, an entity card and a suggestion card.

mod common;

use common::{ms, percentile, raw_seed, size};
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let bench = common::start(|config| config.neo4j_uri = None).await?;
    let Some(modules) = browser_modules() else {
        println!("SKIPPED: needs /usr/bin/chromium and vendor/browser (make provision; needs npm)");
        return Ok(());
    };
    if let Ok(dir) = std::env::var("CANON_DASHBOARD_SCREENSHOTS") {
        std::fs::create_dir_all(&dir)?;
        let written = pages(&bench, &modules, &["screenshots", &dir]).await?;
        println!("screenshots: {}", written["written"]);
        bench.stop().await;
        return Ok(());
    }

    let total = size("CANON_BENCH_ENTITIES", 1_000_000);
    let seeded = pages(&bench, &modules, &["seed"]).await?;
    let acme = seeded["acme"].as_str().unwrap_or_default().to_string();
    anyhow::ensure!(seeded["suggested"].as_u64() > Some(0), "the seed made no merge suggestion: {seeded}");
    let started = Instant::now();
    let graph = bench.app.state.graph.clone();
    let mut grown = 0;
    while grown < total {
        let next = (grown + 100_000).min(total);
        raw_seed(&graph, &bench.tenant, grown..next).await?;
        grown = next;
    }
    println!(
        "setup: grew to {total} entities (and the seeded graph) in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    common::engine_settled(bench.data_dir()).await?;

    // The server's side: each page and each call the page's script makes, as the page makes it.
    let suggestion: Value =
        bench.get("/v3/merge-suggestions?order=uncertain&limit=50").send().await?.json().await?;
    let pair: Vec<String> = suggestion["suggestions"][0]["entities"]
        .as_array()
        .map(|e| e.iter().filter_map(|e| e["entityID"].as_str().map(String::from)).collect())
        .unwrap_or_default();
    anyhow::ensure!(pair.len() == 2, "no open suggestion to show: {suggestion}");
    let queue_calls = [
        "/review".to_string(),
        "/review/assets/dashboard.js".into(),
        "/v3/review-queue?limit=50".into(),
        "/v3/review-queue/counts".into(),
    ];
    let card_calls = [
        "/review/suggestions".to_string(),
        "/v3/merge-suggestions?order=uncertain&limit=50".into(),
        format!("/v3/entities/{}", pair[0]),
        format!("/v3/entities/{}", pair[1]),
    ];
    let entity_calls = [
        format!("/review/entities/{acme}"),
        format!("/v3/entities/{acme}"),
        format!("/v3/entities/{acme}/relations"),
        format!("/v3/entities/{acme}/merges"),
    ];
    let samples = size("CANON_BENCH_SAMPLES", 30);
    let mut server = Vec::new();
    for path in queue_calls.iter().chain(&card_calls).chain(&entity_calls) {
        server.push((path.clone(), server_p50(&bench, path, samples).await?));
    }
    let took = |path: &str| server.iter().find(|(p, _)| p == path).map(|(_, d)| *d).unwrap_or_default();

    // The browser's side: a signed-in tab loading each page again and again.
    let runs = size("CANON_BENCH_RUNS", 20);
    let seen = pages(&bench, &modules, &["speed", &runs.to_string()]).await?;
    let mut queue = durations(&seen["queue"]);
    let mut card = durations(&seen["suggestions"]);
    let goal = Duration::from_millis(300);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);

    println!("== review dashboard at {total} entities (FalkorDB), {runs} loads of each page in chromium");
    let (q50, q90) = (percentile(&mut queue, 0.5), percentile(&mut queue, 0.9));
    // What the first row waits for: the page, its script, then the rows (the counts come beside).
    let queue_server = took(&queue_calls[0]) + took(&queue_calls[1]) + took(&queue_calls[2]);
    println!(
        "queue: navigation to first row visible p50 {} ms, p90 {} ms (goal <= 300 ms; p50/goal {:.2}); \
         server time on its path {} ms (p50/server {:.1})",
        ms(q50),
        ms(q90),
        ratio(q50, goal),
        ms(queue_server),
        ratio(q50, queue_server)
    );
    let (c50, c90) = (percentile(&mut card, 0.5), percentile(&mut card, 0.9));
    // The card waits for the page, its script, the suggestions, then both entities at once.
    let card_server = took(&card_calls[0])
        + took(&queue_calls[1])
        + took(&card_calls[1])
        + took(&card_calls[2]).max(took(&card_calls[3]));
    println!(
        "suggestion card: navigation to card visible p50 {} ms, p90 {} ms (goal <= 300 ms; p50/goal {:.2}); \
         server time on its path {} ms (p50/server {:.1})",
        ms(c50),
        ms(c90),
        ratio(c50, goal),
        ms(card_server),
        ratio(c50, card_server)
    );
    println!("server time p50 of {samples} calls each (the page, then the REST calls it is built on):");
    for (path, d) in &server {
        println!("  GET {path}: {} ms", ms(*d));
    }
    println!(
        "  counts/rows ratio: {:.1} (the queue's counters beside its first page of rows)",
        ratio(took(&queue_calls[3]), took(&queue_calls[2]))
    );
    bench.stop().await;
    Ok(())
}

/// vendor/browser when chromium and the vendored playwright-core are there.
fn browser_modules() -> Option<PathBuf> {
    let modules = canon::provision::source_dir().join("vendor/browser");
    let there = std::path::Path::new("/usr/bin/chromium").exists()
        && modules.join("node_modules/playwright-core/package.json").is_file();
    there.then_some(modules)
}

/// `tests/browser/pages.mjs MODE ARGS…` against this bench's canon; its JSON.
async fn pages(bench: &common::Bench, modules: &std::path::Path, args: &[&str]) -> anyhow::Result<Value> {
    let script = canon::provision::source_dir().join("tests/browser/pages.mjs");
    let (mode, rest) = args.split_first().expect("a mode");
    let output = tokio::process::Command::new("node")
        .arg(script)
        .args([mode, bench.base.as_str(), bench.key.as_str()])
        .args(rest)
        .env("CANON_BROWSER_MODULES", modules)
        .output()
        .await?;
    anyhow::ensure!(output.status.success(), "pages.mjs {mode}: {}", String::from_utf8_lossy(&output.stderr));
    Ok(serde_json::from_slice(&output.stdout)?)
}

/// The median time of `samples` GETs of `path` (after three warm-ups), body read.
async fn server_p50(bench: &common::Bench, path: &str, samples: usize) -> anyhow::Result<Duration> {
    let mut took = Vec::with_capacity(samples);
    for n in 0..samples + 3 {
        let started = Instant::now();
        let response = bench.get(path).send().await?;
        anyhow::ensure!(response.status() == 200, "GET {path}: {}", response.status());
        response.bytes().await?;
        if n >= 3 {
            took.push(started.elapsed());
        }
    }
    Ok(percentile(&mut took, 0.5))
}

fn durations(list: &Value) -> Vec<Duration> {
    list.as_array()
        .map(|l| l.iter().filter_map(Value::as_f64).map(|ms| Duration::from_secs_f64(ms / 1000.0)).collect())
        .unwrap_or_default()
}
