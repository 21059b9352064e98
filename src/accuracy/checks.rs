//! What an evaluation is: for each field of an output, a confidence in 0..1 built from checks
//! canon makes itself, with no labels.
//!
//! - **valid** (weight 0.3): the value has the type its schema property declares (`string`,
//!   `number`, `integer`, `boolean`), is one of its `enum` values, and reads as its `format`
//!   (`date` as a date, `email` as an address). A field the schema does not declare fails.
//! - **grounded** (weight 0.5): the value is found in the decoded input — text compared
//!   case- and space-insensitively, numbers by value among the numbers of the text (`$1,234.50`
//!   is 1234.5), dates among the dates of the text — and the first page holding it is
//!   reported. Booleans are not looked for. A value that is not grounded is a
//!   **hallucination**. Text searches scan at most [`GROUNDING_SEARCH_BYTES`] together;
//!   values left unsearched have no grounded check and `groundingComplete` is false.
//! - **agreement** (weight 0.2): when a second engine ran on the same input (a language-model
//!   function is checked against canon's schema-guided extraction), whether both gave the
//!   same value.
//! - **judge** (weight 0.4): when the function runs on a language model, that model's verdict
//!   on the field ([`super::judge`]); a field it calls wrong is **flagged**. A judge that
//!   failed adds no check.
//!
//! A field's `confidence` is the weighted mean of the checks that apply to it; the output's
//! `confidence` is the mean of its fields' (0 for an output with no field). `relevance` is
//! the share of the schema's leaf properties the output fills. `judge` says whether the
//! judge ran (`judged`, `unavailable` with its error, or `not_configured`).

use super::compare::{leaves, same, schema_leaves};
use super::judge::Judgement;
use crate::engines::typed;
use regex::Regex;
use serde_json::{json, Map, Value};
use std::cell::OnceCell;
use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

/// What names the checks in each result.
pub const METHOD: &str = "canon-checks/1";

const VALID_WEIGHT: f64 = 0.3;
const GROUNDED_WEIGHT: f64 = 0.5;
const AGREEMENT_WEIGHT: f64 = 0.2;
const JUDGE_WEIGHT: f64 = 0.4;

static NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-?[$€£¥]?\d[\d.,' \u{a0}]*\d|-?[$€£¥]?\d").expect("number"));

/// The text an output is checked against: one string per page.
pub struct Evidence<'a> {
    pub pages: &'a [String],
}

/// The evaluation of an output by its `fields` ([`leaves`]): `{method, confidence, relevance, fields: {path: {...}},
/// hallucinations: [path], flagged: [path], judge}`.
pub fn evaluate(
    schema: Option<&Value>,
    fields: &BTreeMap<String, Value>,
    evidence: Option<&Evidence<'_>>,
    second_opinion: Option<&Value>,
    judgement: &Judgement,
) -> Value {
    let mut flagged = Vec::new();
    // A second opinion past the field bounds is none.
    let other = second_opinion.and_then(|value| leaves(value).ok());
    let mut grounding = evidence.map(Grounding::new);
    let mut results = Map::new();
    let mut hallucinations = Vec::new();
    let mut total = 0.0;
    for (path, value) in fields {
        let property = schema.and_then(|s| property_at(s, path));
        let valid = schema.map(|_| property.is_some_and(|p| satisfies(p, value)));
        let page = match (&mut grounding, value) {
            (Some(grounding), Value::String(_) | Value::Number(_)) => grounding.page_of(value),
            _ => None,
        };
        let grounded = page.map(|p| p.is_some());
        let agreement = other.as_ref().map(|o| o.get(path).is_some_and(|v| same(v, value)));
        let verdict = judgement.verdict(path);
        let judged = verdict.map(|v| v.correct);
        let checks = [
            (valid, VALID_WEIGHT),
            (grounded, GROUNDED_WEIGHT),
            (agreement, AGREEMENT_WEIGHT),
            (judged, JUDGE_WEIGHT),
        ];
        let weight: f64 = checks.iter().filter(|(c, _)| c.is_some()).map(|(_, w)| w).sum();
        let score: f64 = checks.iter().filter(|(c, _)| *c == Some(true)).map(|(_, w)| w).sum();
        let confidence = if weight > 0.0 { score / weight } else { 0.5 };
        total += confidence;
        if grounded == Some(false) {
            hallucinations.push(path.clone());
        }
        if judged == Some(false) {
            flagged.push(path.clone());
        }
        results.insert(
            path.clone(),
            json!({
                "confidence": confidence, "valid": valid, "grounded": grounded,
                "page": page.flatten(), "agreement": agreement, "hallucination": grounded == Some(false),
                "judged": judged, "judgeReason": verdict.map(|v| v.reason.clone()),
                "flagged": judged == Some(false),
            }),
        );
    }
    let confidence = if fields.is_empty() { 0.0 } else { total / fields.len() as f64 };
    // A schema past the field bounds (saving one keeps it far below) has no relevance figure.
    let relevance = schema.and_then(|s| schema_leaves(s).ok()).filter(|l| !l.is_empty()).map(|declared| {
        declared.iter().filter(|path| fields.contains_key(*path)).count() as f64 / declared.len() as f64
    });
    json!({
        "method": METHOD, "confidence": confidence, "relevance": relevance,
        "fields": results, "hallucinations": hallucinations, "flagged": flagged,
        "judge": judgement.summary(),
        "groundingComplete": grounding.is_none_or(|g| g.complete),
    })
}

