//! Field-by-field comparison of an output with what it should have been.
//!
//! A *field* is a leaf of the JSON: a string, number or boolean, named by its JSON Pointer
//! (`/lineItems/0/amount`). `null` counts as absent. The fields of a comparison are the union
//! of the output's leaves, the expected value's leaves and the output schema's leaf
//! properties (objects followed; arrays have no fixed leaves), so a schema field that both
//! left out is still counted.
//!
//! How a field counts against a correction (the confusion matrix of metrics):
//! - **TP** (extracted and right): the output has it and it equals the correction;
//! - **FP** (extracted and wrong): the output has it and the correction differs or has none;
//! - **FN** (missed): the correction has it and the output has none;
//! - **TN** (rightly absent): neither has it (a schema field both left empty).
//!
//! Equality is exact, except that numbers compare by value (`1` = `1.0`). With
//! `orderMatching: false` the output's array elements are first paired with the correction's
//! by their best overlap, so a list in another order is not counted wrong.
//!
//! Score runs ([`score_fields`]) use the SDK's vocabulary instead (match, mismatch, missing,
//! extra) and accept canon's [`CompareOptions`].

pub use super::fields::{leaves, schema_leaves, TooManyFields};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Element pairs one array's alignment weighs at most (`orderMatching: false`): each pair
/// compares two elements' fields, so two arrays of 100,000 elements were 10^10 comparisons.
/// A larger array keeps its order.
pub const MAX_ALIGNED_PAIRS: usize = 1_000_000;

/// How one field of a corrected output counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Outcome {
    Tp,
    Fp,
    Fn,
    Tn,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Tp => "tp",
            Outcome::Fp => "fp",
            Outcome::Fn => "fn",
            Outcome::Tn => "tn",
        }
    }
}

/// Exact equality, numbers by value.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Which value of a feedback's comparison had more fields than accuracy compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compared {
    /// The caller's correction: theirs to fix.
    Correction,
    /// The event's output (a function's, not the caller's).
    Output,
    /// The function's output schema.
    OutputSchema,
}

impl Compared {
    /// How a message names it.
    pub fn name(self) -> &'static str {
        match self {
            Compared::Correction => "the correction",
            Compared::Output => "the output",
            Compared::OutputSchema => "the output schema",
        }
    }
}

/// Every field's outcome for an output against its correction; `Err` names which of them
/// has more fields than accuracy compares.
pub fn field_outcomes(
    schema: Option<&Value>,
    output: &Value,
    correction: &Value,
    order_matching: bool,
) -> Result<BTreeMap<String, Outcome>, (Compared, TooManyFields)> {
    let expected = leaves(correction).map_err(|err| (Compared::Correction, err))?;
    // Bounded before aligning, which reads each element's leaves: the bound is the whole's.
    let actual = leaves(output).map_err(|err| (Compared::Output, err))?;
    let actual = if order_matching {
        actual
    } else {
        leaves(&align(output, correction)).map_err(|err| (Compared::Output, err))?
    };
    let mut paths: BTreeSet<String> = actual.keys().chain(expected.keys()).cloned().collect();
    if let Some(schema) = schema {
        paths.extend(schema_leaves(schema).map_err(|err| (Compared::OutputSchema, err))?);
    }
    Ok(paths
        .into_iter()
        .map(|path| {
            let outcome = match (actual.get(&path), expected.get(&path)) {
                (Some(a), Some(e)) if same(a, e) => Outcome::Tp,
                (Some(_), _) => Outcome::Fp,
                (None, Some(_)) => Outcome::Fn,
                (None, None) => Outcome::Tn,
            };
            (path, outcome)
        })
        .collect())
}

/// `output` with each array's elements reordered to pair with `expected`'s: each expected
/// element takes the unused output element sharing most leaves with it; the rest follow. An
/// array pair past [`MAX_ALIGNED_PAIRS`], or whose elements have too many fields, keeps its
/// order.
pub fn align(output: &Value, expected: &Value) -> Value {
    match (output, expected) {
        (Value::Object(out), Value::Object(exp)) => Value::Object(
            out.iter()
                .map(|(key, value)| {
                    let aligned = match exp.get(key) {
                        Some(e) => align(value, e),
                        None => value.clone(),
                    };
                    (key.clone(), aligned)
                })
                .collect(),
        ),
        (Value::Array(out), Value::Array(exp)) => {
            let Some(order) = paired(out, exp) else { return output.clone() };
            let mut unused: Vec<Option<&Value>> = out.iter().map(Some).collect();
            let mut result = Vec::with_capacity(out.len());
            for (i, e) in order {
                let chosen = unused[i].take().unwrap_or(&Value::Null);
                result.push(align(chosen, e));
            }
            result.extend(unused.into_iter().flatten().cloned());
            Value::Array(result)
        }
        _ => output.clone(),
    }
}

