//! One detection run, without I/O: records grouped by effective type, one model per type
//! estimated from that type's records (and the tenant's labels), candidate pairs by
//! blocking, each scored and explained. Everything in a fixed order, so the same data
//! gives the same pairs, scores and merges.

use super::blocking;
use super::comparisons::{fields_of, Field};
use super::em;
use super::model::{compare, Comparison, Explanation, Model, Record, Vector, NAME_LEVELS};
use super::names;
use super::rarity::{self, ValueCounts, WordCounts};
use serde_json::Value;
use std::collections::BTreeMap;

/// A candidate pair worth a closer look.
#[derive(Clone, Debug)]
pub struct ScoredPair {
    pub a: usize,
    pub b: usize,
    /// The type (lower case) whose model scored it.
    pub type_key: String,
    pub comparison: Comparison,
    pub explanation: Explanation,
}

/// A decided pair: its type (lower case), its stored explanation and the decision.
pub struct Label<'a> {
    pub type_key: String,
    pub explanation: &'a Value,
    pub matched: bool,
}

#[derive(Default)]
pub struct Run {
    /// Models by type (lower case).
    pub models: BTreeMap<String, Model>,
    pub fields: BTreeMap<String, Vec<Field>>,
    /// Candidate pairs blocking produced.
    pub blocked: usize,
    /// Pairs scoring at least the floor, in pair order.
    pub pairs: Vec<ScoredPair>,
}

/// Which pairs a run keeps.
#[derive(Clone, Copy, Debug)]
pub struct Floor {
    /// Pairs below this probability are dropped.
    pub probability: f64,
    /// Whether the names' embeddings will join the score later: then a pair is kept when
    /// its best case ([`Model::best_case`]) reaches the floor, since meaning can only add.
    pub meaning: bool,
}

/// Scores the records' candidate pairs; keeps those that reach the floor.
/// `schemas` holds each type's `attributeSchema` by lower-case type name.
pub fn score(records: &[Record], schemas: &BTreeMap<String, Value>, labels: &[Label], floor: Floor) -> Run {
    let mut by_type: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        by_type.entry(r.candidate.type_name.to_lowercase()).or_default().push(i);
    }
    let mut run = Run::default();
    for (type_key, mut members) in by_type {
        // Entity-ID order: the same records in any order give the same estimate and pairs.
        members.sort_by(|&i, &j| records[i].candidate.entity_id.cmp(&records[j].candidate.entity_id));
        let fields = fields_of(schemas.get(&type_key));
        let group: Vec<Record> = members.iter().map(|&i| records[i].clone()).collect();
        let pairs = blocking::candidate_pairs_with_reasons(&group, &fields);
        run.blocked += pairs.len();
        let counts = WordCounts::of(&group);
        let values = ValueCounts::of(&group, &fields);
        let addressed = names::carry_addresses(group.iter().map(|r| r.candidate.normalized.as_str()));
        let heads: Option<Vec<Option<String>>> =
            addressed.then(|| group.iter().map(|r| names::head(&r.candidate.normalized)).collect());
        let mut vectors: Vec<Vector> = Vec::with_capacity(pairs.len());
        let mut compared: Vec<(usize, usize, Comparison)> = Vec::with_capacity(pairs.len());
        for ((i, j), reasons) in pairs {
            let mut comparison = compare(&group[i], &group[j], &fields);
            comparison.shared_word = counts.rarest_shared(&group[i], &group[j]);
            comparison.shared_values = values.shared(&group[i], &group[j], &fields);
            comparison.head_score = heads.as_ref().and_then(|h| {
                let name = |k: usize| group[k].candidate.normalized.as_str();
                names::head_score(name(i), h[i].as_deref(), name(j), h[j].as_deref())
            });
            vectors.push(evidence(&comparison, reasons, (i, j), fields.is_empty()));
            compared.push((i, j, comparison));
        }
        vectors.extend(
            labels
                .iter()
                .filter(|l| l.type_key == type_key)
                .filter_map(|l| vector_of(l.explanation, &fields, l.matched)),
        );
        let mut model = em::estimate(&group, &fields, &vectors, addressed);
        model.value_agreement = values.agreement();
        model.name_rarity = rarity::baselines(
            NAME_LEVELS.len(),
            compared.iter().map(|(_, _, c)| (c.name_level(), c.shared_word.as_ref())),
        );
        for (i, j, comparison) in compared {
            let reach =
                if floor.meaning { model.best_case(&comparison) } else { model.probability(&comparison) };
            if reach < floor.probability {
                continue;
            }
            let explanation = model.score(&comparison);
            run.pairs.push(ScoredPair {
                a: members[i],
                b: members[j],
                type_key: type_key.clone(),
                comparison,
                explanation,
            });
        }
        run.models.insert(type_key.clone(), model);
        run.fields.insert(type_key, fields);
    }
    run.pairs.sort_by_key(|p| (p.a, p.b));
    run
}

