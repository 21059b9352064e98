//! DBLP-ACM (vendor/dblp-acm, from the `py_entitymatching` 0.4.1 sdist): 2,616 DBLP and
//! 2,294 ACM records of database papers, deduplicated as one set of `Publication`s named by
//! their title. Only the 415 pairs of the package's labelled sample (231 matches) are judged:
//! a pair outside it counts neither way, so precision and recall are over that sample, as
//! the package itself evaluates. The sample was drawn from candidate pairs, so its non-matches
//! are harder than random pairs: the figures are not comparable with Febrl's.
//!
//! With `all`, authors compare as fuzzy text and the year as a number. The venue is not
//! compared: the two sources name venues differently ('SIGMOD Conference' against
//! 'International Conference on Management of Data'), and a user who knows that would not
//! mark it comparable.

use crate::{csv_rows, LabelledSet, Pairs, SetRecord};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

pub const SPLINK_COLUMNS: &[&str] = &["title", "authors", "year"];

pub fn load(dir: &Path) -> anyhow::Result<LabelledSet> {
    let read = |file: &str| {
        std::fs::read_to_string(dir.join(file))
            .map_err(|e| anyhow::anyhow!("{file}: {e}; run `make provision`"))
    };
    let mut records = Vec::new();
    let mut index: HashMap<(usize, String), usize> = HashMap::new();
    for (source, file) in ["DBLP.csv", "ACM.csv"].into_iter().enumerate() {
        for row in csv_rows(&read(file)?).into_iter().skip(1) {
            let [id, title, authors, _venue, year] = &row[..] else { continue };
            let year = year.split('.').next().unwrap_or_default().to_string();
            let attributes = BTreeMap::from([
                ("authors".to_string(), authors.clone()),
                ("year".to_string(), year.clone()),
            ]);
            index.insert((source, id.clone()), records.len());
            records.push(SetRecord {
                canonical: title.clone(),
                attributes,
                splink: vec![title.clone(), authors.clone(), year],
            });
        }
    }
    let (mut truth, mut judged) = (Pairs::new(), Pairs::new());
    for row in csv_rows(&read("labels.csv")?).into_iter().skip(1) {
        // _id, ltable.id (DBLP), rtable.id (ACM), …, gold
        let (Some(left), Some(right), Some(gold)) = (row.get(1), row.get(2), row.last()) else { continue };
        let (Some(&i), Some(&j)) = (index.get(&(0, left.clone())), index.get(&(1, right.clone()))) else {
            anyhow::bail!("labels.csv names a record the set lacks: {left} / {right}");
        };
        let pair = (i.min(j), i.max(j));
        judged.insert(pair);
        if gold == "1" {
            truth.insert(pair);
        }
    }
    Ok(LabelledSet {
        name: "dblp-acm".into(),
        type_name: "Publication",
        records,
        schema: json!({ "properties": {
            "authors": { "type": "string", "x-compare": "fuzzy" },
            "year": { "type": "string", "x-compare": "number" },
        }}),
        truth,
        judged: Some(judged),
        splink_kind: "publications",
        splink_columns: SPLINK_COLUMNS,
    })
}