/// For each expected element in turn, the unused output element sharing most leaves with it
/// (ties to the first), each element's leaves read once; `None` past the bounds.
fn paired<'e>(out: &[Value], exp: &'e [Value]) -> Option<Vec<(usize, &'e Value)>> {
    if out.len().saturating_mul(exp.len()) > MAX_ALIGNED_PAIRS {
        return None;
    }
    let out_leaves: Vec<BTreeMap<String, Value>> = out.iter().map(leaves).collect::<Result<_, _>>().ok()?;
    let mut used = vec![false; out.len()];
    let mut order = Vec::new();
    for e in exp {
        let e_leaves = leaves(e).ok()?;
        let best = out_leaves
            .iter()
            .enumerate()
            .filter(|(i, _)| !used[*i])
            .map(|(i, candidate)| (i, overlap(candidate, &e_leaves)))
            .max_by_key(|&(i, score)| (score, std::cmp::Reverse(i)));
        let Some((i, _)) = best else { break };
        used[i] = true;
        order.push((i, e));
    }
    Some(order)
}

fn overlap(a: &BTreeMap<String, Value>, b: &BTreeMap<String, Value>) -> usize {
    a.iter().filter(|(path, value)| b.get(*path).is_some_and(|other| same(value, other))).count()
}

/// Canon's comparison settings for score runs (the SDK's comparison is exact; these are
/// opt-in, all off by default).
#[derive(Clone, Debug, Default)]
pub struct CompareOptions {
    /// Numbers within this absolute distance match.
    pub numeric_tolerance: f64,
    /// Strings whose similarity (1 − edit distance / longer length, after trimming and
    /// lower-casing) is at least this match; `None`: strings must be equal.
    pub fuzzy_threshold: Option<f64>,
    /// JSON Pointers whose fields (and the fields below them) are not compared.
    pub ignored_paths: Vec<String>,
}

/// Aggregate of a score comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    pub matches: i64,
    pub mismatches: i64,
    pub missing: i64,
    pub extras: i64,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.matches += other.matches;
        self.mismatches += other.mismatches;
        self.missing += other.missing;
        self.extras += other.extras;
    }

    /// The SDK's `Aggregate`.
    pub fn aggregate(&self) -> Value {
        let expected = self.matches + self.mismatches + self.missing;
        let actual = self.matches + self.mismatches + self.extras;
        let ratio = |n: i64, d: i64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
        let precision = ratio(self.matches, actual);
        let recall = ratio(self.matches, expected);
        let f1 =
            if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) };
        json!({
            "matches": self.matches, "mismatches": self.mismatches, "missing": self.missing,
            "extras": self.extras, "totalFieldsExpected": expected, "totalFieldsActual": actual,
            "precision": precision, "recall": recall, "f1": f1,
        })
    }
}

/// Each leaf of `expected ∪ actual` as the SDK's `PerPairFieldResult`, and their tally; the
/// strings' similarities are paid from `budget` (one for a whole read of a score run).
pub fn score_fields(
    actual: &Value,
    expected: &Value,
    options: &CompareOptions,
    budget: &mut SimilarityBudget,
) -> Result<(Vec<Value>, Tally), (&'static str, TooManyFields)> {
    let actual = leaves(actual).map_err(|err| ("the function's output", err))?;
    let expected = leaves(expected).map_err(|err| ("the expected output", err))?;
    let paths: BTreeSet<&String> = actual.keys().chain(expected.keys()).collect();
    let mut tally = Tally::default();
    let mut results = Vec::new();
    for path in paths {
        if options.ignored_paths.iter().any(|ignored| under(path, ignored)) {
            continue;
        }
        let (a, e) = (actual.get(path), expected.get(path));
        let mut result = json!({ "path": path, "actual": a, "expected": e });
        let verdict = match (a, e) {
            (Some(a), Some(e)) => {
                let mut matched = same(a, e);
                if let (Some(x), Some(y)) = (a.as_f64(), e.as_f64()) {
                    if !matched {
                        result["delta"] = json!(x - y);
                    }
                    matched = matched || (x - y).abs() <= options.numeric_tolerance;
                }
                if let (Some(x), Some(y)) = (a.as_str(), e.as_str()) {
                    if !matched {
                        let similarity = budget.similarity(x, y);
                        result["similarity"] = json!(similarity);
                        matched = options.fuzzy_threshold.zip(similarity).is_some_and(|(min, s)| s >= min);
                    }
                }
                if matched {
                    tally.matches += 1;
                    "match"
                } else {
                    tally.mismatches += 1;
                    "mismatch"
                }
            }
            (None, Some(_)) => {
                tally.missing += 1;
                "missing"
            }
            _ => {
                tally.extras += 1;
                "extra"
            }
        };
        result["match"] = json!(verdict);
        results.push(result);
    }
    Ok((results, tally))
}

