//! Workflows over HTTP: create with pinned nodes, read, update into immutable versions,
//! graph validation (422s with their messages), delete, the list with every filter and
//! paging, tenancy and the executor's loader.

use crate::functions::{documented, listed};
use crate::helpers::{assert_error, json, spawn_app, TestApp};
use canon::store::records::keys::Environment;
use canon::store::records::Owner;
use reqwest::Method;
use serde_json::{json, Value};

impl TestApp {
    /// Creates a workflow and returns it (the inside of the `{workflow}` envelope).
    pub async fn create_workflow(&self, body: Value) -> Value {
        let response = self.post("/v3/workflows", body.clone()).await;
        assert_eq!(response.status(), 200, "creating workflow {body}");
        json(response).await["workflow"].clone()
    }

    /// A workflow update answering 200; the whole body.
    async fn update_workflow(&self, name: &str, body: Value) -> Value {
        let response = self.patch(&format!("/v3/workflows/{name}"), body.clone()).await;
        assert_eq!(response.status(), 200, "updating workflow {name} with {body}");
        json(response).await
    }

    /// Functions `extract`, `route` and `send` for graphs.
    async fn three_functions(&self) -> (Value, Value, Value) {
        (
            self.create_function(json!({ "functionName": "extract", "type": "extract" })).await,
            self.create_function(json!({ "functionName": "route", "type": "route",
                "classifications": [{ "name": "invoice" }, { "name": "receipt" }] }))
                .await,
            self.create_function(json!({ "functionName": "send", "type": "send" })).await,
        )
    }
}

fn node(function: &str) -> Value {
    json!({ "function": { "name": function } })
}

fn edge(source: &str, destination: &str) -> Value {
    json!({ "sourceNodeName": source, "destinationNodeName": destination })
}

/// Posts a workflow expecting `status`; the error body.
async fn refused(app: &TestApp, body: Value, status: u16) -> Value {
    assert_error(app.post("/v3/workflows", body).await, status).await
}

#[tokio::test]
async fn a_workflow_is_created_with_every_node_pinned_to_a_function_version() {
    let app = spawn_app().await;
    let (extract, route, _) = app.three_functions().await;
    app.update_function("extract", json!({ "displayName": "v2" })).await;
    let created = app
        .create_workflow(json!({
            "name": "intake",
            "displayName": "Mail intake",
            "tags": ["mail"],
            "mainNodeName": "extract",
            "nodes": [
                { "function": { "name": "extract" }, "metadata": { "x": 10 } },
                { "name": "sorter", "function": { "id": route["functionID"], "versionNum": 1 } },
                { "name": "first", "function": { "name": "extract", "versionNum": 1 } },
            ],
            "edges": [
                { "sourceNodeName": "extract", "destinationNodeName": "sorter", "metadata": { "color": "red" } },
                { "sourceNodeName": "sorter", "destinationNodeName": "first", "destinationName": "invoice" },
            ],
            "connectors": [{ "name": "drive", "type": "paragon", "paragon": { "integration": "gdrive" } }],
        }))
        .await;
    let id = created["id"].as_str().unwrap();
    assert!(id.starts_with("wf_"), "{created}");
    assert_eq!((created["name"].clone(), created["versionNum"].clone()), (json!("intake"), json!(1)));
    assert_eq!(created["displayName"], "Mail intake");
    assert_eq!(created["tags"], json!(["mail"]));
    assert_eq!(created["mainNodeName"], "extract");
    assert_eq!(created["emailAddress"], format!("{}@inbound.canon.local", id.to_lowercase()));
    assert_eq!(created["restricted"], false);
    assert_eq!(
        created["nodes"],
        json!([
            { "name": "extract", "function": { "id": extract["functionID"], "name": "extract", "versionNum": 2 },
                "metadata": { "x": 10 } },
            { "name": "sorter", "function": { "id": route["functionID"], "name": "route", "versionNum": 1 },
                "metadata": {} },
            { "name": "first", "function": { "id": extract["functionID"], "name": "extract", "versionNum": 1 },
                "metadata": {} },
        ])
    );
    assert_eq!(created["edges"][0]["metadata"], json!({ "color": "red" }));
    assert_eq!(created["edges"][1]["destinationName"], "invoice");
    assert!(created["edges"][0].get("destinationName").is_none());
    let connector = &created["connectors"][0];
    assert!(connector["connectorID"].as_str().is_some_and(|c| c.starts_with("con_")), "{connector}");
    assert_eq!(
        (connector["type"].clone(), connector["paragon"]["integration"].clone()),
        (json!("paragon"), json!("gdrive"))
    );
    assert_eq!(created["audit"]["workflowCreatedBy"]["apiKeyName"], "test");
    assert!(created["createdAt"].is_string() && created["updatedAt"].is_string());
    assert_eq!(app.read("/v3/workflows/intake").await["workflow"], created);
    assert_error(app.get("/v3/workflows/nothing").await, 404).await;
}

