//! Functions over HTTP: create, read, update into immutable versions, the version envelope,
//! validation (names, types, output schemas and their bounds), the list with every filter,
//! delete, tenancy and the executor's loader.

use crate::helpers::{assert_error, json, spawn_app, strings, TestApp};
use canon::store::records::keys::Environment;
use canon::store::records::Owner;
use reqwest::Method;
use serde_json::{json, Value};

pub fn invoice_schema() -> Value {
    json!({ "type": "object", "properties": { "total": { "type": "number" }, "vendor": { "type": "string" } } })
}

impl TestApp {
    /// Creates a function and returns it (the inside of the `{function}` envelope).
    pub async fn create_function(&self, body: Value) -> Value {
        let response = self.post("/v3/functions", body.clone()).await;
        assert_eq!(response.status(), 200, "creating function {body}");
        json(response).await["function"].clone()
    }

    /// Creates a transform function with the invoice schema and these extra fields.
    pub async fn transform(&self, name: &str, extra: Value) -> Value {
        let mut body = json!({ "functionName": name, "type": "transform", "outputSchema": invoice_schema() });
        if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
            body.extend(extra);
        }
        self.create_function(body).await
    }

    /// `GET path` answering 200; its body.
    pub async fn read(&self, path: &str) -> Value {
        let response = self.get(path).await;
        assert_eq!(response.status(), 200, "GET {path}");
        json(response).await
    }

    /// A function update answering 200; the function.
    pub async fn update_function(&self, name: &str, body: Value) -> Value {
        let response = self.patch(&format!("/v3/functions/{name}"), body.clone()).await;
        assert_eq!(response.status(), 200, "updating function {name} with {body}");
        json(response).await["function"].clone()
    }

    fn owner(&self) -> Owner<'_> {
        Owner { account_id: &self.account_id, environment: "sandbox" }
    }
}

/// IDs of a list page (`GET /v3/{what}?{query}`) and its `totalCount`.
pub async fn listed(app: &TestApp, what: &str, id_field: &str, query: String) -> (Vec<String>, u64) {
    let body = app.read(&format!("/v3/{what}?{query}")).await;
    (strings(&body[what], id_field), body["totalCount"].as_u64().expect("totalCount"))
}

#[tokio::test]
async fn a_function_is_created_at_version_one_and_read_back() {
    let app = spawn_app().await;
    let created = app
        .transform(
            "invoice",
            json!({ "displayName": "Invoices", "tags": ["finance"], "outputSchemaName": "Invoice" }),
        )
        .await;
    let id = created["functionID"].as_str().unwrap().to_string();
    assert!(id.starts_with("fn_"), "{created}");
    assert_eq!(created["functionName"], "invoice");
    assert_eq!(created["versionNum"], 1);
    assert_eq!(created["type"], "transform");
    assert_eq!(created["displayName"], "Invoices");
    assert_eq!(created["tags"], json!(["finance"]));
    assert_eq!(created["outputSchema"], invoice_schema());
    assert_eq!(created["outputSchemaName"], "Invoice");
    assert_eq!(created["tabularChunkingEnabled"], false);
    assert_eq!(created["emailAddress"], format!("{}@inbound.canon.local", id.to_lowercase()));
    assert_eq!(created["usedInWorkflows"], json!([]));
    assert!(created.get("extraConfig").is_none(), "{created}");
    let audit = &created["audit"];
    assert_eq!(audit["functionCreatedBy"]["apiKeyName"], "test", "{audit}");
    assert!(audit["versionCreatedBy"]["userActionID"].as_str().is_some_and(|a| a.starts_with("ua_")));
    assert!(chrono::DateTime::parse_from_rfc3339(created["createdAt"].as_str().unwrap()).is_ok());

    let read = app.read("/v3/functions/invoice").await;
    assert_eq!(read["function"], created);
    assert_error(app.get("/v3/functions/nothing-here").await, 404).await;
}

