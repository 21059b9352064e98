//! A classify (or route) function's `classifications` (bem-sdk's `ClassificationListItem`), as
//! saving a version checks them and `engines::classify` runs them: each a JSON object with a
//! `name`, an optional `description` and `isErrorFallback`, and rules whose patterns are
//! compiled here: `regex.patterns`, `origin.email.patterns` (matched any case) and `keywords`
//! (canon's: words found any case on word boundaries). A pattern that does not compile, or a
//! rule's entry that is not text (it was silently dropped), is refused naming its path
//! (`classifications[0].regex.patterns[1]`).
//!
//! Bounded, as every tenant pattern is: a function's routes hold at most [`MAX_RULES`]
//! patterns and keywords in all, each compiled within [`crate::patterns::PATTERN_BYTES`] (as
//! `fs` grep's), and all of them within [`ROUTES_BYTES`] together: a call holds them all.

use super::{invalid, option, SettingError};
use crate::patterns::Pattern;
use serde_json::Value;

/// Patterns and keywords a classify function may hold in all.
pub const MAX_RULES: usize = 100;
/// The most a function's compiled patterns may take together: 100 patterns of up to 1 MiB
/// each were 100 MiB held by every run of the function.
pub const ROUTES_BYTES: usize = 8 << 20;

/// One route of a classify function, its rules compiled.
#[derive(Clone, Debug)]
pub struct Route {
    pub name: String,
    pub description: String,
    pub patterns: Vec<Pattern>,
    pub sender_patterns: Vec<Pattern>,
    pub keywords: Vec<Pattern>,
    pub is_error_fallback: bool,
}

/// The routes of `list` (the function's `classifications` setting), in order.
pub fn routes(list: Option<&Value>) -> Result<Vec<Route>, SettingError> {
    let mut routes = Vec::new();
    let mut bytes = 0;
    // Counted as they compile, so a list past the bound is refused before it is all held.
    for (item, path) in items(list)? {
        let route = route(item, &path)?;
        bytes += route.memory();
        if bytes > ROUTES_BYTES {
            let message = format!(
                "take more than {} MiB compiled together ({:.1} MiB up to {path}); use narrower classes \
                 or fewer repetitions (ASCII (?-u:\\w) is far smaller than Unicode \\w)",
                ROUTES_BYTES >> 20,
                bytes as f64 / f64::from(1 << 20),
            );
            return Err(invalid("classifications".into(), message));
        }
        routes.push(route);
    }
    Ok(routes)
}

/// Checks `list` as [`routes`] reads it.
pub fn check(list: &Value) -> Result<(), SettingError> {
    routes(Some(list)).map(drop)
}

/// The routes' JSON with their paths, once the list's shape and rule count are checked.
fn items(list: Option<&Value>) -> Result<impl Iterator<Item = (&Value, String)>, SettingError> {
    let list = list
        .and_then(Value::as_array)
        .filter(|list| !list.is_empty())
        .ok_or_else(|| invalid("classifications".into(), "must be a non-empty list of routes".into()))?;
    let count =
        |item: &Value, pointer: &str| item.pointer(pointer).and_then(Value::as_array).map_or(0, Vec::len);
    let rules: usize = list
        .iter()
        .map(|item| {
            count(item, "/regex/patterns") + count(item, "/origin/email/patterns") + count(item, "/keywords")
        })
        .sum();
    if rules > MAX_RULES {
        let message = format!("hold at most {MAX_RULES} patterns and keywords in all (got {rules})");
        return Err(invalid("classifications".into(), message));
    }
    Ok(list.iter().enumerate().map(|(index, item)| (item, format!("classifications[{index}]"))))
}

fn route(item: &Value, path: &str) -> Result<Route, SettingError> {
    if !item.is_object() {
        return Err(invalid(path.into(), "must be an object".into()));
    }
    let field = |name: &str| format!("{path}.{name}");
    let name = option(item, &field("name"), "a string", Value::as_str)?
        .filter(|name| !name.is_empty())
        .ok_or_else(|| invalid(field("name"), "is required".into()))?;
    let description = option(item, &field("description"), "a string", Value::as_str)?.unwrap_or_default();
    let is_error_fallback = option(item, &field("isErrorFallback"), "true or false", Value::as_bool)?;
    let keywords = texts(item, "/keywords", &field("keywords"))?
        .into_iter()
        .map(|(at, keyword)| (at, format!(r"\b{}\b", regex::escape(keyword.trim()))))
        .collect();
    Ok(Route {
        name: name.to_string(),
        description: description.to_string(),
        patterns: compile(texts(item, "/regex/patterns", &field("regex.patterns"))?, false)?,
        sender_patterns: compile(
            texts(item, "/origin/email/patterns", &field("origin.email.patterns"))?,
            true,
        )?,
        keywords: compile(keywords, true)?,
        is_error_fallback: is_error_fallback.unwrap_or(false),
    })
}