#[tokio::test]
async fn a_main_node_name_not_among_the_nodes_is_a_422_with_the_exact_message() {
    let app = spawn_app().await;
    app.three_functions().await;
    let error =
        refused(&app, json!({ "name": "w", "mainNodeName": "missing", "nodes": [node("extract")] }), 422)
            .await;
    assert_eq!(error["message"], "workflow mainNodeName must be one of nodes[].name");
    assert_eq!(error["details"]["field"], "mainNodeName");
}

#[tokio::test]
async fn graph_errors_are_422s_naming_the_problem() {
    let app = spawn_app().await;
    let (extract, ..) = app.three_functions().await;
    let nodes = json!([node("extract"), node("route"), node("send")]);
    for (body, fragment) in [
        (
            json!({ "edges": [edge("extract", "route"), edge("route", "send"), edge("send", "route")] }),
            "cycle",
        ),
        (json!({ "edges": [edge("route", "route")] }), "cycle"),
        (json!({ "edges": [edge("extract", "ghost")] }), "\"ghost\""),
        (json!({ "edges": [edge("ghost", "route")] }), "\"ghost\""),
        (json!({ "edges": [edge("route", "extract")] }), "main node"),
        (
            json!({ "edges": [{ "sourceNodeName": "extract", "destinationNodeName": "route", "destinationName": "x" }] }),
            "no outlet named \"x\"",
        ),
        (
            json!({ "edges": [edge("extract", "route"),
                { "sourceNodeName": "route", "destinationNodeName": "send", "destinationName": "memo" }] }),
            "invoice, receipt",
        ),
        (json!({ "nodes": [node("extract"), node("extract")] }), "more than one node"),
        (json!({ "nodes": [node("extract"), node("nothing")] }), "no function is named \"nothing\""),
        (json!({ "nodes": [node("extract"), { "function": { "id": "fn_NOPE" } }] }), "no function has ID"),
        (
            json!({ "nodes": [node("extract"), { "function": { "name": "route", "versionNum": 2 } }] }),
            "no version 2",
        ),
        (
            json!({ "nodes": [{ "function": { "id": extract["functionID"], "name": "route" } }] }),
            "not \"route\"",
        ),
    ] {
        let mut workflow = json!({ "name": "w", "mainNodeName": "extract", "nodes": nodes.clone() });
        workflow.as_object_mut().unwrap().extend(body.as_object().unwrap().clone());
        let error = refused(&app, workflow.clone(), 422).await;
        assert!(error["message"].as_str().unwrap().contains(fragment), "{workflow} gave {error}");
    }
    assert_error(app.get("/v3/workflows/w").await, 404).await;
}

#[tokio::test]
async fn a_workflow_without_nodes_or_with_a_malformed_field_is_a_400() {
    let app = spawn_app().await;
    app.three_functions().await;
    for (body, field) in [
        (json!({ "name": "w", "mainNodeName": "extract", "nodes": [] }), "nodes"),
        (json!({ "name": "w", "mainNodeName": "extract" }), "nodes"),
        (json!({ "name": "bad name", "mainNodeName": "extract", "nodes": [node("extract")] }), "name"),
        (json!({ "mainNodeName": "extract", "nodes": [node("extract")] }), "name"),
        (
            json!({ "name": "w", "mainNodeName": "extract", "nodes": [{ "function": {} }] }),
            "nodes[0].function",
        ),
        (
            json!({ "name": "w", "mainNodeName": "extract",
                "nodes": [{ "function": { "name": "extract" }, "metadata": 3 }] }),
            "nodes[0].metadata",
        ),
        (
            json!({ "name": "w", "mainNodeName": "extract", "nodes": [node("extract")],
            "connectors": [{ "name": "c", "type": "zapier" }] }),
            "connectors[0].type",
        ),
    ] {
        let error = refused(&app, body.clone(), 400).await;
        assert_eq!(error["details"]["field"], field, "{body} gave {error}");
    }
    let error = refused(&app, json!({ "name": "w", "mainNodeName": "extract", "nodes": "all" }), 400).await;
    assert_eq!(error["details"]["field"], "nodes");
}

