//! Refinement of an inferred schema by a language model, when the operator configured one
//! (`CANON_INFER_SCHEMA_LLM_URL`, `_MODEL`, `_API_KEY`, `_TIMEOUT_SECONDS`).
//!
//! The model sees the document text (first 24,000 characters) and the schema canon inferred
//! without it, and answers a better schema and description. Its schema is kept only when it
//! is a valid JSON Schema of an object with properties; otherwise — or when the model fails
//! — the inferred schema is answered unchanged and `refinement` says why. The result is
//! never worse than the inference alone, only slower (one model request).

use super::infer::Analysis;
use crate::engines::llm::{chat_json, LlmConfig, MAX_PROMPT_DOCUMENT_CHARS};
use crate::engines::{Context, Document};
use serde_json::{json, Value};

const INSTRUCTIONS: &str = "You design JSON Schemas for extracting data from documents like the one \
given. Improve the inferred schema: clear camelCase property names, a description on every \
property, the right types and formats, fields the inference missed. Answer the whole schema \
as a JSON string in `schemaJSON` (an object schema with `properties`) and a one-sentence \
`description` of the document.";

fn answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"schemaJSON": {"type": "string"}, "description": {"type": "string"}},
        "required": ["schemaJSON", "description"],
        "additionalProperties": false
    })
}

/// Asks `model` to refine `analysis` in place; returns the `refinement` record.
pub async fn refine(
    model: &LlmConfig,
    document: &Document,
    analysis: &mut Analysis,
    context: &Context,
) -> Value {
    let text: String = document.text.chars().take(MAX_PROMPT_DOCUMENT_CHARS).collect();
    let content = format!(
        "Document ({}):\n\n{text}\n\nInferred schema:\n{}",
        document.input_type,
        serde_json::to_string_pretty(&analysis.schema).unwrap_or_default()
    );
    let answer = match chat_json(
        model,
        INSTRUCTIONS,
        Value::String(content),
        "refined_schema",
        &answer_schema(),
        context,
    )
    .await
    {
        Ok(answer) => answer,
        Err(err) => return json!({ "status": "failed", "model": model.model, "error": err.message }),
    };
    match accepted(&answer) {
        Ok(schema) => {
            analysis.schema = schema;
            if let Some(description) = answer["description"].as_str().map(str::trim).filter(|d| !d.is_empty())
            {
                analysis.description = description.chars().take(1000).collect();
            }
            json!({ "status": "refined", "model": model.model })
        }
        Err(reason) => json!({ "status": "rejected", "model": model.model, "reason": reason }),
    }
}

/// The model's schema, when it is one canon can use as an `outputSchema`.
fn accepted(answer: &Value) -> Result<Value, String> {
    let text = answer["schemaJSON"].as_str().ok_or("the answer has no schemaJSON")?;
    let schema: Value = serde_json::from_str(text).map_err(|err| format!("schemaJSON is not JSON: {err}"))?;
    let has_properties = schema.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
    if schema.get("type").and_then(Value::as_str) != Some("object") || !has_properties {
        return Err("schemaJSON is not an object schema with properties".into());
    }
    crate::functions::schema_patterns::validator(&schema)
        .map_err(|err| format!("schemaJSON is not a valid JSON Schema: {err}"))?;
    Ok(schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_valid_object_schema_is_accepted() {
        let good = json!({"type": "object", "properties": {"total": {"type": "number"}}});
        assert_eq!(accepted(&json!({"schemaJSON": good.to_string()})).unwrap(), good);
        assert!(accepted(&json!({"schemaJSON": "not json"})).unwrap_err().contains("not JSON"));
        assert!(accepted(&json!({"schemaJSON": "{\"type\": \"string\"}"})).is_err());
        let broken = json!({"type": "object", "properties": {"a": {"type": 7}}});
        assert!(accepted(&json!({"schemaJSON": broken.to_string()}))
            .unwrap_err()
            .contains("valid JSON Schema"));
    }
}
