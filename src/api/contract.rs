//! What the handlers' annotations cannot say, added to the generated OpenAPI document so it
//! is the contract the server keeps: the errors every keyed operation can answer, and the
//! bounds the handlers and services check (ranges, patterns, enums) on query parameters and
//! request bodies. Schemathesis (scripts/schemathesis.sh) holds the server to the result.

use crate::accuracy::{corrections, evaluations, regression, score};
use crate::collections::{MAX_ITEMS_PER_REQUEST, MAX_SEARCH_LIMIT, MAX_TEXTS_PER_COUNT};
use crate::datasets::{self, MAX_COLUMNS_PER_WRITE, MAX_ROWS_PER_BUILD};
use crate::delivery::subscriptions;
use crate::functions::validate::FUNCTION_TYPES;
use crate::graph::relations::Direction;
use crate::graph::suggestions::SuggestionOrder;
use crate::graph::undo::REOPEN_STATUSES;
use crate::graph::{buckets, entities, entity_types, merges, relations, seed};
use crate::{calls, collections, connectors, views};
use serde_json::{json, Map, Value};

/// Collection names: dot-separated segments of ASCII letters, digits and underscores, each
/// 1–256 long and not starting with a digit (`collections::names`).
const COLLECTION_NAME: &str = r"^[A-Za-z_][A-Za-z0-9_]{0,255}(\.[A-Za-z_][A-Za-z0-9_]{0,255})*$";
/// Function and workflow names (`functions::validate`).
const FUNCTION_NAME: &str = "^[A-Za-z0-9_-]{1,128}$";
/// Some character other than white space: the service trims, then requires a value.
const NOT_BLANK: &str = r"\S";
/// One value of a repeatable parameter: something other than commas and white space (values
/// are split at commas and trimmed; a parameter sent with nothing in it is refused).
const LIST_ITEM: &str = r"[^,\s]";
/// Text the service takes: no control characters but tab and newline (`text::check`; Unicode's
/// Cc category, as `char::is_control`).
const NO_CONTROLS: &str = r"^[^\u0000-\u0008\u000B-\u001F\u007F-\u009F]*$";
/// A `<function or workflow id or name>.<versionNum>` filter entry (`listing::version_refs`).
const VERSION_REF: &str = r"^[^,\s\u0000-\u001F\u007F-\u009F]+\.0*[1-9][0-9]{0,17}$";
/// Request text the service takes whatever it holds: a secret's value, texts to count tokens of.
const ANY_TEXT: &[(&str, &str)] = &[("RotateSecret", "value"), ("CountTokens", "texts")];
/// A list's cursor on events: a KSUID (an event ID), or empty (read as none).
const KSUID_CURSOR: &str = "^([0-9A-Za-z]{27})?$";

/// Pages of these paths hold at most 100; the others (graph, buckets, types) 200.
const LIMIT_100: &[&str] = &[
    "/v3/calls",
    "/v3/subscriptions",
    "/v3/outputs",
    "/v3/errors",
    "/v1-alpha/events",
    "/v3/collections",
    "/v3/collections/items",
    "/v3/functions",
    "/v3/workflows",
    "/v3/functions/{functionName}/versions",
    "/v3/workflows/{workflowName}/versions",
    "/v3/functions/metrics",
    "/v3/views",
    "/v3/datasets",
    "/v3/datasets/{datasetID}/rows",
];

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
                    constrain_parameter(path, parameter);
                }
            }
        }
    }
    let request_only = request_only_schemas(&doc);
    if let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) {
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
    add_links(&mut doc);
    doc
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
                map.insert("allOf".into(), json!([{ "pattern": NO_CONTROLS }]));
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

/// Whether `schema` is of type `kind`, nullable or not (`"string"` or `["string", "null"]`).
fn has_type(schema: &Value, kind: &str) -> bool {
    let types = &schema["type"];
    types == kind || types.as_array().is_some_and(|types| types.iter().any(|t| t == kind))
}

/// How a created resource is reached: `(path, method, statuses, parameter, value)` of the
/// creating operation and the operations on the created resource's path (every method).
type LinkRule = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static str,
    &'static str,
    &'static [&'static str],
);

