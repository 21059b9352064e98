//! The bounds on a tenant's JSON Schema patterns while an output is validated.
//!
//! A pattern costs in proportion to the text it is matched against, and that is what a
//! tenant controls twice over: the schema and, through its files or its own model endpoint,
//! the output. Measured (release, one core): a linear pattern that defeats the lazy DFA
//! (`a[ab]{3000}c`, `(\w+\s?){500}c`) runs 14–18 µs a byte, and a lookahead over a
//! delegated repetition (`(?=a)(a|b)*c`) is quadratic: 27 s on one 200 KB string, with
//! fancy-regex's backtracking limit never reached. An output may hold 32 MiB of text, and
//! validation ran on a runtime thread: one call could hold it for hours. So:
//!
//! - `pattern` is checked here ([`Pattern`]): in linear time (the `regex` crate) when the
//!   pattern allows it, and with backtracking (fancy-regex, 1,000,000 steps a match) only
//!   when it needs lookaround or a backreference. A string longer than
//!   [`LINEAR_SUBJECT_BYTES`] (with backtracking [`BACKTRACKING_SUBJECT_BYTES`]) is not
//!   matched: it fails the check, naming the limit. The matching of one output shares
//!   [`MATCHING_BUDGET`] of time; past it every further pattern check fails, naming it.
//! - `patternProperties` is matched by the `jsonschema` crate against an object's keys, in
//!   linear time only (a lookaround there is refused on save as not a regex), and an output
//!   whose keys, times the schema's `patternProperties` patterns, exceed
//!   [`PATTERN_KEY_BYTES`] fails before any matching ([`keys_within`]).
//!
//! Each pattern compiles within the bounds every tenant pattern has (a classify function's:
//! [`PATTERN_BYTES`], 1 MiB, with a [`SEARCH_CACHE_BYTES`], 256 KiB, search cache).

use crate::patterns::{PATTERN_BYTES, SEARCH_CACHE_BYTES};
use jsonschema::paths::{LazyLocation, Location};
use jsonschema::{Keyword, PatternOptions, ValidationError, Validator};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest string matched against a pattern that runs in linear time.
pub const LINEAR_SUBJECT_BYTES: usize = 64 * 1024;
/// Longest string matched against a pattern with lookaround or a backreference.
pub const BACKTRACKING_SUBJECT_BYTES: usize = 1024;
/// Time the `pattern` checks of one output may take together.
pub const MATCHING_BUDGET: Duration = Duration::from_secs(1);
/// Most bytes of object keys times `patternProperties` patterns in one output.
pub const PATTERN_KEY_BYTES: usize = 256 * 1024;
/// Backtracking steps of one match, with lookaround or a backreference.
const BACKTRACK_LIMIT: usize = 1_000_000;

/// Patterns matched in linear time, compiled within the bounds of every tenant pattern.
fn linear() -> PatternOptions<jsonschema::Regex> {
    PatternOptions::regex().size_limit(PATTERN_BYTES).dfa_size_limit(SEARCH_CACHE_BYTES)
}

/// The validator of a tenant's JSON Schema (an `outputSchema`, a parse function's schema, a
/// model's proposed one) with its patterns bounded as above. Its error is the schema's fault,
/// as text.
#[allow(clippy::result_large_err)] // the keyword factory's signature is the crate's
pub fn validator(schema: &Value) -> Result<Validator, String> {
    let budget = Arc::new(Budget::default());
    jsonschema::options()
        .with_pattern_options(linear())
        .with_keyword("pattern", move |_parent: &Map<String, Value>, value: &Value, location: Location| {
            Pattern::compile(value, location, budget.clone())
        })
        .build(schema)
        .map_err(|err| err.to_string())
}

/// Refuses an output whose object keys, times the schema's `patternProperties` patterns,
/// exceed [`PATTERN_KEY_BYTES`]: those are matched where no budget reaches.
pub fn keys_within(schema: &Value, output: &Value) -> Result<(), String> {
    let patterns = key_patterns(schema);
    if patterns == 0 {
        return Ok(());
    }
    let keys = key_bytes(output);
    if keys.saturating_mul(patterns) > PATTERN_KEY_BYTES {
        return Err(format!(
            "the output's object keys ({keys} bytes) are matched against {patterns} patternProperties \
             patterns; at most {PATTERN_KEY_BYTES} bytes of keys times patterns are checked"
        ));
    }
    Ok(())
}

