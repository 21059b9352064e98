//! `make bench-graph` (cargo bench --bench graph): knowledge-graph speed, as ratios against
//! the engine measured in the same run; `make bench-graph-neo4j` runs it on FalkorDB and then
//! on Neo4j (`CANON_BENCH_NEO4J_URI`), each engine against its own statements.
//!
//! 1. Bulk seed entities/s at 100,000 entities through `POST /v3/entities/bulk` (seed jobs),
//!    against the same UNWIND + MERGE statement (`cypher/entity_seed.cypher`) sent straight
//!    to the engine for the same number of rows, in `CANON_BENCH_SEED_ROUNDS` rounds (default
//!    4) that alternate which of the two goes first; the figure is the median of the rounds'
//!    ratios (goal ≥ 0.9, the platform issue's). Until 2026-12-03 it was one API seed between
//!    two of the engine's, against their mean. Beside it, the engine process's own CPU on each
//!    side (per row, and as a share of the side's time): the same per row with the API's side
//!    slower means the engine waited for canon. `CANON_BENCH_TIMELINE=1` prints how busy the
//!    engine was every 50 ms of each seed; `CANON_BENCH_PERF_CONTROL` profiles the API's side
//!    alone (see `benches/delivery.rs`).
//! 2. With 1,000,000 entities: review-queue page (limit 50) p50 / p99 (goal p99 ≤ 10 ms), the
//!    knowledge-graph page p99 (goal ≤ 10 ms) and, on FalkorDB, the start time on that graph
//!    (goal < 5 s), with the time until its indexes are built (they are built after canon
//!    answers), then the start after a crash (`kill -9` of `canon serve` and its FalkorDB)
//!    with writes since the last snapshot left to replay (goal < 5 s).
//! 3. Before both, on a tenant of its own: one merge-suggestion refresh of 10,000 people with
//!    near-duplicate names, on each engine.
//!
//! `CANON_BENCH_WARM` sets the rows seeded on a tenant of their own before the seed is timed
//! (default 20,000 on FalkorDB, 200,000 on Neo4j, whose JIT warms longer). `CANON_BENCH_SEED` and `CANON_BENCH_ENTITIES` change the two sizes (on Neo4j
//! `CANON_BENCH_NEO4J_SEED` and `CANON_BENCH_NEO4J_ENTITIES`, else the same);
//! `CANON_BENCH_EDGES` the relations the knowledge-graph page reads over (default 20,000; past
//! 20,000 they join all the grown entities and are written straight to the engine);
//! `CANON_BENCH_GROW_SECONDS` stops growing past the seed after that long (the size reached
//! is printed); `CANON_BENCH_REFRESH` the refresh's (0 skips it), `CANON_BENCH_CRASH_WRITES` the entities
//! written between the clean start and the crash (default 10,000). `CANON_BENCH_ENGINES`
//! (`falkordb,neo4j`) picks the engines; with `CANON_BENCH_NEO4J_URI` both run, else FalkorDB.
//! Neo4j's user and password: `CANON_BENCH_NEO4J_USER` (default `neo4j`) and
//! `CANON_BENCH_NEO4J_PASSWORD`.

mod common;
#[path = "graph/refresh.rs"]
mod refresh;
#[path = "graph/relations.rs"]
mod relations;

