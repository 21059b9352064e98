//! Which attributes compare and how. The entity type's `attributeSchema` says it, per
//! attribute (under `properties` when the schema is JSON-Schema style, else at top level):
//!
//! - `"x-compare"`: `"exact"` (equal after trimming and case folding), `"fuzzy"` (string
//!   similarity), `"number"`, `"date"` (`YYYY-MM-DD`, or any text with the same digits), or
//!   `"identifier"` (phone, tax ID, ISBN: only letters and digits count, one typo forgiven).
//!   An attribute without `x-compare` is not compared.
//! - `"x-tolerance"`: for `number`, the absolute difference still counted close (default 0);
//!   for `date`, days (default 0, so only a one-day slip counts as close beyond equality).
//!
//! Each kind has comparison levels, lowest (disagreement) first; a missing value on either
//! side is no evidence (`None`).

use crate::graph::duplicates::jaro_winkler;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Exact,
    Fuzzy,
    Number { tolerance: f64 },
    Date { tolerance_days: f64 },
    Identifier,
}

/// One compared attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub key: String,
    pub kind: Kind,
}

impl Kind {
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Exact => "exact",
            Kind::Fuzzy => "fuzzy",
            Kind::Number { .. } => "number",
            Kind::Date { .. } => "date",
            Kind::Identifier => "identifier",
        }
    }

    /// Level names, disagreement first.
    pub fn levels(&self) -> &'static [&'static str] {
        match self {
            Kind::Exact => &["different", "equal"],
            Kind::Fuzzy => &["different", "similar", "very similar", "equal"],
            Kind::Number { .. } | Kind::Date { .. } => &["different", "close", "equal"],
            Kind::Identifier => &["different", "one typo", "equal"],
        }
    }

    /// Default m (share of true matches at each level) before any estimate.
    pub fn default_m(&self) -> Vec<f64> {
        match self {
            Kind::Exact => vec![0.1, 0.9],
            Kind::Fuzzy => vec![0.05, 0.1, 0.2, 0.65],
            Kind::Number { .. } | Kind::Date { .. } => vec![0.05, 0.1, 0.85],
            Kind::Identifier => vec![0.05, 0.1, 0.85],
        }
    }

    /// A value as the comparison sees it when it compares equal (case, spaces, and for an
    /// identifier or a date everything but letters and digits left out); `None` when empty.
    pub fn key(&self, value: &str) -> Option<String> {
        let value = folded(value);
        let key = match self {
            Kind::Exact => value,
            Kind::Fuzzy => words(&value),
            Kind::Number { .. } => match value.parse::<f64>() {
                Ok(x) => x.to_string(),
                Err(_) => value,
            },
            Kind::Date { .. } => digits(&value),
            Kind::Identifier => alphanumeric(&value),
        };
        (!key.is_empty()).then_some(key)
    }

    /// The level of two values (symmetric), `None` when either is empty.
    pub fn level(&self, a: &str, b: &str) -> Option<usize> {
        let (a, b) = (folded(a), folded(b));
        if a.is_empty() || b.is_empty() {
            return None;
        }
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        match *self {
            Kind::Exact => Some(usize::from(a == b)),
            Kind::Fuzzy => {
                let (a, b) = (words(&a), words(&b));
                if a.is_empty() || b.is_empty() {
                    return None;
                }
                // The same words in another order are the same value (a paper's authors
                // listed in another order, 'smith john' / 'john smith'). Only equality
                // looks at sorted words: the similarity of sorted lists came out high for
                // any two long author lists sharing a few names (DBLP-ACM all fields: three
                // more wrong merges, F1 0.985 -> 0.976). With `RESOLUTION_QUICK=1`:
                // books-dev all fields unchanged (0.696), books-test 0.643 -> 0.644. Values
                // of other lengths cannot hold the same words: they are not sorted.
                let similarity = jaro_winkler(&a, &b);
                Some(if a == b || (a.len() == b.len() && sorted_words(&a) == sorted_words(&b)) {
                    3
                } else if similarity >= 0.92 {
                    2
                } else if similarity >= 0.8 {
                    1
                } else {
                    0
                })
            }
            Kind::Number { tolerance } => {
                let (Ok(x), Ok(y)) = (a.parse::<f64>(), b.parse::<f64>()) else {
                    return Some(usize::from(a == b) * 2);
                };
                let difference = (x - y).abs();
                Some(if difference == 0.0 {
                    2
                } else if difference <= tolerance {
                    1
                } else {
                    0
                })
            }
            Kind::Date { tolerance_days } => {
                let (x, y) = (digits(&a), digits(&b));
                if x.is_empty() || y.is_empty() {
                    return None;
                }
                if x == y {
                    return Some(2);
                }
                match (day_number(&x), day_number(&y)) {
                    // Within tolerance, day and month swapped, or one digit mistyped: close,
                    // as Splink's date comparisons count a small edit distance.
                    (Some(p), Some(q)) if (p - q).abs() <= tolerance_days.max(1.0) => Some(1),
                    _ if x.len() == 8 && y.len() == 8 && x[4..6] == y[6..8] && x[6..8] == y[4..6] => Some(1),
                    _ if x.len() == y.len()
                        && x.chars().zip(y.chars()).filter(|(p, q)| p != q).count() <= 1 =>
                    {
                        Some(1)
                    }
                    _ => Some(0),
                }
            }
            Kind::Identifier => {
                let (x, y) = (alphanumeric(&a), alphanumeric(&b));
                if x.is_empty() || y.is_empty() {
                    return None;
                }
                Some(if x == y {
                    2
                } else if one_edit(&x, &y) {
                    1
                } else {
                    0
                })
            }
        }
    }
}