/// The schema property a leaf path names (array indexes go through `items`).
fn property_at<'a>(schema: &'a Value, path: &str) -> Option<&'a Value> {
    let mut current = schema;
    for segment in path.split('/').skip(1) {
        let key = segment.replace("~1", "/").replace("~0", "~");
        current = if let Some(property) = current.get("properties").and_then(|p| p.get(&key)) {
            property
        } else if key.chars().all(|c| c.is_ascii_digit()) {
            current.get("items")?
        } else {
            return None;
        };
    }
    Some(current)
}

fn satisfies(property: &Value, value: &Value) -> bool {
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let typed_ok = types.is_empty()
        || types.iter().any(|t| match *t {
            "string" => value.is_string(),
            "number" => value.is_number(),
            "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
            "boolean" => value.is_boolean(),
            _ => false,
        });
    let enum_ok = property
        .get("enum")
        .and_then(Value::as_array)
        .is_none_or(|options| options.iter().any(|option| same(option, value)));
    let format_ok = match (property.get("format").and_then(Value::as_str), value.as_str()) {
        (Some("date"), Some(text)) => typed::parse_date(text).as_deref() == Some(text),
        (Some("email"), Some(text)) => typed::parse_email(text).as_deref() == Some(text),
        _ => true,
    };
    typed_ok && enum_ok && format_ok
}

/// Bytes of page text one evaluation's text searches scan together: each string value is
/// looked for in each page until found, so an output of 10,000 strings over a document of
/// 32 MiB of text (the decoded bound) scanned 320 GB. Past it, the remaining strings are not
/// looked for (`grounded` null: the check does not count) and `groundingComplete` is false.
/// Counted in bytes, not time, so an evaluation does not depend on the machine.
pub const GROUNDING_SEARCH_BYTES: usize = 1 << 30;

/// Where an evaluation looks for its values: each page's text normalised, and its numbers and
/// dates, each read once when first needed (they were read again for every value: a page's
/// dates are every run of up to four words, millions of parses on a long document).
struct Grounding<'a> {
    pages: &'a [String],
    normalised: Vec<String>,
    numbers: Vec<OnceCell<HashSet<u64>>>,
    dates: Vec<OnceCell<HashSet<String>>>,
    bytes_left: usize,
    complete: bool,
}

impl<'a> Grounding<'a> {
    fn new(evidence: &Evidence<'a>) -> Self {
        let pages = evidence.pages;
        Self {
            pages,
            normalised: pages.iter().map(|p| normalise(p)).collect(),
            numbers: pages.iter().map(|_| OnceCell::new()).collect(),
            dates: pages.iter().map(|_| OnceCell::new()).collect(),
            bytes_left: GROUNDING_SEARCH_BYTES,
            complete: true,
        }
    }

    /// The 1-based page holding `value` (`Some(None)`: on none); `None` when the searches'
    /// bytes are spent before it was found or ruled out.
    fn page_of(&mut self, value: &Value) -> Option<Option<usize>> {
        for index in 0..self.pages.len() {
            match self.on_page(index, value) {
                Some(true) => return Some(Some(index + 1)),
                Some(false) => {}
                None => {
                    self.complete = false;
                    return None;
                }
            }
        }
        Some(None)
    }

    fn on_page(&mut self, index: usize, value: &Value) -> Option<bool> {
        let page = &self.pages[index];
        let numbers = &self.numbers[index];
        let numbers = || numbers.get_or_init(|| numbers_in(page).map(number_key).collect());
        let found = match value {
            Value::Number(n) => n.as_f64().is_some_and(|n| numbers().contains(&number_key(n))),
            Value::String(text) => {
                let needle = normalise(text);
                if !needle.is_empty() {
                    let haystack = &self.normalised[index];
                    self.bytes_left = self.bytes_left.checked_sub(haystack.len())?;
                    if haystack.contains(&needle) {
                        return Some(true);
                    }
                }
                let dates = || self.dates[index].get_or_init(|| dates_in(page).collect());
                (typed::parse_date(text).as_deref() == Some(text.as_str()) && dates().contains(text))
                    || (looks_numeric(text)
                        && typed::parse_number(text).is_some_and(|n| numbers().contains(&number_key(n))))
            }
            _ => false,
        };
        Some(found)
    }
}

/// A number as a set holds it (`-0` is `0`).
fn number_key(n: f64) -> u64 {
    if n == 0.0 { 0.0f64 } else { n }.to_bits()
}

fn looks_numeric(text: &str) -> bool {
    text.chars().any(|c| c.is_ascii_digit()) && text.chars().all(|c| !c.is_alphabetic())
}

fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn numbers_in(text: &str) -> impl Iterator<Item = f64> + '_ {
    NUMBER.find_iter(text).filter_map(|m| typed::parse_number(m.as_str().trim()))
}

