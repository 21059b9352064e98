//! Built-in classify (and `route`): picks one of `classifications` (the SDK's
//! `ClassificationListItem`: `name`, `description`, `regex.patterns`, `origin.email.patterns`,
//! `isErrorFallback`) for the input.
//!
//! 1. Rules, in list order; the first route with a hit wins:
//!    - `regex.patterns`: regular expressions (Rust `regex` syntax; add `(?i)` to ignore
//!      case) searched in the input's text (an e-mail's subject and body included);
//!    - `origin.email.patterns`: regular expressions matched against the e-mail's sender,
//!      case-insensitively (e-mail input only);
//!    - `keywords` (canon extension): words or phrases, any of which found in the text,
//!      case-insensitively and on word boundaries.
//! 2. Otherwise the route whose `description` (its `name` when it has none) is most similar
//!    to the text by embedding (MiniLM through `context.embedder`; the text is chunked to
//!    the model's window, the first 8 chunks of its first 64 KiB averaged).
//! 3. With no text to compare, the route marked `isErrorFallback` if any, else an error.
//!
//! The rules search the first [`RULE_TEXT_BYTES`] of the text, and all of one input's rules
//! together take at most [`super::call_rules::RULE_BUDGET`], all of one call's
//! [`super::call_rules::CALL_RULE_BUDGET`]: a pattern the regex crate's DFA cannot hold runs
//! ~10 µs a byte (`(?i)[a-z ]{2000}Z`), so 100 of them over a 32 MiB text would run for hours.
//! Each pattern is searched a window at a time ([`crate::patterns`]), so a deadline stops it
//! within one.
//! Past the budget the run fails (`classification_failed`) naming it.
//!
//! Output (the `ClassifyEvent` fields): `{choice, method: "rule" | "embedding" | "fallback"
//! | "model", matched?: <the rule that hit>, scores?: {<route>: <cosine similarity>}}`.

use super::call_rules::{CallRules, Deadline};
use super::extract::extraction_text;
use super::{invalid_config, setting, Context, EngineError, Outcome, Payload};
use crate::functions::type_settings;
use crate::patterns::Pattern;
use crate::versions::FunctionVersion;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Instant;

const MAX_CHUNKS: usize = 8;
/// Bytes of the text chunked for the comparison: far more than 8 chunks' worth, so the
/// cut changes nothing but what a huge document costs to tokenise.
const MAX_COMPARED_BYTES: usize = 64 * 1024;
/// Bytes of the text the rules search (an input's beginning: a classification rule looks
/// for what a kind of document says first, as the comparison reads 64 KiB).
pub const RULE_TEXT_BYTES: usize = 1024 * 1024;

pub use crate::functions::type_settings::classify::Route;

/// The routes of a classify function, with their rules compiled (see
/// `functions::type_settings::classify`) once a call.
pub fn routes(function: &FunctionVersion, context: &Context) -> Result<Arc<Vec<Route>>, EngineError> {
    context.rules.routes(function, || compile(function))
}

fn compile(function: &FunctionVersion) -> Result<Vec<Route>, EngineError> {
    Ok(type_settings::classify::routes(setting(function, "classifications"))?)
}

/// The text classified: an e-mail's subject and body (and attachments), a document's text, or
/// a JSON payload printed.
pub fn classification_text(input: &Payload) -> String {
    match input {
        Payload::Document(document) => extraction_text(document),
        Payload::Json(value) => serde_json::to_string_pretty(value).unwrap_or_default(),
    }
}

/// The sender an e-mail input came from (a JSON payload's `inboundEmail.from`).
fn sender(input: &Payload) -> Option<String> {
    match input {
        Payload::Document(document) => document.email.as_ref().map(|e| e.from.clone()),
        Payload::Json(value) => {
            value.pointer("/inboundEmail/from").and_then(Value::as_str).map(str::to_string)
        }
    }
}

pub async fn run(
    function: &FunctionVersion,
    input: &Payload,
    context: &Context,
) -> Result<Outcome, EngineError> {
    let routes = routes(function, context)?;
    let text = classification_text(input);
    if let Some(routed) = by_rules(&routes, &text, input, &context.rules)? {
        return Ok(routed);
    }
    if text.trim().is_empty() {
        return fallback(&routes, "there is no text to classify");
    }
    let scores = similarities(&routes, &text, context).await?;
    let (best, _) = scores
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .ok_or_else(|| invalid_config("no routes"))?;
    let score_map: Map<String, Value> =
        routes.iter().zip(&scores).map(|(route, score)| (route.name.clone(), json!(round(*score)))).collect();
    let name = routes[best].name.clone();
    Ok(Outcome::Routed {
        outlet: name.clone(),
        output: json!({"choice": name, "method": "embedding", "scores": score_map}),
    })
}