#[tokio::test]
async fn sdk_type_names_are_accepted_and_kept_as_sent() {
    let app = spawn_app().await;
    for (name, body) in [
        ("router", json!({ "type": "route", "classifications": [{ "name": "invoice" }] })),
        ("classifier", json!({ "type": "classify", "description": "sorts mail" })),
        ("parser", json!({ "type": "parse", "parseConfig": {} })),
        ("shaper", json!({ "type": "payload_shaping", "shapingSchema": "{total: total}" })),
        ("renderer", json!({ "type": "render", "renderConfig": { "template": "t" } })),
        ("extractor", json!({ "type": "extract" })),
        ("analyzer", json!({ "type": "analyze" })),
        ("joiner", json!({ "type": "join" })),
        ("splitter", json!({ "type": "split", "splitType": "semantic_page" })),
        ("sender", json!({ "type": "send", "destinationType": "webhook", "webhookUrl": "https://x.test/h" })),
        ("enricher", json!({ "type": "enrich", "config": { "steps": [] } })),
    ] {
        let mut body = body;
        body["functionName"] = json!(name);
        let created = app.create_function(body.clone()).await;
        assert_eq!(created["type"], body["type"], "{created}");
        for (field, value) in body.as_object().unwrap() {
            assert_eq!(&created[field.as_str()], value, "{field} of {created}");
        }
    }
    let classifier = app.read("/v3/functions/classifier").await["function"].clone();
    assert_eq!(classifier["classifications"], json!([]), "defaults the SDK requires");
    let extractor = app.read("/v3/functions/extractor").await["function"].clone();
    assert_eq!(
        (extractor["enableBoundingBoxes"].clone(), extractor["preCount"].clone()),
        (json!(false), json!(false))
    );
    let joiner = app.read("/v3/functions/joiner").await["function"].clone();
    assert_eq!(joiner["joinType"], "standard");
    // The document's Function is closed (additionalProperties: false): every field each type
    // replies with is one of its properties, of the documented JSON type.
    let doc = json(app.get("/openapi.json").await).await;
    let function = &doc["components"]["schemas"]["Function"];
    assert_eq!(function["additionalProperties"], false, "{function}");
    let listed = json(app.get("/v3/functions?limit=100&includeExtraSettings=true").await).await;
    for reply in listed["functions"].as_array().unwrap() {
        for (field, value) in reply.as_object().unwrap() {
            let documented = &function["properties"][field.as_str()];
            assert!(documented.is_object(), "{field} of a {} function is documented", reply["type"]);
            let kind = documented["type"].as_str().unwrap_or_default();
            let fits = match kind {
                "boolean" => value.is_boolean(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                "string" => value.is_string(),
                _ => true,
            };
            assert!(fits, "{field}: {value} is a {kind}");
        }
    }
}

#[tokio::test]
async fn an_unknown_type_is_a_400_naming_the_allowed_values() {
    let app = spawn_app().await;
    let body = assert_error(
        app.post("/v3/functions", json!({ "functionName": "f", "type": "summarize" })).await,
        400,
    )
    .await;
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("summarize") && message.contains("transform, extract"), "{message}");
    assert_eq!(body["details"]["field"], "type");
    let body = assert_error(app.post("/v3/functions", json!({ "functionName": "f" })).await, 400).await;
    assert_eq!(body["details"]["field"], "type");
}

#[tokio::test]
async fn a_bad_setting_or_missing_render_config_is_a_400_naming_the_field() {
    let app = spawn_app().await;
    for (body, field) in [
        (json!({ "functionName": "s", "type": "send", "destinationType": "pigeon" }), "destinationType"),
        (json!({ "functionName": "s", "type": "split", "splitType": 3 }), "splitType"),
        (
            json!({ "functionName": "s", "type": "split", "splitConfig": {"by": "chapters"} }),
            "splitConfig.by",
        ),
        (
            json!({ "functionName": "s", "type": "split", "splitConfig": {"by": "delimiter"} }),
            "splitConfig.delimiter",
        ),
        (
            json!({ "functionName": "c", "type": "route", "classifications": [{"name": "a", "regex": {"patterns": ["(x"]}}] }),
            "classifications[0].regex.patterns[0]",
        ),
        (
            json!({ "functionName": "c", "type": "classify", "classifications": [{"description": "x"}] }),
            "classifications[0].name",
        ),
        // Tenant patterns are bounded: 101 keywords in all, or one pattern past 1 MiB compiled.
        (
            json!({ "functionName": "c", "type": "classify", "classifications": [{"name": "a", "keywords": vec!["k"; 101]}] }),
            "classifications",
        ),
        (
            json!({ "functionName": "c", "type": "classify", "classifications": [{"name": "a", "regex": {"patterns": ["\\w{100}"]}}] }),
            "classifications[0].regex.patterns[0]",
        ),
        (json!({ "functionName": "r", "type": "render" }), "renderConfig"),
        // A parse function's schema validates its outputs: the outputSchema's bounds hold.
        (
            json!({ "functionName": "p", "type": "parse", "parseConfig": {"schema": "invoice"} }),
            "parseConfig.schema",
        ),
        (
            json!({ "functionName": "p", "type": "parse", "parseConfig": {"schema": nested_schema(11)} }),
            "parseConfig.schema",
        ),
        (
            json!({ "functionName": "p", "type": "parse", "parseConfig": {"schema": {"type": "nonsense"}} }),
            "parseConfig.schema",
        ),
        (json!({ "functionName": "t", "type": "transform", "extraConfig": "on" }), "extraConfig"),
        (json!({ "functionName": "t", "type": "transform", "tags": "finance" }), "tags"),
    ] {
        let error = assert_error(app.post("/v3/functions", body.clone()).await, 400).await;
        assert_eq!(error["details"]["field"], field, "{body} gave {error}");
    }
    let within =
        json!({ "functionName": "p", "type": "parse", "parseConfig": {"schema": nested_schema(10)} });
    assert_eq!(app.post("/v3/functions", within).await.status(), 200);
}

