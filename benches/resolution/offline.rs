//! The service's scoring without the service, in seconds: the set seeded as the bulk seed
//! would seed it (a row whose name names an entity joins it, see `model::seed_joins`), the
//! entities' candidate pairs scored as a refresh scores them (`pairs::score`), the names'
//! meaning added where a refresh adds it (MiniLM, `decide::meaning_wanted`), and each pair
//! decided as a refresh decides it (`decide::decide`: thresholds and the guard on short names).
//! It scored every record once, the seeded copies included: the model learnt from equal names
//! the service never sees (they are one entity before a refresh), and on DBLP-ACM names it
//! predicted 0.962 where the service merged at 0.940.

use crate::{all_pairs, quality, LabelledSet, Pairs};
use canon::embeddings::{minilm::MiniLm, Embedder};
use canon::graph::duplicates::Candidate;
use canon::graph::normalize::normalize;
use canon::graph::resolution::decide::{self, Thresholds};
use canon::graph::resolution::{calibration, comparisons, model, model::Record, names, pairs};
use std::collections::{BTreeMap, HashMap};

/// canon's default thresholds.
pub const THRESHOLDS: Thresholds = Thresholds { auto_merge: 0.95, suggest: 0.80 };

/// The set as the service holds it after seeding: one entity per name (with compared
/// attributes, one per group of rows whose attributes agree), as records, and the rows each
/// entity holds.
pub struct Seeded {
    pub records: Vec<Record>,
    pub rows: Vec<Vec<usize>>,
}

impl Seeded {
    /// Every pair of rows the entity pairs join.
    fn row_pairs<'a>(&self, entity_pairs: impl Iterator<Item = (usize, usize)> + 'a) -> Pairs {
        let mut out = Pairs::new();
        for (a, b) in entity_pairs {
            for &i in &self.rows[a] {
                for &j in &self.rows[b] {
                    out.insert((i.min(j), i.max(j)));
                }
            }
        }
        out
    }
}

/// Seeds the set's rows as the bulk seed does, in order (entity IDs are time-ordered: the
/// order of creation). A row joins the first entity of its name whose attributes agree (all of
/// them, with names only) and adds the attribute keys the entity lacks.
pub fn seed(set: &LabelledSet, mode: &str) -> Seeded {
    let fields = comparisons::fields_of((mode == "all").then_some(&set.schema));
    let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
    let (mut records, mut rows): (Vec<Record>, Vec<Vec<usize>>) = (Vec::new(), Vec::new());
    for (i, row) in set.records.iter().enumerate() {
        let attributes: BTreeMap<String, String> = if mode == "all" {
            row.attributes
                .iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        } else {
            BTreeMap::new()
        };
        let key = normalize(&row.canonical);
        let homonyms = by_name.entry(key.clone()).or_default();
        let joined = homonyms
            .iter()
            .copied()
            .find(|&e| model::seed_joins(&fields, &attributes, &records[e].attributes));
        match joined {
            Some(e) => {
                rows[e].push(i);
                for (k, v) in attributes {
                    records[e].attributes.entry(k).or_insert(v);
                }
            }
            None => {
                homonyms.push(records.len());
                rows.push(vec![i]);
                records.push(Record {
                    candidate: Candidate {
                        entity_id: format!("{:08}", records.len()),
                        bucket_id: "b".into(),
                        type_name: set.type_name.into(),
                        normalized: key.clone(),
                        forms: vec![key],
                    },
                    core: names::core_name(&row.canonical),
                    attributes,
                });
            }
        }
    }
    Seeded { records, rows }
}

/// The refresh's run over the seeded entities, keeping pairs at or above `floor` (with
/// `meaning`, those the names' meaning could lift there).
pub fn score(set: &LabelledSet, mode: &str, seeded: &Seeded, floor: pairs::Floor) -> pairs::Run {
    let schemas = if mode == "all" {
        BTreeMap::from([(set.type_name.to_lowercase(), set.schema.clone())])
    } else {
        BTreeMap::new()
    };
    pairs::score(&seeded.records, &schemas, &[], floor)
}

