//! Query parameters' bounds, patterns and enums, as the handlers and services check them.

use super::{has_type, merge, review_statuses, text_with, COLLECTION_NAME, NOT_BLANK, NO_CONTROLS};
use crate::accuracy::score;
use crate::calls;
use crate::collections;
use crate::functions::validate::FUNCTION_TYPES;
use crate::graph::relations::{self, Direction};
use crate::graph::suggestions::SuggestionOrder;
use serde_json::{json, Value};

/// One value of a repeatable parameter: something other than commas and white space (values
/// are split at commas and trimmed; a parameter sent with nothing in it is refused).
const LIST_ITEM: &str = r"[^,\s]";
/// A `<function or workflow id or name>.<versionNum>` filter entry (`listing::version_refs`).
const VERSION_REF: &str = r"^[^,\s\u0000-\u001F\u007F-\u009F]+\.0*[1-9][0-9]{0,17}$";
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

pub(super) fn constrain(path: &str, parameter: &mut Value) {
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
    // A page cursor is an ID whose ULID the page decodes (`id_keys::timestamp`), as canon
    // writes it, or empty as above.
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