/// What a candidate pair tells estimation. A field that alone put the pair among the
/// candidates (its exact value was the only shared key) agrees by construction, matches and
/// strangers alike, so there it is no evidence: counted, a suburb rare at random made every
/// pair in a suburb look like a match. As Splink estimates a field's m only from sessions
/// not blocked on it.
/// With the name the only field there is nothing else to estimate its m from: the name's
/// levels over the candidate pairs take part then (EM separates the few like names that
/// match from the many blocking brought together), as a Splink user with one column does.
fn evidence(
    comparison: &Comparison,
    reasons: blocking::Reasons,
    pair: (usize, usize),
    names_only: bool,
) -> Vector {
    let alone = |k: usize| reasons == blocking::by_field(k);
    Vector {
        name: (names_only || reasons != blocking::BY_NAME).then(|| comparison.name_level()),
        levels: comparison.levels.iter().enumerate().map(|(k, l)| if alone(k) { None } else { *l }).collect(),
        compared_name: comparison.name_level(),
        name_score: comparison.name_score(),
        pair: Some(pair),
        label: None,
    }
}

/// The comparison vector a stored explanation describes, as a label.
pub fn vector_of(explanation: &Value, fields: &[Field], matched: bool) -> Option<Vector> {
    let parts = explanation.get("fields")?.as_array()?;
    let level_of = |field: &str| {
        parts.iter().find(|p| p.get("field").and_then(Value::as_str) == Some(field))?.get("level")?.as_str()
    };
    let name = NAME_LEVELS.iter().position(|(n, _)| Some(*n) == level_of("name"))?;
    let levels = fields
        .iter()
        .map(|f| level_of(&f.key).and_then(|level| f.kind.levels().iter().position(|l| *l == level)))
        .collect();
    let name_score = NAME_LEVELS[name].1;
    Some(Vector {
        name: Some(name),
        compared_name: name,
        name_score,
        levels,
        pair: None,
        label: Some(matched),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::resolution::model::tests::record;
    use serde_json::json;

    fn plain(probability: f64) -> Floor {
        Floor { probability, meaning: false }
    }

    #[test]
    fn a_pair_only_meaning_could_lift_over_the_floor_is_kept_and_one_it_cannot_is_not() {
        let (records, schemas) = fixture();
        let all = score(&records, &schemas, &[], plain(0.0));
        let best = |p: &ScoredPair| all.models[&p.type_key].best_case(&p.comparison);
        // A floor between what a pair scores on letters and what meaning could make of it.
        let lifted =
            all.pairs.iter().find(|p| best(p) > p.explanation.probability + 0.01).expect("a liftable pair");
        let floor = (best(lifted) + lifted.explanation.probability) / 2.0;
        let with_meaning = score(&records, &schemas, &[], Floor { probability: floor, meaning: true });
        let lexical = score(&records, &schemas, &[], plain(floor));
        let kept = |run: &Run| run.pairs.iter().map(|p| (p.a, p.b)).collect::<Vec<_>>();
        assert!(kept(&with_meaning).contains(&(lifted.a, lifted.b)));
        assert!(!kept(&lexical).contains(&(lifted.a, lifted.b)));
        for pair in &all.pairs {
            assert!(best(pair) >= pair.explanation.probability, "meaning only adds");
            assert_eq!(kept(&with_meaning).contains(&(pair.a, pair.b)), best(pair) >= floor);
            assert_eq!(kept(&lexical).contains(&(pair.a, pair.b)), pair.explanation.probability >= floor);
        }
        assert!(kept(&with_meaning).len() < all.pairs.len(), "some pair stays out even with meaning");
    }

    fn fixture() -> (Vec<Record>, BTreeMap<String, Value>) {
        let mut records = vec![
            record(
                "1",
                "Globex Corporation International",
                &[("phone", "555 0100"), ("city", "springfield")],
            ),
            record("2", "Globex Corporaton International", &[("phone", "5550100"), ("city", "springfield")]),
            record("3", "Zarela", &[("city", "new york")]),
            record("4", "Zarzuela", &[("city", "new york")]),
            record("5", "Initech Software", &[("city", "austin")]),
            record("6", "Initech Software Group", &[("city", "berlin")]),
        ];
        for i in 0..30 {
            records.push(record(
                &format!("x{i:02}"),
                &format!("company number {i}"),
                &[("phone", &format!("77{i:03}"))],
            ));
        }
        let schemas = BTreeMap::from([(
            "company".to_string(),
            json!({"properties": {"phone": {"x-compare": "identifier"}, "city": {"x-compare": "exact"}}}),
        )]);
        (records, schemas)
    }

    #[test]
    fn the_same_records_in_any_order_give_the_same_scores() {
        let (records, schemas) = fixture();
        let run = score(&records, &schemas, &[], plain(0.5));
        let mut reversed = records.clone();
        reversed.reverse();
        let again = score(&reversed, &schemas, &[], plain(0.5));
        let by_ids = |run: &Run, records: &[Record]| {
            let mut seen: Vec<(String, String, String)> = run
                .pairs
                .iter()
                .map(|p| {
                    let (x, y) = (&records[p.a].candidate.entity_id, &records[p.b].candidate.entity_id);
                    let (x, y) = if x < y { (x, y) } else { (y, x) };
                    (x.clone(), y.clone(), format!("{:.12}", p.explanation.probability))
                })
                .collect();
            seen.sort();
            seen
        };
        assert_eq!(by_ids(&run, &records), by_ids(&again, &reversed));
        assert!(!run.pairs.is_empty());
    }

    #[test]
    fn strangers_who_share_a_rare_city_are_not_taken_for_duplicates() {
        // 600 people, two to a city (a city agrees at random once in 600 pairs), and 20 of
        // them seeded twice with a typo. Blocking pairs everyone with their city-mate; counted
        // as evidence, that agreement made every such pair look likely and EM settled on
        // "every candidate pair matches" (prior 0.9): whole cities merged.
        const SYLLABLES: [&str; 12] =
            ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "da", "pe", "zo", "hu"];
        let name = |i: usize| {
            let s = |k: usize| SYLLABLES[(i / 12usize.pow(k as u32)) % 12];
            format!("{}{} {}{}{}", s(0), s(1), s(2), s(0), s(1))
        };
        let mut records: Vec<Record> = (0..600)
            .map(|i| record(&format!("p{i:03}"), &name(i * 7 + 3), &[("city", &format!("city {}", i / 2))]))
            .collect();
        for i in 0..20 {
            let typo = name(i * 7 + 3).replacen('a', "aa", 1);
            records.push(record(&format!("q{i:03}"), &typo, &[("city", &format!("city {}", i / 2))]));
        }
        let schemas = BTreeMap::from([(
            "company".to_string(),
            json!({"properties": {"city": {"x-compare": "exact"}}}),
        )]);
        let run = score(&records, &schemas, &[], plain(0.0));
        let same =
            |p: &ScoredPair| records[p.a].candidate.entity_id[1..] == records[p.b].candidate.entity_id[1..];
        let merged_strangers =
            run.pairs.iter().filter(|p| p.explanation.probability >= 0.95 && !same(p)).count();
        assert!(run.models["company"].prior < 0.2, "{:?}", run.models["company"]);
        assert_eq!(merged_strangers, 0, "{:?}", run.models["company"]);
    }

    #[test]
    fn books_of_one_series_share_their_author_and_title_words_without_being_one_book() {
        // 40 authors, each with a series of 6 books whose titles share the series' words,
        // and 100 other authors with one book each. At random two listings rarely share an
        // author, so with u from random pairs a shared author weighed ~7 bits, the series'
        // shared title words several more, and every series merged into one entity.
        const SYLLABLES: [&str; 12] =
            ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "da", "pe", "zo", "hu"];
        const BOOKS: [&str; 6] = ["ember", "frost", "gale", "harbor", "ivory", "jade"];
        let word =
            |i: usize, n: u32| (0..n).map(|k| SYLLABLES[(i / 12usize.pow(k)) % 12]).collect::<String>();
        let mut records = Vec::new();
        for a in 0..40 {
            for (b, book) in BOOKS.iter().enumerate() {
                let title = format!("The {} Chronicles: {book}", word(a * 5 + 1, 3));
                let author = format!("{} {}", word(a * 7 + 2, 2), word(a * 11 + 3, 3));
                records.push(record(&format!("s{a:02}{b}"), &title, &[("author", &author)]));
            }
        }
        for a in 0..100 {
            let title = format!("{} {}", word(a * 13 + 5, 3), word(a * 17 + 7, 2));
            let author = format!("{} {}", word(a * 19 + 11, 2), word(a * 23 + 13, 3));
            records.push(record(&format!("o{a:03}"), &title, &[("author", &author)]));
        }
        let schemas = BTreeMap::from([(
            "company".to_string(),
            json!({"properties": {"author": {"x-compare": "fuzzy"}}}),
        )]);
        let run = score(&records, &schemas, &[], plain(0.0));
        let model = &run.models["company"];
        let series_pairs: Vec<&ScoredPair> = run
            .pairs
            .iter()
            .filter(|p| records[p.a].candidate.entity_id[..3] == records[p.b].candidate.entity_id[..3])
            .collect();
        assert!(series_pairs.len() >= 40 * 10, "{} series pairs scored", series_pairs.len());
        let merged = series_pairs.iter().filter(|p| p.explanation.probability >= 0.95).count();
        assert_eq!(merged, 0, "{model:?}");
        // A shared author never says more when the titles look alike. (It said 2 bits less
        // while a series' books, linked by their likeliest partners, counted among strangers
        // for the author's u; they no longer do, as one person's several records do not: the
        // series is kept apart by the name's u from the candidate pairs instead.)
        let equal_author = 3;
        let different = model.fields[0].weight(equal_author, 0);
        let level = series_pairs[0].comparison.name_level();
        assert!(different >= model.fields[0].weight(equal_author, level), "{model:?}");
    }

    #[test]
    fn a_shared_rare_word_raises_a_score_more_than_a_shared_common_one_and_says_so() {
        // Two pairs alike letter for letter; one shares a word no other name carries, the
        // other one that 30 other names carry too.
        const SYLLABLES: [&str; 10] = ["ke", "tu", "wo", "ye", "ze", "qu", "xe", "ve", "nu", "ho"];
        let mut records = vec![
            record("x1", "kalo bdfghj", &[]),
            record("x2", "mira bdfghj", &[]),
            record("y1", "kalo cnpsuv", &[]),
            record("y2", "mira cnpsuv", &[]),
        ];
        for i in 0..30 {
            let word = format!("{}{}{}", SYLLABLES[i % 10], SYLLABLES[i / 10], SYLLABLES[(i * 7) % 10]);
            records.push(record(&format!("f{i:02}"), &format!("{word} cnpsuv"), &[]));
        }
        let run = score(&records, &BTreeMap::new(), &[], plain(0.0));
        let pair = |a: usize, b: usize| run.pairs.iter().find(|p| p.a == a && p.b == b).expect("scored");
        let (rare, common) = (pair(0, 1), pair(2, 3));
        assert_eq!(rare.comparison.name_score(), common.comparison.name_score(), "alike letters");
        assert!(rare.explanation.probability > common.explanation.probability);
        let adjustment = |p: &ScoredPair| p.explanation.fields[0].term_frequency.clone().expect("adjusted");
        assert_eq!(adjustment(rare).word.as_deref(), Some("bdfghj"));
        assert_eq!(adjustment(common).word.as_deref(), Some("cnpsuv"));
        assert!(adjustment(rare).bits > 0.0 && adjustment(common).bits < adjustment(rare).bits);
        let json = serde_json::to_value(&rare.explanation).unwrap();
        assert_eq!(json["fields"][0]["termFrequency"]["word"], "bdfghj", "{json}");
    }

    #[test]
    fn a_shared_rare_city_raises_a_score_more_than_a_shared_common_one_and_says_so() {
        // Two pairs alike letter for letter; one shares a city no other record holds, the
        // other the city 40 other records hold too.
        let mut records = vec![
            record("x1", "kalo bdfghj", &[("city", "Quimper")]),
            record("x2", "kalo bdfghjk", &[("city", "quimper")]),
            record("y1", "mira cnpsuv", &[("city", "Paris")]),
            record("y2", "mira cnpsuvw", &[("city", "paris")]),
        ];
        for i in 0..60 {
            let city = if i < 40 { "paris".to_string() } else { format!("town {i}") };
            records.push(record(&format!("f{i:02}"), &format!("filler {i} co"), &[("city", &city)]));
        }
        let schemas = BTreeMap::from([(
            "company".to_string(),
            json!({"properties": {"city": {"x-compare": "exact"}}}),
        )]);
        let run = score(&records, &schemas, &[], plain(0.0));
        let pair = |a: usize, b: usize| run.pairs.iter().find(|p| p.a == a && p.b == b).expect("scored");
        let (rare, common) = (pair(0, 1), pair(2, 3));
        let city = |p: &ScoredPair| p.explanation.fields[1].term_frequency.clone().expect("adjusted");
        assert_eq!(city(rare).value.as_deref(), Some("quimper"));
        assert_eq!(city(common).value.as_deref(), Some("paris"));
        assert!(city(rare).bits > 0.0 && city(common).bits < 0.0, "{:?} {:?}", city(rare), city(common));
        assert!(rare.explanation.fields[1].weight > common.explanation.fields[1].weight);
        let json = serde_json::to_value(&common.explanation).unwrap();
        assert_eq!(json["fields"][1]["termFrequency"]["value"], "paris", "{json}");
        assert!(json["fields"][1]["termFrequency"]["share"].as_f64().unwrap() > 0.6, "{json}");
    }

    #[test]
    fn a_type_without_compared_attributes_learns_its_names_weights_from_its_own_names() {
        const SYLLABLES: [&str; 12] =
            ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "da", "pe", "zo", "hu"];
        let name = |i: usize| {
            let s = |k: u32| SYLLABLES[(i / 12usize.pow(k)) % 12];
            format!("{}{}{} {}{}{}", s(0), s(1), s(2), s(1), s(2), s(0))
        };
        // One tenant's names come with typo'd copies; the other's are all different.
        let distinct: Vec<Record> =
            (0..160).map(|i| record(&format!("d{i:03}"), &name(i * 7 + 1), &[])).collect();
        let mut copies: Vec<Record> = distinct[..120].to_vec();
        for i in 0..40 {
            let typo = name(i * 7 + 1).replacen(' ', "a ", 1);
            copies.push(record(&format!("c{i:03}"), &typo, &[]));
        }
        let (learnt, plain_names) = (
            score(&copies, &BTreeMap::new(), &[], plain(0.0)),
            score(&distinct, &BTreeMap::new(), &[], plain(0.0)),
        );
        let (with_copies, without) = (&learnt.models["company"], &plain_names.models["company"]);
        let top = |m: &Model| m.name_m[3] + m.name_m[4];
        assert!(top(with_copies) > top(without) + 0.1, "{with_copies:?}\n{without:?}");
        assert_ne!(with_copies.name_u, without.name_u);
        let copy = learnt
            .pairs
            .iter()
            .max_by(|x, y| x.explanation.probability.total_cmp(&y.explanation.probability));
        let name_part = &copy.expect("a pair").explanation.fields[0];
        assert_eq!(name_part.m, Some(round4(with_copies.name_m[copy.unwrap().comparison.name_level()])));
    }

    fn round4(x: f64) -> f64 {
        (x * 10_000.0).round() / 10_000.0
    }

    #[test]
    fn a_stored_explanation_reads_back_as_a_label() {
        let (records, schemas) = fixture();
        let run = score(&records, &schemas, &[], plain(0.5));
        let pair = run.pairs.iter().find(|p| p.a == 0 && p.b == 1).expect("globex pair");
        let stored = serde_json::to_value(&pair.explanation).unwrap();
        let vector = vector_of(&stored, &run.fields["company"], true).unwrap();
        assert_eq!(vector.levels, pair.comparison.levels);
        assert_eq!(vector.name, Some(pair.comparison.name_level()));
    }

    #[test]
    fn a_dismissed_label_lowers_the_score_of_pairs_like_it() {
        let (records, schemas) = fixture();
        let before = score(&records, &schemas, &[], plain(0.0));
        let initech =
            |run: &Run| run.pairs.iter().find(|p| p.a == 4 && p.b == 5).unwrap().explanation.clone();
        let stored = serde_json::to_value(initech(&before)).unwrap();
        let labels: Vec<Label> = (0..5)
            .map(|_| Label { type_key: "company".into(), explanation: &stored, matched: false })
            .collect();
        let after = score(&records, &schemas, &labels, plain(0.0));
        assert!(initech(&after).probability < initech(&before).probability);
    }

    #[test]
    fn a_company_written_with_and_without_its_address_is_alike_where_names_carry_addresses() {
        let sanofi = |rest: &str| format!("sanofi {rest}");
        let addressed: Vec<Record> = [
            sanofi("54 rue la boetie 75008 france"),
            sanofi("paris"),
            "total 2 place jean millier 92400 france".into(),
            "orange 78 rue olivier de serres 75015 paris".into(),
            "danone 17 boulevard haussmann 75009 paris".into(),
        ]
        .iter()
        .enumerate()
        .map(|(i, name)| record(&format!("r{i}"), name, &[]))
        .collect();
        let unaddressed: Vec<Record> = addressed[..2]
            .iter()
            .cloned()
            .chain((0..8).map(|i| record(&format!("p{i}"), &format!("plain name {i}"), &[])))
            .collect();
        let pair = |run: &Run| {
            run.pairs
                .iter()
                .find(|p| (p.a, p.b) == (0, 1))
                .expect("the two sanofi records are candidates")
                .clone()
        };
        let (with_heads, without) = (
            pair(&score(&addressed, &BTreeMap::new(), &[], plain(0.0))),
            pair(&score(&unaddressed, &BTreeMap::new(), &[], plain(0.0))),
        );
        assert!(with_heads.comparison.head_score.is_some() && without.comparison.head_score.is_none());
        // The explanation says the name was compared on its heads, and only then.
        let explained = |p: &ScoredPair| serde_json::to_value(&p.explanation).unwrap()["fields"][0].clone();
        assert_eq!(explained(&with_heads)["comparedOnHeads"], true, "{}", explained(&with_heads));
        assert!(explained(&without).get("comparedOnHeads").is_none(), "{}", explained(&without));
        assert!(
            with_heads.comparison.name_level() > without.comparison.name_level(),
            "{:?} against {:?}",
            with_heads.comparison,
            without.comparison
        );
    }
}
