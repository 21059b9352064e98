//! `cargo bench --bench graphql`: the explorer's nested query (50 entities, each with its
//! mentions, its first 10 relations and each relation's far end) p50 / p99, against the
//! equivalent sequence of REST calls in the same run (the review-queue page, then each
//! entity's relations, then each far end), sent one after the other and 8 at a time.

mod common;

use common::{ms, percentile};
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

const ENTITIES: usize = 200;
const SAMPLES: usize = 100;
const QUERY: &str = "{ entities(first: 50) { edges { node { entityID canonical status mentionCount \
    mentions { mentionID surface referenceID } \
    relations(first: 10) { edges { node { relationID relationType direction other { entityID canonical type } } } } } } } }";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let bench = common::start(|_| {}).await?;
    let started = Instant::now();
    let mut ids = Vec::with_capacity(ENTITIES);
    for chunk in (0..ENTITIES).collect::<Vec<_>>().chunks(50) {
        let rows: Vec<Value> = chunk
            .iter()
            .map(|i| json!({ "canonical": format!("Bench Entity {i:04}"), "type": "Thing" }))
            .collect();
        let body: Value = bench
            .post("/v3/entities/bulk", &json!({ "entities": rows, "onConflict": "merge" }))
            .send()
            .await?
            .json()
            .await?;
        for row in body["results"].as_array().cloned().unwrap_or_default() {
            ids.push(row["entityID"].as_str().unwrap_or_default().to_string());
        }
    }
    anyhow::ensure!(ids.len() == ENTITIES, "seeded {} entities", ids.len());
    for (i, id) in ids.iter().enumerate() {
        for surface in [format!("Bench Entity {i:04}"), format!("BE{i:04}")] {
            let body = json!({ "entityID": id, "surface": surface, "referenceID": "doc-1" });
            anyhow::ensure!(bench.post("/v3/mentions", &body).send().await?.status() == 200, "mention");
        }
        for step in [1, 7] {
            let body = json!({ "sourceEntityID": id, "targetEntityID": ids[(i + step) % ENTITIES], "relationType": "next" });
            anyhow::ensure!(bench.post("/v3/relations", &body).send().await?.status() == 200, "relation");
        }
    }
    println!(
        "setup: {ENTITIES} entities, {} mentions, {} relations in {:.1} s",
        2 * ENTITIES,
        2 * ENTITIES,
        started.elapsed().as_secs_f64()
    );

    let graph = bench.app.state.graph.clone();
    let (mut gql, mut rest_seq, mut rest_par) = (Vec::new(), Vec::new(), Vec::new());
    let (mut gql_queries, mut rest_queries, mut rest_requests) = (0, 0, 0);
    for round in 0..SAMPLES + 5 {
        let before = graph.queries_run();
        let t = Instant::now();
        let body: Value = bench.post("/graphql", &json!({ "query": QUERY })).send().await?.json().await?;
        let took = t.elapsed();
        anyhow::ensure!(body.get("errors").is_none(), "GraphQL errors: {body}");
        anyhow::ensure!(
            body["data"]["entities"]["edges"].as_array().map(Vec::len) == Some(50),
            "50 entities"
        );
        let used = graph.queries_run() - before;

        let before = graph.queries_run();
        let t = Instant::now();
        let requests = rest_sequence(&bench, 1).await?;
        let seq = t.elapsed();
        let rest_used = graph.queries_run() - before;
        let t = Instant::now();
        rest_sequence(&bench, 8).await?;
        let par = t.elapsed();
        if round >= 5 {
            gql.push(took);
            rest_seq.push(seq);
            rest_par.push(par);
            (gql_queries, rest_queries, rest_requests) = (used, rest_used, requests);
        }
    }
    let report = |name: &str, samples: &mut Vec<Duration>| {
        let (p50, p99) = (percentile(samples, 0.5), percentile(samples, 0.99));
        println!("{name:<34} p50 {:>8} ms   p99 {:>8} ms", ms(p50), ms(p99));
        p50
    };
    println!("nested query: 50 entities + mentions + 10 relations each + far ends ({SAMPLES} samples)");
    let g = report("GraphQL (1 request)", &mut gql);
    let s = report(&format!("REST sequential ({rest_requests} requests)"), &mut rest_seq);
    let p = report("REST, 8 requests in flight", &mut rest_par);
    println!("graph statements per answer: GraphQL {gql_queries}, REST {rest_queries}");
    println!(
        "p50 ratio REST/GraphQL: sequential {:.1}x, 8 in flight {:.1}x",
        s.as_secs_f64() / g.as_secs_f64(),
        p.as_secs_f64() / g.as_secs_f64()
    );
    bench.stop().await;
    Ok(())
}

/// What a REST client does for the same answer: the page (its entities carry their first two
/// mentions), then each entity's relations, then each distinct far end. Returns the number
/// of requests.
async fn rest_sequence(bench: &common::Bench, in_flight: usize) -> anyhow::Result<usize> {
    let page: Value = bench
        .get("/v3/review-queue?status=extracted&status=proposed&status=approved&status=rejected&limit=50")
        .send()
        .await?
        .json()
        .await?;
    let ids: Vec<String> = page["entities"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| e["entityID"].as_str().unwrap_or_default().to_string())
        .collect();
    anyhow::ensure!(ids.len() == 50, "REST page of 50");
    let paths = ids.iter().map(|id| format!("/v3/entities/{id}/relations?limit=10"));
    let relations = get_all(bench, paths, in_flight).await?;
    let mut far = BTreeSet::new();
    for page in &relations {
        for edge in page["outbound"].as_array().into_iter().flatten() {
            far.insert(edge["targetEntity"]["id"].as_str().unwrap_or_default().to_string());
        }
        for edge in page["inbound"].as_array().into_iter().flatten() {
            far.insert(edge["sourceEntity"]["id"].as_str().unwrap_or_default().to_string());
        }
    }
    let fetched = get_all(bench, far.iter().map(|id| format!("/v3/entities/{id}")), in_flight).await?;
    Ok(1 + relations.len() + fetched.len())
}

/// GETs every path, `in_flight` at a time, and returns the JSON bodies in order.
async fn get_all(
    bench: &common::Bench,
    paths: impl Iterator<Item = String>,
    in_flight: usize,
) -> anyhow::Result<Vec<Value>> {
    stream::iter(paths)
        .map(|path| async move { anyhow::Ok(bench.get(&path).send().await?.json::<Value>().await?) })
        .buffered(in_flight)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect()
}
