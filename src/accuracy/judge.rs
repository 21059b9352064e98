//! The language-model judge: when the event's function runs on a model (`extraConfig.llm`),
//! an evaluation also asks that model, in one request, whether each extracted field is what
//! the document says. Its verdict is a fourth check of [`super::checks`] (weight 0.4); a field
//! it calls wrong is `flagged`.
//!
//! The judge is advice, not a gate: when the model cannot be reached or answers something
//! other than the verdict schema, the evaluation still completes on canon's own checks and
//! says `judge: {status: "unavailable", error}`. It costs one more model request per
//! evaluated event, billed to the tenant's own model key.

use crate::engines::llm::{chat_json, LlmConfig, MAX_PROMPT_DOCUMENT_CHARS};
use crate::engines::{Context, EngineError};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The judge's verdict on one field.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub correct: bool,
    pub reason: String,
}

/// What the judge said about an output.
#[derive(Debug)]
pub enum Judgement {
    /// No model is configured for the function.
    NotConfigured,
    /// Verdicts by field path (a field the model did not mention has none).
    Judged { model: String, verdicts: BTreeMap<String, Verdict> },
    /// The model failed or answered off-schema; the other checks stand.
    Unavailable { model: String, error: String },
}

impl Judgement {
    pub fn verdict(&self, path: &str) -> Option<&Verdict> {
        match self {
            Self::Judged { verdicts, .. } => verdicts.get(path),
            Self::NotConfigured | Self::Unavailable { .. } => None,
        }
    }

    /// The `judge` member of an evaluation result.
    pub fn summary(&self) -> Value {
        match self {
            Self::NotConfigured => json!({ "status": "not_configured" }),
            Self::Judged { model, verdicts } => {
                json!({ "status": "judged", "model": model, "fieldsJudged": verdicts.len() })
            }
            Self::Unavailable { model, error } => {
                json!({ "status": "unavailable", "model": model, "error": error })
            }
        }
    }
}

const INSTRUCTIONS: &str = "You check data extracted from a document. For each field, decide whether \
the value is what the document states for that field. Answer `correct: false` when the document \
does not say it or says something else, with a short reason.";

fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"fields": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "path": {"type": "string"}, "correct": {"type": "boolean"}, "reason": {"type": "string"}
            },
            "required": ["path", "correct", "reason"],
            "additionalProperties": false
        }}},
        "required": ["fields"],
        "additionalProperties": false
    })
}

/// Asks `model` about every field of `fields` (JSON-pointer paths to leaf values).
pub async fn judge(
    model: &LlmConfig,
    fields: &BTreeMap<String, Value>,
    document_text: &str,
    context: &Context,
) -> Judgement {
    let text: String = document_text.chars().take(MAX_PROMPT_DOCUMENT_CHARS).collect();
    let listing: Vec<Value> =
        fields.iter().map(|(path, value)| json!({ "path": path, "value": value })).collect();
    let content = format!(
        "Document:\n\n{text}\n\nExtracted fields:\n{}",
        serde_json::to_string_pretty(&listing).unwrap_or_default()
    );
    let answer =
        chat_json(model, INSTRUCTIONS, Value::String(content), "verdicts", &verdict_schema(), context)
            .await
            .and_then(|answer| verdicts(&answer, fields));
    match answer {
        Ok(verdicts) => Judgement::Judged { model: model.model.clone(), verdicts },
        Err(err) => Judgement::Unavailable { model: model.model.clone(), error: err.message },
    }
}

/// The verdicts of an answer, keeping only paths that were asked about.
fn verdicts(
    answer: &Value,
    fields: &BTreeMap<String, Value>,
) -> Result<BTreeMap<String, Verdict>, EngineError> {
    let off_schema = || EngineError::new("model_error", "the judge's answer is not a list of field verdicts");
    let items = answer.get("fields").and_then(Value::as_array).ok_or_else(off_schema)?;
    let mut out = BTreeMap::new();
    for item in items {
        let (Some(path), Some(correct)) =
            (item.get("path").and_then(Value::as_str), item.get("correct").and_then(Value::as_bool))
        else {
            return Err(off_schema());
        };
        if fields.contains_key(path) {
            let reason = item.get("reason").and_then(Value::as_str).unwrap_or_default();
            out.insert(path.to_string(), Verdict { correct, reason: reason.chars().take(500).collect() });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_keep_only_the_fields_asked_about_and_refuse_an_off_schema_answer() {
        let fields = BTreeMap::from([("/a".to_string(), json!(1)), ("/b".to_string(), json!("x"))]);
        let answer = json!({"fields": [
            {"path": "/a", "correct": true, "reason": "stated"},
            {"path": "/zzz", "correct": false, "reason": "invented path"}]});
        let got = verdicts(&answer, &fields).unwrap();
        assert_eq!(got.len(), 1);
        assert!(got["/a"].correct);
        assert!(verdicts(&json!({"invoiceNumber": "INV-1"}), &fields).is_err());
        assert!(verdicts(&json!({"fields": [{"path": "/a"}]}), &fields).is_err());
    }
}