/// An object schema whose properties nest `levels` deep (the root is level 1).
fn nested_schema(levels: usize) -> Value {
    (1..levels)
        .fold(json!({"type": "string"}), |inner, _| json!({"type": "object", "properties": {"a": inner}}))
}

#[tokio::test]
async fn an_enrich_step_that_could_never_run_is_refused_on_save_naming_its_option() {
    let app = spawn_app().await;
    let enrich = |name: &str, step: Value| {
        let mut step_with =
            json!({"sourceField": "lines[*].sku", "targetField": "m", "collectionName": "parts"});
        step_with.as_object_mut().unwrap().extend(step.as_object().unwrap().clone());
        json!({"functionName": name, "type": "enrich", "config": {"steps": [step_with]}})
    };
    for (step, field) in [
        (json!({"topK": 500}), "config.steps[0].topK"),
        (json!({"topK": "5"}), "config.steps[0].topK"),
        (json!({"searchMode": "fuzzy"}), "config.steps[0].searchMode"),
        (json!({"includeScore": "yes"}), "config.steps[0].includeScore"),
        (json!({"collectionName": ""}), "config.steps[0].collectionName"),
    ] {
        let error = assert_error(app.post("/v3/functions", enrich("e", step.clone())).await, 400).await;
        assert_eq!(error["details"]["field"], field, "{step} gave {error}");
    }
    // What can run is kept as given (a whole float is that number); a version without steps,
    // and bem's endpoint source (which canon does not run), are kept and fail at their call.
    let saved = json(app.post("/v3/functions", enrich("e", json!({"topK": 2.0}))).await).await;
    assert_eq!(saved["function"]["config"]["steps"][0]["topK"], 2.0, "{saved}");
    let patch = json!({"config": {"steps": [{"sourceField": "a", "targetField": "b", "collectionName": "c", "topK": 0}]}});
    let error = assert_error(app.patch("/v3/functions/e", patch).await, 400).await;
    assert_eq!(error["details"]["field"], "config.steps[0].topK", "{error}");
    let bare = json!({"functionName": "later", "type": "enrich"});
    assert_eq!(app.post("/v3/functions", bare).await.status(), 200);
    assert_eq!(app.post("/v3/functions", enrich("bem", json!({"source": "endpoint"}))).await.status(), 200);
}

#[tokio::test]
async fn a_bad_function_name_is_a_400() {
    let app = spawn_app().await;
    for name in ["has space", "", "dots.not.allowed", &"x".repeat(129)] {
        let body = json!({ "functionName": name, "type": "transform" });
        let error = assert_error(app.post("/v3/functions", body).await, 400).await;
        assert_eq!(error["details"]["field"], "functionName");
    }
}

#[tokio::test]
async fn a_malformed_output_schema_is_a_400() {
    let app = spawn_app().await;
    for schema in
        [json!([1, 2]), json!("object"), json!({ "type": "no-such-type" }), json!({ "required": "total" })]
    {
        let body = json!({ "functionName": "bad", "type": "extract", "outputSchema": schema });
        let error = assert_error(app.post("/v3/functions", body).await, 400).await;
        assert_eq!(error["details"]["field"], "outputSchema", "{schema} gave {error}");
        assert!(!error["message"].as_str().unwrap().contains("model state limit"), "{error}");
    }
    assert_error(app.get("/v3/functions/bad").await, 404).await;
    // A pattern is bounded as every tenant pattern is: one whose compiled program passes 1 MiB
    // is refused on save (a call would build the same validator).
    let huge =
        json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "\\p{L}{100}"}}});
    let body = json!({ "functionName": "bad", "type": "extract", "outputSchema": huge });
    let error = assert_error(app.post("/v3/functions", body).await, 400).await;
    assert!(error["message"].as_str().unwrap().contains("not a valid JSON Schema"), "{error}");
    let fine =
        json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^INV-\\d{6}$"}}});
    let body = json!({ "functionName": "fine", "type": "extract", "outputSchema": fine });
    assert_eq!(app.post("/v3/functions", body).await.status(), 200);
}

#[tokio::test]
async fn an_output_schema_past_the_bounds_exceeds_the_model_state_limit() {
    let app = spawn_app().await;
    let mut deep = json!({ "type": "string" });
    for _ in 0..10 {
        deep = json!({ "type": "object", "properties": { "inner": deep } });
    }
    let wide: serde_json::Map<String, Value> =
        (0..501).map(|i| (format!("field{i}"), json!({ "type": "string" }))).collect();
    let large = json!({ "type": "object", "description": "x".repeat(70 * 1024) });
    for schema in [deep, json!({ "type": "object", "properties": wide }), large] {
        let body = json!({ "functionName": "huge", "type": "extract", "outputSchema": schema });
        let error = assert_error(app.post("/v3/functions", body).await, 400).await;
        assert!(error["message"].as_str().unwrap().contains("model state limit exceeded"), "{error}");
    }
    let mut fine = json!({ "type": "string" });
    for _ in 0..9 {
        fine = json!({ "type": "object", "properties": { "inner": fine } });
    }
    app.create_function(json!({ "functionName": "nested", "type": "extract", "outputSchema": fine })).await;
}

