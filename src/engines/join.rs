//! Join (`joinType: "standard"`): merges the outputs of the upstream runs, in the order
//! they finished.
//!
//! Objects are merged key by key: a later scalar replaces an earlier one, nested objects
//! merge recursively, arrays are concatenated (line items of several pages add up). The
//! result also lists every upstream output under `items`, unless a merged output already
//! has an `items` key. A non-object output only appears in `items`. With an `outputSchema`
//! the result is validated against it (declare `items` if the schema is closed).
//!
//! The `JoinEvent` fields (`joinType`, and `items` as `{itemOffset, itemCount,
//! itemReferenceID}`) are the executor's: it knows the item references.

use super::{output_schema, schema, EngineError};
use crate::versions::FunctionVersion;
use serde_json::{Map, Value};

pub fn run(function: &FunctionVersion, inputs: &[Value]) -> Result<Value, EngineError> {
    let output = merge_all(inputs);
    schema::validate_optional(output_schema(function), &output)?;
    Ok(output)
}

pub fn merge_all(inputs: &[Value]) -> Value {
    let mut merged = Map::new();
    for input in inputs {
        if let Value::Object(object) = input {
            merge_into(&mut merged, object);
        }
    }
    merged.entry("items").or_insert_with(|| Value::Array(inputs.to_vec()));
    Value::Object(merged)
}

fn merge_into(target: &mut Map<String, Value>, source: &Map<String, Value>) {
    for (key, value) in source {
        if value.is_null() && target.contains_key(key) {
            continue;
        }
        match (target.get_mut(key), value) {
            (Some(Value::Object(existing)), Value::Object(incoming)) => merge_into(existing, incoming),
            (Some(Value::Array(existing)), Value::Array(incoming)) => {
                existing.extend(incoming.iter().cloned())
            }
            _ => {
                target.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_merge_key_by_key_and_arrays_concatenate() {
        let inputs = [
            json!({"invoice": {"number": "7"}, "lines": [1], "total": 1, "note": "a"}),
            json!({"invoice": {"date": "2024-01-05"}, "lines": [2, 3], "total": 5, "note": null}),
            json!("plain"),
        ];
        let merged = merge_all(&inputs);
        assert_eq!(merged["invoice"], json!({"number": "7", "date": "2024-01-05"}));
        assert_eq!(merged["lines"], json!([1, 2, 3]));
        assert_eq!(merged["total"], json!(5));
        assert_eq!(merged["note"], json!("a"));
        assert_eq!(merged["items"], Value::Array(inputs.to_vec()));
    }
}