/// Characters of an attribute value a comparison reads. The fuzzy comparison (Jaro-Winkler)
/// is quadratic in a value's length, and nothing else bounds a value but a request's 2 MB: two
/// 900 KB values seeded under one name were compared on the seed job's async worker for
/// hours. Values alike in their first 1,000 characters compare as alike.
pub const COMPARED_CHARS: usize = 1_000;

/// A value as every comparison reads it: trimmed, its first [`COMPARED_CHARS`], lower-cased.
fn folded(value: &str) -> String {
    let value = value.trim();
    let end = value.char_indices().nth(COMPARED_CHARS).map_or(value.len(), |(at, _)| at);
    value[..end].trim_end().to_lowercase()
}

/// The compared attributes a type's `attributeSchema` declares, in key order.
pub fn fields_of(schema: Option<&Value>) -> Vec<Field> {
    let Some(schema) = schema else { return Vec::new() };
    let declared = schema.get("properties").filter(|p| p.is_object()).unwrap_or(schema);
    let Some(declared) = declared.as_object() else { return Vec::new() };
    let mut fields: Vec<Field> = declared
        .iter()
        .filter_map(|(key, spec)| {
            let tolerance = spec.get("x-tolerance").and_then(Value::as_f64).unwrap_or(0.0).max(0.0);
            let kind = match spec.get("x-compare").and_then(Value::as_str)? {
                "exact" => Kind::Exact,
                "fuzzy" => Kind::Fuzzy,
                "number" => Kind::Number { tolerance },
                "date" => Kind::Date { tolerance_days: tolerance },
                "identifier" => Kind::Identifier,
                _ => return None,
            };
            Some(Field { key: key.clone(), kind })
        })
        .collect();
    fields.sort_by(|a, b| a.key.cmp(&b.key));
    fields
}

/// An attribute value as text: strings as they are, numbers and booleans printed, anything
/// else (objects, arrays, null) not compared.
pub fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Attribute values as stored on an entity (parallel lists of keys and JSON texts) as the
/// texts comparisons read; values that are not text, number or boolean are left out.
pub fn stored_attribute_texts(keys: &[String], values: &[String]) -> BTreeMap<String, String> {
    keys.iter()
        .zip(values)
        .filter_map(|(key, text)| {
            let value = serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()));
            Some((key.clone(), value_text(&value)?))
        })
        .collect()
}