#[tokio::test]
async fn a_taken_function_name_is_a_409() {
    let app = spawn_app().await;
    app.transform("invoice", json!({})).await;
    let error = assert_error(
        app.post("/v3/functions", json!({ "functionName": "invoice", "type": "extract" })).await,
        409,
    )
    .await;
    assert!(error["message"].as_str().unwrap().contains("function name already exists"), "{error}");
    app.transform("other", json!({})).await;
    let error =
        assert_error(app.patch("/v3/functions/other", json!({ "functionName": "invoice" })).await, 409).await;
    assert!(error["message"].as_str().unwrap().contains("function name already exists"), "{error}");
}

#[tokio::test]
async fn an_update_writes_a_new_version_and_leaves_the_old_one_unchanged() {
    let app = spawn_app().await;
    let v1 = app.transform("invoice", json!({ "displayName": "Invoices", "tags": ["finance"] })).await;
    let new_schema = json!({ "type": "object", "properties": { "iban": { "type": "string" } } });
    let v2 = app.update_function("invoice", json!({ "type": "transform", "outputSchema": new_schema })).await;
    assert_eq!(v2["versionNum"], 2);
    assert_eq!(v2["functionID"], v1["functionID"]);
    assert_eq!(v2["outputSchema"], new_schema);
    assert_eq!(v2["displayName"], "Invoices", "what is not sent is kept");
    assert_eq!(v2["tags"], json!(["finance"]));
    assert_eq!(v2["audit"]["functionCreatedBy"], v1["audit"]["functionCreatedBy"]);
    assert_ne!(
        v2["audit"]["versionCreatedBy"]["userActionID"],
        v1["audit"]["versionCreatedBy"]["userActionID"]
    );
    let v3 = app.update_function("invoice", json!({ "displayName": "Bills" })).await;
    assert_eq!((v3["versionNum"].clone(), v3["outputSchema"].clone()), (json!(3), new_schema.clone()));

    let old = app.read("/v3/functions/invoice/versions/1").await["function"].clone();
    assert_eq!(old["outputSchema"], invoice_schema());
    assert_eq!(old["displayName"], "Invoices");
    assert_eq!(old["versionNum"], 1);
    assert_eq!(old["audit"], v1["audit"]);
    assert_eq!(app.read("/v3/functions/invoice").await["function"]["versionNum"], 3);

    let versions = app.read("/v3/functions/invoice/versions").await;
    assert_eq!(versions["totalCount"], 3);
    let nums: Vec<i64> =
        versions["versions"].as_array().unwrap().iter().map(|v| v["versionNum"].as_i64().unwrap()).collect();
    assert_eq!(nums, vec![1, 2, 3]);
    let page = app.read("/v3/functions/invoice/versions?sortOrder=desc&startingAfter=3&limit=1").await;
    assert_eq!(page["versions"][0]["versionNum"], 2);
    let page = app.read("/v3/functions/invoice/versions?endingBefore=3&limit=1").await;
    assert_eq!(page["versions"][0]["versionNum"], 2);
    assert_error(app.get("/v3/functions/invoice/versions/9").await, 404).await;
    assert_error(app.get("/v3/functions/invoice/versions/one").await, 400).await;

    app.update_function("invoice", json!({ "functionName": "bill" })).await;
    assert_error(app.get("/v3/functions/invoice").await, 404).await;
    assert_eq!(app.read("/v3/functions/bill/versions/1").await["function"]["outputSchema"], invoice_schema());
}

#[tokio::test]
async fn extra_config_is_shown_only_with_include_extra_settings() {
    let app = spawn_app().await;
    app.transform("invoice", json!({ "extraConfig": { "enableBoundingBoxes": true } })).await;
    app.transform("plain", json!({})).await;
    let hidden = app.read("/v3/functions/invoice").await["function"].clone();
    assert!(hidden.get("extraConfig").is_none(), "{hidden}");
    let shown = app.read("/v3/functions/invoice?includeExtraSettings=true").await["function"].clone();
    assert_eq!(shown["extraConfig"], json!({ "enableBoundingBoxes": true }));
    let version =
        app.read("/v3/functions/invoice/versions/1?includeExtraSettings=true").await["function"].clone();
    assert_eq!(version["extraConfig"], json!({ "enableBoundingBoxes": true }));
    let version = app.read("/v3/functions/invoice/versions/1").await["function"].clone();
    assert!(version.get("extraConfig").is_none(), "{version}");
    let listed = app.read("/v3/functions?includeExtraSettings=true").await;
    assert!(listed["functions"].as_array().unwrap().iter().all(|f| f["extraConfig"].is_object()), "{listed}");
    let listed = app.read("/v3/functions").await;
    assert!(
        listed["functions"].as_array().unwrap().iter().all(|f| f.get("extraConfig").is_none()),
        "{listed}"
    );
    assert_error(app.get("/v3/functions/invoice?includeExtraSettings=yes").await, 400).await;
}

