//! Enrich: `config.steps` (the SDK's `EnrichStep`), run in order on the JSON input.
//!
//! For a step with `source: "collection"` (the default): the values at `sourceField`
//! (JMESPath subset) are each searched in `collectionName` (`searchMode` semantic | exact |
//! hybrid, `topK` from 1 to 100, default 1, `includeSubcollections`, `scoreThreshold` as a maximum cosine
//! distance for semantic search, default 0.6), and the matches are written at `targetField`
//! (a dotted path of object keys, created as needed): an array
//! `[{id, data, rank, score?, scoreType?}]` best first — or, when `sourceField` yields an
//! array, one such array per value. `score`/`scoreType` only with `includeScore`: semantic
//! scores are cosine distances (`cosineDistance`, lower is better), hybrid and exact scores
//! the search's own (`hybridScore`, `exactScore`, higher is better).
//!
//! Not done: re-ranking by a language model (`rank` is the retrieval order, `confidence` is
//! never set) and `source: "endpoint"` steps (an `unsupported` error).

use super::{invalid_config, payload_value, setting, shaping, Context, EngineError, Payload};
use crate::collections::{SearchMode, SearchRequest};
use crate::versions::FunctionVersion;
use serde_json::{json, Map, Value};

const DEFAULT_DISTANCE: f64 = 0.6;
/// What a step's `topK` may be.
const TOP_K: std::ops::RangeInclusive<u64> = 1..=100;

/// A step's option: absent or null is `None`; given, it must read as `read` reads it (a
/// `topK` of `"5"` or `500` fails the call naming the option, where it silently became 1 or
/// 100).
fn option<T>(
    step: &Value,
    index: usize,
    name: &str,
    what: &str,
    read: impl Fn(&Value) -> Option<T>,
) -> Result<Option<T>, EngineError> {
    match step.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => read(value).map(Some).ok_or_else(|| {
            invalid_config(format!("enrich step {index}: {name} must be {what} (got {value})"))
        }),
    }
}

pub async fn run(
    function: &FunctionVersion,
    input: &Payload,
    context: &Context,
) -> Result<Value, EngineError> {
    let steps = setting(function, "config")
        .and_then(|c| c.get("steps"))
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid_config("enrich needs `config.steps`"))?;
    let mut document = payload_value(input);
    for (index, step) in steps.iter().enumerate() {
        let text = |name: &str| step.get(name).and_then(Value::as_str).filter(|s| !s.is_empty());
        match text("source").unwrap_or("collection") {
            "collection" => {}
            "endpoint" => {
                return Err(EngineError::new(
                    "unsupported",
                    format!(
                        "enrich step {index}: endpoint sources are not supported; use source \"collection\""
                    ),
                ))
            }
            other => return Err(invalid_config(format!("enrich step {index}: unknown source {other:?}"))),
        }
        let source_field = text("sourceField")
            .ok_or_else(|| invalid_config(format!("enrich step {index} needs `sourceField`")))?;
        let target_field = text("targetField")
            .ok_or_else(|| invalid_config(format!("enrich step {index} needs `targetField`")))?;
        let collection = text("collectionName")
            .ok_or_else(|| invalid_config(format!("enrich step {index} needs `collectionName`")))?;
        let mode = match text("searchMode").unwrap_or("semantic") {
            "semantic" => SearchMode::Semantic,
            "exact" => SearchMode::Exact,
            "hybrid" => SearchMode::Hybrid,
            other => {
                return Err(invalid_config(format!("enrich step {index}: unknown searchMode {other:?}")))
            }
        };
        let top_k = |v: &Value| crate::wire::whole_u64_of(v).filter(|k| TOP_K.contains(k));
        let flag = |name: &str| option(step, index, name, "true or false", Value::as_bool);
        let search = Search {
            collection,
            mode,
            top_k: option(step, index, "topK", "a whole number from 1 to 100", top_k)?.unwrap_or(1) as usize,
            include_subcollections: flag("includeSubcollections")?.unwrap_or(false),
            max_distance: option(step, index, "scoreThreshold", "a number", Value::as_f64)?
                .unwrap_or(DEFAULT_DISTANCE),
            include_score: flag("includeScore")?.unwrap_or(false),
        };
        let enriched = match shaping::search(source_field, &document)? {
            Value::Null => Value::Array(Vec::new()),
            Value::Array(values) => {
                let mut per_value = Vec::with_capacity(values.len());
                for value in &values {
                    per_value.push(search.run(value, context).await?);
                }
                Value::Array(per_value)
            }
            value => search.run(&value, context).await?,
        };
        set_path(&mut document, target_field, enriched)?;
    }
    Ok(document)
}

struct Search<'a> {
    collection: &'a str,
    mode: SearchMode,
    top_k: usize,
    include_subcollections: bool,
    max_distance: f64,
    include_score: bool,
}

impl Search<'_> {
    async fn run(&self, value: &Value, context: &Context) -> Result<Value, EngineError> {
        let query = match value {
            Value::String(s) => s.clone(),
            Value::Null => return Ok(Value::Array(Vec::new())),
            other => other.to_string(),
        };
        if query.trim().is_empty() {
            return Ok(Value::Array(Vec::new()));
        }
        let request = SearchRequest {
            collection_name: self.collection.to_string(),
            query,
            mode: self.mode,
            include_subcollections: self.include_subcollections,
            limit: self.top_k,
            // Our semantic scores are cosine similarities: distance d ⇔ similarity 1 − d.
            score_threshold: (self.mode == SearchMode::Semantic).then_some((1.0 - self.max_distance) as f32),
            filter: Map::new(),
        };
        let results = context.collections.search(&context.tenant, request).await.map_err(|err| {
            EngineError::new("search_error", format!("collection {}: {err}", self.collection))
        })?;
        let matches = results
            .results
            .iter()
            .enumerate()
            .map(|(i, hit)| {
                let mut entry =
                    json!({"id": hit.item.collection_item_id, "data": hit.item.data, "rank": i + 1});
                if self.include_score {
                    let (score, kind) = match self.mode {
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
        Ok(Value::Array(matches))
    }
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
    fn target_paths_create_objects() {
        let mut document = json!({"a": {"keep": 1}});
        set_path(&mut document, "a.b.c", json!([1])).unwrap();
        assert_eq!(document, json!({"a": {"keep": 1, "b": {"c": [1]}}}));
        assert_eq!(set_path(&mut document, "a.keep.x", json!(1)).unwrap_err().kind, "invalid_config");
    }
}
