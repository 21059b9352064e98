//! Platform conventions: health, readiness, metrics, OpenAPI, error bodies, routing.

use crate::helpers::{assert_error, json, spawn_app};
use reqwest::Method;

#[tokio::test]
async fn healthz_answers_without_a_key() {
    let app = spawn_app().await;
    let response = app.client.get(format!("{}/healthz", app.address)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(json(response).await["status"], "ok");
}

#[tokio::test]
async fn readyz_reports_the_status_of_each_backend() {
    let app = spawn_app().await;
    let response = app.client.get(format!("{}/readyz", app.address)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body = json(response).await;
    assert_eq!(body["status"], "ready");
    assert_eq!(body["backends"]["graph"]["status"], "up");
    assert_eq!(body["backends"]["records"]["status"], "up");
    let expected_records = if app.config.database_url.is_some() { "postgres" } else { "sqlite" };
    assert_eq!(body["backends"]["records"]["engine"], expected_records);
}

#[tokio::test]
async fn metrics_count_requests_by_route_and_status_and_show_queue_depth() {
    let app = spawn_app().await;
    app.get("/v3/buckets").await;
    app.get("/v3/buckets/bkt_01NOSUCHBUCKET000000000000").await;
    let text = app.client.get(format!("{}/metrics", app.address)).send().await.unwrap().text().await.unwrap();
    assert!(
        text.contains(r#"canon_http_requests_total{method="GET",route="/v3/buckets",status="200"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#"canon_http_requests_total{method="GET",route="/v3/buckets/{bucketID}",status="404"} 1"#
        ),
        "{text}"
    );
    assert!(text.contains("canon_http_request_duration_seconds_bucket"), "{text}");
    assert!(text.contains("canon_job_queue_depth 0"), "{text}");
}

#[tokio::test]
async fn the_openapi_document_lists_every_endpoint_with_its_error_responses() {
    let app = spawn_app().await;
    let doc = json(app.client.get(format!("{}/openapi.json", app.address)).send().await.unwrap()).await;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"), "OpenAPI 3.1: {}", doc["openapi"]);
    let expected = [
        ("/v3/buckets", "get", &["400", "401", "429"][..]),
        ("/v3/buckets", "post", &["400", "401", "409"][..]),
        ("/v3/buckets/{bucketID}", "get", &["401", "404"][..]),
        ("/v3/buckets/{bucketID}", "patch", &["400", "404", "409"][..]),
        ("/v3/buckets/{bucketID}", "delete", &["404", "409"][..]),
        ("/v3/entity-types", "get", &["400", "401"][..]),
        ("/v3/entity-types", "post", &["400", "404", "409"][..]),
        ("/v3/entity-types/{typeID}", "get", &["404"][..]),
        ("/v3/entity-types/{typeID}", "patch", &["400", "404", "422"][..]),
        ("/v3/entity-types/{typeID}", "delete", &["404", "409"][..]),
        ("/v3/entity-types/{typeID}/reviewers", "post", &["401", "403", "404"][..]),
        ("/v3/entity-types/{typeID}/reviewers", "get", &["401", "403"][..]),
        ("/v3/entity-types/{typeID}/reviewers/{userID}", "delete", &["403", "404"][..]),
        ("/v3/users/{userID}/reviewer-assignments", "get", &["403"][..]),
        ("/v3/review-queue", "get", &["400", "401"][..]),
        ("/v3/entities/bulk", "post", &["400", "404"][..]),
        ("/v3/entities/seed/{id}", "get", &["404"][..]),
        ("/v3/entities/{id}", "get", &["404"][..]),
        ("/v3/entities/{id}", "patch", &["400", "404", "409"][..]),
        ("/v3/entities/bulk-validate", "post", &["400"][..]),
        ("/v3/entities/{id}/synonyms", "post", &["400", "409"][..]),
        ("/v3/entities/{id}/synonyms/{synonymID}", "delete", &["404", "409"][..]),
        ("/v3/entities/{id}/relations", "get", &["400", "404"][..]),
        ("/v3/entities/{id}/merge", "post", &["404", "409", "422"][..]),
        ("/v3/entities/{id}/merges", "get", &["404"][..]),
        ("/v3/merges/{mergeID}/undo", "post", &["404", "409"][..]),
        ("/v3/relations", "post", &["400", "404", "422"][..]),
        ("/v3/mentions", "post", &["400", "404"][..]),
        ("/v3/knowledge-graph", "get", &["400"][..]),
        ("/v3/merge-suggestions", "get", &["400"][..]),
        ("/v3/merge-suggestions/refresh", "post", &["401"][..]),
        ("/v3/merge-suggestions/{suggestionID}/accept", "post", &["404", "409"][..]),
        ("/v3/merge-suggestions/{suggestionID}/dismiss", "post", &["404", "409"][..]),
        ("/healthz", "get", &[][..]),
        ("/readyz", "get", &["503"][..]),
        ("/metrics", "get", &[][..]),
    ];
    for (path, method, errors) in expected {
        let operation = &doc["paths"][path][method];
        assert!(operation.is_object(), "{method} {path} is documented");
        for status in errors {
            assert!(operation["responses"][status].is_object(), "{method} {path} documents {status}");
        }
    }
    assert_eq!(doc["components"]["securitySchemes"]["apiKey"]["name"], "x-api-key");
    assert_eq!(doc["components"]["securitySchemes"]["dashboardToken"]["scheme"], "bearer");
    // The key or a dashboard token: two requirements, either satisfies (both are accepted).
    assert_eq!(doc["security"], serde_json::json!([{ "apiKey": [] }, { "dashboardToken": [] }]));
    // Probes and metrics are open (no key), and say so.
    for path in ["/healthz", "/readyz", "/metrics"] {
        assert_eq!(doc["paths"][path]["get"]["security"], serde_json::json!([{}]), "{path}");
    }
    // Every route the server answers is documented.
    let documented = doc["paths"].as_object().unwrap().len();
    assert!(documented >= expected.iter().map(|(p, _, _)| p).collect::<std::collections::HashSet<_>>().len());
}

#[tokio::test]
async fn the_docs_page_renders_the_served_openapi_document() {
    let app = spawn_app().await;
    let response = app.client.get(format!("{}/docs", app.address)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(response.text().await.unwrap().contains(r#"url: "/openapi.json""#));
}

#[tokio::test]
async fn an_unknown_route_is_a_json_404() {
    let app = spawn_app().await;
    assert_error(app.get("/v3/no-such-thing").await, 404).await;
    assert_error(app.get("/v1-alpha/no-such-thing").await, 404).await;
    assert_error(app.get("/v1-beta/no-such-thing").await, 404).await;
}

#[tokio::test]
async fn a_wrong_method_is_a_json_405() {
    let app = spawn_app().await;
    let response = app.request(Method::PUT, "/v3/buckets").send().await.unwrap();
    assert_error(response, 405).await;
}

#[tokio::test]
async fn malformed_json_is_a_400_that_says_where() {
    let app = spawn_app().await;
    let response = app
        .request(Method::POST, "/v3/buckets")
        .header("content-type", "application/json")
        .body(r#"{"name": "x""#)
        .send()
        .await
        .unwrap();
    let body = assert_error(response, 400).await;
    assert!(body["message"].as_str().unwrap().contains("malformed JSON"), "{body}");
    assert_eq!(body["details"]["line"], 1);
}

#[tokio::test]
async fn a_wrong_type_is_a_400_naming_the_field() {
    let app = spawn_app().await;
    let body = assert_error(app.post("/v3/buckets", serde_json::json!({ "name": 42 })).await, 400).await;
    assert_eq!(body["details"]["field"], "name");
    let body =
        assert_error(app.post("/v3/buckets", serde_json::json!({ "description": "no name" })).await, 400)
            .await;
    assert!(body["message"].as_str().unwrap().contains("name"), "{body}");
}

#[tokio::test]
async fn a_body_that_is_not_json_is_refused_with_the_reason() {
    let app = spawn_app().await;
    let response = app
        .request(Method::POST, "/v3/buckets")
        .header("content-type", "text/plain")
        .body("name=x")
        .send()
        .await
        .unwrap();
    assert_error(response, 415).await;
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = spawn_app().await;
    let first = app.get("/v3/buckets").await;
    let second = app.get("/v3/buckets").await;
    let id = |r: &reqwest::Response| r.headers()["x-request-id"].to_str().unwrap().to_string();
    assert!(!id(&first).is_empty());
    assert_ne!(id(&first), id(&second));
    let chosen =
        app.request(Method::GET, "/v3/buckets").header("x-request-id", "trace-me").send().await.unwrap();
    assert_eq!(id(&chosen), "trace-me", "a caller's request ID is kept");
}