#[tokio::test]
async fn a_taken_workflow_name_is_a_409() {
    let app = spawn_app().await;
    app.three_functions().await;
    let body = json!({ "name": "w", "mainNodeName": "extract", "nodes": [node("extract")] });
    app.create_workflow(body.clone()).await;
    let error = refused(&app, body, 409).await;
    assert!(error["message"].as_str().unwrap().contains("already exists"), "{error}");
    app.create_workflow(json!({ "name": "v", "mainNodeName": "route", "nodes": [node("route")] })).await;
    assert_error(app.patch("/v3/workflows/v", json!({ "name": "w" })).await, 409).await;
}

#[tokio::test]
async fn an_update_writes_a_new_version_and_leaves_the_old_one_unchanged() {
    let app = spawn_app().await;
    app.three_functions().await;
    let v1 = app
        .create_workflow(json!({ "name": "intake", "mainNodeName": "extract", "nodes": [node("extract")],
            "tags": ["a"], "connectors": [{ "name": "drive", "type": "paragon" }] }))
        .await;
    let renamed = app.update_workflow("intake", json!({ "displayName": "Intake" })).await;
    assert_eq!(renamed["connectorErrors"], json!([]));
    let v2 = &renamed["workflow"];
    assert_eq!((v2["versionNum"].clone(), v2["displayName"].clone()), (json!(2), json!("Intake")));
    assert_eq!(v2["nodes"], v1["nodes"], "the graph is copied when left out");
    assert_eq!(v2["tags"], json!(["a"]));
    assert_eq!(v2["connectors"], v1["connectors"]);
    assert_eq!(v2["audit"]["workflowCreatedBy"], v1["audit"]["workflowCreatedBy"]);

    let regraph = json!({ "mainNodeName": "extract", "nodes": [node("extract"), node("send")],
        "edges": [edge("extract", "send")] });
    let v3 = app.update_workflow("intake", regraph).await["workflow"].clone();
    assert_eq!(v3["versionNum"], 3);
    assert_eq!(v3["nodes"].as_array().unwrap().len(), 2);
    let error =
        assert_error(app.patch("/v3/workflows/intake", json!({ "nodes": [node("route")] })).await, 400).await;
    assert!(error["message"].as_str().unwrap().contains("together"), "{error}");
    let bad = json!({ "mainNodeName": "x", "nodes": [node("route")] });
    assert_error(app.patch("/v3/workflows/intake", bad).await, 422).await;

    let old = app.read("/v3/workflows/intake/versions/1").await["workflow"].clone();
    assert_eq!(old["versionNum"], 1);
    assert_eq!(old["nodes"], v1["nodes"]);
    assert!(old.get("displayName").is_none(), "{old}");
    assert_eq!(old["connectors"], json!([]), "connectors are current state, not history");
    let versions = app.read("/v3/workflows/intake/versions").await;
    assert_eq!(versions["totalCount"], 3);
    let nums: Vec<i64> =
        versions["versions"].as_array().unwrap().iter().map(|v| v["versionNum"].as_i64().unwrap()).collect();
    assert_eq!(nums, vec![1, 2, 3]);
    let page = app.read("/v3/workflows/intake/versions?startingAfter=1&limit=1").await;
    assert_eq!((page["versions"][0]["versionNum"].clone(), page["totalCount"].clone()), (json!(2), json!(3)));
    let page = app.read("/v3/workflows/intake/versions?sortOrder=desc&endingBefore=1&limit=1").await;
    assert_eq!(page["versions"][0]["versionNum"], 2);
    assert_error(app.get("/v3/workflows/intake/versions/4").await, 404).await;
}

#[tokio::test]
async fn updating_a_function_leaves_saved_workflow_versions_on_their_pins() {
    let app = spawn_app().await;
    app.three_functions().await;
    app.create_workflow(json!({ "name": "intake", "mainNodeName": "extract", "nodes": [node("extract")] }))
        .await;
    app.update_function("extract", json!({ "displayName": "v2" })).await;
    let workflow = app.read("/v3/workflows/intake").await["workflow"].clone();
    assert_eq!(workflow["nodes"][0]["function"]["versionNum"], 1);
    let loaded =
        app.app().state.records.current_workflow(owner(&app), "intake").await.unwrap().expect("loaded");
    assert_eq!(loaded.nodes[0].function_version_num, 1);
    let v2 =
        app.update_workflow("intake", json!({ "mainNodeName": "extract", "nodes": [node("extract")] })).await;
    assert_eq!(v2["workflow"]["nodes"][0]["function"]["versionNum"], 2, "a new version pins the current one");
}