#[tokio::test]
async fn the_version_envelope_names_the_workflow_versions_running_it() {
    let app = spawn_app().await;
    let function = app.transform("invoice", json!({})).await;
    let workflow = app
        .create_workflow(json!({ "name": "books", "mainNodeName": "invoice",
        "nodes": [{ "function": { "name": "invoice" } }] }))
        .await;
    app.update_function("invoice", json!({ "displayName": "v2" })).await;
    let update =
        json!({ "mainNodeName": "invoice", "nodes": [{ "function": { "id": function["functionID"] } }] });
    let response = app.patch("/v3/workflows/books", update).await;
    assert_eq!(response.status(), 200);

    let v1 = app.read("/v3/functions/invoice/versions/1").await["function"].clone();
    let expected = |nums: Value| {
        json!([{ "workflowID": workflow["id"], "workflowName": "books", "currentVersionNum": 2,
            "usedInWorkflowVersionNums": nums }])
    };
    assert_eq!(v1["usedInWorkflows"], expected(json!([1])));
    let v2 = app.read("/v3/functions/invoice/versions/2").await["function"].clone();
    assert_eq!(v2["usedInWorkflows"], expected(json!([2])));
    let current = app.read("/v3/functions/invoice").await["function"].clone();
    assert_eq!(current["usedInWorkflows"], expected(json!([1, 2])));
    let version_list = app.read("/v3/functions/invoice/versions").await;
    assert_eq!(version_list["versions"][0]["usedInWorkflows"], expected(json!([1])));
}

#[tokio::test]
async fn deleting_a_function_a_workflow_runs_is_a_409_naming_the_workflow() {
    let app = spawn_app().await;
    let function = app.transform("invoice", json!({})).await;
    let id = function["functionID"].as_str().unwrap().to_string();
    let only = json!([{ "function": { "name": "invoice" } }]);
    app.create_workflow(json!({ "name": "books", "mainNodeName": "invoice", "nodes": only })).await;
    let error = assert_error(app.delete("/v3/functions/invoice").await, 409).await;
    assert!(error["message"].as_str().unwrap().contains("\"books\""), "{error}");

    let response = app.delete("/v3/workflows/books").await;
    assert_eq!(response.status(), 200);
    let response = app.delete("/v3/functions/invoice").await;
    assert_eq!(response.status(), 204);
    assert_error(app.get("/v3/functions/invoice").await, 404).await;
    assert_error(app.get("/v3/functions/invoice/versions/1").await, 404).await;
    assert_error(app.delete("/v3/functions/invoice").await, 404).await;
    let loaded = app.app().state.records.function_version(app.owner(), &id, 1).await.unwrap();
    assert!(loaded.is_none(), "deleted versions are gone for the executor too");
    app.transform("invoice", json!({})).await;
}

#[tokio::test]
async fn the_executor_loads_old_function_versions_after_an_update() {
    let app = spawn_app().await;
    let function = app
        .create_function(json!({ "functionName": "router", "type": "route",
        "classifications": [{ "name": "a" }], "extraConfig": { "engine": "rules" } }))
        .await;
    let id = function["functionID"].as_str().unwrap();
    app.update_function("router", json!({ "type": "classify", "classifications": [{ "name": "b" }] })).await;
    let records = &app.app().state.records;
    let v1 = records.function_version(app.owner(), id, 1).await.unwrap().expect("version 1");
    assert_eq!((v1.function_type.as_str(), v1.version_num), ("route", 1));
    assert_eq!(v1.kind(), canon::versions::Kind::Classify);
    assert_eq!(v1.body["classifications"], json!([{ "name": "a" }]));
    assert_eq!(v1.body["extraConfig"], json!({ "engine": "rules" }), "the executor sees extraConfig");
    let v2 = records.function_version(app.owner(), id, 2).await.unwrap().expect("version 2");
    assert_eq!(
        (v2.function_type.as_str(), v2.body["classifications"].clone()),
        ("classify", json!([{ "name": "b" }]))
    );
    assert!(records.function_version(app.owner(), id, 3).await.unwrap().is_none());
    let elsewhere = Owner { account_id: &app.account_id, environment: "production" };
    assert!(records.function_version(elsewhere, id, 1).await.unwrap().is_none());
}

