//! OpenAPI links: how a created resource is reached from the operation that created it.

use super::merge;
use serde_json::{json, Map, Value};

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
pub(super) fn add(doc: &mut Value) {
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