fn owner(app: &TestApp) -> Owner<'_> {
    Owner { account_id: &app.account_id, environment: "sandbox" }
}

#[tokio::test]
async fn the_executor_loads_the_current_workflow_version_with_its_graph() {
    let app = spawn_app().await;
    let (extract, route, send) = app.three_functions().await;
    app.create_workflow(json!({ "name": "intake", "mainNodeName": "extract",
        "nodes": [node("extract"), node("route"), { "name": "out", "function": { "name": "send" } }],
        "edges": [edge("extract", "route"), { "sourceNodeName": "route", "destinationNodeName": "out",
            "destinationName": "invoice" }] }))
        .await;
    let records = &app.app().state.records;
    let loaded = records.current_workflow(owner(&app), "intake").await.unwrap().expect("loaded");
    assert_eq!(
        (loaded.workflow_name.as_str(), loaded.version_num, loaded.main_node_name.as_str()),
        ("intake", 1, "extract")
    );
    let nodes: Vec<(&str, &str, i64)> = loaded
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.function_id.as_str(), n.function_version_num))
        .collect();
    assert_eq!(
        nodes,
        vec![
            ("extract", extract["functionID"].as_str().unwrap(), 1),
            ("route", route["functionID"].as_str().unwrap(), 1),
            ("out", send["functionID"].as_str().unwrap(), 1),
        ]
    );
    assert_eq!(loaded.edges[1].destination_name.as_deref(), Some("invoice"));
    assert_eq!(loaded.edges[0].destination_name, None);
    assert!(records.current_workflow(owner(&app), "nothing").await.unwrap().is_none());
    let production = Owner { account_id: &app.account_id, environment: "production" };
    assert!(records.current_workflow(production, "intake").await.unwrap().is_none());
}

#[tokio::test]
async fn deleting_a_workflow_answers_what_was_deleted_with_no_connector_errors() {
    let app = spawn_app().await;
    app.three_functions().await;
    let created = app
        .create_workflow(json!({ "name": "intake", "mainNodeName": "extract", "nodes": [node("extract")],
            "connectors": [{ "name": "drive", "type": "paragon" }] }))
        .await;
    app.update_workflow("intake", json!({ "tags": ["x"] })).await;
    let response = app.delete("/v3/workflows/intake").await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        json(response).await,
        json!({ "workflow": { "id": created["id"], "name": "intake", "versionNum": 2 }, "connectorErrors": [] })
    );
    assert_error(app.get("/v3/workflows/intake").await, 404).await;
    assert_error(app.get("/v3/workflows/intake/versions/1").await, 404).await;
    assert_error(app.delete("/v3/workflows/intake").await, 404).await;
    app.create_workflow(json!({ "name": "intake", "mainNodeName": "extract", "nodes": [node("extract")] }))
        .await;
}

#[tokio::test]
async fn a_workflow_of_another_environment_is_not_found() {
    let app = spawn_app().await;
    app.three_functions().await;
    app.create_workflow(json!({ "name": "intake", "mainNodeName": "extract", "nodes": [node("extract")] }))
        .await;
    let production = app.new_key(None, Environment::Production).await;
    let other = |method: Method, path: &str| {
        app.client.request(method, format!("{}{path}", app.address)).header("x-api-key", &production)
    };
    for (method, path) in [
        (Method::GET, "/v3/workflows/intake"),
        (Method::GET, "/v3/workflows/intake/versions"),
        (Method::GET, "/v3/workflows/intake/versions/1"),
        (Method::DELETE, "/v3/workflows/intake"),
    ] {
        assert_error(other(method, path).send().await.unwrap(), 404).await;
    }
    let response =
        other(Method::PATCH, "/v3/workflows/intake").json(&json!({ "tags": [] })).send().await.unwrap();
    assert_error(response, 404).await;
    let listed = other(Method::GET, "/v3/workflows").send().await.unwrap();
    assert_eq!(json(listed).await, json!({ "workflows": [], "totalCount": 0 }));
    let body = json!({ "name": "w", "mainNodeName": "extract", "nodes": [node("extract")] });
    let response = other(Method::POST, "/v3/workflows").json(&body).send().await.unwrap();
    let error = assert_error(response, 422).await;
    assert!(
        error["message"].as_str().unwrap().contains("no function is named"),
        "another environment's functions are invisible: {error}"
    );
}