const LINKS: &[LinkRule] = &[
    (
        "/v3/functions",
        "post",
        &["200"],
        "functionName",
        "$response.body#/function/functionName",
        &["/v3/functions/{functionName}", "/v3/functions/{functionName}/versions"],
    ),
    (
        "/v3/workflows",
        "post",
        &["200"],
        "workflowName",
        "$response.body#/workflow/name",
        &[
            "/v3/workflows/{workflowName}",
            "/v3/workflows/{workflowName}/versions",
            "/v3/workflows/{workflowName}/call",
        ],
    ),
    (
        "/v3/workflows/{workflowName}/call",
        "post",
        &["200", "202"],
        "callID",
        "$response.body#/call/callID",
        &["/v3/calls/{callID}", "/v3/calls/{callID}/trace"],
    ),
    (
        "/v3/entities/bulk",
        "post",
        &["200"],
        "id",
        "$response.body#/results/0/entityID",
        &[
            "/v3/entities/{id}",
            "/v3/entities/{id}/relations",
            "/v3/entities/{id}/merges",
            "/v3/entities/{id}/synonyms",
            "/v3/entities/{id}/merge",
        ],
    ),
    (
        "/v3/entities/{id}/merge",
        "post",
        &["200"],
        "mergeID",
        "$response.body#/merges/0/mergeID",
        &["/v3/merges/{mergeID}/undo"],
    ),
    ("/v3/views", "post", &["200"], "viewID", "$response.body#/viewID", &["/v3/views/{viewID}"]),
    (
        "/v3/datasets",
        "post",
        &["200"],
        "datasetID",
        "$response.body#/datasetID",
        &["/v3/datasets/{datasetID}", "/v3/datasets/{datasetID}/rows"],
    ),
    (
        "/v3/eval/score",
        "post",
        &["202"],
        "scoreRunID",
        "$response.body#/scoreRunID",
        &["/v3/eval/score/{scoreRunID}", "/v3/eval/score/{scoreRunID}/cancel"],
    ),
    (
        "/v3/buckets",
        "post",
        &["200", "201"],
        "bucketID",
        "$response.body#/bucketID",
        &["/v3/buckets/{bucketID}"],
    ),
];