use canon::graph::review::ReviewFilter;
use canon::graph::Tenant;
use canon::store::records::keys::Environment;
use common::{ms, percentile, raw_seed, raw_seed_named, size};
use rand::seq::SliceRandom;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let seed = size("CANON_BENCH_SEED", 100_000);
    let total = size("CANON_BENCH_ENTITIES", 1_000_000).max(seed);
    let neo4j = std::env::var("CANON_BENCH_NEO4J_URI").ok().filter(|uri| !uri.is_empty());
    let default_engines = if neo4j.is_some() { "falkordb,neo4j" } else { "falkordb" };
    let engines = std::env::var("CANON_BENCH_ENGINES").unwrap_or_else(|_| default_engines.into());
    let mut refreshes = Vec::new();
    for engine in engines.split(',').map(str::trim) {
        match engine {
            "falkordb" => {
                let bench = common::start(|config| config.neo4j_uri = None).await?;
                println!("== FalkorDB (embedded)");
                refreshes.extend(pass(bench, "FalkorDB", seed, total).await?);
            }
            "neo4j" => {
                let uri =
                    neo4j.clone().ok_or_else(|| anyhow::anyhow!("neo4j needs CANON_BENCH_NEO4J_URI"))?;
                println!("== Neo4j ({uri})");
                let bench = common::start(|config| {
                    config.neo4j_uri = Some(uri);
                    config.neo4j_user =
                        std::env::var("CANON_BENCH_NEO4J_USER").unwrap_or_else(|_| "neo4j".into());
                    config.neo4j_password = std::env::var("CANON_BENCH_NEO4J_PASSWORD").unwrap_or_default();
                })
                .await?;
                let seed = size("CANON_BENCH_NEO4J_SEED", seed);
                let total = size("CANON_BENCH_NEO4J_ENTITIES", total).max(seed);
                refreshes.extend(pass(bench, "Neo4j", seed, total).await?);
            }
            other => anyhow::bail!("unknown engine {other:?} in CANON_BENCH_ENGINES (falkordb, neo4j)"),
        }
    }
    if refreshes.len() > 1 {
        println!("== merge-suggestion refresh, side by side");
        for (engine, refresh) in &refreshes {
            println!("{}", refresh.line(engine));
        }
    }
    Ok(())
}