/// `patternProperties` patterns anywhere in a schema.
fn key_patterns(schema: &Value) -> usize {
    match schema {
        Value::Object(map) => map
            .iter()
            .map(|(keyword, value)| {
                let own = match (keyword.as_str(), value) {
                    ("patternProperties", Value::Object(patterns)) => patterns.len(),
                    _ => 0,
                };
                own + key_patterns(value)
            })
            .sum(),
        Value::Array(items) => items.iter().map(key_patterns).sum(),
        _ => 0,
    }
}

/// Bytes of every object key in a value.
fn key_bytes(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.iter().map(|(key, value)| key.len() + key_bytes(value)).sum(),
        Value::Array(items) => items.iter().map(key_bytes).sum(),
        _ => 0,
    }
}

/// Time spent matching, shared by the patterns of one validator (one output's validation).
#[derive(Default)]
struct Budget {
    spent_nanos: AtomicU64,
}

impl Budget {
    fn spent(&self) -> Duration {
        Duration::from_nanos(self.spent_nanos.load(Ordering::Relaxed))
    }

    fn add(&self, took: Duration) {
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.spent_nanos.fetch_add(nanos, Ordering::Relaxed);
    }
}

/// One `pattern` keyword: the crate's own check of it (ECMA-262 syntax read as the crate
/// reads it), run only within the bounds.
struct Pattern {
    check: Validator,
    backtracking: bool,
    location: Location,
    budget: Arc<Budget>,
}

impl Pattern {
    #[allow(clippy::result_large_err)] // the keyword factory's signature is the crate's
    fn compile<'a>(
        value: &'a Value,
        location: Location,
        budget: Arc<Budget>,
    ) -> Result<Box<dyn Keyword>, ValidationError<'a>> {
        let schema = json!({ "pattern": value });
        let backtracking = PatternOptions::fancy_regex()
            .backtrack_limit(BACKTRACK_LIMIT)
            .size_limit(PATTERN_BYTES)
            .dfa_size_limit(SEARCH_CACHE_BYTES);
        let (check, backtracking) = match jsonschema::options().with_pattern_options(linear()).build(&schema)
        {
            Ok(check) => (check, false),
            Err(_) => match jsonschema::options().with_pattern_options(backtracking).build(&schema) {
                Ok(check) => (check, true),
                Err(_) => {
                    let message = format!(r#"{value} is not a "regex""#);
                    return Err(ValidationError::custom(location, Location::new(), value, message));
                }
            },
        };
        Ok(Box::new(Pattern { check, backtracking, location, budget }))
    }

    /// Why `text` fails this pattern, when it does.
    fn problem(&self, instance: &Value, text: &str) -> Option<String> {
        let (limit, kind) = if self.backtracking {
            (BACKTRACKING_SUBJECT_BYTES, "a pattern with lookaround or a backreference")
        } else {
            (LINEAR_SUBJECT_BYTES, "a pattern")
        };
        if text.len() > limit {
            return Some(format!(
                "a string of {} bytes is not checked against {kind}: at most {limit}",
                text.len()
            ));
        }
        if self.budget.spent() >= MATCHING_BUDGET {
            return Some(format!(
                "not checked: the pattern checks of this output took their {} s",
                MATCHING_BUDGET.as_secs()
            ));
        }
        let started = Instant::now();
        let outcome = self.check.validate(instance);
        self.budget.add(started.elapsed());
        outcome.err().map(|err| err.to_string())
    }
}

