//! Company names as people write them (vendor/companies/names.csv, made by
//! `scripts/company-names.py` from the PyPI package `company-graph` 0.5.3, MIT): names typed
//! on professional profiles, each with the company page the profile linked, redirects
//! between pages (renames, acquisitions) followed as the package does. The noise is real, not
//! generated: departments and sites ('southern illinois university carbondale it
//! department'), former names ('quantum formerly adic'), places ('skrill moneybookers london
//! united kingdom'), partner tags, other scripts. The package lower-cased most names and
//! stripped punctuation and a few words ('inc', 'ltd', 'group', 'the'); some are as typed.
//! Names of one page are one organisation: that is the truth, and some of it no name can
//! tell ('adp' / 'digital oilfield'), so no system's recall reaches 1. Every pair is judged.
//!
//! A sample: companies written at most 10 ways (larger ones, a few hundred names each, would
//! be most of the pairs), chosen by the FNV-1a hash of the page's number mod 20: 0 is
//! `companies-dev` (about 5,100 names, 1,650 true pairs), 1 is `companies-test` (about
//! 5,100 names, 1,540 pairs). Nothing was chosen on `companies-test`: it is the half to
//! report. Names only: the package has no other field.

use crate::{all_pairs, csv_rows, LabelledSet, SetRecord};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// The sets: name and hash remainder.
pub const SETS: [(&str, u64); 2] = [("companies-dev", 0), ("companies-test", 1)];

/// The registry-export sets (vendor/companies/addresses.csv, made by
/// `scripts/company-addresses.py`): the 2,000 companies most profiles link, by their
/// commonest name, each written 1 to 8 times with generated addresses, postcodes, cities,
/// countries, legal forms and slips run into the name ("verisign corp 73770 garcia prairie
/// chicago"); see the script for the odds. Split by the FNV-1a hash of the page's number mod
/// 2: 0 is `registry-dev` (to choose on), 1 `registry-test` (to report), about 3,200 rows
/// each. The names are real, the noise generated: it checks that noise weighs as noise, not
/// how people write names (the `companies` sets do that).
pub const REGISTRY_SETS: [(&str, u64); 2] = [("registry-dev", 0), ("registry-test", 1)];

pub fn load_registry(dir: &Path, name: &str, part: u64) -> anyhow::Result<LabelledSet> {
    let mut by_company: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in rows(&dir.join("addresses.csv"))? {
        if let [name, company] = &row[..] {
            if fnv1a(company) % 2 == part {
                by_company.entry(company.clone()).or_default().push(name.clone());
            }
        }
    }
    Ok(named_set(name, by_company.into_values()))
}

pub fn load(dir: &Path, name: &str, part: u64) -> anyhow::Result<LabelledSet> {
    let mut by_company: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in rows(&dir.join("names.csv"))? {
        if let [name, company, _count] = &row[..] {
            by_company.entry(company.clone()).or_default().push(name.clone());
        }
    }
    let sample = by_company
        .into_iter()
        .filter(|(company, names)| names.len() <= 10 && fnv1a(company) % 20 == part)
        .map(|(_, names)| names);
    Ok(named_set(name, sample))
}

/// A CSV file's rows after its header.
fn rows(file: &Path) -> anyhow::Result<Vec<Vec<String>>> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| anyhow::anyhow!("{}: {e}; run `make provision`", file.display()))?;
    Ok(csv_rows(&text).into_iter().skip(1).collect())
}

/// A names-only set: each group's names are one organisation.
fn named_set(name: &str, companies: impl Iterator<Item = Vec<String>>) -> LabelledSet {
    let mut records = Vec::new();
    let mut groups = Vec::new();
    for names in companies {
        groups.push((records.len()..records.len() + names.len()).collect::<Vec<_>>());
        for name in names {
            records.push(SetRecord {
                canonical: name.clone(),
                attributes: BTreeMap::new(),
                splink: vec![name],
            });
        }
    }
    LabelledSet {
        name: name.into(),
        type_name: "Company",
        records,
        schema: json!({ "properties": {} }),
        truth: all_pairs(groups.iter()),
        judged: None,
        splink_kind: "companies",
        splink_columns: &["title"],
    }
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
