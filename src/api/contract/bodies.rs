//! Request bodies' bounds, patterns, enums and field combinations, as the services check them.

use super::{
    has_type, input_type_pattern, merge, review_statuses, text_with, BASE64, COLLECTION_NAME, FUNCTION_NAME,
    NOT_BLANK, NO_CONTROLS,
};
use crate::accuracy::{corrections, evaluations, regression, score};
use crate::collections::{MAX_ITEMS_PER_REQUEST, MAX_SEARCH_LIMIT, MAX_TEXTS_PER_COUNT};
use crate::datasets::{self, MAX_COLUMNS_PER_WRITE, MAX_ROWS_PER_BUILD};
use crate::delivery::subscriptions;
use crate::fs::request::{self as fs_request, Op, ALL_FIELDS};
use crate::functions::validate::FUNCTION_TYPES;
use crate::functions::workflows;
use crate::graph::undo::REOPEN_STATUSES;
use crate::graph::{buckets, entities, entity_types, merges, relations, seed};
use crate::{connectors, views};
use serde_json::{json, Map, Value};

/// Request text the service takes whatever it holds: a secret's value, texts to count tokens of.
const ANY_TEXT: &[(&str, &str)] = &[("RotateSecret", "value"), ("CountTokens", "texts")];

/// Request bodies: the rules below, exactly-one-of pairs, and control characters refused in
/// the text of schemas only requests reach.
pub(super) fn constrain(doc: &mut Value) {
    let request_only = request_only_schemas(doc);
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
    constrain_bodies(schemas);
    for name in request_only {
        if let Some(schema) = schemas.get_mut(&name) {
            refuse_controls_in_strings(schema);
        }
    }
    for (schema, property) in ANY_TEXT {
        if let Some(text) =
            schemas.get_mut(*schema).and_then(|s| s.pointer_mut(&format!("/properties/{property}")))
        {
            let text = if text.get("items").is_some() { &mut text["items"] } else { text };
            text.as_object_mut().map(|text| text.remove("pattern"));
        }
    }
}

/// Component schemas that request bodies reach and no response does (directly or through
/// other components): their text is tenant input, checked by `text::check`. A schema a
/// response shares is left alone, since stored text (a parsed document's) may hold controls.
fn request_only_schemas(doc: &Value) -> Vec<String> {
    let (mut requests, mut responses) = (Vec::new(), Vec::new());
    for item in doc["paths"].as_object().into_iter().flat_map(|paths| paths.values()) {
        for operation in item.as_object().into_iter().flat_map(|methods| methods.values()) {
            refs(&operation["requestBody"], &mut requests);
            refs(&operation["responses"], &mut responses);
        }
    }
    let (requests, responses) = (reachable(doc, requests), reachable(doc, responses));
    requests.into_iter().filter(|name| !responses.contains(name)).collect()
}

/// The component schemas `start` names and every one they name in turn.
fn reachable(doc: &Value, mut pending: Vec<String>) -> std::collections::BTreeSet<String> {
    let mut seen = std::collections::BTreeSet::new();
    while let Some(name) = pending.pop() {
        if seen.insert(name.clone()) {
            refs(&doc["components"]["schemas"][&name], &mut pending);
        }
    }
    seen
}