/// Every measurement on one engine; the refresh it timed, if any.
async fn pass(
    bench: common::Bench,
    engine: &'static str,
    seed: usize,
    total: usize,
) -> anyhow::Result<Option<(&'static str, refresh::Refresh)>> {
    let falkordb = engine == "FalkorDB";
    let graph = bench.app.state.graph.clone();

    // 3. The refresh first, while the graph is small (it reads only its own tenant).
    let refresh_size = size("CANON_BENCH_REFRESH", 10_000);
    let refreshed = if refresh_size > 0 {
        let refresh = refresh::run(&bench, refresh_size).await?;
        println!("{}", refresh.line(engine));
        Some((engine, refresh))
    } else {
        None
    };

    // 0. The seed statement on a throwaway tenant before anything is timed: its first runs on
    // a fresh server plan it and warm the engine's JIT. Neo4j keeps getting faster for a long
    // while: after 20,000 rows of warming the engine's own seed ran at 4,492/s before the API's
    // and 6,572/s after it (same run); after 200,000 rows, 5,771/s and 5,814/s.
    let warm = size("CANON_BENCH_WARM", if falkordb { 20_000 } else { 200_000 });
    let warm_tenant = Tenant { account_id: canon::ids::new_id("acc"), environment: Environment::Sandbox };
    graph.ensure_tenant(&warm_tenant).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    raw_seed(&graph, &warm_tenant, 0..warm).await?;

    // 1. The engine's own statement and the same rows through the API, in rounds that
    // alternate which goes first: an engine's speed drifts during a run (Neo4j's JIT keeps
    // warming; its own seed ran at 5,587/s before the API's and 6,549/s after in one run), and
    // a single pair measured that drift as much as canon. Each round's ratio compares the two
    // seeds run side by side in time; the median of the rounds is the figure.
    let rounds = size("CANON_BENCH_SEED_ROUNDS", 4).clamp(1, seed.max(1));
    let mut seeds = Vec::with_capacity(rounds);
    // The engine's rows go to one tenant of their own that grows round by round as the API's
    // does (the same rows, the same names), so each round's two seeds write into tenants of the
    // same size.
    let raw_tenant = Tenant { account_id: canon::ids::new_id("acc"), environment: Environment::Sandbox };
    graph.ensure_tenant(&raw_tenant).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    // The engine's own CPU on each side: the same per row on both, with the API's side slower,
    // means the engine waited for canon; more per row on the API's side, that it worked more.
    let engine_pid = match falkordb {
        true => bench.app.falkordb_pid().await,
        false => common::neo4j_pid(neo4j_port()),
    };
    // `CANON_BENCH_TIMELINE=1` prints how busy the engine was through each seed, 50 ms at a time.
    let timeline = std::env::var("CANON_BENCH_TIMELINE").is_ok_and(|v| v == "1");
    let meter = Meter { engine_pid, timeline };
    for round in 0..rounds {
        let rows = seed * round / rounds..seed * (round + 1) / rounds;
        let api_first = round % 2 == 1;
        let engine_side =
            || meter.side(rows.len(), "its own seed", raw_seed(&graph, &raw_tenant, rows.clone()));
        let mut raw = None;
        if !api_first {
            raw = Some(engine_side().await?);
        }
        let api_side = async {
            common::perf(true);
            let seeded = api_seed(&bench, rows.clone()).await;
            common::perf(false);
            seeded
        };
        let api = meter.side(rows.len(), "the API's seed", api_side).await?;
        let raw = match raw {
            Some(raw) => raw,
            None => engine_side().await?,
        };
        seeds.push(SeedRound { rows: rows.len(), api, raw, api_first });
    }
    println!(
        "bulk seed of {seed} entities on {engine}, in {rounds} rounds alternating which seed goes first:"
    );
    for (round, r) in seeds.iter().enumerate() {
        println!(
            "  round {}: API {:.0}/s, engine {:.0}/s ({} first), ratio {:.2}",
            round + 1,
            r.api.rate,
            r.raw.rate,
            if r.api_first { "API" } else { "engine" },
            r.api.rate / r.raw.rate
        );
    }
    let seconds = |rate: fn(&SeedRound) -> f64| seeds.iter().map(|r| r.rows as f64 / rate(r)).sum::<f64>();
    let (api_seconds, raw_seconds) = (seconds(|r| r.api.rate), seconds(|r| r.raw.rate));
    let (api_rate, raw_rate) = (seed as f64 / api_seconds, seed as f64 / raw_seconds);
    println!("  all rounds: API {api_rate:.0}/s, engine {raw_rate:.0}/s");
    // CPU of this process (canon and the bench's client; on FalkorDB not the engine's child):
    // on two cores, what canon spends per row is taken from the engine beside it.
    let (api_cpu, raw_cpu): (f64, f64) =
        (seeds.iter().map(|r| r.api.cpu).sum(), seeds.iter().map(|r| r.raw.cpu).sum());
    println!("  CPU of the canon process: API side {api_cpu:.1} s, engine side {raw_cpu:.1} s");
    let engine_sum = |side: fn(&SeedRound) -> Option<f64>| seeds.iter().map(side).sum::<Option<f64>>();
    if let (Some(api), Some(raw)) = (engine_sum(|r| r.api.engine_cpu), engine_sum(|r| r.raw.engine_cpu)) {
        println!(
            "  CPU of the engine's process: API side {api:.1} s ({:.0} µs a row, busy {:.0} % of the time), \
             engine side {raw:.1} s ({:.0} µs a row, busy {:.0} %)",
            api * 1e6 / seed as f64,
            100.0 * api / api_seconds,
            raw * 1e6 / seed as f64,
            100.0 * raw / raw_seconds
        );
    }
    let median = common::median(seeds.iter().map(|r| r.api.rate / r.raw.rate).collect()).unwrap_or_default();
    println!(
        "  ratio API/engine: {median:.2} (median of the rounds; goal >= 0.9); of all rounds' rows {:.2}",
        api_rate / raw_rate
    );

    // 2. Grow the API tenant to `total` entities (straight to the engine: faster), relate some.
    // `CANON_BENCH_GROW_SECONDS` stops growing (at a multiple of 100,000) once that much time
    // has gone: the size an engine reaches in a given time.
    let budget = std::env::var("CANON_BENCH_GROW_SECONDS").ok().and_then(|v| v.parse::<f64>().ok());
    let started = Instant::now();
    let mut grown = seed;
    let mut grown_ids = Vec::new();
    while grown < total && budget.is_none_or(|budget| started.elapsed().as_secs_f64() < budget) {
        let next = (grown + 100_000).min(total);
        grown_ids
            .extend(raw_seed_named(&graph, &bench.tenant, grown..next, "Company", &common::org_name).await?);
        grown = next;
    }
    if grown < total {
        println!("setup: stopped growing at {grown} of {total} entities (CANON_BENCH_GROW_SECONDS)");
    }
    let total = grown;
    println!("setup: grew to {total} entities in {:.0} s", started.elapsed().as_secs_f64());
    let page: Value = bench.get("/v3/review-queue?limit=200").send().await?.json().await?;
    let some: Vec<String> = page["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entityID"].as_str().unwrap().to_string())
        .collect();
    let started = Instant::now();
    let edges = size("CANON_BENCH_EDGES", 20_000);
    let ids = sample_ids(&bench, 2_000).await?;
    // Relations between the sampled entities, and past 20,000 among every grown one too.
    let ends = if edges > 20_000 && grown_ids.len() > ids.len() { &grown_ids } else { &ids };
    let direct = relations::create(&graph, &bench.tenant, ends, edges).await?;
    println!(
        "setup: {edges} relations ({} through the service, {direct} straight to the engine) in {:.0} s",
        edges - direct,
        started.elapsed().as_secs_f64()
    );
    drop(grown_ids);
    if falkordb {
        common::engine_settled(bench.data_dir()).await?;
    }

    let (mut queue, mut pages) = (Vec::new(), Vec::new());
    let mut cursors = ids.clone();
    cursors.extend(some);
    // A few pages of each kind first, untimed: the first runs of a page's statement after the
    // setup's writes (re)plan it and JIT-compile it on the same two cores (on Neo4j the first
    // three timed pages were the run's slowest, 20-26 ms, in two runs of three).
    for cursor in cursors.choose_multiple(&mut rand::thread_rng(), 20) {
        bench.get(&format!("/v3/review-queue?limit=50&cursor={cursor}")).send().await?.bytes().await?;
    }
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let path = cursor.map_or("/v3/knowledge-graph?limit=50".into(), |c| {
            format!("/v3/knowledge-graph?limit=50&cursor={c}")
        });
        let page: Value = bench.get(&path).send().await?.json().await?;
        cursor = page["nextCursor"].as_str().map(String::from);
    }
    for (n, cursor) in cursors.choose_multiple(&mut rand::thread_rng(), 200).enumerate() {
        let path = if n % 10 == 0 {
            "/v3/review-queue?limit=50".to_string()
        } else {
            format!("/v3/review-queue?limit=50&cursor={cursor}")
        };
        let t = Instant::now();
        let response = bench.get(&path).send().await?;
        anyhow::ensure!(response.status() == 200, "review queue: {}", response.status());
        response.bytes().await?;
        queue.push(t.elapsed());
        // The same page from the service itself (its statements, no HTTP): where time goes.
        let filter = ReviewFilter {
            cursor: (n % 10 != 0).then(|| cursor.clone()),
            limit: 50,
            ..ReviewFilter::default()
        };
        let page_cursor = filter.cursor.clone();
        let (t, at) = (Instant::now(), chrono::Utc::now());
        graph.review_queue(&bench.tenant, filter).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        pages.push((t.elapsed(), n, page_cursor, at));
    }
    let mut service: Vec<Duration> = pages.iter().map(|(took, ..)| *took).collect();
    // Which pages make the tail (a first page walks from the kept start; the others from a
    // cursor), when in the run they came (the wall clock too, to find a pause of the engine's
    // in its log), and the same page again: as slow again means the page itself is costly,
    // fast means a passing stall.
    pages.sort_by_key(|k| std::cmp::Reverse(k.0));
    let mut slowest = Vec::new();
    for (took, n, cursor, at) in pages.into_iter().take(3) {
        let kind = if cursor.is_none() { "first page" } else { "cursor" };
        let filter = ReviewFilter { cursor, limit: 50, ..ReviewFilter::default() };
        let t = Instant::now();
        graph.review_queue(&bench.tenant, filter).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        let at = at.format("%H:%M:%S%.3f");
        slowest.push(format!("{} ms ({kind}, #{n} at {at}; again {} ms)", ms(took), ms(t.elapsed())));
    }
    println!(
        "review queue page (limit 50) of {total} entities: p50 {} ms, p99 {} ms (goal p99 <= 10 ms); \
         the service alone: p50 {} ms, p99 {} ms",
        ms(percentile(&mut queue, 0.5)),
        ms(percentile(&mut queue, 0.99)),
        ms(percentile(&mut service, 0.5)),
        ms(percentile(&mut service, 0.99))
    );
    println!("  slowest pages from the service of 200: {}", slowest.join(", "));
    // The two statements of a page with a cursor, sent straight to the engine: the page's
    // window at its narrowest (from the cursor to just past the page's last row, found by an
    // untimed wider statement; on Neo4j the page's one ordered statement), then the page's
    // entity records. The limit the service works against.
    let (mut window_times, mut details_times, mut details_at) = (Vec::new(), Vec::new(), Vec::new());
    let mut one_statement = Vec::new();
    let window_params = |from: &str, to: &str| {
        let params = json!({
            "accountID": bench.tenant.account_id, "environment": "sandbox",
            "statuses": ["extracted", "proposed"], "bucketID": null, "since": null, "typeIDs": null,
            "typeNames": null,
        });
        let Value::Object(params) = params else { unreachable!() };
        // The window's bounds and limit as the service sends them.
        canon::graph::window::in_window(&params, from.to_string(), to.to_string(), 52)
    };
    for cursor in cursors.choose_multiple(&mut rand::thread_rng(), 100) {
        let ms_of = canon::graph::id_keys::timestamp("ent", cursor).unwrap_or_default();
        let wide = format!("ent_{}", ulid::Ulid::from_parts(ms_of + 100, 0));
        let rows =
            graph.engine().run(canon::graph::queries::REVIEW_QUEUE, &window_params(cursor, &wide)).await?;
        let Some(last) = rows.last().and_then(|r| r["entityID"].as_str()) else { continue };
        let past_last = format!("ent_{}", ulid::Ulid(ulid::Ulid::from_string(&last[4..])?.0 + 1));
        let t = Instant::now();
        let rows = if graph.engine().orders_by_index() {
            // Neo4j reads a page in one statement (review_queue_ordered.cypher).
            let mut params = window_params(cursor, &past_last);
            params.insert("after".into(), json!(cursor));
            params.insert("limit".into(), json!(51));
            graph.engine().run(canon::graph::queries::REVIEW_QUEUE_ORDERED, &params).await?
        } else {
            graph
                .engine()
                .run(canon::graph::queries::REVIEW_QUEUE, &window_params(cursor, &past_last))
                .await?
        };
        window_times.push(t.elapsed());
        let ids: Vec<String> =
            rows.iter().filter_map(|r| r["entityID"].as_str().map(String::from)).take(50).collect();
        let (t, at) = (Instant::now(), chrono::Utc::now());
        graph.entity_details(&bench.tenant, &ids).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        details_times.push(t.elapsed());
        details_at.push((t.elapsed(), at));
        if graph.engine().orders_by_index() {
            // What the service sends on Neo4j: the IDs and their records in one statement.
            let mut params = window_params(cursor, &past_last);
            params.insert("after".into(), json!(cursor));
            params.insert("limit".into(), json!(51));
            let t = Instant::now();
            graph.engine().run(canon::graph::queries::REVIEW_QUEUE_PAGE_ORDERED, &params).await?;
            one_statement.push(t.elapsed());
        }
    }
    details_at.sort_by_key(|k| std::cmp::Reverse(k.0));
    let details_slowest: Vec<String> = details_at
        .iter()
        .take(3)
        .map(|(took, at)| format!("{} ms at {}", ms(*took), at.format("%H:%M:%S%.3f")))
        .collect();
    println!(
        "  a page's statements straight to the engine: IDs p50 {} ms p99 {} ms, entity records p50 {} ms p99 {} ms",
        ms(percentile(&mut window_times, 0.5)),
        ms(percentile(&mut window_times, 0.99)),
        ms(percentile(&mut details_times, 0.5)),
        ms(percentile(&mut details_times, 0.99))
    );
    println!("  slowest entity records statements: {}", details_slowest.join(", "));
    if !one_statement.is_empty() {
        println!(
            "  the page's one statement (IDs and records, as the service sends it on Neo4j) straight to the engine: \
             p50 {} ms p99 {} ms",
            ms(percentile(&mut one_statement, 0.5)),
            ms(percentile(&mut one_statement, 0.99))
        );
    }
    let mut graph_pages = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let path = match &cursor {
            Some(c) => format!("/v3/knowledge-graph?limit=50&cursor={c}"),
            None => "/v3/knowledge-graph?limit=50".to_string(),
        };
        let t = Instant::now();
        let page: Value = bench.get(&path).send().await?.json().await?;
        graph_pages.push(t.elapsed());
        cursor = page["nextCursor"].as_str().map(String::from);
    }
    println!(
        "knowledge-graph page (limit 50) of {total} entities, {edges} relations: p50 {} ms, p99 {} ms (goal p99 <= 10 ms)",
        ms(percentile(&mut graph_pages, 0.5)),
        ms(percentile(&mut graph_pages, 0.99))
    );
    if !falkordb {
        bench.stop().await;
        return Ok(refreshed);
    }
    let (bench, starts) = bench.restart().await?;
    println!(
        "start on {total} entities: canon answers in {:.2} s (goal < 5 s), FalkorDB alone with the same flags {:.2} s \
         (ratio {:.2}); graph indexes built after {:.2} s (writes wait until then; FalkorDB building them before \
         answering, its default: {:.2} s)",
        starts.canon.as_secs_f64(),
        starts.engine.as_secs_f64(),
        starts.canon.as_secs_f64() / starts.engine.as_secs_f64(),
        starts.canon_indexed.as_secs_f64(),
        starts.engine_indexing.as_secs_f64(),
    );

    // A crash of `canon serve` (its own process: one in process cannot die as a crashed one
    // does), with writes through the API since the last snapshot: the clean stop above
    // compacted the append-only file, so these are what the next start replays.
    let writes = size("CANON_BENCH_CRASH_WRITES", 10_000);
    let serve = common::serve::Serve::start(bench).await?;
    api_seed_at(&serve.client, &serve.base, &serve.key, total..total + writes).await?;
    let replay = append_only_tail(serve.data_dir());
    let (serve, crash) = serve.crash_restart().await?;
    let what = format!(
        "crash restart on {} entities (kill -9 of canon serve and of its FalkorDB, {writes} entities written \
         through the API since the last snapshot, {:.1} MB of append-only file to replay)",
        total + writes,
        replay as f64 / 1e6
    );
    let engine_alone = crash.engine.as_secs_f64();
    match crash.canon {
        Ok(answered) => println!(
            "{what}: canon answers a graph read {:.2} s after it is started again (goal < 5 s); FalkorDB alone \
             on the same files, building its indexes before it answers as canon launches it after a crash: \
             {engine_alone:.2} s",
            answered.as_secs_f64()
        ),
        Err((tried, err)) => println!(
            "{what}: canon did NOT answer, it gave up after {:.2} s (goal: answering < 5 s): {err}; FalkorDB \
             alone on the same files, building its indexes before it answers as canon launches it after a \
             crash: {engine_alone:.2} s",
            tried.as_secs_f64()
        ),
    }
    serve.stop().await;
    Ok(refreshed)
}