fn under(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    path == prefix || prefix.is_empty() || path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/'))
}

/// Edit-distance cells (characters × characters) one pair of strings may cost: two strings of
/// 4,096 characters, 23 ms (measured, release). The distance is quadratic: at that rate two
/// 100 KB strings in a score run's output and expected value take one read 14 s, two 900 KB
/// strings 19 minutes.
pub const MAX_SIMILARITY_CELLS: usize = 4096 * 4096;

/// Edit-distance cells one comparison spends on all its strings (a score run's read compares
/// up to 1,000 pairs, each with many fields): 16 pairs of strings at the bound, ~0.4 s.
pub const SIMILARITY_BUDGET_CELLS: usize = 16 * MAX_SIMILARITY_CELLS;

/// What one comparison may still spend on similarities. Past either bound a string pair's
/// `similarity` is null (the SDK's field is nullable) and fuzzy matching cannot match it: such
/// strings match only when equal. Counted in cells, not time, so a read's answer does not
/// depend on the machine.
pub struct SimilarityBudget {
    cells_left: usize,
}

impl Default for SimilarityBudget {
    fn default() -> Self {
        Self { cells_left: SIMILARITY_BUDGET_CELLS }
    }
}

impl SimilarityBudget {
    /// [`similarity`] of two strings, if it is within the bounds.
    pub fn similarity(&mut self, a: &str, b: &str) -> Option<f64> {
        let (a, b) = (folded(a), folded(b));
        let cells = a.len().saturating_mul(b.len());
        if cells > MAX_SIMILARITY_CELLS || cells > self.cells_left {
            return None;
        }
        self.cells_left -= cells;
        Some(folded_similarity(&a, &b))
    }
}

/// 1 − Levenshtein distance / longer length, on trimmed lower-cased text (1 for two empty).
pub fn similarity(a: &str, b: &str) -> f64 {
    folded_similarity(&folded(a), &folded(b))
}

fn folded(text: &str) -> Vec<char> {
    text.trim().to_lowercase().chars().collect()
}