/// The component schema names `$ref`s inside `value` point at.
fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(name) =
                map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
            {
                out.push(name.to_string());
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// Adds [`NO_CONTROLS`] to every string of `schema` (its properties, their items and their
/// nullable branches) that states no format or enum of its own: as its pattern, or beside a
/// pattern that does not hold the whole text (`\S`: some character is not a space).
fn refuse_controls_in_strings(schema: &mut Value) {
    let text = has_type(schema, "string");
    let Some(map) = schema.as_object_mut() else { return };
    if text && !["format", "enum", "const", "allOf"].iter().any(|key| map.contains_key(*key)) {
        match map.get("pattern").and_then(Value::as_str) {
            None => {
                map.insert("pattern".into(), json!(NO_CONTROLS));
            }
            Some(own) if !(own.starts_with('^') && own.ends_with('$')) => {
                if let Value::Object(both) = text_with(own) {
                    map.extend(both);
                }
            }
            Some(_) => {}
        }
    }
    if let Some(properties) = map.get_mut("properties").and_then(Value::as_object_mut) {
        properties.values_mut().for_each(refuse_controls_in_strings);
    }
    if let Some(items) = map.get_mut("items") {
        refuse_controls_in_strings(items);
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(parts) = map.get_mut(key).and_then(Value::as_array_mut) {
            parts.iter_mut().for_each(refuse_controls_in_strings);
        }
    }
}

/// Bounds of request bodies, by component schema and property.
fn constrain_bodies(schemas: &mut Map<String, Value>) {
    for (schema, property, rule) in body_rules() {
        constrain_property(schemas, schema, property, rule);
    }
    // A function's reply carries its type's settings beside the common fields; the schema,
    // closed against drift, names them too.
    if let Some(properties) = schemas.get_mut("Function").and_then(|s| s["properties"].as_object_mut()) {
        properties.extend(crate::functions::service::settings_properties());
    }
    for (schema, fields, absent) in exactly_one_rules() {
        if let Some(target) = schemas.get_mut(schema) {
            merge(target, exactly_one_of(&fields, &absent));
        }
    }
    // An fs request: its op's own fields (`fs::request`); another op's is a 400 naming it.
    if let Some(target) = schemas.get_mut("FsRequest") {
        let branch = |op: Op| {
            let mut properties = Map::from_iter([("op".to_string(), json!({ "const": op.name() }))]);
            let others = ALL_FIELDS.iter().filter(|field| !op.fields().contains(field));
            properties.extend(others.map(|field| (field.to_string(), json!({ "type": "null" }))));
            let mut required = vec!["op"];
            if let Some(field) = op.required_field() {
                properties.insert(field.into(), json!({ "type": "string", "pattern": NOT_BLANK }));
                required.push(field);
            }
            json!({ "required": required, "properties": properties })
        };
        merge(target, json!({ "oneOf": Op::ALL.map(branch) }));
    }
    // A workflow node's function: by ID or by name, the ID first when both are given
    // (`functions::workflows`), so at least one of the two.
    if let Some(target) = schemas.get_mut("FunctionRef") {
        let given =
            |field: &str| json!({ "required": [field], "properties": { field: { "type": "string" } } });
        merge(target, json!({ "anyOf": [given("id"), given("name")] }));
    }
}

/// Schemas whose request takes exactly one of two fields, as the services read them
/// (`(Some, None) | (None, Some)`): (schema, each field with what it must be, what the
/// other must then be).
type ExactlyOne = (&'static str, [(&'static str, Value); 2], Value);
fn exactly_one_rules() -> Vec<ExactlyOne> {
    let null = json!({ "type": "null" });
    vec![
        // The two ways to send files.
        (
            "CallInput",
            [("singleFile", json!({ "type": "object" })), ("batchFiles", json!({ "type": "object" }))],
            null.clone(),
        ),
        (
            "ScoreRequest",
            [("pairs", json!({ "type": "array" })), ("datasetID", json!({ "type": "string" }))],
            null,
        ),
        // A view's function: by ID or by name (trimmed; blank is none).
        (
            "FunctionChoice",
            [
                ("id", json!({ "type": "string", "pattern": NOT_BLANK })),
                ("name", json!({ "type": "string", "pattern": NOT_BLANK })),
            ],
            json!({ "anyOf": [{ "type": "null" }, { "type": "string", "pattern": r"^\s*$" }] }),
        ),
    ]
}

