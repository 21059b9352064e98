//! Copies of functions and workflows, within an environment and into the other one (the
//! test key is a sandbox key, so "the other one" is production).

use crate::helpers::{assert_error, json, spawn_app};
use canon::store::records::keys::Environment;
use reqwest::Method;
use serde_json::{json, Value};

#[tokio::test]
async fn a_function_copy_starts_at_version_one_with_the_source_configuration() {
    let app = spawn_app().await;
    app.create_function(json!({"functionName": "invoice", "type": "transform", "displayName": "Invoice",
        "tags": ["ap"], "outputSchema": {"type": "object", "properties": {"total": {"type": "number"}}}}))
        .await;
    let updated = app.patch("/v3/functions/invoice", json!({"outputSchemaName": "Invoice2"})).await;
    assert_eq!(updated.status(), 200);
    let copy = json(
        app.post(
            "/v3/functions/copy",
            json!({"sourceFunctionName": "invoice", "targetFunctionName": "invoice-b"}),
        )
        .await,
    )
    .await;
    let function = &copy["function"];
    assert_eq!(
        (function["functionName"].as_str(), function["versionNum"].as_i64()),
        (Some("invoice-b"), Some(1))
    );
    assert_eq!(function["displayName"], "Invoice (Copy)");
    assert_eq!(function["tags"], json!(["ap"]));
    assert_eq!(function["outputSchemaName"], "Invoice2", "the current version is copied");
    let read = json(app.get("/v3/functions/invoice-b").await).await;
    assert_eq!(read["function"]["functionID"], function["functionID"]);
    let again = app
        .post(
            "/v3/functions/copy",
            json!({"sourceFunctionName": "invoice", "targetFunctionName": "invoice-b"}),
        )
        .await;
    assert_error(again, 409).await;
    let missing = app
        .post("/v3/functions/copy", json!({"sourceFunctionName": "nope", "targetFunctionName": "x"}))
        .await;
    assert_error(missing, 404).await;
    let bad = app
        .post("/v3/functions/copy", json!({"sourceFunctionName": "invoice", "targetFunctionName": "y", "targetEnvironment": "staging"}))
        .await;
    assert_eq!(assert_error(bad, 400).await["details"]["field"], "targetEnvironment");
    // A copy's labels are bounded as an update's are.
    for (extra, field) in [
        (json!({"tags": vec!["t"; 51]}), "tags"),
        (json!({"tags": ["x".repeat(129)]}), "tags[0]"),
        (json!({"targetDisplayName": "d".repeat(201)}), "targetDisplayName"),
    ] {
        let mut body = json!({"sourceFunctionName": "invoice", "targetFunctionName": "z"});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let refused = app.post("/v3/functions/copy", body).await;
        assert_eq!(assert_error(refused, 400).await["details"]["field"], field);
    }
}

#[tokio::test]
async fn a_workflow_copied_to_another_environment_brings_its_functions() {
    let app = spawn_app().await;
    app.create_function(json!({"functionName": "invoice", "type": "transform", "tags": ["ap"]})).await;
    app.pipeline("intake", &["invoice"], &[]).await;

    let same = json(
        app.post(
            "/v3/workflows/copy",
            json!({"sourceWorkflowName": "intake", "targetWorkflowName": "intake-b"}),
        )
        .await,
    )
    .await;
    assert_eq!(same["copiedFunctions"], json!([]));
    assert_eq!(same["workflow"]["versionNum"], 1);
    let source = json(app.get("/v3/workflows/intake").await).await;
    assert_eq!(
        same["workflow"]["nodes"][0]["function"]["id"], source["workflow"]["nodes"][0]["function"]["id"],
        "shared"
    );

    let copied = json(
        app.post(
            "/v3/workflows/copy",
            json!({"sourceWorkflowName": "intake", "targetWorkflowName": "intake",
            "targetEnvironment": "production", "targetDisplayName": "Intake (production)"}),
        )
        .await,
    )
    .await;
    assert_eq!(copied["environment"], "production", "{copied}");
    let functions = copied["copiedFunctions"].as_array().unwrap();
    assert_eq!(functions.len(), 1, "{copied}");
    assert_eq!(
        (functions[0]["sourceFunctionName"].as_str(), functions[0]["targetVersionNum"].as_i64()),
        (Some("invoice"), Some(1))
    );
    let target_function = functions[0]["targetFunctionID"].clone();
    assert_eq!(copied["workflow"]["nodes"][0]["function"]["id"], target_function);

    let production = app.new_key(None, Environment::Production).await;
    let read = |path: &str| {
        app.client
            .request(Method::GET, format!("{}{path}", app.address))
            .header("x-api-key", &production)
            .send()
    };
    let workflow: Value = read("/v3/workflows/intake").await.unwrap().json().await.unwrap();
    assert_eq!(workflow["workflow"]["displayName"], "Intake (production)");
    let function: Value = read("/v3/functions/invoice").await.unwrap().json().await.unwrap();
    assert_eq!(function["function"]["functionID"], target_function);
    assert_eq!(function["function"]["tags"], json!(["ap"]));
}
