//! Built-in transform and extract.
//!
//! - `payload_shaping` (or any transform with a `shapingSchema`): the JMESPath-subset
//!   expression of [`crate::shaping`] applied to the JSON input (a document input is seen as
//!   [`super::document_value`]).
//! - Otherwise, with an `outputSchema`: schema-guided extraction ([`super::extract`]), then
//!   validation against the schema.
//! - Without either, the input comes out as JSON (JSON unchanged, a document as
//!   [`super::document_value`]).

use super::extract::{extract as extract_values, Source};
use super::{output_schema, payload_value, schema, setting, EngineError, Payload};
use crate::shaping;
use crate::versions::FunctionVersion;
use serde_json::Value;

pub fn run(function: &FunctionVersion, input: &Payload) -> Result<Value, EngineError> {
    if let Some(expression) = setting(function, "shapingSchema") {
        let expression = expression
            .as_str()
            .ok_or_else(|| super::invalid_config("shapingSchema must be a JMESPath expression (a string)"))?;
        let shaped = shaping::search(expression, &payload_value(input))?;
        schema::validate_optional(output_schema(function), &shaped)?;
        return Ok(shaped);
    }
    extract(function, input)
}

pub fn extract(function: &FunctionVersion, input: &Payload) -> Result<Value, EngineError> {
    let Some(schema) = output_schema(function) else { return Ok(payload_value(input)) };
    let output = extract_values(schema, &Source::of(input))?;
    schema::validate(schema, &output)?;
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::Document;
    use serde_json::json;

    fn transform(body: Value) -> FunctionVersion {
        FunctionVersion {
            function_id: "f".into(),
            function_name: "t".into(),
            version_num: 1,
            function_type: "transform".into(),
            body,
        }
    }

    #[test]
    fn without_a_schema_the_input_comes_out_as_json() {
        let document = Document {
            input_type: "text".into(),
            text: "hi".into(),
            pages: vec!["hi".into()],
            ..Document::default()
        };
        let output = run(&transform(json!({})), &Payload::Document(document)).unwrap();
        assert_eq!(output, json!({"inputType": "text", "text": "hi"}));
        assert_eq!(run(&transform(json!({})), &Payload::Json(json!([1]))).unwrap(), json!([1]));
    }

    #[test]
    fn a_shaping_schema_must_be_a_string() {
        let err =
            run(&transform(json!({"shapingSchema": {"a": "b"}})), &Payload::Json(json!({}))).unwrap_err();
        assert_eq!(err.kind, "invalid_config");
    }
}