/// The texts of the list at `pointer` (absent or null: none), each with its path.
fn texts(item: &Value, pointer: &str, path: &str) -> Result<Vec<(String, String)>, SettingError> {
    let Some(list) = item.pointer(pointer).filter(|list| !list.is_null()) else { return Ok(Vec::new()) };
    let list = list.as_array().ok_or_else(|| invalid(path.into(), "must be a list of strings".into()))?;
    list.iter()
        .enumerate()
        .map(|(index, entry)| {
            let at = format!("{path}[{index}]");
            match entry.as_str() {
                Some(text) => Ok((at, text.to_string())),
                None => Err(invalid(at, format!("must be a string (got {entry})"))),
            }
        })
        .collect()
}

fn compile(patterns: Vec<(String, String)>, ignore_case: bool) -> Result<Vec<Pattern>, SettingError> {
    patterns
        .into_iter()
        .map(|(at, pattern)| {
            Pattern::compile(&pattern, ignore_case)
                .map_err(|err| invalid(at, format!("is not a valid regular expression: {err}")))
        })
        .collect()
}

impl Route {
    /// Bytes its compiled patterns hold.
    fn memory(&self) -> usize {
        [&self.patterns, &self.sender_patterns, &self.keywords]
            .into_iter()
            .flatten()
            .map(Pattern::memory)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(item: Value) -> String {
        match routes(Some(&json!([item]))) {
            Err(SettingError::Invalid { field, message }) => format!("{field} {message}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn routes_compile_their_rules_and_a_bad_one_is_refused_by_its_path() {
        let list = json!([{"name": "invoice", "regex": {"patterns": ["INV-\\d+"]}, "keywords": ["bill"]},
                          {"name": "other", "isErrorFallback": true}]);
        let read = routes(Some(&list)).unwrap();
        let now = std::time::Instant::now() + std::time::Duration::from_secs(60);
        assert!(read[0].patterns[0].is_match("INV-42", now).unwrap());
        assert!(read[0].keywords[0].is_match("a BILL here", now).unwrap());
        assert!(read[1].is_error_fallback && read[1].patterns.is_empty());
        let bad = refused(json!({"name": "x", "regex": {"patterns": ["ok", "(unclosed"]}}));
        assert!(
            bad.starts_with("classifications[0].regex.patterns[1] is not a valid regular expression"),
            "{bad}"
        );
        assert_eq!(
            refused(json!({"name": "x", "keywords": [3]})),
            "classifications[0].keywords[0] must be a string (got 3)"
        );
        assert_eq!(refused(json!({"description": "no name"})), "classifications[0].name is required");
        assert_eq!(
            refused(json!({"name": "x", "isErrorFallback": "yes"})),
            "classifications[0].isErrorFallback must be true or false (got \"yes\")"
        );
        assert_eq!(refused(json!("invoice")), "classifications[0] must be an object");
        let many: Vec<Value> =
            (0..=MAX_RULES).map(|i| json!({"name": format!("r{i}"), "keywords": ["k"]})).collect();
        assert!(check(&json!(many)).is_err_and(|err| format!("{err:?}").contains("at most 100")));
        let huge = json!([{"name": "x", "regex": {"patterns": ["\\w{100}"]}}]);
        assert!(format!("{:?}", check(&huge)).contains("exceeds the size limit"), "{:?}", check(&huge));
        // Nine patterns of about 1 MiB each pass one by one, not together.
        let heavy = json!([{"name": "x", "regex": {"patterns": vec!["\\w{20}"; 9]}}]);
        let err = format!("{:?}", check(&heavy));
        assert!(err.contains("more than 8 MiB compiled together"), "{err}");
        assert!(check(&json!([{"name": "x", "regex": {"patterns": vec!["\\w{20}"; 7]}}])).is_ok());
    }
}