fn round(score: f32) -> f64 {
    (f64::from(score) * 10_000.0).round() / 10_000.0
}

/// The error-fallback route, or an error saying why nothing was chosen.
pub fn fallback(routes: &[Route], why: &str) -> Result<Outcome, EngineError> {
    match routes.iter().find(|r| r.is_error_fallback) {
        Some(route) => Ok(Outcome::Routed {
            outlet: route.name.clone(),
            output: json!({"choice": route.name, "method": "fallback", "reason": why}),
        }),
        None => {
            Err(EngineError::new("classification_failed", format!("{why} and no route has isErrorFallback")))
        }
    }
}

/// The route the rules choose for `input` (whose text is `text`), as the call's outcome.
pub fn by_rules(
    routes: &[Route],
    text: &str,
    input: &Payload,
    rules: &CallRules,
) -> Result<Option<Outcome>, EngineError> {
    let sender = sender(input);
    let deadline = rules.deadline();
    let started = Instant::now();
    let hit = crate::cpu::blocking(|| rule_match(routes, text, sender.as_deref(), deadline));
    rules.spend(started.elapsed());
    Ok(hit?.map(|(route, rule)| {
        let output = json!({"choice": route.name, "method": "rule", "matched": rule});
        Outcome::Routed { outlet: route.name.clone(), output }
    }))
}

/// The first route whose rule hits, with the rule (`regex:…`, `origin:…`, `keyword:…`),
/// searching the first [`RULE_TEXT_BYTES`] of `text` until `deadline`.
pub fn rule_match<'a>(
    routes: &'a [Route],
    text: &str,
    sender: Option<&str>,
    deadline: Deadline,
) -> Result<Option<(&'a Route, String)>, EngineError> {
    let text = &text[..text.floor_char_boundary(RULE_TEXT_BYTES)];
    let within = |pattern: &Pattern, haystack: &str| {
        let stopped = |searched: Option<usize>| {
            let at = match searched {
                Some(bytes) => format!("with {:?} searched {bytes} bytes in", pattern.as_str()),
                None => format!("before {:?} was tried", pattern.as_str()),
            };
            EngineError::new(
                "classification_failed",
                format!(
                    "the classification rules took their {} s {} {at}; make the patterns simpler (a \
                     pattern that repeats a wide class thousands of times is slow on any text)",
                    deadline.budget.as_secs_f64(),
                    deadline.scope,
                ),
            )
        };
        if Instant::now() >= deadline.at {
            return Err(stopped(None));
        }
        pattern.is_match(haystack, deadline.at).map_err(|out| stopped(Some(out.searched)))
    };
    for route in routes {
        for pattern in &route.patterns {
            if within(pattern, text)? {
                return Ok(Some((route, format!("regex:{}", pattern.as_str()))));
            }
        }
        if let Some(from) = sender {
            for pattern in &route.sender_patterns {
                if within(pattern, from)? {
                    return Ok(Some((route, format!("origin:{}", pattern.as_str()))));
                }
            }
        }
        for keyword in &route.keywords {
            if within(keyword, text)? {
                let word =
                    keyword.as_str().trim_start_matches(r"\b").trim_end_matches(r"\b").replace('\\', "");
                return Ok(Some((route, format!("keyword:{word}"))));
            }
        }
    }
    Ok(None)
}

/// Cosine similarity of the text to each route's description.
async fn similarities(routes: &[Route], text: &str, context: &Context) -> Result<Vec<f32>, EngineError> {
    let embedding_error = |err: &dyn std::fmt::Display| EngineError::new("embedding_error", err.to_string());
    let end = text.floor_char_boundary(MAX_COMPARED_BYTES);
    let mut chunks = context.embedder.chunk(&text[..end]).await.map_err(|e| embedding_error(&e))?;
    chunks.truncate(MAX_CHUNKS);
    let mut texts: Vec<String> = routes
        .iter()
        .map(|r| if r.description.trim().is_empty() { r.name.clone() } else { r.description.clone() })
        .collect();
    let route_count = texts.len();
    texts.extend(chunks);
    let vectors = context.embedder.embed(&texts).await.map_err(|e| embedding_error(&e))?;
    let (route_vectors, chunk_vectors) = vectors.split_at(route_count);
    let document = mean_unit(chunk_vectors);
    Ok(route_vectors.iter().map(|v| v.iter().zip(&document).map(|(a, b)| a * b).sum()).collect())
}