#[tokio::test]
async fn a_function_of_another_environment_is_not_found() {
    let app = spawn_app().await;
    app.transform("invoice", json!({})).await;
    let production = app.new_key(None, Environment::Production).await;
    let other = |method: Method, path: &str| {
        app.client.request(method, format!("{}{path}", app.address)).header("x-api-key", &production)
    };
    for (method, path) in [
        (Method::GET, "/v3/functions/invoice"),
        (Method::GET, "/v3/functions/invoice/versions"),
        (Method::GET, "/v3/functions/invoice/versions/1"),
        (Method::DELETE, "/v3/functions/invoice"),
    ] {
        let response = other(method.clone(), path).send().await.unwrap();
        assert_error(response, 404).await;
    }
    let response =
        other(Method::PATCH, "/v3/functions/invoice").json(&json!({ "displayName": "x" })).send().await;
    assert_error(response.unwrap(), 404).await;
    let listed = other(Method::GET, "/v3/functions").send().await.unwrap();
    assert_eq!(json(listed).await, json!({ "functions": [], "totalCount": 0 }));
    let response =
        other(Method::POST, "/v3/functions").json(&json!({ "functionName": "invoice", "type": "extract" }));
    assert_eq!(response.send().await.unwrap().status(), 200, "the name is free in the other environment");
}

#[tokio::test]
async fn a_dashboard_user_is_named_in_the_audit() {
    let app = spawn_app().await;
    let (user_id, token) = app.dashboard_token("operator").await;
    let body = json!({ "functionName": "invoice", "type": "transform" });
    let response = app.as_user(Method::POST, "/v3/functions", &token).json(&body).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let created = json(response).await["function"].clone();
    let by = &created["audit"]["functionCreatedBy"];
    assert_eq!(by["userID"], user_id);
    assert!(by["userEmail"].as_str().is_some_and(|e| e.ends_with("@example.com")), "{by}");
    assert!(by.get("apiKeyName").is_none(), "{by}");
}