fn folded_similarity(a: &[char], b: &[char]) -> f64 {
    let longer = a.len().max(b.len());
    if longer == 0 {
        return 1.0;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            current[j + 1] = (previous[j] + cost).min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    1.0 - previous[b.len()] as f64 / longer as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_field_counts_as_right_wrong_missed_or_rightly_absent() {
        let schema = json!({"type": "object", "properties": {
            "number": {"type": "string"}, "total": {"type": "number"},
            "date": {"type": "string"}, "note": {"type": "string"}}});
        let output = json!({"number": "A-1", "total": 10.0, "_metadata": {"x": 1}});
        let correction = json!({"number": "A-1", "total": 12, "date": "2024-01-02"});
        let outcomes = field_outcomes(Some(&schema), &output, &correction, true).unwrap();
        assert_eq!(outcomes["/number"], Outcome::Tp);
        assert_eq!(outcomes["/total"], Outcome::Fp);
        assert_eq!(outcomes["/date"], Outcome::Fn);
        assert_eq!(outcomes["/note"], Outcome::Tn);
        assert_eq!(outcomes.len(), 4);
    }

    #[test]
    fn without_order_matching_a_reordered_list_is_right() {
        let output = json!({"items": [{"sku": "b", "n": 2}, {"sku": "a", "n": 1}]});
        let correction = json!({"items": [{"sku": "a", "n": 1}, {"sku": "b", "n": 2}]});
        let ordered = field_outcomes(None, &output, &correction, true).unwrap();
        assert!(ordered.values().all(|o| *o == Outcome::Fp));
        let unordered = field_outcomes(None, &output, &correction, false).unwrap();
        assert!(unordered.values().all(|o| *o == Outcome::Tp));
    }

    #[test]
    fn an_alignment_past_its_pairs_keeps_the_order_and_a_value_past_its_fields_is_named() {
        // 1,001 x 1,000 element pairs: past the bound, the list is compared in its order.
        let reversed: Vec<Value> = (0..1_001).rev().map(|i| json!({"n": i})).collect();
        let list: Vec<Value> = (0..1_000).map(|i| json!({"n": i})).collect();
        let (output, correction) = (json!({"items": reversed}), json!({"items": list}));
        assert_eq!(align(&output, &correction), output);
        let small = json!({"items": reversed[..3]});
        let aligned = align(&small, &json!({"items": [{"n": 998}, {"n": 1000}]}));
        assert_eq!(aligned, json!({"items": [{"n": 998}, {"n": 1000}, {"n": 999}]}));
        let fields: serde_json::Map<String, Value> = (0..100).map(|i| (format!("f{i}"), json!(0))).collect();
        let wide = json!({ "k".repeat(200_000): fields });
        let refused = |output: &Value, correction: &Value| {
            field_outcomes(None, output, correction, false).unwrap_err().0
        };
        assert_eq!(refused(&json!({"a": 1}), &wide), Compared::Correction);
        assert_eq!(refused(&wide, &json!({"a": 1})), Compared::Output);
        // Elements small one by one, too many together: refused before any alignment.
        let many = json!({"items": vec![vec![0; 100]; 600]});
        assert_eq!(refused(&many, &json!({"items": [[0]]})), Compared::Output);
        let (what, _) =
            score_fields(&wide, &json!({}), &CompareOptions::default(), &mut SimilarityBudget::default())
                .unwrap_err();
        assert_eq!(what, "the function's output");
    }

    #[test]
    fn score_options_loosen_numbers_strings_and_paths() {
        let actual = json!({"total": 100.004, "name": "Acme Corp.", "id": "x"});
        let expected = json!({"total": 100, "name": "ACME Corp", "id": "y", "date": "2024-01-01"});
        let budget = &mut SimilarityBudget::default();
        let (exact, tally) = score_fields(&actual, &expected, &CompareOptions::default(), budget).unwrap();
        assert_eq!(tally, Tally { matches: 0, mismatches: 3, missing: 1, extras: 0 });
        let total = exact.iter().find(|r| r["path"] == "/total").unwrap();
        assert!((total["delta"].as_f64().unwrap() - 0.004).abs() < 1e-9);
        let options = CompareOptions {
            numeric_tolerance: 0.01,
            fuzzy_threshold: Some(0.85),
            ignored_paths: vec!["/id".into()],
        };
        let (loose, tally) = score_fields(&actual, &expected, &options, budget).unwrap();
        assert_eq!(tally, Tally { matches: 2, mismatches: 0, missing: 1, extras: 0 });
        assert_eq!(loose.len(), 3);
    }

    #[test]
    fn similarity_is_one_minus_normalised_edit_distance() {
        assert_eq!(similarity("kitten", "sitting"), 1.0 - 3.0 / 7.0);
        assert_eq!(similarity("", ""), 1.0);
        assert_eq!(similarity(" Flaw", "lawn "), 0.5);
    }

    #[test]
    fn strings_past_the_similarity_bounds_have_none_and_match_only_when_equal() {
        let long = |c: &str| c.repeat(5_000);
        let actual = json!({"long": long("a"), "short": "Acme Corp."});
        let expected = json!({"long": format!("{}b", long("a")), "short": "ACME Corp"});
        let options = CompareOptions { fuzzy_threshold: Some(0.5), ..CompareOptions::default() };
        let (results, tally) =
            score_fields(&actual, &expected, &options, &mut SimilarityBudget::default()).unwrap();
        let field = |path: &str| results.iter().find(|r| r["path"] == path).unwrap().clone();
        // 5,000 × 5,001 cells is past one pair's bound: nearly equal, yet not a fuzzy match.
        assert_eq!(
            (field("/long")["similarity"].clone(), field("/long")["match"].clone()),
            (Value::Null, json!("mismatch"))
        );
        assert!(field("/short")["similarity"].as_f64().unwrap() > 0.8);
        assert_eq!(tally, Tally { matches: 1, mismatches: 1, missing: 0, extras: 0 });
        // A read's budget spent, later strings within one pair's bound have none either.
        let mut budget = SimilarityBudget { cells_left: 3 * 100 * 100 + 99 };
        let (a, b) = ("x".repeat(100), "y".repeat(100));
        let computed: Vec<Option<f64>> = (0..5).map(|_| budget.similarity(&a, &b)).collect();
        assert_eq!(computed, [Some(0.0), Some(0.0), Some(0.0), None, None]);
    }
}
