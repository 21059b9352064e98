//! Analyze: document statistics plus schema-guided extraction.
//!
//! Output: the fields the `outputSchema` asks for (built-in extraction, or the language
//! model when `extraConfig.llm` is set), plus
//! `statistics: {pages, words, characters, lines, attachments?}` — `attachments` only for
//! e-mails; for JSON input the counts are over its pretty-printed text. `statistics` is left
//! out when the schema forbids extra properties (`additionalProperties: false`) without
//! declaring it; a schema property named `statistics` is always filled by the counts.
//! Without an `outputSchema` the output is just `{statistics}`. The whole output is then
//! validated against the schema.

use super::extract::{extract, Source};
use super::llm::{self, LlmConfig};
use super::{output_schema, schema, Context, Document, EngineError, Outcome, Payload};
use crate::versions::FunctionVersion;
use serde_json::{json, Map, Value};

pub fn run(function: &FunctionVersion, input: &Payload) -> Result<Outcome, EngineError> {
    let fields = match output_schema(function) {
        Some(schema) => extract(schema, &Source::of(input))?,
        None => Value::Object(Map::new()),
    };
    finish(function, input, fields)
}

pub async fn run_with_model(
    model: &LlmConfig,
    function: &FunctionVersion,
    input: &Payload,
    context: &Context,
) -> Result<Outcome, EngineError> {
    let fields = match output_schema(function) {
        Some(_) => llm::extract(model, function, input, context).await?,
        None => Value::Object(Map::new()),
    };
    crate::cpu::blocking(|| finish(function, input, fields))
}

fn finish(function: &FunctionVersion, input: &Payload, fields: Value) -> Result<Outcome, EngineError> {
    let schema = output_schema(function);
    let mut output = match fields {
        Value::Object(map) => map,
        other => Map::from_iter([("fields".to_string(), other)]),
    };
    let declared = schema.and_then(|s| s.pointer("/properties/statistics")).is_some();
    let closed = schema.and_then(|s| s.get("additionalProperties")) == Some(&Value::Bool(false));
    if declared || !closed {
        output.insert("statistics".into(), statistics(input));
    }
    let output = Value::Object(output);
    schema::validate_optional(schema, &output)?;
    Ok(Outcome::Output(output))
}

/// Pages, words, characters and lines of the input (and attachments of an e-mail).
pub fn statistics(input: &Payload) -> Value {
    match input {
        Payload::Document(document) => document_statistics(document),
        Payload::Json(value) => {
            let text = serde_json::to_string_pretty(value).unwrap_or_default();
            text_statistics(&text, 1)
        }
    }
}

fn document_statistics(document: &Document) -> Value {
    let mut stats = text_statistics(&document.text, document.pages.len().max(1));
    if document.email.is_some() {
        stats["attachments"] = json!(document.attachments.len());
    }
    stats
}

fn text_statistics(text: &str, pages: usize) -> Value {
    json!({
        "pages": pages,
        "words": text.split_whitespace().count(),
        "characters": text.chars().count(),
        "lines": text.lines().count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_words_lines_and_pages() {
        let document = Document {
            input_type: "pdf".into(),
            text: "Hello world\nsecond line here".into(),
            pages: vec!["Hello world".into(), "second line here".into()],
            ..Document::default()
        };
        assert_eq!(
            statistics(&Payload::Document(document)),
            json!({"pages": 2, "words": 5, "characters": 28, "lines": 2})
        );
    }
}
