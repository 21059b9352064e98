//! Output validation against a function's `outputSchema` (JSON Schema, draft detected by
//! the `jsonschema` crate). A violation is an `output_schema` error whose message starts
//! with "outputSchema constraint violation: " and lists up to five problems, each with the
//! JSON pointer of the offending value.

use super::EngineError;
use serde_json::Value;

const MAX_LISTED: usize = 5;

pub fn validate(schema: &Value, output: &Value) -> Result<(), EngineError> {
    let validator = crate::functions::schema_patterns::validator(schema).map_err(|err| {
        EngineError::new("invalid_config", format!("outputSchema is not a valid JSON Schema: {err}"))
    })?;
    crate::functions::schema_patterns::keys_within(schema, output).map_err(|why| {
        EngineError::new("output_schema", format!("outputSchema constraint violation: {why}"))
    })?;
    let problems: Vec<String> = validator
        .iter_errors(output)
        .take(MAX_LISTED)
        .map(|err| {
            let path = err.instance_path.as_str();
            if path.is_empty() {
                err.to_string()
            } else {
                format!("{path}: {err}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(EngineError::new(
            "output_schema",
            format!("outputSchema constraint violation: {}", problems.join("; ")),
        ))
    }
}

/// Validates when the function has an `outputSchema`.
pub fn validate_optional(schema: Option<&Value>, output: &Value) -> Result<(), EngineError> {
    match schema {
        Some(schema) => validate(schema, output),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn violations_name_the_constraint_and_the_place() {
        let schema = json!({
            "type": "object",
            "properties": {"total": {"type": "number"}, "id": {"type": "string"}},
            "required": ["id"]
        });
        assert!(validate(&schema, &json!({"id": "a", "total": 3})).is_ok());
        let err = validate(&schema, &json!({"total": "three"})).unwrap_err();
        assert_eq!(err.kind, "output_schema");
        assert!(err.message.starts_with("outputSchema constraint violation: "), "{}", err.message);
        assert!(err.message.contains("/total"), "{}", err.message);
        assert!(err.message.contains("\"id\" is a required property"), "{}", err.message);
    }

    #[test]
    fn a_broken_schema_is_a_configuration_error() {
        let err = validate(&json!({"type": "nonsense"}), &json!(1)).unwrap_err();
        assert_eq!(err.kind, "invalid_config");
    }
}
