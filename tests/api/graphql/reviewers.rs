//! Reviewer operations (dashboard tokens and roles) and bulk validation over GraphQL.

use super::{assert_same, data, error_code, gql};
use crate::helpers::{json, spawn_app, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

/// Runs a request with a dashboard token; asserts HTTP 200.
async fn gql_as(app: &TestApp, token: &str, query: &str, variables: Value) -> Value {
    let response = app
        .as_user(Method::POST, "/graphql", token)
        .json(&json!({ "query": query, "variables": variables }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    json(response).await
}

#[tokio::test]
async fn reviewer_operations_need_a_dashboard_token_and_check_its_role() {
    let app = spawn_app().await;
    let type_id = app.create_type("Supplier", None).await;
    let (admin, admin_token) = app.dashboard_token("admin").await;
    let (operator, operator_token) = app.dashboard_token("operator").await;
    let assign =
        "mutation($t: ID!, $u: ID!) { assignReviewer(typeID: $t, userID: $u) { typeID userID role } }";
    let list = "query($t: ID!) { entityType(id: $t) { name reviewers { userID email role assignedAt } } }";

    let with_key = gql(&app, assign, json!({ "t": type_id, "u": operator })).await;
    assert_eq!(error_code(&with_key), 401, "an API key is refused, as REST refuses it");
    let as_operator = gql_as(&app, &operator_token, assign, json!({ "t": type_id, "u": operator })).await;
    assert_eq!(error_code(&as_operator), 403);
    let body = gql_as(&app, &admin_token, assign, json!({ "t": type_id, "u": operator })).await;
    assert_eq!(
        body["data"]["assignReviewer"],
        json!({ "typeID": type_id, "userID": operator, "role": "operator" })
    );
    let body = gql_as(&app, &admin_token, assign, json!({ "t": type_id, "u": admin })).await;
    assert!(body.get("errors").is_none(), "{body}");

    let got = gql_as(&app, &operator_token, list, json!({ "t": type_id })).await;
    let rest = json(
        app.as_user(Method::GET, &format!("/v3/entity-types/{type_id}/reviewers"), &operator_token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let (g, r) =
        (got["data"]["entityType"]["reviewers"].as_array().unwrap(), rest["reviewers"].as_array().unwrap());
    assert_eq!(g.len(), 2);
    for (g, r) in g.iter().zip(r) {
        assert_same(g, r);
    }
    assert_eq!(error_code(&gql(&app, list, json!({ "t": type_id })).await), 401);

    let remove = "mutation($t: ID!, $u: ID!) { removeReviewer(typeID: $t, userID: $u) }";
    assert_eq!(
        error_code(&gql_as(&app, &operator_token, remove, json!({ "t": type_id, "u": admin })).await),
        403
    );
    let body = gql_as(&app, &admin_token, remove, json!({ "t": type_id, "u": admin })).await;
    assert_eq!(body["data"]["removeReviewer"], true);
    assert_eq!(
        error_code(&gql_as(&app, &admin_token, remove, json!({ "t": type_id, "u": admin })).await),
        404
    );

    // assignedTo: me, as in the review queue.
    let mine = app.entity("Reviewed Supplier", "Supplier").await;
    app.entity("Unreviewed Thing", "Thing").await;
    let body = gql_as(
        &app,
        &operator_token,
        "{ entities(filter: {assignedTo: \"me\"}) { edges { node { entityID } } } }",
        json!({}),
    )
    .await;
    assert_eq!(body["data"]["entities"]["edges"], json!([{ "node": { "entityID": mine } }]));
}

#[tokio::test]
async fn bulk_validation_and_merge_history_match_rest() {
    let app = spawn_app().await;
    let a = app.entity("Bulk One", "Thing").await;
    let b = app.entity("Bulk Two", "Thing").await;
    let query = "mutation($ids: [ID!]!) { bulkValidate(entityIDs: $ids, status: \"approved\") { \
        results { entityID outcome reason } summary { validated skipped rejectedRow } } }";
    let got = data(&app, query, json!({ "ids": [a, "ent_01NOSUCH000000000000000000"] })).await;
    assert_eq!(got["bulkValidate"]["summary"], json!({ "validated": 1, "skipped": 1, "rejectedRow": 0 }));
    let rest = json(
        app.post("/v3/entities/bulk-validate", json!({ "entityIDs": [a, b], "status": "approved" })).await,
    )
    .await;
    assert_eq!(rest["summary"], json!({ "validated": 1, "skipped": 0, "rejectedRow": 1 }));
    let bad = gql(&app, query.replace("approved", "maybe").as_str(), json!({ "ids": [a] })).await;
    assert_eq!(error_code(&bad), 400);

    let c = app.entity("Bulk Three", "Thing").await;
    assert_eq!(app.post(&format!("/v3/entities/{a}/merge"), json!({ "entityIDs": [c] })).await.status(), 200);
    let got = data(
        &app,
        "query($id: ID!) { entity(id: $id) { merges { mergeID survivorID mergedID mergedBy mergedAt undoneBy \
           undoneAt keysMoved mentionsMoved relationsMoved } } }",
        json!({ "id": a }),
    )
    .await;
    let rest = json(app.get(&format!("/v3/entities/{a}/merges")).await).await;
    let (g, r) = (got["entity"]["merges"].as_array().unwrap(), rest["merges"].as_array().unwrap());
    assert_eq!(g.len(), 1);
    for (g, r) in g.iter().zip(r) {
        assert_same(g, r);
    }
}