/// OpenAPI links from each creating operation to the operations on what it created, so a
/// client (and schemathesis) can follow them instead of guessing IDs.
fn add_links(doc: &mut Value) {
    for (source, method, statuses, parameter, value, targets) in LINKS {
        let mut links = Map::new();
        for target in *targets {
            let methods: Vec<String> =
                doc["paths"][*target].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
            for target_method in methods {
                let reference =
                    format!("#/paths/{}/{target_method}", target.replace('~', "~0").replace('/', "~1"));
                let name = format!("{target_method}{}", target.replace(['/', '{', '}', '-'], "_"));
                links.insert(name, json!({ "operationRef": reference, "parameters": { *parameter: value } }));
            }
        }
        for status in *statuses {
            if let Some(response) =
                doc.pointer_mut(&format!("/paths/{}/{method}/responses/{status}", source.replace('/', "~1")))
            {
                merge(response, json!({ "links": links }));
            }
        }
    }
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

fn constrain_parameter(path: &str, parameter: &mut Value) {
    if parameter["in"] == "path" {
        // Every path segment is text the service checks (`text::check`): an ID or a name.
        if let Some(schema) = parameter.get_mut("schema").filter(|schema| has_type(schema, "string")) {
            merge(schema, json!({ "pattern": NO_CONTROLS }));
        }
        return;
    }
    if parameter["in"] != "query" {
        return;
    }
    let name = parameter["name"].as_str().unwrap_or_default().to_string();
    let Some(schema) = parameter.get_mut("schema") else { return };
    if has_type(schema, "array") {
        let item = match (path, name.as_str()) {
            ("/v3/review-queue", "status") => json!({ "type": "string", "enum": review_statuses() }),
            ("/v3/calls", "statuses") => json!({ "type": "string", "enum": calls::STATUSES }),
            (_, "types") if path.starts_with("/v3/functions") => {
                json!({ "type": "string", "enum": FUNCTION_TYPES })
            }
            // Event filters' version numbers: integers (i64, so at most 18 digits and a sign).
            (_, "functionVersionNums") => json!({ "type": "string", "pattern": "^-?[0-9]{1,18}$" }),
            (_, name) if name.ends_with("VersionNums") => {
                json!({ "type": "string", "pattern": VERSION_REF })
            }
            _ => {
                let mut item = text_with(LIST_ITEM);
                item["type"] = json!("string");
                item
            }
        };
        merge(schema, json!({ "items": item }));
        return;
    }
    let limit_max = if LIMIT_100.contains(&path) { 100 } else { 200 };
    // An ID as `ids::has_prefix` takes it: the prefix, `_`, then letters and digits.
    let id_prefix = |prefix: &str| json!({ "pattern": format!("^{prefix}_[0-9A-Za-z]+$") });
    // A list's cursor: such an ID, or empty (a blank form field, read as no cursor).
    let id_cursor = |prefix: &str| json!({ "pattern": format!("^({prefix}_[0-9A-Za-z]+)?$") });
    // A page cursor is an ID whose ULID the page decodes (`id_keys::timestamp`), as canon writes it.
    let ulid_id = |prefix: &str| json!({ "pattern": format!("^({prefix}_[0-7][0-9A-HJKMNP-TV-Z]{{25}})?$") });
    let rule = match name.as_str() {
        "limit" => json!({ "minimum": 1, "maximum": limit_max }),
        "page" => json!({ "minimum": 1, "maximum": collections::MAX_PAGE_NUMBER }),
        "maxDepth" | "depth" => json!({ "minimum": 0, "maximum": relations::MAX_DEPTH }),
        "direction" => json!({ "enum": Direction::NAMES }),
        "order" if path == "/v3/merge-suggestions" => json!({ "enum": SuggestionOrder::NAMES }),
        "fuzzyThreshold" => json!({ "minimum": 0, "maximum": 1 }),
        "numericTolerance" => json!({ "minimum": 0, "maximum": score::MAX_NUMERIC_TOLERANCE }),
        "collectionItemID" => text_with(NOT_BLANK),
        "sortOrder" => json!({ "enum": ["asc", "desc"] }),
        "assignedTo" => json!({ "pattern": "^(me|usr_.+)$" }),
        "collectionName" => json!({ "pattern": COLLECTION_NAME }),
        // Empty is read as no filter (a form's blank field), so the document allows it.
        "parentCollectionName" => json!({ "pattern": format!("^$|{COLLECTION_NAME}") }),
        // An empty value is no value (serde_html_form reads it as absent): a blank form field.
        "since" => json!({ "anyOf": [{ "format": "date-time" }, { "maxLength": 0 }] }),
        "startingAfter" | "endingBefore" if has_type(schema, "string") => match path {
            "/v3/buckets" => id_cursor("bkt"),
            "/v3/entity-types" => id_cursor("ety"),
            "/v3/subscriptions" => id_cursor("sub"),
            "/v3/views" => id_cursor("vw"),
            "/v3/datasets" => id_cursor("gds"),
            "/v3/calls" => id_cursor("wc"),
            "/v3/functions" => id_cursor("fn"),
            "/v3/workflows" => id_cursor("wf"),
            "/v3/outputs" | "/v3/errors" | "/v1-alpha/events" | "/v3/functions/metrics" => {
                json!({ "pattern": KSUID_CURSOR })
            }
            _ => json!({ "pattern": NO_CONTROLS }),
        },
        "parentTypeID" => id_prefix("ety"),
        "cursor" => match path {
            "/v3/review-queue" => ulid_id("ent"),
            "/v3/knowledge-graph" | "/v3/entities/{id}/relations" => ulid_id("rel"),
            // A timeline page's nextCursor: `<milliseconds>.<entry key>`.
            "/v3/entities/{id}/timeline" => json!({ "pattern": r"^[0-9]{1,15}\.[A-Za-z0-9_.]+$" }),
            _ => json!({ "pattern": NO_CONTROLS }),
        },
        // Any other text: checked as every tenant text is.
        _ if has_type(schema, "string") => json!({ "pattern": NO_CONTROLS }),
        _ => return,
    };
    merge(schema, rule);
}

/// A string matching `pattern` (which does not hold the whole text) and, like every tenant
/// text, without control characters: JSON Schema takes one `pattern` per schema, so the
/// second goes in an `allOf`.
fn text_with(pattern: &str) -> Value {
    json!({ "pattern": pattern, "allOf": [{ "pattern": NO_CONTROLS }] })
}

fn review_statuses() -> Vec<&'static str> {
    crate::graph::review::STATUSES.to_vec()
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
        // Optional on PATCH: null stays allowed.
        (
            "FunctionInput",
            "type",
            json!({ "enum": FUNCTION_TYPES.iter().map(|t| json!(t)).chain([Value::Null]).collect::<Vec<_>>() }),
        ),
        ("CreateBucket", "name", json!({ "pattern": NOT_BLANK, "maxLength": buckets::NAME_MAX })),
        ("CreateEntityType", "name", json!({ "pattern": NOT_BLANK, "maxLength": entity_types::NAME_MAX })),
        // An empty parentTypeID is a type without a parent, as the type's reply shows it.
        ("CreateEntityType", "parentTypeID", json!({ "pattern": "^(ety_[0-9A-Za-z]+)?$" })),
        ("BulkSeed", "onConflict", json!({ "enum": ["merge", null] })),
        ("BulkSeed", "entities", json!({ "minItems": 1, "maxItems": seed::MAX_ROWS })),
        ("BulkValidate", "status", json!({ "enum": entities::DECISIONS })),
        ("BulkValidateMatching", "status", json!({ "enum": entities::DECISIONS })),
        ("UpdateEntity", "status", json!({ "enum": [entities::DECISIONS[0], entities::DECISIONS[1], null] })),
        ("ReopenEntity", "status", json!({ "enum": REOPEN_STATUSES })),
        ("TimeWindow", "start", json!({ "format": "date-time" })),
        ("TimeWindow", "end", json!({ "format": "date-time" })),
        ("SubscriptionInput", "name", json!({ "pattern": NOT_BLANK, "maxLength": subscriptions::NAME_MAX })),
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
        ("ReviewBody", "confidenceMethod", json!({ "enum": ["wald", "wilson", null] })),
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
        ("FunctionCopyInput", "targetEnvironment", json!({ "enum": ["production", "sandbox", null] })),
        ("WorkflowCopyInput", "targetEnvironment", json!({ "enum": ["production", "sandbox", null] })),
    ]
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

/// Adds `rule`'s keys to `target` (an object schema), or to the non-null branch of an
/// `Option`'s `oneOf`.
fn merge(target: &mut Value, rule: Value) {
    if let Some(branches) = target.get_mut("oneOf").and_then(Value::as_array_mut) {
        if let Some(branch) = branches.iter_mut().find(|b| b["type"] != "null") {
            return merge(branch, rule);
        }
    }
    if let (Some(target), Value::Object(rule)) = (target.as_object_mut(), rule) {
        target.extend(rule);
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