/// `oneOf` branches, one per field: that field sent as `given` says, the others `absent`.
fn exactly_one_of(fields: &[(&str, Value)], absent: &Value) -> Value {
    let branches: Vec<Value> = fields
        .iter()
        .map(|(one, given)| {
            let properties: Map<String, Value> = fields
                .iter()
                .map(|(field, _)| {
                    (field.to_string(), if field == one { given.clone() } else { absent.clone() })
                })
                .collect();
            json!({ "required": [one], "properties": properties })
        })
        .collect();
    json!({ "oneOf": branches })
}

/// Each rule as (component schema, property, keys to add to the property's schema).
fn body_rules() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("FunctionInput", "functionName", json!({ "pattern": FUNCTION_NAME })),
        ("WorkflowInput", "name", json!({ "pattern": FUNCTION_NAME })),
        ("NodeInput", "name", json!({ "pattern": FUNCTION_NAME })),
        // Every op's largest page is the same today; an op's own is in its 400.
        ("FsRequest", "limit", json!({ "minimum": 1, "maximum": Op::max_limit() })),
        ("FsRequest", "n", json!({ "minimum": 1, "maximum": fs_request::MAX_HEAD })),
        ("FunctionRef", "versionNum", json!({ "minimum": 1 })),
        // The function scored: a name as functions are named (an empty one is a 400).
        ("ScoreRequest", "functionName", json!({ "pattern": FUNCTION_NAME })),
        // Optional on PATCH: null stays allowed.
        ("FunctionInput", "type", or_null(&FUNCTION_TYPES)),
        ("CreateBucket", "name", json!({ "pattern": NOT_BLANK, "maxLength": buckets::NAME_MAX })),
        ("CreateEntityType", "name", json!({ "pattern": NOT_BLANK, "maxLength": entity_types::NAME_MAX })),
        // An empty parentTypeID is a type without a parent, as the type's reply shows it.
        ("CreateEntityType", "parentTypeID", json!({ "pattern": "^(ety_[0-9A-Za-z]+)?$" })),
        ("BulkSeed", "onConflict", or_null(&["merge"])),
        ("BulkSeed", "entities", json!({ "minItems": 1, "maxItems": seed::MAX_ROWS })),
        ("BulkValidate", "status", json!({ "enum": entities::DECISIONS })),
        ("BulkValidateMatching", "status", json!({ "enum": entities::DECISIONS })),
        ("UpdateEntity", "status", or_null(&entities::DECISIONS)),
        ("ReopenEntity", "status", json!({ "enum": REOPEN_STATUSES })),
        // A file's content: a text-like type also takes its text as it is, which the document
        // leaves unsaid (the rule would depend on inputType); base64 is taken for every type.
        ("FileInput", "inputContent", json!({ "pattern": BASE64, "contentEncoding": "base64" })),
        ("ScoreFile", "inputContent", json!({ "pattern": BASE64, "contentEncoding": "base64" })),
        ("FileInput", "inputType", json!({ "pattern": input_type_pattern(false) })),
        ("ScoreFile", "inputType", json!({ "pattern": input_type_pattern(false) })),
        ("CallForm", "inputType", json!({ "pattern": input_type_pattern(true) })),
        // Any JSON, but not null: a null correction is refused as a missing one is.
        ("Feedback", "correction", json!({ "not": { "type": "null" } })),
        ("TimeWindow", "start", json!({ "format": "date-time" })),
        ("TimeWindow", "end", json!({ "format": "date-time" })),
        ("SubscriptionInput", "name", json!({ "pattern": NOT_BLANK, "maxLength": subscriptions::NAME_MAX })),
        // Optional on PATCH: null stays allowed (the create requires it, `creates`).
        ("SubscriptionInput", "type", or_null(subscriptions::TYPES)),
        ("WorkflowConnectorInput", "type", json!({ "enum": workflows::CONNECTOR_TYPES })),
        ("ConnectorInput", "name", json!({ "pattern": NOT_BLANK, "maxLength": connectors::NAME_MAX })),
        ("ConnectorInput", "type", json!({ "enum": connectors::TYPES })),
        ("DatasetColumn", "name", json!({ "pattern": NOT_BLANK, "maxLength": datasets::NAME_MAX })),
        ("QueueFilter", "status", json!({ "items": { "enum": review_statuses() } })),
        ("QueueFilter", "since", json!({ "format": "date-time" })),
        ("QueueFilter", "assignedTo", json!({ "pattern": "^(me|usr_.+)$" })),
        ("CreateCollection", "collectionName", json!({ "pattern": COLLECTION_NAME })),
        ("AddItems", "collectionName", json!({ "pattern": COLLECTION_NAME })),
        ("UpdateItems", "collectionName", json!({ "pattern": COLLECTION_NAME })),
        ("Search", "collectionName", json!({ "pattern": COLLECTION_NAME })),
        ("Search", "limit", json!({ "minimum": 1, "maximum": MAX_SEARCH_LIMIT })),
        // A surface must hold a letter or a digit ([^\W_]: a word character, not `_`).
        ("CreateMention", "surface", json!({ "pattern": r"[^\W_]" })),
        (
            "CreateRelation",
            "relationType",
            json!({ "pattern": NOT_BLANK, "maxLength": relations::RELATION_TYPE_MAX }),
        ),
        ("BatchFiles", "inputs", json!({ "minItems": 1 })),
        ("ViewInput", "name", json!({ "pattern": NOT_BLANK, "maxLength": views::NAME_MAX })),
        ("ViewInput", "description", json!({ "maxLength": views::DESCRIPTION_MAX })),
        ("ViewInput", "functions", json!({ "minItems": 1, "maxItems": views::MAX_FUNCTIONS })),
        ("ViewInput", "columns", json!({ "maxItems": views::MAX_COLUMNS })),
        ("ViewInput", "filters", json!({ "maxItems": views::MAX_FILTERS })),
        ("ViewInput", "aggregations", json!({ "maxItems": views::MAX_AGGREGATIONS })),
        ("TableDataInput", "limit", json!({ "minimum": 1, "maximum": views::MAX_TABLE_ROWS })),
        ("TableDataInput", "offset", json!({ "minimum": 0, "maximum": views::MAX_OFFSET })),
        ("DatasetInput", "name", json!({ "pattern": NOT_BLANK, "maxLength": datasets::NAME_MAX })),
        ("DatasetInput", "description", json!({ "maxLength": datasets::DESCRIPTION_MAX })),
        ("DatasetInput", "columns", json!({ "minItems": 1, "maxItems": datasets::MAX_COLUMNS })),
        ("ColumnsInput", "columns", json!({ "minItems": 1, "maxItems": MAX_COLUMNS_PER_WRITE })),
        ("FromEventsInput", "limit", json!({ "minimum": 1, "maximum": MAX_ROWS_PER_BUILD })),
        ("FromEventsInput", "eventIDs", json!({ "maxItems": MAX_ROWS_PER_BUILD })),
        // What each service checks and the generated schemas cannot say (lists' bounds,
        // blank text, names' shapes, enums read from free strings).
        ("EvalRequest", "transformationIDs", json!({ "minItems": 1, "maxItems": evaluations::MAX_IDS })),
        (
            "LegacyCorrections",
            "transformations",
            json!({ "minItems": 1, "maxItems": corrections::MAX_CORRECTIONS }),
        ),
        ("ScoreRequest", "pairs", json!({ "minItems": 1, "maxItems": score::MAX_PAIRS })),
        ("ReviewBody", "confidenceMethod", or_null(&["wald", "wilson"])),
        ("CompareBody", "functionName", json!({ "pattern": NOT_BLANK })),
        ("RegressionBody", "functionName", json!({ "pattern": NOT_BLANK })),
        ("RegressionCorrectionsBody", "functionName", json!({ "pattern": NOT_BLANK })),
        ("AddItems", "items", json!({ "minItems": 1, "maxItems": MAX_ITEMS_PER_REQUEST })),
        ("UpdateItems", "items", json!({ "minItems": 1, "maxItems": MAX_ITEMS_PER_REQUEST })),
        ("Search", "query", json!({ "pattern": NOT_BLANK })),
        ("CountTokens", "texts", json!({ "minItems": 1, "maxItems": MAX_TEXTS_PER_COUNT })),
        ("BulkValidate", "entityIDs", json!({ "minItems": 1, "maxItems": entities::BULK_VALIDATE_MAX })),
        ("MergeRequest", "entityIDs", json!({ "minItems": 1, "maxItems": merges::MERGE_MAX })),
        ("FunctionCopyInput", "sourceFunctionName", json!({ "pattern": FUNCTION_NAME })),
        ("FunctionCopyInput", "targetFunctionName", json!({ "pattern": FUNCTION_NAME })),
        ("WorkflowCopyInput", "sourceWorkflowName", json!({ "pattern": FUNCTION_NAME })),
        ("WorkflowCopyInput", "targetWorkflowName", json!({ "pattern": FUNCTION_NAME })),
        ("WorkflowInput", "nodes", json!({ "minItems": 1 })),
        ("EvalRequest", "evaluationVersion", json!({ "pattern": NOT_BLANK })),
        ("ReviewBody", "functionName", json!({ "pattern": NOT_BLANK })),
        ("RegressionBody", "sampleSize", json!({ "minimum": 1, "maximum": regression::MAX_SAMPLE })),
        ("UpdateBucket", "name", json!({ "pattern": NOT_BLANK, "maxLength": buckets::NAME_MAX })),
        ("FunctionCopyInput", "targetEnvironment", or_null(&["production", "sandbox"])),
        ("WorkflowCopyInput", "targetEnvironment", or_null(&["production", "sandbox"])),
    ]
}