/// Seeds companies "Org 0000042" for rows `range` through `POST /v3/entities/bulk`, 10,000 a
/// job, and waits until every job has completed.
async fn api_seed(bench: &common::Bench, range: std::ops::Range<usize>) -> anyhow::Result<()> {
    api_seed_at(&bench.client, &bench.base, &bench.key, range).await
}

/// [`api_seed`] against any canon: its URL and a key.
async fn api_seed_at(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    range: std::ops::Range<usize>,
) -> anyhow::Result<()> {
    let post =
        |path: &str, body: &Value| client.post(format!("{base}{path}")).header("x-api-key", key).json(body);
    let get = |path: &str| client.get(format!("{base}{path}")).header("x-api-key", key);
    let started = Instant::now();
    let mut jobs = Vec::new();
    for batch in range.collect::<Vec<_>>().chunks(10_000) {
        let rows: Vec<Value> =
            batch.iter().map(|i| json!({ "canonical": format!("Org {i:07}"), "type": "Company" })).collect();
        let accepted: Value =
            post("/v3/entities/bulk", &json!({ "entities": rows })).send().await?.json().await?;
        let job = accepted["seedJobID"].as_str().ok_or_else(|| anyhow::anyhow!("{accepted}"))?;
        jobs.push((job.to_string(), batch.len()));
    }
    let posted = started.elapsed();
    for (job, rows) in &jobs {
        loop {
            let status: Value = get(&format!("/v3/entities/seed/{job}")).send().await?.json().await?;
            if status["status"] == "completed" {
                anyhow::ensure!(status["createdCount"] == *rows, "{}", status["createdCount"]);
                break;
            }
            // A failed job never completes; one that failed an attempt and waits for its
            // retry (seconds to minutes) measures the retry, not seeding: stop either way.
            if status["status"] == "failed" || status["error"].is_string() {
                anyhow::bail!("seed job {job} {}: {}", status["status"], status["error"]);
            }
            // Polled often: a round of 25,000 rows lasts a few seconds, and the poll's wait
            // past the last job's end counts against the API.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    // The requests alone (parsing, checking and storing the rows) against the whole.
    println!(
        "  API seed: {} jobs posted in {:.1} s, all completed after {:.1} s",
        jobs.len(),
        posted.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Bytes of FalkorDB's append-only increments (what a start replays after its snapshot).
fn append_only_tail(data_dir: &std::path::Path) -> u64 {
    let dir = data_dir.join("falkordb").join("appendonlydir");
    std::fs::read_dir(dir)
        .map(|files| {
            files
                .filter_map(Result::ok)
                .filter(|f| f.file_name().to_string_lossy().ends_with(".incr.aof"))
                .filter_map(|f| f.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Random entity IDs of the bench tenant, via the review queue's pages.
async fn sample_ids(bench: &common::Bench, want: usize) -> anyhow::Result<Vec<String>> {
    let mut ids = Vec::new();
    let mut cursor = String::new();
    while ids.len() < want {
        let path = if cursor.is_empty() {
            "/v3/review-queue?limit=200".to_string()
        } else {
            format!("/v3/review-queue?limit=200&cursor={cursor}")
        };
        let page: Value = bench.get(&path).send().await?.json().await?;
        let batch: Vec<String> = page["entities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["entityID"].as_str().unwrap().to_string())
            .collect();
        ids.extend(batch);
        // A page may end short (its scan bound) and still say more follow.
        match page["nextCursor"].as_str() {
            Some(next) => cursor = next.to_string(),
            None => break,
        }
    }
    Ok(ids)
}

/// One round of the seed measurement: its rows, the API's and the engine's rows/s and CPU
/// seconds of this process, and which ran first.
struct SeedRound {
    rows: usize,
    api: Side,
    raw: Side,
    api_first: bool,
}

/// One side of a seed round: rows/s, this process's CPU seconds and the engine's.
struct Side {
    rate: f64,
    cpu: f64,
    engine_cpu: Option<f64>,
}

/// Measures a side of a seed round: the engine's process (when found) beside this one's.
struct Meter {
    engine_pid: Option<u32>,
    timeline: bool,
}

impl Meter {
    fn engine_cpu(&self) -> Option<f64> {
        self.engine_pid.and_then(common::cpu_ns).map(|ns| ns as f64 / 1e9)
    }

    /// Runs `work` (seeding `rows` rows) and measures it; with a timeline, prints how busy the
    /// engine was through it as `what`.
    async fn side(
        &self,
        rows: usize,
        what: &str,
        work: impl std::future::Future<Output = anyhow::Result<()>>,
    ) -> anyhow::Result<Side> {
        let sampler = self.engine_pid.filter(|_| self.timeline).map(common::BusySampler::start);
        let started = Instant::now();
        let (cpu, engine) = (common::cpu_seconds(), self.engine_cpu());
        work.await?;
        let side = Side {
            rate: rows as f64 / started.elapsed().as_secs_f64(),
            cpu: common::cpu_seconds() - cpu,
            engine_cpu: engine.zip(self.engine_cpu()).map(|(before, after)| after - before),
        };
        // Stopped after the side is measured: the sampler's thread takes up to 50 ms to end.
        if let Some(sampler) = sampler {
            println!("  the engine during {what}, {}", sampler.stop());
        }
        Ok(side)
    }
}

/// The Bolt port `CANON_BENCH_NEO4J_URI` names (Bolt's 7687 when it names none).
fn neo4j_port() -> u16 {
    let uri = std::env::var("CANON_BENCH_NEO4J_URI").unwrap_or_default();
    let authority = uri.split("://").last().unwrap_or_default().split('/').next().unwrap_or_default();
    authority.rsplit_once(':').and_then(|(_, port)| port.parse().ok()).unwrap_or(7687)
}