fn words(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

/// A value's words (as [`words`] splits them) in sorted order, joined by spaces.
fn sorted_words(text: &str) -> String {
    let mut words: Vec<&str> = text.split(' ').collect();
    words.sort_unstable();
    words.join(" ")
}

fn digits(text: &str) -> String {
    text.chars().filter(char::is_ascii_digit).collect()
}

fn alphanumeric(text: &str) -> String {
    text.chars().filter(|c| c.is_alphanumeric()).collect()
}

/// Days since an epoch of a `YYYYMMDD` digit string (approximate months are enough here).
fn day_number(digits: &str) -> Option<f64> {
    if digits.len() != 8 {
        return None;
    }
    let year: f64 = digits[0..4].parse().ok()?;
    let month: f64 = digits[4..6].parse().ok()?;
    let day: f64 = digits[6..8].parse().ok()?;
    if !(1.0..=12.0).contains(&month) || !(1.0..=31.0).contains(&day) {
        return None;
    }
    Some(year * 365.25 + (month - 1.0) * 30.44 + day)
}

/// One substitution, insertion, deletion or adjacent transposition apart.
fn one_edit(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() { (&a, &b) } else { (&b, &a) };
    match long.len() - short.len() {
        0 => {
            let differ: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
            differ.len() == 1
                || (differ.len() == 2
                    && differ[1] == differ[0] + 1
                    && a[differ[0]] == b[differ[1]]
                    && a[differ[1]] == b[differ[0]])
        }
        1 => {
            let first = (0..short.len()).find(|&i| short[i] != long[i]).unwrap_or(short.len());
            short[first..] == long[first + 1..]
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_schema_says_which_attributes_compare_and_how() {
        let schema = json!({"properties": {
            "phone": {"type": "string", "x-compare": "identifier"},
            "city": {"type": "string", "x-compare": "exact"},
            "founded": {"type": "number", "x-compare": "number", "x-tolerance": 1},
            "note": {"type": "string"}
        }});
        let fields = fields_of(Some(&schema));
        let keys: Vec<&str> = fields.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, vec!["city", "founded", "phone"]);
        assert_eq!(fields[1].kind, Kind::Number { tolerance: 1.0 });
        assert!(fields_of(None).is_empty());
    }

    #[test]
    fn fuzzy_values_with_the_same_words_in_another_order_are_equal() {
        let fuzzy = Kind::Fuzzy;
        // DBLP and ACM list one paper's authors in other orders.
        let (dblp, acm) = (
            "Viswanath Poosala, Phillip B. Gibbons, Yossi Matias",
            "Phillip B. Gibbons, Yossi Matias, Viswanath Poosala",
        );
        assert_eq!(fuzzy.level(dblp, acm), Some(3));
        assert_eq!(fuzzy.level(acm, dblp), Some(3));
        // Reordered with one author more: not the same value.
        let more = "Phillip B. Gibbons, Yossi Matias, Viswanath Poosala, Brad Karp";
        assert_eq!(fuzzy.level(dblp, more), Some(0));
        assert_eq!(fuzzy.level(more, dblp), Some(0));
        assert_eq!(fuzzy.level("Kenneth A. Ross", "Theodore Johnson"), Some(0));
    }

    #[test]
    fn a_comparison_reads_a_values_first_thousand_characters() {
        // Two 900,000-character values (Jaro-Winkler over them whole: ~10^11 steps) that
        // differ only past the bound compare equal; differing within it, they do not.
        let words = |last: &str| format!("{}{last}", "lorem ipsum dolor ".repeat(50_000));
        let (a, b) = (words("amet"), words("sit"));
        assert_eq!(Kind::Fuzzy.level(&a, &b), Some(3));
        assert_eq!(Kind::Fuzzy.key(&a), Kind::Fuzzy.key(&b));
        let early = format!("zzz {b}");
        assert!(Kind::Fuzzy.level(&a, &early) < Some(3));
        assert_eq!(Kind::Exact.key(&a).map(|k| k.chars().count()), Some(COMPARED_CHARS));
    }

    #[test]
    fn levels_are_symmetric_and_ordered() {
        let cases = [
            (Kind::Identifier, "+1 (212) 555-0100", "12125550100", Some(2)),
            (Kind::Identifier, "12125550100", "12125550109", Some(1)),
            (Kind::Identifier, "12125550100", "99999999999", Some(0)),
            (Kind::Exact, "Paris", " paris ", Some(1)),
            (Kind::Exact, "Paris", "", None),
            (Kind::Number { tolerance: 2.0 }, "1999", "2000", Some(1)),
            (Kind::Number { tolerance: 2.0 }, "1990", "2000", Some(0)),
            (Kind::Date { tolerance_days: 0.0 }, "1980-02-03", "19800203", Some(2)),
            (Kind::Date { tolerance_days: 0.0 }, "1980-02-03", "1980-03-02", Some(1)),
            (Kind::Date { tolerance_days: 0.0 }, "1980-02-03", "1975-11-21", Some(0)),
            (Kind::Fuzzy, "12 main street", "12 main st", Some(2)),
            (Kind::Fuzzy, "12 main street", "4 elm road", Some(0)),
        ];
        for (kind, a, b, want) in cases {
            assert_eq!(kind.level(a, b), want, "{kind:?} {a} {b}");
            assert_eq!(kind.level(b, a), want, "{kind:?} {b} {a}");
        }
    }
}