/// An enum of an optional field: one of `values`, or null (not sent).
fn or_null(values: &[&str]) -> Value {
    json!({ "enum": values.iter().map(|v| json!(v)).chain([Value::Null]).collect::<Vec<_>>() })
}

/// Adds `rule` to `property` of `schema`; false when the document has no such property (a
/// renamed type or field: the unit test below fails on it rather than the bound vanishing).
fn constrain_property(schemas: &mut Map<String, Value>, schema: &str, property: &str, rule: Value) -> bool {
    let Some(schema) = schemas.get_mut(schema) else { return false };
    // A schema with flattened fields is an allOf of objects.
    let mut parts: Vec<&mut Value> = match schema.get_mut("allOf").and_then(Value::as_array_mut) {
        Some(parts) => parts.iter_mut().collect(),
        None => vec![schema],
    };
    match parts.iter_mut().find_map(|part| part.pointer_mut(&format!("/properties/{property}"))) {
        Some(target) => {
            merge(target, rule);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::OpenApi as _;

    #[test]
    fn every_body_rule_names_a_property_the_generated_document_has() {
        let doc = serde_json::to_value(crate::api::openapi::ApiDoc::openapi()).unwrap();
        let mut schemas = doc["components"]["schemas"].as_object().unwrap().clone();
        let missing: Vec<String> = body_rules()
            .into_iter()
            .filter(|(schema, property, rule)| {
                !constrain_property(&mut schemas, schema, property, rule.clone())
            })
            .map(|(schema, property, _)| format!("{schema}.{property}"))
            .collect();
        assert!(missing.is_empty(), "rules for properties the document lacks: {missing:?}");
        for (schema, property) in ANY_TEXT {
            assert!(schemas[*schema]["properties"][*property].is_object(), "{schema}.{property}");
        }
        for (schema, fields, _) in exactly_one_rules() {
            for (field, _) in fields {
                assert!(schemas[schema]["properties"][field].is_object(), "{schema}.{field}");
            }
        }
    }
}