fn mean_unit(vectors: &[Vec<f32>]) -> Vec<f32> {
    let dimensions = vectors.first().map_or(0, Vec::len);
    let mut mean = vec![0.0f32; dimensions];
    for vector in vectors {
        for (m, v) in mean.iter_mut().zip(vector) {
            *m += v;
        }
    }
    let norm = mean.iter().map(|m| m * m).sum::<f32>().sqrt();
    if norm > 0.0 {
        mean.iter_mut().for_each(|m| *m /= norm);
    }
    mean
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn routes(function: &FunctionVersion) -> Result<Vec<Route>, EngineError> {
        compile(function)
    }

    fn input_deadline() -> Deadline {
        CallRules::default().deadline()
    }

    fn function(classifications: Value) -> FunctionVersion {
        FunctionVersion {
            function_id: "f".into(),
            function_name: "router".into(),
            version_num: 1,
            function_type: "classify".into(),
            body: json!({"type": "classify", "classifications": classifications}),
        }
    }

    #[test]
    fn rules_in_list_order() {
        let routes = routes(&function(json!([
            {"name": "invoice", "regex": {"patterns": ["(?i)invoice\\s+(no|number)"]}},
            {"name": "vip", "origin": {"email": {"patterns": ["@bigcustomer\\.example$"]}}},
            {"name": "complaint", "keywords": ["refund", "not happy"]}
        ])))
        .unwrap();
        let hit = |text: &str, from: Option<&str>| {
            rule_match(&routes, text, from, input_deadline()).unwrap().map(|(r, rule)| (r.name.clone(), rule))
        };
        assert_eq!(
            hit("INVOICE No 4", None).unwrap(),
            ("invoice".into(), "regex:(?i)invoice\\s+(no|number)".into())
        );
        assert_eq!(hit("hello", Some("Ann@BigCustomer.example")).unwrap().0, "vip");
        assert_eq!(
            hit("I am NOT HAPPY at all", None).unwrap(),
            ("complaint".into(), "keyword:not happy".into())
        );
        assert!(hit("refunds are words too", None).is_none());
    }

    #[test]
    fn rules_read_the_texts_beginning_within_their_time_budget() {
        let needle = routes(&function(json!([{"name": "late", "regex": {"patterns": ["needle"]}}]))).unwrap();
        let early = "needle ".to_string() + &"x".repeat(RULE_TEXT_BYTES);
        assert!(rule_match(&needle, &early, None, input_deadline()).unwrap().is_some());
        let late = "x".repeat(RULE_TEXT_BYTES) + " needle";
        assert!(rule_match(&needle, &late, None, input_deadline()).unwrap().is_none(), "past the bytes read");
        let spent = Deadline { at: Instant::now(), budget: Duration::ZERO, scope: "on this input" };
        let err = rule_match(&needle, "needle", None, spent).unwrap_err();
        assert_eq!(err.kind, "classification_failed");
        assert!(
            err.message.contains("took their 0 s on this input before \"needle\" was tried"),
            "{}",
            err.message
        );
        // A slow pattern is stopped within the text, not after it.
        let slow = routes(&function(json!([{"name": "slow", "regex": {"patterns": ["(?i)[a-z ]{2000}Z"]}}])))
            .unwrap();
        let text = "ab ".repeat(RULE_TEXT_BYTES / 3);
        let soon = Deadline {
            at: Instant::now() + Duration::from_millis(100),
            budget: Duration::from_millis(100),
            scope: "in this call",
        };
        let err = rule_match(&slow, &text, None, soon).unwrap_err();
        assert!(
            err.message.contains("took their 0.1 s in this call with \"(?i)[a-z ]{2000}Z\" searched"),
            "{}",
            err.message
        );
    }

    #[test]
    fn broken_patterns_and_empty_lists_are_config_errors() {
        let err = routes(&function(json!([{"name": "a", "regex": {"patterns": ["("]}}]))).unwrap_err();
        assert_eq!(err.kind, "invalid_config");
        assert!(
            err.message.starts_with("classifications[0].regex.patterns[0] is not a valid"),
            "{}",
            err.message
        );
        assert_eq!(routes(&function(json!([]))).unwrap_err().kind, "invalid_config");
    }

    #[test]
    fn fallback_needs_a_marked_route() {
        let marked =
            routes(&function(json!([{"name": "a"}, {"name": "other", "isErrorFallback": true}]))).unwrap();
        let Outcome::Routed { outlet, .. } = fallback(&marked, "empty").unwrap() else {
            panic!("not routed")
        };
        assert_eq!(outlet, "other");
        let unmarked = routes(&function(json!([{"name": "a"}]))).unwrap();
        assert_eq!(fallback(&unmarked, "empty").unwrap_err().kind, "classification_failed");
    }
}
