//! `make bench-fs` (cargo bench --bench fs): `POST /v3/fs` `grep` and `find` over 10,000
//! parsed documents and 100,000 entities, p50 / p99, beside the stores' own queries in the
//! same run: the record store's full-text (trigram) query for `grep`, and for `find` the plain
//! Cypher statement (the filters over every entity, sorted) sent straight to the graph engine.
//!
//! `CANON_BENCH_DOCUMENTS`, `CANON_BENCH_ENTITIES` and `CANON_BENCH_REQUESTS` change the sizes.

mod common;

use canon::documents::{structure, DocumentService, ParsedBy};
use canon::engines::Document;
use common::{ms, percentile, raw_seed, size};
use serde_json::{json, Value};
use sqlx::Row;
use std::time::{Duration, Instant};

const WORDS: &[&str] =
    &["delivery", "payment", "warranty", "invoice", "shipment", "liability", "renewal", "audit"];

/// A contract-like text whose vendor and a rare code depend on `i`.
fn text(i: usize) -> String {
    let word = WORDS[i % WORDS.len()];
    format!(
        "SUPPLY AGREEMENT {i}\n\nVendor: Org {org:07}\nBuyer: Buyer {b}\n\n1. Scope\nThe vendor handles {word} for the buyer \
         under order ZX-{i:05}.\n\nPayment Terms\n- Net {n} days\n- Late fee 2%\n\nItem        Qty      Price\n\
         Widget      {q}        {p}.00\nGadget      3        12.50\n",
        org = i * 7 % 100_000,
        b = i % 97,
        n = 15 + i % 4 * 15,
        q = 1 + i % 9,
        p = 10 + i % 90,
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let documents = size("CANON_BENCH_DOCUMENTS", 10_000);
    let entities = size("CANON_BENCH_ENTITIES", 100_000);
    let requests = size("CANON_BENCH_REQUESTS", 300);
    let bench = common::start(|_| {}).await?;
    let graph = bench.app.state.graph.clone();

    let started = Instant::now();
    let service = DocumentService::new(bench.app.state.records.clone());
    let linked = canon::documents::Linked::default();
    for i in 0..documents {
        let body = text(i);
        let document = Document {
            input_type: "text".into(),
            pages: vec![body.clone()],
            text: body,
            ..Document::default()
        };
        let (sections, pages) = structure::sections(&document);
        let id = format!("tr_{}", canon::ids::new_id("x").trim_start_matches("x_"));
        let reference = format!("doc-{i:05}");
        let by = ParsedBy {
            transformation_id: &id,
            reference_id: &reference,
            call_id: "wc_bench",
            function_id: "fn_bench",
            function_name: "contracts",
        };
        service
            .record(&bench.tenant, by, &document, (&sections, pages), &json!({}), Some(&linked))
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    println!("setup: {documents} parsed documents in {:.0} s", started.elapsed().as_secs_f64());
    let started = Instant::now();
    raw_seed(&graph, &bench.tenant, 0..entities).await?;
    println!("setup: {entities} entities in {:.0} s", started.elapsed().as_secs_f64());

    // grep: a code found in one document, and a word found in an eighth of them.
    let url = bench.config.database_url.clone();
    let store =
        sqlx::AnyPool::connect(&url.unwrap_or_else(|| canon::data_dir::sqlite_url(bench.data_dir()))).await?;
    for (what, pattern) in [("rare", "ZX-0"), ("common", "warranty")] {
        let mut api = Vec::new();
        let mut raw = Vec::new();
        for r in 0..requests {
            let pattern = if what == "rare" {
                format!("{pattern}{:04}", r * 31 % documents.min(10_000))
            } else {
                pattern.to_string()
            };
            let t = Instant::now();
            let page: Value = bench
                .post("/v3/fs", &json!({"op": "grep", "pattern": pattern, "scope": "sections"}))
                .send()
                .await?
                .json()
                .await?;
            api.push(t.elapsed());
            anyhow::ensure!(page["count"].as_i64().unwrap_or(0) >= 1, "{page}");
            let t = Instant::now();
            let rows = sqlx::query(
                "SELECT i.id, i.text FROM document_items i WHERE i.rowid IN \
                 (SELECT rowid FROM document_items_fts WHERE document_items_fts MATCH $1) ORDER BY i.id LIMIT 26",
            )
            .bind(format!("\"{pattern}\""))
            .fetch_all(&store)
            .await?;
            raw.push(t.elapsed());
            anyhow::ensure!(!rows.is_empty() && rows[0].get::<String, _>("id").starts_with("tr_"));
        }
        report(&format!("grep {what} substring (limit 25) over {documents} documents"), &mut api, &mut raw);
    }

    // find: a name substring over the entities, and pages of all of them, beside the plain
    // statement (every entity after the cursor read and sorted, as find read them until it
    // walked creation-time windows: `cypher/entity_find.cypher`).
    let find_entities = "MATCH (e:Entity)
        WHERE e.accountID = $accountID AND e.environment = $environment AND e.status <> 'merged'
          AND ($cursor IS NULL OR e.id > $cursor) AND ($bucketID IS NULL OR e.bucketID = $bucketID)
          AND ($since IS NULL OR e.createdAt >= $since)
          AND ($search IS NULL OR toLower(e.canonical) CONTAINS $search)
        OPTIONAL MATCH (t:EntityType {id: e.typeID})
        WITH e, coalesce(t.name, e.typeName) AS type
        WHERE $type IS NULL OR type = $type
        RETURN e.id AS entityID ORDER BY e.id LIMIT $limit";
    let engine = graph.engine().clone();
    for (what, search) in [("by name", true), ("page", false)] {
        let mut api = Vec::new();
        let mut raw = Vec::new();
        for r in 0..requests {
            let term = format!("org {:05}", r * 37 % (entities / 100).max(1));
            let filter = if search { json!({"search": term}) } else { json!({}) };
            let t = Instant::now();
            let page: Value = bench
                .post("/v3/fs", &json!({"op": "find", "filter": filter, "limit": 50}))
                .send()
                .await?
                .json()
                .await?;
            api.push(t.elapsed());
            anyhow::ensure!(page["data"].as_array().is_some(), "{page}");
            let mut params = serde_json::Map::new();
            params.insert("accountID".into(), json!(bench.tenant.account_id));
            params.insert("environment".into(), json!(bench.tenant.environment.as_str()));
            for (k, v) in [
                ("cursor", Value::Null),
                ("bucketID", Value::Null),
                ("since", Value::Null),
                ("type", Value::Null),
            ] {
                params.insert(k.into(), v);
            }
            params.insert("search".into(), if search { json!(term) } else { Value::Null });
            params.insert("limit".into(), json!(51));
            let t = Instant::now();
            engine.run(find_entities, &params).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            raw.push(t.elapsed());
        }
        report(&format!("find {what} (limit 50) over {entities} entities"), &mut api, &mut raw);
    }
    bench.stop().await;
    Ok(())
}

fn report(what: &str, api: &mut [Duration], raw: &mut [Duration]) {
    println!(
        "{what}: POST /v3/fs p50 {} ms, p99 {} ms; store's own query p50 {} ms, p99 {} ms",
        ms(percentile(api, 0.5)),
        ms(percentile(api, 0.99)),
        ms(percentile(raw, 0.5)),
        ms(percentile(raw, 0.99)),
    );
}
