//! Enrich: `config.steps` (the SDK's `EnrichStep`), run in order on the JSON input.
//!
//! Each step (read by `functions::type_settings::enrich`, which says what its options may
//! be): the values at `sourceField` (JMESPath subset) are each searched in `collectionName`,
//! and the matches are written at `targetField` (a dotted path of object keys, created as
//! needed): an array
//! `[{id, data, rank, score?, scoreType?}]` best first — or, when `sourceField` yields an
//! array, one such array per value. `score`/`scoreType` only with `includeScore`: semantic
//! scores are cosine distances (`cosineDistance`, lower is better), hybrid and exact scores
//! the search's own (`hybridScore`, `exactScore`, higher is better).
//!
//! Bounded per call: at most [`MAX_SEARCHES`] searches over all steps, and at most
//! [`MAX_ADDED_BYTES`] of matches (serialized) written: a `sourceField` selecting 100,000
//! values searched each, `topK` items of up to 2 MB each, would have built terabytes. Past
//! either the call fails (`input_limit`) naming it.
//!
//! Not done: re-ranking by a language model (`rank` is the retrieval order, `confidence` is
//! never set) and `source: "endpoint"` steps (an `unsupported` error).

use super::{invalid_config, payload_value, setting, Context, EngineError, Payload};
use crate::collections::{SearchMode, SearchRequest};
use crate::functions::type_settings::enrich::{self, Step};
use crate::shaping;
use crate::versions::FunctionVersion;
use serde_json::{json, Map, Value};

/// Searches one call's steps make together.
pub const MAX_SEARCHES: usize = 1_000;
/// Bytes of matches (serialized) one call writes into its document.
pub const MAX_ADDED_BYTES: usize = 64 * 1024 * 1024;

/// What a call's steps have spent of the bounds.
#[derive(Default)]
struct Spent {
    searches: usize,
    bytes: usize,
}

impl Spent {
    fn search(&mut self) -> Result<(), EngineError> {
        self.searches += 1;
        if self.searches > MAX_SEARCHES {
            return Err(super::limits::exceeded(
                "the enrich steps search more values than a call may",
                format!(
                    "{MAX_SEARCHES} searches a call (enrichSearches); select fewer values with sourceField"
                ),
            ));
        }
        Ok(())
    }

    fn add(&mut self, matches: &Value) -> Result<(), EngineError> {
        self.bytes += crate::json_size::json_bytes(matches);
        if self.bytes > MAX_ADDED_BYTES {
            return Err(super::limits::exceeded(
                "the matches the enrich steps add are larger than a call may add",
                format!(
                    "{} MiB a call (enrichedBytes); lower topK or select fewer values",
                    MAX_ADDED_BYTES / (1024 * 1024)
                ),
            ));
        }
        Ok(())
    }
}

pub async fn run(
    function: &FunctionVersion,
    input: &Payload,
    context: &Context,
) -> Result<Value, EngineError> {
    let steps = enrich::steps(setting(function, "config"))?;
    let mut document = payload_value(input);
    let mut spent = Spent::default();
    for step in &steps {
        let enriched = match shaping::search(step.source_field, &document)? {
            Value::Null => Value::Array(Vec::new()),
            Value::Array(values) => {
                let mut per_value = Vec::with_capacity(values.len());
                for value in &values {
                    per_value.push(search(step, value, context, &mut spent).await?);
                }
                Value::Array(per_value)
            }
            value => search(step, &value, context, &mut spent).await?,
        };
        set_path(&mut document, step.target_field, enriched)?;
    }
    Ok(document)
}

/// A step's search, run on each value its `sourceField` selects.
async fn search(
    step: &Step<'_>,
    value: &Value,
    context: &Context,
    spent: &mut Spent,
) -> Result<Value, EngineError> {
    let query = match value {
        Value::String(s) => s.clone(),
        Value::Null => return Ok(Value::Array(Vec::new())),
        other => other.to_string(),
    };
    if query.trim().is_empty() {
        return Ok(Value::Array(Vec::new()));
    }
    spent.search()?;
    let request = SearchRequest {
        collection_name: step.collection.to_string(),
        query,
        mode: step.mode,
        include_subcollections: step.include_subcollections,
        limit: step.top_k,
        // Our semantic scores are cosine similarities: distance d ⇔ similarity 1 − d.
        score_threshold: (step.mode == SearchMode::Semantic).then_some((1.0 - step.max_distance) as f32),
        filter: Map::new(),
    };
    let results =
        context.collections.search(&context.tenant, request).await.map_err(|err| {
            EngineError::new("search_error", format!("collection {}: {err}", step.collection))
        })?;
    let matches = results
        .results
        .iter()
        .enumerate()
        .map(|(i, hit)| {
            let mut entry = json!({"id": hit.item.collection_item_id, "data": hit.item.data, "rank": i + 1});
            if step.include_score {
                let (score, kind) = match step.mode {
                    SearchMode::Semantic => (1.0 - f64::from(hit.score), "cosineDistance"),
                    SearchMode::Hybrid => (f64::from(hit.score), "hybridScore"),
                    SearchMode::Exact => (f64::from(hit.score), "exactScore"),
                };
                entry["score"] = json!((score * 10_000.0).round() / 10_000.0);
                entry["scoreType"] = json!(kind);
            }
            entry
        })
        .collect();
    let matches = Value::Array(matches);
    spent.add(&matches)?;
    Ok(matches)
}

/// Writes `value` at a dotted path of object keys, creating objects on the way.
pub fn set_path(document: &mut Value, path: &str, value: Value) -> Result<(), EngineError> {
    let mut current = document;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            return Err(invalid_config(format!("targetField {path:?} has an empty part")));
        }
        if current.is_null() {
            *current = Value::Object(Map::new());
        }
        let Value::Object(map) = current else {
            return Err(invalid_config(format!("targetField {path:?}: {part:?} is inside a non-object")));
        };
        if i == parts.len() - 1 {
            map.insert(part.to_string(), value);
            return Ok(());
        }
        current = map.entry(part.to_string()).or_insert(Value::Null);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calls_searches_and_added_bytes_are_bounded() {
        let mut spent = Spent::default();
        for _ in 0..MAX_SEARCHES {
            spent.search().unwrap();
        }
        let err = spent.search().unwrap_err();
        assert_eq!(err.kind, "input_limit");
        assert!(err.message.contains("1000 searches a call"), "{}", err.message);
        let mut spent = Spent::default();
        let big = json!([{"data": "x".repeat(MAX_ADDED_BYTES / 2)}]);
        spent.add(&big).unwrap();
        let err = spent.add(&big).unwrap_err();
        assert!(err.message.contains("64 MiB a call"), "{}", err.message);
    }

    #[test]
    fn target_paths_create_objects() {
        let mut document = json!({"a": {"keep": 1}});
        set_path(&mut document, "a.b.c", json!([1])).unwrap();
        assert_eq!(document, json!({"a": {"keep": 1, "b": {"c": [1]}}}));
        assert_eq!(set_path(&mut document, "a.keep.x", json!(1)).unwrap_err().kind, "invalid_config");
    }
}