#[tokio::test]
async fn the_function_list_applies_every_filter_and_pages_both_ways() {
    let app = spawn_app().await;
    let a =
        app.transform("alpha", json!({ "displayName": "Invoice Reader", "tags": ["finance", "in"] })).await;
    let b =
        json!({ "functionName": "beta", "type": "route", "displayName": "Mail sorter", "tags": ["mail"] });
    let b = app.create_function(b).await;
    let c =
        app.create_function(json!({ "functionName": "gamma", "type": "extract", "tags": ["finance"] })).await;
    let d = app.create_function(json!({ "functionName": "delta", "type": "split" })).await;
    let ids =
        |v: &[&Value]| v.iter().map(|f| f["functionID"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let workflow = app
        .create_workflow(json!({ "name": "pipe", "mainNodeName": "alpha",
        "nodes": [{ "function": { "name": "alpha" } }, { "function": { "name": "beta" } }],
        "edges": [{ "sourceNodeName": "alpha", "destinationNodeName": "beta" }] }))
        .await;
    let wf = workflow["id"].as_str().unwrap();
    app.patch(
        "/v3/workflows/pipe",
        json!({ "mainNodeName": "gamma", "nodes": [{ "function": { "name": "gamma" } }] }),
    )
    .await;

    let list = |query: String| listed(&app, "functions", "functionID", query);
    assert_eq!(list(String::new()).await, (ids(&[&a, &b, &c, &d]), 4));
    let (a_id, b_id) = (a["functionID"].as_str().unwrap(), b["functionID"].as_str().unwrap());
    assert_eq!(list(format!("functionIDs={a_id},{b_id}")).await, (ids(&[&a, &b]), 2));
    assert_eq!(list(format!("functionIDs[]={a_id}&functionIDs[]={b_id}")).await, (ids(&[&a, &b]), 2));
    assert_eq!(list("functionNames=gamma&functionNames=delta".into()).await, (ids(&[&c, &d]), 2));
    assert_eq!(list("displayName=invoice".into()).await, (ids(&[&a]), 1));
    assert_eq!(list("tags=finance,mail".into()).await, (ids(&[&a, &b, &c]), 3));
    assert_eq!(list("types=route,split".into()).await, (ids(&[&b, &d]), 2));
    assert_eq!(list("tags=finance&types=extract".into()).await, (ids(&[&c]), 1), "filters AND together");
    assert_eq!(list(format!("workflowIDs={wf}")).await, (ids(&[&c]), 1), "the current version's functions");
    assert_eq!(list("workflowNames=pipe".into()).await, (ids(&[&c]), 1));
    assert_eq!(list(format!("workflowIDVersionNums={wf}.1")).await, (ids(&[&a, &b]), 2));
    assert_eq!(list("workflowNameVersionNums=pipe.2".into()).await, (ids(&[&c]), 1));
    assert_eq!(list("workflowNameVersionNums=pipe.3".into()).await, (vec![], 0));

    assert_eq!(list("limit=2".into()).await, (ids(&[&a, &b]), 4), "totalCount ignores the page");
    let b_id = b["functionID"].as_str().unwrap();
    assert_eq!(list(format!("limit=2&startingAfter={b_id}")).await, (ids(&[&c, &d]), 4));
    let d_id = d["functionID"].as_str().unwrap();
    assert_eq!(list(format!("limit=2&endingBefore={d_id}")).await, (ids(&[&b, &c]), 4));
    assert_eq!(list("sortOrder=desc&limit=3".into()).await, (ids(&[&d, &c, &b]), 4));
    assert_eq!(list(format!("sortOrder=desc&startingAfter={b_id}")).await, (ids(&[&a]), 4));
    assert_eq!(list(format!("sortOrder=desc&limit=1&endingBefore={b_id}")).await, (ids(&[&c]), 4));

    for bad in [
        "limit=0",
        "limit=101",
        "sortOrder=up",
        "types=summarize",
        "workflowNameVersionNums=pipe",
        "startingAfter=wf_1",
        "startingAfter=fn_A&endingBefore=fn_B",
    ] {
        assert_error(app.get(&format!("/v3/functions?{bad}")).await, 400).await;
    }
}

#[tokio::test]
async fn a_functions_tags_and_display_name_are_bounded_naming_the_field() {
    // Lists read and filter them for every function of a tenant.
    let app = spawn_app().await;
    let create = |extra: Value| {
        let mut body = json!({"functionName": "bounded", "type": "transform"});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        app.post("/v3/functions", body)
    };
    let tags: Vec<String> = (0..51).map(|i| format!("t{i}")).collect();
    let refused = assert_error(create(json!({ "tags": tags })).await, 400).await;
    assert!(refused["message"].as_str().unwrap().starts_with("tags: at most 50 tags (got 51)"), "{refused}");
    let refused = assert_error(create(json!({ "tags": ["x".repeat(129)] })).await, 400).await;
    assert!(refused["message"].as_str().unwrap().starts_with("tags[0]: must be at most 128"), "{refused}");
    let refused = assert_error(create(json!({ "displayName": "x".repeat(201) })).await, 400).await;
    assert!(
        refused["message"].as_str().unwrap().starts_with("displayName: must be at most 200"),
        "{refused}"
    );
    let tags: Vec<String> = (0..50).map(|i| format!("t{i}")).collect();
    assert_eq!(create(json!({ "tags": tags, "displayName": "x".repeat(200) })).await.status(), 200);
}

#[tokio::test]
async fn the_function_and_workflow_endpoints_are_in_the_openapi_document() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    for (path, method, errors) in [
        ("/v3/functions", "post", &["400", "401", "409"][..]),
        ("/v3/functions", "get", &["400", "401"][..]),
        ("/v3/functions/{functionName}", "get", &["404"][..]),
        ("/v3/functions/{functionName}", "patch", &["400", "404", "409"][..]),
        ("/v3/functions/{functionName}", "delete", &["404", "409"][..]),
        ("/v3/functions/{functionName}/versions", "get", &["400", "404"][..]),
        ("/v3/functions/{functionName}/versions/{versionNum}", "get", &["404"][..]),
        ("/v3/workflows", "post", &["400", "409", "422"][..]),
        ("/v3/workflows", "get", &["400", "401"][..]),
        ("/v3/workflows/{workflowName}", "get", &["404"][..]),
        ("/v3/workflows/{workflowName}", "patch", &["400", "404", "409", "422"][..]),
        ("/v3/workflows/{workflowName}", "delete", &["404"][..]),
        ("/v3/workflows/{workflowName}/versions", "get", &["400", "404"][..]),
        ("/v3/workflows/{workflowName}/versions/{versionNum}", "get", &["404"][..]),
    ] {
        let operation = &doc["paths"][path][method];
        assert!(operation.is_object(), "{method} {path} is documented");
        for status in errors {
            assert!(operation["responses"][status].is_object(), "{method} {path} documents {status}");
        }
    }
    let schemas = &doc["components"]["schemas"];
    for (schema, field) in [
        ("Function", "usedInWorkflows"),
        ("FunctionInput", "outputSchema"),
        ("Workflow", "mainNodeName"),
        ("WorkflowInput", "nodes"),
        ("WorkflowDeleted", "connectorErrors"),
    ] {
        // FunctionInput flattens the type's settings, so its fields sit in an `allOf`.
        let text = schemas[schema].to_string();
        assert!(text.contains(&format!("\"{field}\":{{")), "{schema}.{field} in {text}");
    }
    let params = doc["paths"]["/v3/workflows"]["get"]["parameters"].as_array().unwrap();
    let names: Vec<&str> = params.iter().map(|p| p["name"].as_str().unwrap()).collect();
    for name in
        ["workflowIDs", "functionIDVersionNums", "functionNameVersionNums", "sortOrder", "endingBefore"]
    {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
}

/// Reads a response into its documented shape (unknown fields refused).
pub fn documented<T: serde::de::DeserializeOwned>(body: Value) -> T {
    match serde_json::from_value(body.clone()) {
        Ok(parsed) => parsed,
        Err(err) => panic!("{body} does not match the documented shape: {err}"),
    }
}

#[tokio::test]
async fn function_responses_have_exactly_the_documented_shape() {
    use canon::functions::schema::{FunctionEnvelope, FunctionPage, FunctionVersionPage};
    let app = spawn_app().await;
    app.transform("invoice", json!({ "displayName": "Invoices", "extraConfig": { "x": 1 } })).await;
    let only = json!([{ "function": { "name": "invoice" } }]);
    app.create_workflow(json!({ "name": "books", "mainNodeName": "invoice", "nodes": only })).await;
    let response = app.patch("/v3/functions/invoice", json!({ "tags": ["a"] })).await;
    let updated: FunctionEnvelope = documented(json(response).await);
    assert_eq!(updated.function.version_num, 2);
    let read: FunctionEnvelope =
        documented(app.read("/v3/functions/invoice?includeExtraSettings=true").await);
    assert_eq!(read.function.extra_config, Some(json!({ "x": 1 })));
    assert_eq!(read.function.used_in_workflows[0].used_in_workflow_version_nums, vec![1]);
    let version: FunctionEnvelope = documented(app.read("/v3/functions/invoice/versions/1").await);
    assert_eq!(version.function.audit.version_created_by.api_key_name.as_deref(), Some("test"));
    let page: FunctionPage = documented(app.read("/v3/functions").await);
    assert_eq!(page.total_count, 1);
    let versions: FunctionVersionPage = documented(app.read("/v3/functions/invoice/versions").await);
    assert_eq!(versions.versions.len(), 2);
}

#[tokio::test]
async fn a_list_page_of_large_functions_stops_at_16_mib_and_the_next_page_goes_on_both_ways() {
    // Each body nearly a request's 2 MB: a page of 100 would be 190 MB.
    let app = spawn_app().await;
    let mut ids = Vec::new();
    for n in 0..10 {
        let body = json!({"functionName": format!("big-{n}"), "type": "transform",
                          "extraConfig": {"notes": "d".repeat(1_900_000)}});
        let created = app.post("/v3/functions", body).await;
        assert_eq!(created.status(), 200, "function {n}");
        ids.push(json(created).await["function"]["functionID"].as_str().unwrap().to_string());
    }
    ids.sort();
    let listed = |page: &Value| -> Vec<String> {
        let functions = page["functions"].as_array().expect("functions");
        for function in functions {
            assert_eq!(
                function["extraConfig"]["notes"].as_str().map(str::len),
                Some(1_900_000),
                "shown whole"
            );
        }
        functions.iter().map(|f| f["functionID"].as_str().unwrap().to_string()).collect()
    };
    // 8 bodies of 1.9 MB fit in 16 MiB, 9 do not.
    let first = listed(&json(app.get("/v3/functions?limit=100&includeExtraSettings=true").await).await);
    assert_eq!(first, ids[..8]);
    let next = listed(
        &json(
            app.get(&format!("/v3/functions?limit=100&includeExtraSettings=true&startingAfter={}", ids[7]))
                .await,
        )
        .await,
    );
    assert_eq!(next, ids[8..]);
    // Backwards the page keeps the functions nearest its cursor, and the next goes on before them.
    let before = listed(
        &json(
            app.get(&format!("/v3/functions?limit=100&includeExtraSettings=true&endingBefore={}", ids[9]))
                .await,
        )
        .await,
    );
    assert_eq!(before, ids[1..9]);
    let earlier = listed(
        &json(
            app.get(&format!("/v3/functions?limit=100&includeExtraSettings=true&endingBefore={}", ids[1]))
                .await,
        )
        .await,
    );
    assert_eq!(earlier, ids[..1]);
    let descending = listed(
        &json(app.get("/v3/functions?limit=100&includeExtraSettings=true&sortOrder=desc").await).await,
    );
    assert_eq!(descending, ids.iter().rev().take(8).cloned().collect::<Vec<_>>());
}

#[tokio::test]
async fn a_function_whose_settings_hold_a_nul_character_is_listed_and_read_back() {
    let app = spawn_app().await;
    let body = json!({"functionName": "nul", "type": "extract", "displayName": "plain",
                      "outputSchema": {"type": "object", "properties": {"a\u{0}b": {"type": "string"}}},
                      "extraConfig": {"notes": "before\u{0}after"}});
    let created = app.post("/v3/functions", body).await;
    let status = created.status();
    let text = created.text().await.unwrap();
    assert_eq!(status, 200, "{text}");
    let listed = json(app.get("/v3/functions?includeExtraSettings=true&displayName=plain").await).await;
    assert_eq!(listed["functions"][0]["extraConfig"]["notes"], "before\u{0}after", "{listed}");
}
