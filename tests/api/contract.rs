//! The OpenAPI document is the contract the server keeps (schemathesis checks it broadly in
//! scripts/schemathesis.sh; these pin down what it found).

use crate::helpers::{json, spawn_app};
use serde_json::Value;

const METHODS: [&str; 5] = ["get", "put", "post", "delete", "patch"];

#[tokio::test]
async fn every_keyed_operation_documents_the_errors_it_can_answer() {
    let app = spawn_app().await;
    let doc = json(app.client.get(format!("{}/openapi.json", app.address)).send().await.unwrap()).await;
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        if !path.starts_with("/v3/") {
            continue;
        }
        for method in METHODS.iter().filter(|m| item[**m].is_object()) {
            let operation = &item[*method];
            for status in ["401", "429"] {
                assert!(operation["responses"][status].is_object(), "{method} {path} documents {status}");
            }
            let has_query =
                operation["parameters"].as_array().is_some_and(|ps| ps.iter().any(|p| p["in"] == "query"));
            if has_query || operation["requestBody"].is_object() {
                assert!(operation["responses"]["400"].is_object(), "{method} {path} documents 400");
            }
            checked += 1;
        }
    }
    assert!(checked > 60, "{checked} operations");
    // A repeated single-valued parameter is one of those documented 400s.
    let repeated = app.get("/v3/buckets?limit=1&limit=2").await;
    assert_eq!(repeated.status(), 400);
}

#[tokio::test]
async fn the_documented_page_sizes_are_the_ones_the_server_takes() {
    let app = spawn_app().await;
    let doc = json(app.client.get(format!("{}/openapi.json", app.address)).send().await.unwrap()).await;
    let mut checked = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let parameters = item["get"]["parameters"].as_array().cloned().unwrap_or_default();
        let Some(limit) = parameters.iter().find(|p| p["name"] == "limit") else { continue };
        // Only lists that need nothing else to answer 200.
        if path.contains('{') || parameters.iter().any(|p| p["required"] == true) {
            continue;
        }
        let (min, max) = (&limit["schema"]["minimum"], &limit["schema"]["maximum"]);
        assert_eq!(min, 1, "{path}: limit has a documented minimum");
        let max = max.as_i64().unwrap_or_else(|| panic!("{path}: limit has a documented maximum"));
        assert_eq!(app.get(&format!("{path}?limit={max}")).await.status(), 200, "{path}?limit={max}");
        assert_eq!(
            app.get(&format!("{path}?limit={}", max + 1)).await.status(),
            400,
            "{path}?limit={}",
            max + 1
        );
        assert_eq!(app.get(&format!("{path}?limit=0")).await.status(), 400, "{path}?limit=0");
        checked.push(path.clone());
    }
    assert!(checked.len() >= 8, "{checked:?}");
}

#[tokio::test]
async fn metrics_are_served_as_documented_and_creations_link_to_what_they_created() {
    let app = spawn_app().await;
    let doc = json(app.client.get(format!("{}/openapi.json", app.address)).send().await.unwrap()).await;
    let documented: Vec<&String> =
        doc["paths"]["/metrics"]["get"]["responses"]["200"]["content"].as_object().unwrap().keys().collect();
    let served = app.client.get(format!("{}/metrics", app.address)).send().await.unwrap();
    let content_type = served.headers()["content-type"].to_str().unwrap().to_string();
    assert!(
        documented.iter().any(|media| content_type.starts_with(media.as_str())),
        "{content_type} is one of {documented:?}"
    );
    let links = &doc["paths"]["/v3/functions"]["post"]["responses"]["200"]["links"];
    let get_function = links
        .as_object()
        .unwrap()
        .values()
        .find(|link| link["operationRef"] == "#/paths/~1v3~1functions~1{functionName}/get");
    assert_eq!(
        get_function.map(|link| &link["parameters"]["functionName"]),
        Some(&Value::from("$response.body#/function/functionName"))
    );
}
