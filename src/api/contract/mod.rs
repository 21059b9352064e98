//! What the handlers' annotations cannot say, added to the generated OpenAPI document so it
//! is the contract the server keeps: the errors every keyed operation can answer, and the
//! bounds the handlers and services check (ranges, patterns, enums) on query parameters
//! (`parameters`) and request bodies (`bodies`), and how created resources are reached
//! (`links`). Schemathesis (scripts/schemathesis.sh) holds the server to the result.

mod bodies;
mod creates;
mod links;
mod parameters;

use serde_json::{json, Value};

/// Collection names: dot-separated segments of ASCII letters, digits and underscores, each
/// 1–256 long and not starting with a digit (`collections::names`).
pub(super) const COLLECTION_NAME: &str = r"^[A-Za-z_][A-Za-z0-9_]{0,255}(\.[A-Za-z_][A-Za-z0-9_]{0,255})*$";
/// Function and workflow names (`functions::validate`).
pub(super) const FUNCTION_NAME: &str = "^[A-Za-z0-9_-]{1,128}$";
/// Base64 as `base64`'s STANDARD engine decodes it: padded, and the last character before
/// the padding without stray low bits (`AB==` is refused, `AA==` taken).
pub(super) const BASE64: &str =
    "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$";
/// An input type by any of its names, in any case (`engines::supported_input_type`; the
/// server also trims spaces around it, which the document leaves unsaid).
pub(super) fn input_type_pattern(optional: bool) -> String {
    let any_case = |name: &str| -> String {
        name.chars().map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())).collect()
    };
    let names: Vec<String> =
        crate::engines::INPUT_TYPE_NAMES.iter().map(|(name, _)| any_case(name)).collect();
    format!("^(?:{}){}$", names.join("|"), if optional { "?" } else { "" })
}

/// Some character other than white space: the service trims, then requires a value.
pub(super) const NOT_BLANK: &str = r"\S";
/// Text the service takes: no control characters but tab and newline (`text::check`; Unicode's
/// Cc category, as `char::is_control`).
pub(super) const NO_CONTROLS: &str = r"^[^\u0000-\u0008\u000B-\u001F\u007F-\u009F]*$";

/// The generated document with the contract's remaining terms added.
pub fn complete(mut doc: Value) -> Value {
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for (path, item) in paths.iter_mut() {
            let keyed = path.starts_with("/v3/") || path.starts_with("/v1-alpha/");
            for operation in item.as_object_mut().into_iter().flat_map(|m| m.values_mut()) {
                if keyed {
                    add_common_errors(operation);
                }
                for parameter in
                    operation.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten()
                {
                    parameters::constrain(path, parameter);
                }
            }
        }
    }
    bodies::constrain(&mut doc);
    creates::add(&mut doc);
    links::add(&mut doc);
    doc
}

/// 401 (no or unknown key), 429 (the key's rate limit), 503 (a store busy or unreachable:
/// retry after Retry-After seconds) and, with parameters or a body, 400
/// (a value that does not parse, a repeated single-valued parameter, a control character in
/// a path segment…).
fn add_common_errors(operation: &mut Value) {
    let has_body = operation.get("requestBody").is_some();
    let has_input = has_body
        || operation["parameters"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["in"] == "query" || p["in"] == "path"));
    let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut) else {
        return;
    };
    let error = |description: &str| {
        json!({ "description": description,
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ErrorBody" } } } })
    };
    responses.entry("401").or_insert_with(|| error("no API key, or an unknown or revoked one"));
    responses
        .entry("429")
        .or_insert_with(|| error("the API key's rate limit is exceeded; retry after Retry-After seconds"));
    responses.entry("503").or_insert_with(|| {
        error("a store is busy or unreachable right now; retry after Retry-After seconds")
    });
    if has_input {
        responses
            .entry("400")
            .or_insert_with(|| error("a parameter or the body is invalid; the message names the field"));
    }
    if has_body {
        responses.entry("413").or_insert_with(|| {
            error("the body is larger than the server takes (see the README's input limits)")
        });
    }
}

/// Whether `schema` is of type `kind`, nullable or not (`"string"` or `["string", "null"]`).
pub(super) fn has_type(schema: &Value, kind: &str) -> bool {
    let types = &schema["type"];
    types == kind || types.as_array().is_some_and(|types| types.iter().any(|t| t == kind))
}

/// A string matching `pattern` (which does not hold the whole text) and, like every tenant
/// text, without control characters: JSON Schema takes one `pattern` per schema, so the
/// second goes in an `allOf`.
pub(super) fn text_with(pattern: &str) -> Value {
    json!({ "pattern": pattern, "allOf": [{ "pattern": NO_CONTROLS }] })
}

pub(super) fn review_statuses() -> Vec<&'static str> {
    crate::graph::review::STATUSES.to_vec()
}

/// Adds `rule`'s keys to `target` (an object schema), or to the non-null branch of an
/// `Option`'s `oneOf` (a value or null). Any other `oneOf` (exactly one of several shapes)
/// takes the rule beside it, for every branch alike.
pub(super) fn merge(target: &mut Value, rule: Value) {
    if let Some(branches) = target.get_mut("oneOf").and_then(Value::as_array_mut) {
        let nulls = branches.iter().filter(|b| b["type"] == "null").count();
        if let (2, 1) = (branches.len(), nulls) {
            if let Some(branch) = branches.iter_mut().find(|b| b["type"] != "null") {
                return merge(branch, rule);
            }
        }
    }
    if let (Some(target), Value::Object(rule)) = (target.as_object_mut(), rule) {
        target.extend(rule);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_goes_into_an_option_s_value_and_beside_a_choice_of_shapes() {
        let mut option = json!({"oneOf": [{"type": "null"}, {"type": "string"}]});
        merge(&mut option, json!({"maxLength": 5}));
        assert_eq!(option, json!({"oneOf": [{"type": "null"}, {"type": "string", "maxLength": 5}]}));
        let shapes = json!({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]});
        let mut choice = shapes.clone();
        merge(&mut choice, json!({"minProperties": 1}));
        assert_eq!(choice, json!({"oneOf": shapes["oneOf"], "minProperties": 1}));
    }
}