/// Adds the names' cosine where a refresh adds it (on a fresh tenant: nothing stored yet).
async fn add_meaning(seeded: &Seeded, run: &mut pairs::Run) -> anyhow::Result<()> {
    let embedder = MiniLm::shared(&canon::provision::source_dir().join("vendor/minilm"))?;
    let wanted = decide::meaning_wanted(&seeded.records, &run.models, &run.pairs, |_| false, THRESHOLDS);
    let (needed, _) =
        decide::names_to_embed(&run.pairs, &wanted, decide::MEANING_BUDGET, decide::SCORE_ONLY_BUDGET);
    let mut texts = Vec::with_capacity(needed.len());
    for &i in &needed {
        let name = &seeded.records[i].candidate.normalized;
        // As the refresh does: a name past 200 characters is embedded by its first window.
        texts.push(match name.chars().count() <= 200 {
            true => name.clone(),
            false => embedder.chunk(name).await?.into_iter().next().unwrap_or_default(),
        });
    }
    let mut vectors = Vec::with_capacity(texts.len());
    for batch in texts.chunks(256) {
        vectors.extend(embedder.embed(batch).await?);
    }
    let by_record: HashMap<usize, &Vec<f32>> = needed.iter().copied().zip(&vectors).collect();
    decide::add_cosines(&mut run.pairs, &wanted, &by_record);
    Ok(())
}

