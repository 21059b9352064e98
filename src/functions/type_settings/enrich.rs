//! An enrich function's `config.steps` (bem-sdk's `EnrichStep`), as saving a version checks
//! them and `engines::enrich` runs them.
//!
//! A step: `source` `collection` (the default; `endpoint` is bem's and not supported here:
//! it is kept on save and fails the call as unsupported), `sourceField` (JMESPath subset) and
//! `targetField` (a dotted path), `collectionName`, `searchMode` semantic | exact | hybrid
//! (default semantic), `topK` 1 to 100 (default 1), `includeSubcollections`, `scoreThreshold`
//! (a semantic search's largest cosine distance, default 0.6) and `includeScore`. An option
//! given as another type, or out of its bounds, is refused: it silently became the default.

use super::{expression_at, invalid, option, SettingError};
use crate::collections::SearchMode;
use serde_json::Value;
use std::ops::RangeInclusive;

/// What a step's `topK` may be.
pub const TOP_K: RangeInclusive<u64> = 1..=100;
/// A semantic search's largest cosine distance when a step gives no `scoreThreshold`.
pub const DEFAULT_DISTANCE: f64 = 0.6;

/// One step, read.
pub struct Step<'a> {
    pub source_field: &'a str,
    pub target_field: &'a str,
    pub collection: &'a str,
    pub mode: SearchMode,
    pub top_k: usize,
    pub include_subcollections: bool,
    pub max_distance: f64,
    pub include_score: bool,
}

/// The steps of `config` (the function's `config` setting), in order.
pub fn steps(config: Option<&Value>) -> Result<Vec<Step<'_>>, SettingError> {
    let steps = config
        .and_then(|c| c.get("steps"))
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("config.steps".into(), "must be a non-empty array of steps".into()))?;
    steps.iter().enumerate().map(|(index, step)| read(step, index)).collect()
}

fn read(step: &Value, index: usize) -> Result<Step<'_>, SettingError> {
    let field = |name: &str| format!("config.steps[{index}].{name}");
    if !step.is_object() {
        return Err(invalid(format!("config.steps[{index}]"), "must be an object".into()));
    }
    let text = |name: &str| {
        option(step, &field(name), "a string", Value::as_str).map(|s| s.filter(|s| !s.is_empty()))
    };
    let required = |name: &str| text(name)?.ok_or_else(|| invalid(field(name), "is required".into()));
    match text("source")?.unwrap_or("collection") {
        "collection" => {}
        "endpoint" => {
            let message = "endpoint sources are not supported; use source \"collection\"".into();
            return Err(SettingError::Unsupported { field: field("source"), message });
        }
        other => return Err(invalid(field("source"), format!("must be collection (got {other:?})"))),
    }
    let mode = match text("searchMode")?.unwrap_or("semantic") {
        "semantic" => SearchMode::Semantic,
        "exact" => SearchMode::Exact,
        "hybrid" => SearchMode::Hybrid,
        other => {
            return Err(invalid(
                field("searchMode"),
                format!("must be semantic, exact or hybrid (got {other:?})"),
            ))
        }
    };
    let top_k = |v: &Value| crate::wire::whole_u64_of(v).filter(|k| TOP_K.contains(k));
    let flag = |name: &str| option(step, &field(name), "true or false", Value::as_bool);
    let source_field = required("sourceField")?;
    expression_at(&field("sourceField"), source_field)?;
    Ok(Step {
        source_field,
        target_field: required("targetField")?,
        collection: required("collectionName")?,
        mode,
        top_k: option(step, &field("topK"), "a whole number from 1 to 100", top_k)?.unwrap_or(1) as usize,
        include_subcollections: flag("includeSubcollections")?.unwrap_or(false),
        max_distance: option(step, &field("scoreThreshold"), "a number", Value::as_f64)?
            .unwrap_or(DEFAULT_DISTANCE),
        include_score: flag("includeScore")?.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(step: Value) -> (String, String) {
        match steps(Some(&json!({ "steps": [step] }))) {
            Err(SettingError::Invalid { field, message }) => (field, message),
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("taken"),
        }
    }

    #[test]
    fn a_step_is_read_with_its_defaults_and_a_bad_option_is_refused_by_its_path() {
        let step = json!({"sourceField": "a", "targetField": "b", "collectionName": "c", "topK": 3.0});
        let config = json!({ "steps": [step] });
        let read = steps(Some(&config)).unwrap();
        assert_eq!(
            (read[0].top_k, read[0].max_distance, read[0].include_score),
            (3, DEFAULT_DISTANCE, false)
        );
        assert!(read[0].mode == SearchMode::Semantic);
        let base = json!({"sourceField": "a", "targetField": "b", "collectionName": "c"});
        let with = |name: &str, value: Value| {
            let mut step = base.clone();
            step[name] = value;
            step
        };
        assert_eq!(refused(with("topK", json!(500))).0, "config.steps[0].topK");
        assert_eq!(refused(with("topK", json!("5"))).1, "must be a whole number from 1 to 100 (got \"5\")");
        assert_eq!(refused(with("includeScore", json!("true"))).0, "config.steps[0].includeScore");
        assert_eq!(refused(with("searchMode", json!("fuzzy"))).0, "config.steps[0].searchMode");
        assert_eq!(refused(with("sourceField", json!(""))).1, "is required");
        assert_eq!(refused(with("sourceField", json!("a[?b]"))).0, "config.steps[0].sourceField");
        assert_eq!(refused(json!([1])).0, "config.steps[0]");
        let endpoint = json!({"steps": [with("source", json!("endpoint"))]});
        assert!(matches!(steps(Some(&endpoint)), Err(SettingError::Unsupported { .. })));
        assert!(matches!(steps(Some(&json!({"steps": []}))), Err(SettingError::Invalid { .. })));
    }
}