/// Every date of the text, as `YYYY-MM-DD`, from runs of up to four words.
fn dates_in(text: &str) -> impl Iterator<Item = String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut dates = Vec::new();
    for start in 0..words.len() {
        for len in 1..=4.min(words.len() - start) {
            dates.extend(typed::parse_date(&words[start..start + len].join(" ")));
        }
    }
    dates.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_value_is_a_hallucination_and_a_present_one_is_grounded() {
        let schema = json!({"type": "object", "properties": {
            "invoiceNumber": {"type": "string"}, "total": {"type": "number"},
            "issued": {"type": "string", "format": "date"}}});
        let pages =
            vec!["Invoice number: INV-7\nIssued 3 March 2024".to_string(), "Total: $1,234.50".to_string()];
        let evidence = Evidence { pages: &pages };
        let output =
            json!({"invoiceNumber": "INV-7", "total": 1234.5, "issued": "2024-03-03", "po": "PO-999"});
        let result = evaluate(
            Some(&schema),
            &leaves(&output).unwrap(),
            Some(&evidence),
            None,
            &Judgement::NotConfigured,
        );
        assert_eq!(result["fields"]["/invoiceNumber"]["grounded"], true);
        assert_eq!(result["fields"]["/invoiceNumber"]["page"], 1);
        assert_eq!(result["fields"]["/total"]["page"], 2);
        assert_eq!(result["fields"]["/issued"]["grounded"], true);
        assert_eq!(result["fields"]["/po"]["hallucination"], true);
        assert_eq!(result["fields"]["/po"]["valid"], false);
        assert_eq!(result["fields"]["/po"]["confidence"], 0.0);
        assert_eq!(result["fields"]["/total"]["confidence"], 1.0);
        assert_eq!(result["hallucinations"], json!(["/po"]));
        assert_eq!(result["judge"]["status"], "not_configured");
    }

    #[test]
    fn text_searches_stop_at_their_bytes_and_say_the_grounding_is_incomplete() {
        // A page of 1 MiB and 1,100 strings found nowhere: 1,024 searches fit in the bound.
        let pages = vec!["lorem ".repeat(1 << 20 >> 1).chars().take(1 << 20).collect::<String>()];
        let evidence = Evidence { pages: &pages };
        let output = Value::Array((0..1_100).map(|i| json!(format!("absent {i}"))).collect());
        let result =
            evaluate(None, &leaves(&output).unwrap(), Some(&evidence), None, &Judgement::NotConfigured);
        let fields = result["fields"].as_object().unwrap();
        let searched = fields.values().filter(|f| f["grounded"] == false).count();
        let unsearched = fields.values().filter(|f| f["grounded"].is_null()).count();
        assert_eq!((searched, unsearched), (1_024, 76));
        assert_eq!(result["groundingComplete"], false);
        // Numbers and dates are read from the page once, whatever the number of values.
        let pages = vec!["Total 1,234.50 due 3 March 2024".to_string()];
        let evidence = Evidence { pages: &pages };
        let output = json!({"a": 1234.5, "b": "2024-03-03", "c": "1,234.50", "d": 7});
        let result =
            evaluate(None, &leaves(&output).unwrap(), Some(&evidence), None, &Judgement::NotConfigured);
        let grounded: Vec<&Value> =
            ["/a", "/b", "/c", "/d"].iter().map(|p| &result["fields"][p]["grounded"]).collect();
        assert_eq!(grounded, [&json!(true), &json!(true), &json!(true), &json!(false)]);
        assert_eq!(result["groundingComplete"], true);
    }

    #[test]
    fn the_judge_moves_a_fields_confidence_and_flags_what_it_calls_wrong() {
        use super::super::judge::Verdict;
        let pages = vec!["Total: 10".to_string()];
        let evidence = Evidence { pages: &pages };
        let output = json!({"total": 10, "note": "Total"});
        let verdicts = std::collections::BTreeMap::from([
            ("/total".to_string(), Verdict { correct: true, reason: "stated".into() }),
            ("/note".to_string(), Verdict { correct: false, reason: "not a note".into() }),
        ]);
        let judged = Judgement::Judged { model: "m".into(), verdicts };
        let result = evaluate(None, &leaves(&output).unwrap(), Some(&evidence), None, &judged);
        assert_eq!(result["fields"]["/total"]["confidence"], 1.0);
        // Grounded (0.5 of 0.9) but judged wrong.
        let note = result["fields"]["/note"]["confidence"].as_f64().unwrap();
        assert!((note - 0.5 / 0.9).abs() < 1e-9, "{note}");
        assert_eq!(result["flagged"], json!(["/note"]));
        assert_eq!(result["fields"]["/note"]["judgeReason"], "not a note");
        let failed = Judgement::Unavailable { model: "m".into(), error: "timeout".into() };
        let result = evaluate(None, &leaves(&output).unwrap(), Some(&evidence), None, &failed);
        assert_eq!(result["fields"]["/note"]["confidence"], 1.0);
        assert_eq!(result["judge"]["status"], "unavailable");
    }
}