impl Keyword for Pattern {
    fn validate<'i>(&self, instance: &'i Value, location: &LazyLocation) -> Result<(), ValidationError<'i>> {
        let Value::String(text) = instance else { return Ok(()) };
        match self.problem(instance, text) {
            None => Ok(()),
            Some(message) => {
                Err(ValidationError::custom(self.location.clone(), location.into(), instance, message))
            }
        }
    }

    fn is_valid(&self, instance: &Value) -> bool {
        match instance {
            Value::String(text) => self.problem(instance, text).is_none(),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn letters(n: usize) -> String {
        // a and b in an order no pattern below can skip ahead on
        let mut x: u64 = 12345;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x.is_multiple_of(2) {
                    'a'
                } else {
                    'b'
                }
            })
            .collect()
    }

    fn problems(schema: &Value, output: &Value) -> Vec<String> {
        validator(schema).unwrap().iter_errors(output).map(|err| err.to_string()).collect()
    }

    #[test]
    fn patterns_check_as_the_standard_says_with_or_without_lookaround() {
        let schema = json!({"type": "object", "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}-\\d+$"},
            "password": {"type": "string", "pattern": "^(?=.*\\d)(?=.*[a-z]).{8,}$"}}});
        assert!(problems(&schema, &json!({"code": "ABC-12", "password": "abcdefg1"})).is_empty());
        let found = problems(&schema, &json!({"code": "abc", "password": "abcdefgh"}));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains(r#""abc" does not match"#) || found[1].contains(r#""abc" does not match"#));
        // ECMA-262's \d is ASCII, as the crate reads it
        assert_eq!(problems(&schema, &json!({"code": "ABC-١٢"})).len(), 1);
        let broken = validator(&json!({"pattern": "(unclosed"})).unwrap_err();
        assert!(broken.contains("is not a \"regex\""), "{broken}");
    }

    #[test]
    fn a_string_past_its_limit_fails_naming_the_limit_instead_of_being_matched() {
        let schema = json!({"items": {"pattern": "(?=a)(a|b)*c"}});
        let long = letters(BACKTRACKING_SUBJECT_BYTES + 1);
        let found = problems(&schema, &json!([long]));
        assert_eq!(found.len(), 1);
        assert!(found[0].contains("lookaround or a backreference: at most 1024"), "{}", found[0]);
        let linear = json!({"items": {"pattern": "a[ab]{300}c"}});
        let found = problems(&linear, &json!([letters(LINEAR_SUBJECT_BYTES + 1), "ab"]));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].contains("65537 bytes is not checked against a pattern: at most 65536"),
            "{}",
            found[0]
        );
    }

    #[test]
    fn one_output_spends_at_most_the_budget_on_its_patterns() {
        // each string within the limit, each check linear but slow (~14 µs a byte in a
        // release build): 2,000 of them would take about two minutes; the budget stops them,
        // and each string it left unchecked says so
        let schema = json!({"type": "array", "items": {"type": "string", "pattern": "a[ab]{3000}c"}});
        let output = Value::Array((0..2000).map(|_| Value::String(letters(4096))).collect());
        let found = problems(&schema, &output);
        assert_eq!(found.len(), 2000);
        let unchecked = found.iter().filter(|problem| problem.contains("took their 1 s")).count();
        assert!(unchecked > 1000, "{unchecked} of 2000 left unchecked");
        assert!(found[0].contains("does not match"), "{}", found[0]);
        // the next output's validator has a budget of its own
        let matching = "a".to_string() + &"b".repeat(3000) + "c";
        assert!(validator(&schema).unwrap().is_valid(&json!([matching])));
    }

    #[test]
    fn keys_matched_against_pattern_properties_are_bounded_before_matching() {
        let schema = json!({"type": "object", "patternProperties": {"^x": {}, "^y": {}}});
        let small = json!({"x1": 1, "y2": {"z": 3}});
        assert!(keys_within(&schema, &small).is_ok());
        let wide: Map<String, Value> = (0..20_000).map(|i| (format!("key{i:08}"), json!(i))).collect();
        let err = keys_within(&schema, &Value::Object(wide)).unwrap_err();
        assert!(err.contains("220000 bytes") && err.contains("2 patternProperties"), "{err}");
        assert!(keys_within(&json!({"type": "object"}), &json!({"a": 1})).is_ok());
        // a lookaround among patternProperties is refused: keys are matched in linear time only
        assert!(validator(&json!({"patternProperties": {"^(?=x)": {}}})).is_err());
    }
}
