//! Bodies shared by a create and its PATCH: the PATCH takes any subset of the fields, while
//! the create requires some (`functions::service`, `functions::workflows`,
//! `delivery::subscriptions` answer 400 "is required" without them). The create's body is
//! the shared schema plus those requirements, a schema of its own the POST names.

use serde_json::{json, Map, Value};

/// (path of the POST, the schema it shares with its PATCH, the fields the create requires).
const CREATES: &[(&str, &str, &[&str])] = &[
    ("/v3/functions", "FunctionInput", &["functionName", "type"]),
    ("/v3/workflows", "WorkflowInput", &["name", "mainNodeName", "nodes"]),
    ("/v3/subscriptions", "SubscriptionInput", &["name", "type"]),
];

/// The name of the create's own schema.
fn create_schema(shared: &str) -> String {
    format!("{shared}OnCreate")
}

/// Points each create's POST at a schema of its own, added to the components.
pub(super) fn add(doc: &mut Value) {
    for (path, shared, required) in CREATES {
        let pointer =
            format!("/paths/{}/post/requestBody/content/application~1json/schema", path.replace('/', "~1"));
        let Some(body) = doc.pointer_mut(&pointer) else { continue };
        let name = create_schema(shared);
        *body = json!({ "$ref": format!("#/components/schemas/{name}") });
        // Present, and not null (the shared schema lets a PATCH send null for "unchanged").
        let present: Map<String, Value> =
            required.iter().map(|field| (field.to_string(), json!({ "not": { "type": "null" } }))).collect();
        let schema = json!({
            "description": format!("The body of POST {path}: {shared} with {} required.", required.join(", ")),
            "allOf": [
                { "$ref": format!("#/components/schemas/{shared}") },
                { "required": required, "properties": present },
            ],
        });
        if let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) {
            schemas.insert(name, schema);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::OpenApi as _;

    #[test]
    fn every_create_names_a_post_and_fields_of_its_shared_schema() {
        let doc =
            super::super::complete(serde_json::to_value(crate::api::openapi::ApiDoc::openapi()).unwrap());
        for (path, shared, required) in CREATES {
            let body = &doc["paths"][*path]["post"]["requestBody"]["content"]["application/json"]["schema"];
            assert_eq!(body["$ref"], format!("#/components/schemas/{}", create_schema(shared)), "{path}");
            // The shared schema's own properties, or those of its parts (a flattened struct).
            let schema = &doc["components"]["schemas"][*shared];
            let parts = schema["allOf"].as_array().into_iter().flatten().chain([schema]);
            let properties: Vec<&Value> = parts.map(|part| &part["properties"]).collect();
            for field in *required {
                assert!(properties.iter().any(|p| p[*field].is_object()), "{shared}.{field}");
            }
        }
    }
}
