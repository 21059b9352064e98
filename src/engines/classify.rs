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
//! Output (the `ClassifyEvent` fields): `{choice, method: "rule" | "embedding" | "fallback"
//! | "model", matched?: <the rule that hit>, scores?: {<route>: <cosine similarity>}}`.

use super::extract::extraction_text;
use super::{invalid_config, setting, Context, EngineError, Outcome, Payload};
use crate::functions::type_settings;
use crate::versions::FunctionVersion;
use serde_json::{json, Map, Value};

const MAX_CHUNKS: usize = 8;
/// Bytes of the text chunked for the comparison: far more than 8 chunks' worth, so the
/// cut changes nothing but what a huge document costs to tokenise.
const MAX_COMPARED_BYTES: usize = 64 * 1024;

pub use crate::functions::type_settings::classify::Route;

/// The routes of a classify function, with their rules compiled (see
/// `functions::type_settings::classify`).
pub fn routes(function: &FunctionVersion) -> Result<Vec<Route>, EngineError> {
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
    let routes = routes(function)?;
    let text = classification_text(input);
    if let Some((route, rule)) = rule_match(&routes, &text, sender(input).as_deref()) {
        let output = json!({"choice": route.name, "method": "rule", "matched": rule});
        return Ok(Outcome::Routed { outlet: route.name.clone(), output });
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

/// The first route whose rule hits, with the rule (`regex:…`, `origin:…`, `keyword:…`).
pub fn rule_match<'a>(routes: &'a [Route], text: &str, sender: Option<&str>) -> Option<(&'a Route, String)> {
    routes.iter().find_map(|route| {
        if let Some(p) = route.patterns.iter().find(|p| p.is_match(text)) {
            return Some((route, format!("regex:{}", p.as_str())));
        }
        if let Some(p) = sender.and_then(|from| route.sender_patterns.iter().find(|p| p.is_match(from))) {
            return Some((route, format!("origin:{}", p.as_str())));
        }
        let keyword = route.keywords.iter().find(|k| k.is_match(text))?;
        let word = keyword.as_str().trim_start_matches(r"\b").trim_end_matches(r"\b").replace('\\', "");
        Some((route, format!("keyword:{word}")))
    })
}

/// Cosine similarity of the text to each route's description.
async fn similarities(routes: &[Route], text: &str, context: &Context) -> Result<Vec<f32>, EngineError> {
    let embedding_error = |err: &dyn std::fmt::Display| EngineError::new("embedding_error", err.to_string());
    let mut end = text.len().min(MAX_COMPARED_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
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
            rule_match(&routes, text, from).map(|(r, rule)| (r.name.clone(), rule))
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