/// With `RESOLUTION_QUICK=1`, instead of the service's run: the rows the service's decisions
/// would join (`seed`: seeding alone; `auto`: clustered automatic merges; `auto+sugg`: with
/// the suggestions), with the names' meaning unless `RESOLUTION_QUICK=letters`.
pub async fn quick(set: &LabelledSet, mode: &str) -> anyhow::Result<()> {
    print_model(set, mode);
    let seeded = seed(set, mode);
    let letters = std::env::var("RESOLUTION_QUICK").is_ok_and(|v| v == "letters");
    let floor = pairs::Floor { probability: THRESHOLDS.suggest, meaning: !letters };
    let mut run = score(set, mode, &seeded, floor);
    if !letters {
        add_meaning(&seeded, &mut run).await?;
    }
    let (mut automatic, mut suggested) = (Vec::new(), Vec::new());
    for pair in &run.pairs {
        match decide::decide(&run.models, &seeded.records, pair, THRESHOLDS) {
            Some((_, true)) => automatic.push((pair.a, pair.b)),
            Some((_, false)) => suggested.push((pair.a, pair.b)),
            None => {}
        }
    }
    let mut parent: Vec<usize> = (0..seeded.records.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for &(a, b) in &automatic {
        let (x, y) = (root(&mut parent, a), root(&mut parent, b));
        parent[x.max(y)] = x.min(y);
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for (e, rows) in seeded.rows.iter().enumerate() {
        let r = root(&mut parent, e);
        groups.entry(r).or_default().extend(rows);
    }
    let seeded_pairs = all_pairs(seeded.rows.iter());
    let auto = all_pairs(groups.values());
    let mut with_suggestions = auto.clone();
    with_suggestions.extend(seeded.row_pairs(suggested.iter().copied()));
    for (stage, predicted) in [("seed", seeded_pairs), ("auto", auto), ("auto+sugg", with_suggestions)] {
        let predicted = set.judged(&predicted);
        let (p, r, f1) = quality(&predicted, &set.truth);
        println!(
            "{:<10} {mode:<6} {:>7} quick   {stage:<10} {:>9} {p:>6.3} {r:>6.3} {f1:>6.3}",
            set.name,
            set.records.len(),
            predicted.len()
        );
        if stage != "seed" {
            crate::list_errors(set, stage, &predicted);
        }
    }
    list_reasons(set, &seeded, &run, &automatic);
    if std::env::var("RESOLUTION_CURVE").is_ok() {
        print_calibration(set, mode);
    }
    Ok(())
}

/// With `RESOLUTION_ERRORS=N`, the explanations of up to N automatic merges that joined rows
/// of different things (`why`), then of up to N scored pairs of one thing that did not merge
/// (`missed`).
fn list_reasons(set: &LabelledSet, seeded: &Seeded, run: &pairs::Run, automatic: &[(usize, usize)]) {
    let limit: usize = std::env::var("RESOLUTION_ERRORS").ok().and_then(|n| n.parse().ok()).unwrap_or(0);
    let merged: std::collections::HashSet<(usize, usize)> = automatic.iter().copied().collect();
    let wrong = run.pairs.iter().filter(|p| {
        let rows = seeded.row_pairs(std::iter::once((p.a, p.b)));
        merged.contains(&(p.a, p.b))
            && !set.judged(&rows).is_empty()
            && set.judged(&rows).iter().all(|pair| !set.truth.contains(pair))
    });
    // And those that would have joined rows of one thing but did not merge.
    let missed = run.pairs.iter().filter(|p| {
        let rows = seeded.row_pairs(std::iter::once((p.a, p.b)));
        !merged.contains(&(p.a, p.b)) && set.judged(&rows).iter().any(|pair| set.truth.contains(pair))
    });
    for (label, p) in wrong.take(limit).map(|p| ("why", p)).chain(missed.take(limit).map(|p| ("missed", p))) {
        let explanation = match decide::decide(&run.models, &seeded.records, p, THRESHOLDS) {
            Some((e, _)) => e,
            None => p.explanation.clone(),
        };
        let parts: Vec<String> = explanation
            .fields
            .iter()
            .map(|f| {
                let tf = f.term_frequency.as_ref().map_or(0.0, |t| t.bits);
                format!("{}={}:{:.1}(tf {tf:.1})", f.field, f.level, f.weight)
            })
            .collect();
        println!(
            "  {label} {} / {}: p {:.3} name score {:.3} prior {:.1} {}",
            seeded.records[p.a].candidate.normalized,
            seeded.records[p.b].candidate.normalized,
            explanation.probability,
            p.comparison.name_score(),
            explanation.prior_weight,
            parts.join(" ")
        );
    }
}

/// Whether the probabilities mean what they say: every candidate pair of entities the
/// refresh's model scores on letters (no labels; a pair counts when the set judges one of its
/// rows' pairs, and is a match when one of those is), in ten bins by probability, each with
/// its mean probability and the share of its pairs that truly match (a reliability curve),
/// then the Brier score (mean squared error of the probability) and the expected calibration
/// error (the bins' |mean probability - share| weighted by their pairs).
pub fn print_calibration(set: &LabelledSet, mode: &str) {
    let seeded = seed(set, mode);
    let run = score(set, mode, &seeded, pairs::Floor { probability: 0.0, meaning: false });
    let scored: Vec<(f64, bool)> = run
        .pairs
        .iter()
        .filter_map(|p| {
            let judged = set.judged(&seeded.row_pairs(std::iter::once((p.a, p.b))));
            let matched = judged.iter().any(|pair| set.truth.contains(pair));
            (!judged.is_empty()).then_some((p.explanation.probability, matched))
        })
        .collect();
    let (brier, ece, bins) = calibration::reliability(&scored);
    let curve: Vec<String> = bins
        .iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, mean, share)| format!("{mean:.2}:{share:.2}({n})"))
        .collect();
    println!(
        "{:<10} {mode:<6} calibration over {} pairs: Brier {brier:.4}, ECE {ece:.4}; mean p:share(pairs) {}",
        set.name,
        scored.len(),
        curve.join(" ")
    );
}

/// With `RESOLUTION_MODEL=1`, the model a refresh estimates for these records (no labels).
pub fn print_model(set: &LabelledSet, mode: &str) {
    if std::env::var("RESOLUTION_MODEL").is_err() {
        return;
    }
    let seeded = seed(set, mode);
    let run = score(set, mode, &seeded, pairs::Floor { probability: THRESHOLDS.suggest, meaning: false });
    for (type_key, model) in &run.models {
        println!("  model {type_key} ({} candidate pairs): {model:?}", run.blocked);
    }
}

/// The set's rows as resolution would see them unseeded (each row its own entity): what the
/// blocking's recall is measured on.
pub fn records_of(set: &LabelledSet) -> Vec<Record> {
    set.records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let normalized = normalize(&r.canonical);
            Record {
                candidate: Candidate {
                    entity_id: format!("{i:08}"),
                    bucket_id: "b".into(),
                    type_name: set.type_name.into(),
                    normalized: normalized.clone(),
                    forms: vec![normalized],
                },
                core: names::core_name(&r.canonical),
                attributes: r.attributes.clone(),
            }
        })
        .collect()
}