#[tokio::test]
async fn the_workflow_list_applies_every_filter_and_counts_the_matches() {
    let app = spawn_app().await;
    let (extract, route, send) = app.three_functions().await;
    let a = app
        .create_workflow(json!({ "name": "alpha", "displayName": "Invoice Intake", "tags": ["finance"],
            "mainNodeName": "extract", "nodes": [node("extract")] }))
        .await;
    app.update_function("extract", json!({ "displayName": "v2" })).await;
    let b = app
        .create_workflow(json!({ "name": "beta", "displayName": "Mail", "tags": ["mail", "finance"],
            "mainNodeName": "route", "nodes": [node("route"), node("extract")],
            "edges": [edge("route", "extract")] }))
        .await;
    let c = app
        .create_workflow(
            json!({ "name": "gamma", "tags": ["ops"], "mainNodeName": "send", "nodes": [node("send")] }),
        )
        .await;
    let ids = |v: &[&Value]| v.iter().map(|w| w["id"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let id = |w: &Value| w["id"].as_str().unwrap().to_string();
    let fid = |f: &Value| f["functionID"].as_str().unwrap().to_string();
    let list = |query: String| listed(&app, "workflows", "id", query);

    assert_eq!(list(String::new()).await, (ids(&[&a, &b, &c]), 3));
    assert_eq!(list(format!("workflowIDs[]={}&workflowIDs[]={}", id(&a), id(&c))).await, (ids(&[&a, &c]), 2));
    assert_eq!(list(format!("workflowIDs={},{}", id(&a), id(&c))).await, (ids(&[&a, &c]), 2));
    assert_eq!(list("workflowNames[]=beta".into()).await, (ids(&[&b]), 1));
    assert_eq!(list("workflowNames=bet".into()).await, (vec![], 0), "names match exactly");
    assert_eq!(list("displayName=INTAKE".into()).await, (ids(&[&a]), 1));
    assert_eq!(list("tags[]=finance".into()).await, (ids(&[&a, &b]), 2));
    assert_eq!(list("tags=ops,mail".into()).await, (ids(&[&b, &c]), 2));
    assert_eq!(list(format!("functionIDs[]={}", fid(&extract))).await, (ids(&[&a, &b]), 2));
    assert_eq!(list(format!("functionIDs={},{}", fid(&route), fid(&send))).await, (ids(&[&b, &c]), 2));
    assert_eq!(list("functionNames[]=extract".into()).await, (ids(&[&a, &b]), 2));
    assert_eq!(list("functionNames=send".into()).await, (ids(&[&c]), 1));
    assert_eq!(list(format!("functionIDVersionNums[]={}.1", fid(&extract))).await, (ids(&[&a]), 1));
    assert_eq!(list(format!("functionIDVersionNums={}.2", fid(&extract))).await, (ids(&[&b]), 1));
    assert_eq!(list("functionNameVersionNums[]=extract.2".into()).await, (ids(&[&b]), 1));
    assert_eq!(list("functionNameVersionNums=extract.1,send.1".into()).await, (ids(&[&a, &c]), 2));
    assert_eq!(
        list("tags=finance&functionNames=route".into()).await,
        (ids(&[&b]), 1),
        "filters AND together"
    );

    // Version filters match the current version only.
    app.update_workflow("alpha", json!({ "mainNodeName": "extract", "nodes": [node("extract")] })).await;
    assert_eq!(list("functionNameVersionNums=extract.1".into()).await, (vec![], 0));

    for bad in [
        "functionIDVersionNums=abc",
        "functionNameVersionNums=extract.x",
        "limit=0",
        "limit=101",
        "sortOrder=sideways",
        "startingAfter=fn_A",
        "startingAfter=wf_A&endingBefore=wf_B",
    ] {
        assert_error(app.get(&format!("/v3/workflows?{bad}")).await, 400).await;
    }
    // An array filter takes 100 values: each name is a read, and each is compared with every node.
    let names = |n: usize| (0..n).map(|i| format!("f{i}")).collect::<Vec<_>>().join(",");
    assert_eq!(list(format!("functionNames=send,{}", names(99))).await, (ids(&[&c]), 1));
    let body = assert_error(app.get(&format!("/v3/workflows?functionNames={}", names(101))).await, 400).await;
    assert_eq!(body["details"]["field"], "functionNames");
    assert!(body["message"].as_str().unwrap().contains("at most 100 values (got 101)"), "{body}");
}

#[tokio::test]
async fn the_workflow_list_pages_both_ways_in_both_orders() {
    let app = spawn_app().await;
    app.three_functions().await;
    let mut all = Vec::new();
    for name in ["w1", "w2", "w3", "w4", "w5"] {
        let workflow = app
            .create_workflow(json!({ "name": name, "mainNodeName": "extract", "nodes": [node("extract")] }))
            .await;
        all.push(workflow["id"].as_str().unwrap().to_string());
    }
    let list = |query: String| listed(&app, "workflows", "id", query);
    let slice = |indexes: &[usize]| indexes.iter().map(|&i| all[i].clone()).collect::<Vec<_>>();
    assert_eq!(list("limit=2".into()).await, (slice(&[0, 1]), 5));
    assert_eq!(list(format!("limit=2&startingAfter={}", all[1])).await, (slice(&[2, 3]), 5));
    assert_eq!(list(format!("limit=2&startingAfter={}", all[4])).await, (vec![], 5));
    assert_eq!(list(format!("limit=2&endingBefore={}", all[2])).await, (slice(&[0, 1]), 5));
    assert_eq!(list(format!("limit=2&endingBefore={}", all[1])).await, (slice(&[0]), 5));
    assert_eq!(list("limit=2&sortOrder=desc".into()).await, (slice(&[4, 3]), 5));
    assert_eq!(list(format!("limit=2&sortOrder=desc&startingAfter={}", all[3])).await, (slice(&[2, 1]), 5));
    assert_eq!(list(format!("limit=2&sortOrder=desc&endingBefore={}", all[1])).await, (slice(&[3, 2]), 5));
    assert_eq!(list("sortOrder=asc".into()).await, (slice(&[0, 1, 2, 3, 4]), 5));
}

#[tokio::test]
async fn workflow_responses_have_exactly_the_documented_shape() {
    use canon::functions::schema::{
        WorkflowDeleted, WorkflowEnvelope, WorkflowPage, WorkflowUpdated, WorkflowVersionPage,
    };
    let app = spawn_app().await;
    app.three_functions().await;
    let body = json!({ "name": "intake", "displayName": "Intake", "tags": ["t"], "mainNodeName": "route",
        "nodes": [node("route"), node("send")],
        "edges": [{ "sourceNodeName": "route", "destinationNodeName": "send", "destinationName": "invoice",
            "metadata": { "m": 1 } }],
        "connectors": [{ "name": "drive", "type": "paragon", "paragon": { "configuration": { "a": 1 } } }] });
    let created: WorkflowEnvelope = documented(json(app.post("/v3/workflows", body).await).await);
    assert_eq!(created.workflow.connectors.len(), 1);
    let updated: WorkflowUpdated =
        documented(app.update_workflow("intake", json!({ "connectors": [] })).await);
    assert!(updated.workflow.connectors.is_empty() && updated.connector_errors.is_empty());
    let read: WorkflowEnvelope = documented(app.read("/v3/workflows/intake").await);
    assert_eq!(read.workflow.edges[0].destination_name.as_deref(), Some("invoice"));
    let version: WorkflowEnvelope = documented(app.read("/v3/workflows/intake/versions/1").await);
    assert_eq!(version.workflow.version_num, 1);
    let page: WorkflowPage = documented(app.read("/v3/workflows").await);
    assert_eq!(page.total_count, 1);
    let versions: WorkflowVersionPage = documented(app.read("/v3/workflows/intake/versions").await);
    assert_eq!(versions.total_count, 2);
    let deleted: WorkflowDeleted = documented(json(app.delete("/v3/workflows/intake").await).await);
    assert_eq!(deleted.workflow.version_num, 2);
}

#[tokio::test]
async fn functions_and_workflows_survive_a_restart() {
    let mut app = spawn_app().await;
    app.three_functions().await;
    app.update_function("extract", json!({ "displayName": "v2" })).await;
    let created = app
        .create_workflow(json!({ "name": "intake", "mainNodeName": "extract", "nodes": [node("extract")] }))
        .await;
    app.restart().await;
    assert_eq!(app.read("/v3/workflows/intake").await["workflow"], created);
    let function = app.read("/v3/functions/extract/versions/1").await["function"].clone();
    assert_eq!((function["versionNum"].clone(), function.get("displayName")), (json!(1), None));
    assert_eq!(app.read("/v3/functions/extract").await["function"]["displayName"], "v2");
}
