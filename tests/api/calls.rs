//! Workflow calls end to end: submission, waiting, statuses, deduplication, DAG execution
//! (split → transform → join), events, traces and resuming after a crash.

use crate::helpers::{assert_error, json, spawn_app, spawn_app_with, TestApp};
use base64::Engine as _;
use canon::jobs::{Handlers, JobHandler};
use serde_json::{json, Value};
use std::time::Duration;

pub const INVOICE: &str =
    "Invoice number: INV-42\nVendor: ACME Corp.\nTotal: $1,234.50\nDue date: 2026-01-31\n";

/// The spec's fields common to output and error events (`inboundEmail` only for e-mails).
const COMMON_FIELDS: [&str; 14] = [
    "eventID",
    "eventType",
    "createdAt",
    "referenceID",
    "functionCallTryNumber",
    "functionCallID",
    "functionID",
    "functionName",
    "functionVersionNum",
    "callID",
    "workflowID",
    "workflowName",
    "workflowVersionNum",
    "metadata",
];

pub fn invoice_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "invoiceNumber": {"type": "string"},
            "total": {"type": "number"},
            "dueDate": {"type": "string", "format": "date"}
        },
        "required": ["invoiceNumber", "total"]
    })
}

/// The invoice fields and the vendor: what a first node hands on to the next.
fn router_schema() -> Value {
    let mut schema = invoice_schema();
    schema["properties"]["vendor"] = json!({"type": "string"});
    schema
}

impl TestApp {
    /// Creates an extract function with `schema`.
    pub async fn extract_function(&self, name: &str, schema: Value) -> Value {
        self.create_function(json!({
            "functionName": name, "type": "extract", "outputSchemaName": "Out", "outputSchema": schema
        }))
        .await
    }

    /// Creates the transform "router": a first node that hands the invoice fields and the
    /// vendor on.
    pub async fn router_function(&self) -> Value {
        self.create_function(
            json!({"functionName": "router", "type": "transform", "outputSchemaName": "Invoice",
            "outputSchema": router_schema()}),
        )
        .await
    }

    /// Creates a workflow of `nodes` (node name = function name) and `edges`.
    pub async fn pipeline(&self, name: &str, nodes: &[&str], edges: &[(&str, &str)]) -> Value {
        let body = json!({
            "name": name,
            "mainNodeName": nodes[0],
            "nodes": nodes.iter().map(|n| json!({"name": n, "function": {"name": n}})).collect::<Vec<_>>(),
            "edges": edges.iter().map(|(s, d)| json!({"sourceNodeName": s, "destinationNodeName": d})).collect::<Vec<_>>(),
        });
        let response = self.post("/v3/workflows", body.clone()).await;
        assert_eq!(response.status(), 200, "creating workflow {body}");
        json(response).await
    }

    /// Calls a workflow with one text file; returns (status, body).
    pub async fn call_text(&self, workflow: &str, text: &str, extra: Value, wait: bool) -> (u16, Value) {
        let content = base64::engine::general_purpose::STANDARD.encode(text);
        let mut body = json!({ "input": { "singleFile": { "inputContent": content, "inputType": "text" } } });
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        let path = format!("/v3/workflows/{workflow}/call{}", if wait { "?wait=true" } else { "" });
        let response = self.post(&path, body).await;
        let status = response.status().as_u16();
        (status, json(response).await)
    }

    /// Polls a call until it is completed or failed.
    pub async fn finished_call(&self, call_id: &str) -> Value {
        for _ in 0..300 {
            let call = json(self.get(&format!("/v3/calls/{call_id}")).await).await;
            if matches!(call["call"]["status"].as_str(), Some("completed" | "failed")) {
                return call["call"].clone();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("call {call_id} did not finish");
    }
}

#[tokio::test]
async fn a_waited_call_returns_the_completed_call_with_its_output_event() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    let (status, body) = app.call_text("invoices", INVOICE, json!({}), true).await;
    assert_eq!(status, 200, "{body}");
    let call = &body["call"];
    assert_eq!(call["status"], "completed");
    let call_id = call["callID"].as_str().unwrap();
    assert_eq!(call["url"], format!("/v3/calls/{call_id}"));
    assert_eq!(call["traceUrl"], format!("/v3/calls/{call_id}/trace"));
    assert_eq!(call["errors"], json!([]));
    let outputs = call["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1);
    let event = &outputs[0];
    assert_eq!(event["eventType"], "extract");
    assert_eq!(event["transformedContent"]["invoiceNumber"], "INV-42");
    assert_eq!(event["transformedContent"]["total"], 1234.5);
    assert_eq!(event["callID"], call_id);
    assert_eq!(event["functionName"], "invoice");
    assert_eq!(event["workflowName"], "invoices");
    assert_eq!(event["itemOffset"], 0);
    assert_eq!(event["itemCount"], 1);
    for field in
        COMMON_FIELDS.iter().chain(["transformationID", "transformedContent", "invalidProperties"].iter())
    {
        assert!(event.get(field).is_some(), "the spec's event field {field} in {event}");
    }
    assert!(event["metadata"]["durationFunctionToEventSeconds"].is_number());
    let event_id = event["eventID"].as_str().unwrap();
    assert!(canon::ids::is_ksuid(event_id), "{event_id} is a KSUID");
    assert!(event["transformationID"].as_str().unwrap().starts_with("tr_"));
    let read = json(app.get(&format!("/v3/outputs/{event_id}")).await).await;
    assert_eq!(read["output"]["eventID"], event_id);
    let fetched = json(app.get(&format!("/v3/calls/{call_id}")).await).await;
    assert_eq!(fetched["call"]["outputs"][0]["eventID"], event_id);
    assert_error(app.get(&format!("/v3/errors/{event_id}")).await, 404).await;
}

#[tokio::test]
async fn a_waited_call_answers_once_its_runs_and_its_job_are_recorded() {
    let app = spawn_app().await;
    app.router_function().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("two-steps", &["router", "invoice"], &[("router", "invoice")]).await;
    let records = app.app().state.records.clone();
    for _ in 0..5 {
        let (status, body) = app.call_text("two-steps", INVOICE, json!({}), true).await;
        assert_eq!(status, 200, "{body}");
        // The answer comes after the call's last write: nothing of it is still queued or
        // running, and its trace is whole.
        assert_eq!(records.queue_depth().await.unwrap(), 0, "the call's job is done");
        let call_id = body["call"]["callID"].as_str().unwrap();
        let read = json(app.get(&format!("/v3/calls/{call_id}")).await).await;
        assert_eq!(body["call"], read["call"], "the answer is the call as stored");
        let trace = json(app.get(&format!("/v3/calls/{call_id}/trace")).await).await;
        let runs = trace["trace"]["functionCalls"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{trace}");
        assert!(runs.iter().all(|run| run["status"] == "completed"), "{trace}");
        let events = trace["trace"]["events"].as_array().unwrap();
        assert_eq!(events.len(), 2, "{trace}");
        let router_run = runs.iter().find(|run| run["functionName"] == "router").unwrap();
        let invoice_run = runs.iter().find(|run| run["functionName"] == "invoice").unwrap();
        let router_event = events.iter().find(|e| e["functionName"] == "router").unwrap();
        assert_eq!(invoice_run["sourceEventID"], router_event["eventID"], "{trace}");
        assert_eq!(invoice_run["sourceFunctionCallID"], router_run["functionCallID"], "{trace}");
    }
}

/// (workflow version, node function name) of a waited call's only output.
async fn ran(app: &TestApp, workflow: &str) -> (Value, Value) {
    let (status, body) = app.call_text(workflow, INVOICE, json!({}), true).await;
    assert_eq!(status, 200, "{body}");
    (body["call"]["workflowVersionNum"].clone(), body["call"]["outputs"][0]["functionName"].clone())
}

#[tokio::test]
async fn each_call_runs_the_workflow_and_function_names_current_when_it_is_submitted() {
    // Plans are remembered between calls: each write below must be seen by the next call.
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.extract_function("vendor", router_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    assert_eq!(ran(&app, "invoices").await, (json!(1), json!("invoice")));
    assert_eq!(ran(&app, "invoices").await, (json!(1), json!("invoice")), "remembered");

    let regraph = json!({ "mainNodeName": "vendor", "nodes": [{ "name": "vendor", "function": { "name": "vendor" } }] });
    assert_eq!(app.patch("/v3/workflows/invoices", regraph).await.status(), 200);
    assert_eq!(ran(&app, "invoices").await, (json!(2), json!("vendor")));

    let renamed = app.patch("/v3/functions/vendor", json!({ "functionName": "supplier" })).await;
    assert_eq!(renamed.status(), 200);
    assert_eq!(ran(&app, "invoices").await, (json!(2), json!("supplier")));

    assert_eq!(app.delete("/v3/workflows/invoices").await.status(), 200);
    let (status, _) = app.call_text("invoices", INVOICE, json!({}), true).await;
    assert_eq!(status, 404);
    app.pipeline("invoices", &["invoice"], &[]).await;
    assert_eq!(ran(&app, "invoices").await, (json!(1), json!("invoice")));
}

#[tokio::test]
async fn a_call_without_wait_is_accepted_and_finishes_later() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    let (status, body) = app.call_text("invoices", INVOICE, json!({}), false).await;
    assert_eq!(status, 202, "{body}");
    assert!(matches!(body["call"]["status"].as_str(), Some("pending" | "running" | "completed")), "{body}");
    let call = app.finished_call(body["call"]["callID"].as_str().unwrap()).await;
    assert_eq!(call["status"], "completed");
    assert!(call["finishedAt"].is_string());
}

#[tokio::test]
async fn the_same_call_reference_returns_the_existing_call() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    let reference = json!({ "callReferenceID": "upload-77" });
    let (_, first) = app.call_text("invoices", INVOICE, reference.clone(), true).await;
    let (status, second) = app.call_text("invoices", "Something else entirely", reference, true).await;
    assert_eq!(status, 200);
    assert_eq!(first["call"]["callID"], second["call"]["callID"]);
    assert_eq!(second["call"]["callReferenceID"], "upload-77");
    let list = json(app.get("/v3/calls?referenceIDs=upload-77").await).await;
    assert_eq!(list["totalCount"], 1);
    assert_eq!(list["calls"][0]["outputs"], first["call"]["outputs"], "listed calls carry their events");
    // The key is per workflow: another workflow with the same reference makes its own call.
    app.pipeline("invoices-too", &["invoice"], &[]).await;
    let (_, other) =
        app.call_text("invoices-too", INVOICE, json!({ "callReferenceID": "upload-77" }), true).await;
    assert_ne!(other["call"]["callID"], first["call"]["callID"]);
    let outputs = json(app.get("/v3/outputs?referenceIDs=upload-77&workflowNames=invoices").await).await;
    assert_eq!(outputs["totalCount"], 1, "one call, one output: {outputs}");
}

#[tokio::test]
async fn an_unsupported_input_type_or_unknown_workflow_is_refused() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    let body = json!({ "input": { "singleFile": { "inputContent": "AAAA", "inputType": "mp4" } } });
    let error = assert_error(app.post("/v3/workflows/invoices/call", body.clone()).await, 400).await;
    assert!(error["message"].as_str().unwrap().contains("unsupported inputType"), "{error}");
    assert_error(app.post("/v3/workflows/nope/call", body).await, 404).await;
    let no_input = json!({ "input": {} });
    assert_error(app.post("/v3/workflows/invoices/call", no_input).await, 400).await;
}

#[tokio::test]
async fn output_that_breaks_the_schema_fails_the_call_with_an_error_event() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    let (status, body) = app.call_text("invoices", "Nothing labelled here at all.", json!({}), true).await;
    assert_eq!(status, 200, "node failures never change the HTTP status: {body}");
    let call = &body["call"];
    assert_eq!(call["status"], "failed");
    assert_eq!(call["outputs"], json!([]));
    let error = &call["errors"][0];
    assert!(error["errorMessage"].as_str().unwrap().contains("outputSchema constraint violation"), "{error}");
    assert_eq!(error["workflowNodeName"], "invoice");
    assert!(error["functionCallID"].as_str().unwrap().starts_with("fc_"));
    let event_id = error["eventID"].as_str().unwrap();
    let read = json(app.get(&format!("/v3/errors/{event_id}")).await).await;
    for field in COMMON_FIELDS {
        assert!(read["error"].get(field).is_some(), "the spec's common field {field} in {read}");
    }
    assert!(read["error"].get("transformedContent").is_none(), "no transformation fields on an error event");
    assert_eq!(read["error"]["eventType"], "error");
    assert!(read["error"]["kind"].is_string());
    assert!(read["error"]["message"].as_str().unwrap().contains("outputSchema constraint violation"));
    let errors =
        json(app.get(&format!("/v3/errors?callIDs={}", call["callID"].as_str().unwrap())).await).await;
    assert_eq!(errors["totalCount"], 1);
    let failed = json(app.get("/v3/calls?statuses=failed").await).await;
    assert_eq!(failed["totalCount"], 1);
}

#[tokio::test]
async fn outputs_and_errors_can_both_be_present_and_the_call_then_fails() {
    let app = spawn_app().await;
    app.router_function().await;
    app.extract_function("invoice", invoice_schema()).await;
    let strict = json!({"type": "object", "properties": {"iban": {"type": "string"}}, "required": ["iban"]});
    app.extract_function("bank", strict).await;
    app.pipeline("both", &["router", "invoice", "bank"], &[("router", "invoice"), ("router", "bank")]).await;
    let (_, body) = app.call_text("both", INVOICE, json!({}), true).await;
    let call = &body["call"];
    assert_eq!(call["status"], "failed", "{body}");
    assert_eq!(call["outputs"].as_array().unwrap().len(), 1, "{call}");
    assert_eq!(call["outputs"][0]["functionName"], "invoice");
    assert_eq!(call["errors"].as_array().unwrap().len(), 1);
    assert_eq!(call["errors"][0]["functionName"], "bank");
    // The router fed other nodes: its event is intermediate, in the trace but not in outputs.
    let trace = json(app.get(&format!("/v3/calls/{}/trace", call["callID"].as_str().unwrap())).await).await;
    let runs = trace["trace"]["functionCalls"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    let router = runs.iter().find(|r| r["workflowNodeName"] == "router").unwrap();
    assert_eq!(router["status"], "completed");
    assert!(router["input"]["text"].as_str().unwrap().contains("INV-42"));
    assert!(router["output"].is_object());
    assert!(router["startedAt"].is_string() && router["finishedAt"].is_string());
    let bank = runs.iter().find(|r| r["workflowNodeName"] == "bank").unwrap();
    assert_eq!(bank["status"], "failed");
    assert!(bank["error"]["message"].as_str().unwrap().contains("outputSchema constraint violation"));
    assert_eq!(bank["sourceFunctionCallID"], router["functionCallID"]);
    assert_eq!(trace["trace"]["events"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn a_split_fans_out_to_transforms_whose_outputs_a_join_merges() {
    let app = spawn_app().await;
    app.create_function(json!({"functionName": "pages", "type": "split", "splitType": "print_page",
        "splitConfig": {"by": "delimiter", "delimiter": "---"}}))
        .await;
    app.extract_function("invoice", invoice_schema()).await;
    app.create_function(json!({"functionName": "merge", "type": "join", "joinType": "standard",
        "description": "all invoices", "outputSchemaName": "All", "outputSchema": {"type": "object"}}))
        .await;
    app.pipeline("batch", &["pages", "invoice", "merge"], &[("pages", "invoice"), ("invoice", "merge")])
        .await;
    let text = format!(
        "{INVOICE}---\n{}---\n{}",
        INVOICE.replace("INV-42", "INV-43"),
        INVOICE.replace("INV-42", "INV-44")
    );
    let (_, body) = app.call_text("batch", &text, json!({}), true).await;
    let call = &body["call"];
    assert_eq!(call["status"], "completed", "{body}");
    let outputs = call["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1, "only the join is terminal: {outputs:?}");
    assert_eq!(outputs[0]["eventType"], "join");
    let merged = outputs[0]["transformedContent"].to_string();
    for number in ["INV-42", "INV-43", "INV-44"] {
        assert!(merged.contains(number), "{number} in {merged}");
    }
    let trace = json(app.get(&format!("/v3/calls/{}/trace", call["callID"].as_str().unwrap())).await).await;
    let runs = trace["trace"]["functionCalls"].as_array().unwrap();
    assert_eq!(runs.iter().filter(|r| r["workflowNodeName"] == "invoice").count(), 3);
    let intermediate =
        json(app.get("/v3/outputs?includeIntermediate=true&functionNames=invoice").await).await;
    assert_eq!(intermediate["totalCount"], 3);
    let offsets: Vec<i64> = intermediate["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["itemOffset"].as_i64().unwrap())
        .collect();
    let mut sorted = offsets.clone();
    sorted.sort();
    assert_eq!(sorted, vec![0, 1, 2]);
    assert!(intermediate["outputs"].as_array().unwrap().iter().all(|e| e["itemCount"] == 3));
}

#[tokio::test]
async fn a_split_whose_items_would_take_the_call_past_its_runs_limit_fails_naming_it() {
    // The limit is 50,000 node runs a call (a split after a split multiplied them); lowered
    // here so that 20 items reach it.
    let app = spawn_app_with(Handlers::default(), |config| {
        assert_eq!(config.max_runs_per_call, 50_000, "the production bound");
        config.max_runs_per_call = 10;
    })
    .await;
    app.create_function(json!({"functionName": "pieces", "type": "split",
        "splitConfig": {"by": "delimiter", "delimiter": "---"}}))
        .await;
    app.create_function(json!({"functionName": "each", "type": "transform"})).await;
    app.pipeline("fan", &["pieces", "each"], &[("pieces", "each")]).await;
    // Nine pieces: the file's run and nine after it fit in ten.
    let nine = ["piece"; 9].join("---");
    let (_, body) = app.call_text("fan", &nine, json!({}), true).await;
    assert_eq!(body["call"]["status"], "completed", "{body}");
    assert_eq!(body["call"]["outputs"].as_array().unwrap().len(), 9, "{body}");
    // Twenty: the split fails naming the limit, and nothing runs after it.
    let twenty = ["piece"; 20].join("---");
    let (_, body) = app.call_text("fan", &twenty, json!({}), true).await;
    assert_eq!(body["call"]["status"], "failed", "{body}");
    let error = &body["call"]["errors"][0];
    assert_eq!(error["kind"], "input_limit", "{body}");
    let message = error["errorMessage"].as_str().unwrap();
    assert!(
        message.contains("20 items would run 20 nodes after it") && message.contains("10 node runs a call"),
        "{message}"
    );
    assert_eq!(body["call"]["outputs"], json!([]), "{body}");
}

#[tokio::test]
async fn a_node_whose_output_fans_out_past_the_runs_limit_fails_naming_it() {
    // Every fan-out counts, not only a split's: one output down many edges (each a run, each
    // handed the same payload) reached the limit unchecked. Lowered here to ten runs.
    let app = spawn_app_with(Handlers::default(), |config| config.max_runs_per_call = 10).await;
    app.create_function(json!({"functionName": "start", "type": "transform"})).await;
    app.create_function(json!({"functionName": "each", "type": "transform"})).await;
    for (name, fanned) in [("nine", 9), ("twelve", 12)] {
        let mut nodes = vec![json!({"name": "start", "function": {"name": "start"}})];
        let mut edges = Vec::new();
        for i in 0..fanned {
            nodes.push(json!({"name": format!("each-{i}"), "function": {"name": "each"}}));
            edges.push(json!({"sourceNodeName": "start", "destinationNodeName": format!("each-{i}")}));
        }
        let body = json!({"name": name, "mainNodeName": "start", "nodes": nodes, "edges": edges});
        assert_eq!(app.post("/v3/workflows", body).await.status(), 200);
    }
    // Nine after the first run fit in ten; each of the nine gets the first's output.
    let (_, body) = app.call_text("nine", "the same text for all", json!({}), true).await;
    assert_eq!(body["call"]["status"], "completed", "{body}");
    let outputs = body["call"]["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 9, "{body}");
    assert!(outputs.iter().all(|o| o["transformedContent"] == outputs[0]["transformedContent"]), "{body}");
    // Twelve: the first run fails naming the limit, and nothing runs after it.
    let (_, body) = app.call_text("twelve", "the same text for all", json!({}), true).await;
    assert_eq!(body["call"]["status"], "failed", "{body}");
    let error = &body["call"]["errors"][0];
    assert_eq!(
        (&error["kind"], &error["workflowNodeName"]),
        (&json!("input_limit"), &json!("start")),
        "{body}"
    );
    let message = error["errorMessage"].as_str().unwrap();
    assert!(
        message.contains("its output would run 12 nodes after it, 13 in the call")
            && message.contains("10 node runs a call (runsPerCall)"),
        "{message}"
    );
    assert_eq!(body["call"]["outputs"], json!([]), "{body}");

    // A workflow is at most 200 nodes and 1,000 edges.
    let nodes: Vec<Value> =
        (0..201).map(|i| json!({"name": format!("n{i}"), "function": {"name": "each"}})).collect();
    let body = json!({"name": "huge", "mainNodeName": "n0", "nodes": nodes, "edges": []});
    let refused = assert_error(app.post("/v3/workflows", body).await, 400).await;
    assert!(
        refused["message"].as_str().unwrap().starts_with("nodes: at most 200 nodes (got 201)"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_run_whose_output_would_take_the_call_past_its_output_limit_fails_and_nothing_runs_after_it() {
    // The limit is 128 MiB of outputs a call (a split's items each shaped to 64 MiB had none);
    // lowered here so that a few kilobytes reach it. A transform without settings hands its
    // input on as JSON: a text file's text, each time.
    let app = spawn_app_with(Handlers::default(), |config| {
        assert_eq!(config.max_output_bytes_per_call, 128 * 1024 * 1024, "the production bound");
        config.max_output_bytes_per_call = 100 * 1024;
    })
    .await;
    for name in ["first", "second", "third"] {
        app.create_function(json!({"functionName": name, "type": "transform"})).await;
    }
    app.pipeline("chain", &["first", "second", "third"], &[("first", "second"), ("second", "third")]).await;
    // 10 KB of text: three outputs of ~10 KB each fit in 100 KiB.
    let (_, body) = app.call_text("chain", &"a".repeat(10_000), json!({}), true).await;
    assert_eq!(body["call"]["status"], "completed", "{body}");
    assert_eq!(body["call"]["outputs"].as_array().unwrap().len(), 1, "{body}");
    // 60 KB: the first output fits, the second would take the call to ~120 KB.
    let (_, body) = app.call_text("chain", &"a".repeat(60_000), json!({}), true).await;
    let call = &body["call"];
    assert_eq!(call["status"], "failed", "{body}");
    assert_eq!(call["outputs"], json!([]), "{body}");
    let error = &call["errors"][0];
    assert_eq!((&error["functionName"], &error["kind"]), (&json!("second"), &json!("input_limit")), "{body}");
    let message = error["errorMessage"].as_str().unwrap();
    assert!(message.contains("100.0 KiB a call (outputBytesPerCall)"), "{message}");
    let trace = json(app.get(&format!("/v3/calls/{}/trace", call["callID"].as_str().unwrap())).await).await;
    let runs: Vec<(&Value, &Value)> = trace["trace"]["functionCalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| (&run["functionName"], &run["status"]))
        .collect();
    let expected = [(json!("first"), json!("completed")), (json!("second"), json!("failed"))];
    assert_eq!(runs, expected.iter().map(|(name, status)| (name, status)).collect::<Vec<_>>(), "{trace}");
}

#[tokio::test]
async fn a_join_whose_inputs_together_pass_the_output_limit_fails_before_it_merges_them() {
    // One output handed down four edges into a join is four inputs of its weight: weighed
    // before they are copied for the join (1,000 copies of a 32 MiB document, unbounded).
    let app =
        spawn_app_with(Handlers::default(), |config| config.max_output_bytes_per_call = 100 * 1024).await;
    app.create_function(json!({"functionName": "pass", "type": "transform"})).await;
    app.create_function(json!({"functionName": "merge", "type": "join", "joinType": "standard"})).await;
    let edges = [("pass", "merge"); 4];
    app.pipeline("fan-in", &["pass", "merge"], &edges).await;
    let (_, body) = app.call_text("fan-in", &"a".repeat(10_000), json!({}), true).await;
    assert_eq!(body["call"]["status"], "completed", "four inputs of 10 KB fit: {body}");
    let (_, body) = app.call_text("fan-in", &"a".repeat(30_000), json!({}), true).await;
    let call = &body["call"];
    assert_eq!(call["status"], "failed", "{body}");
    let error = &call["errors"][0];
    assert_eq!((&error["functionName"], &error["kind"]), (&json!("merge"), &json!("input_limit")), "{body}");
    let message = error["errorMessage"].as_str().unwrap();
    assert!(
        message.contains("the join's 4 inputs weigh") && message.contains("(outputBytesPerCall)"),
        "{message}"
    );
}

#[tokio::test]
async fn a_terminal_split_emits_one_event_per_item() {
    let app = spawn_app().await;
    app.create_function(json!({"functionName": "pages", "type": "split", "splitType": "print_page",
        "splitConfig": {"by": "delimiter", "delimiter": "---"}}))
        .await;
    app.pipeline("split-only", &["pages"], &[]).await;
    let (_, body) = app.call_text("split-only", "one---two---three", json!({}), true).await;
    let outputs = body["call"]["outputs"].as_array().unwrap().clone();
    assert_eq!(outputs.len(), 3, "{body}");
    for (i, event) in outputs.iter().enumerate() {
        assert_eq!(event["eventType"], "split_item");
        assert_eq!(event["itemCount"], 3);
        assert!(outputs.iter().any(|e| e["itemOffset"] == i as i64));
    }
    // Three events of one run, recorded in the same millisecond: the answer lists them in the
    // order the call's records do.
    let read = json(app.get(&format!("/v3/calls/{}", body["call"]["callID"].as_str().unwrap())).await).await;
    assert_eq!(body["call"], read["call"]);
}

#[tokio::test]
async fn event_lists_filter_sort_and_page_both_ways() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    let mut call_ids = Vec::new();
    for i in 0..5 {
        let (_, body) =
            app.call_text("invoices", INVOICE, json!({ "callReferenceID": format!("ref-{i}") }), true).await;
        call_ids.push(body["call"]["callID"].as_str().unwrap().to_string());
    }
    let (_, failed) =
        app.call_text("invoices", "no labels", json!({ "callReferenceID": "bad-1" }), true).await;
    let all = json(app.get("/v1-alpha/events").await).await;
    assert_eq!(all["totalCount"], 6);
    let ids: Vec<String> = all["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["eventID"].as_str().unwrap().to_string())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "ascending by event ID");
    let desc = json(app.get("/v1-alpha/events?sortOrder=desc").await).await;
    let desc_ids: Vec<String> = desc["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["eventID"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(desc_ids, sorted.iter().rev().cloned().collect::<Vec<_>>());
    // Forwards two at a time, then back from the end.
    let page1 = json(app.get("/v1-alpha/events?limit=2").await).await;
    let page2 = json(app.get(&format!("/v1-alpha/events?limit=2&startingAfter={}", ids[1])).await).await;
    assert_eq!(page1["events"][1]["eventID"], ids[1].as_str());
    assert_eq!(page2["events"][0]["eventID"], ids[2].as_str());
    let before = json(app.get(&format!("/v1-alpha/events?limit=2&endingBefore={}", ids[4])).await).await;
    let before_ids: Vec<&str> =
        before["events"].as_array().unwrap().iter().map(|e| e["eventID"].as_str().unwrap()).collect();
    assert_eq!(before_ids, vec![ids[2].as_str(), ids[3].as_str()]);
    let errors_only = json(app.get("/v1-alpha/events?eventTypes=error").await).await;
    assert_eq!(errors_only["totalCount"], 1);
    let two_calls =
        json(app.get(&format!("/v1-alpha/events?callIDs={},{}", call_ids[0], call_ids[1])).await).await;
    assert_eq!(two_calls["totalCount"], 2);
    let by_reference = json(app.get("/v3/errors?referenceIDSubstring=BAD").await).await;
    assert_eq!(by_reference["totalCount"], 1);
    assert_eq!(by_reference["errors"][0]["callID"], failed["call"]["callID"]);
    let outputs = json(app.get("/v3/outputs?workflowNames=invoices&functionNames=invoice").await).await;
    assert_eq!(outputs["totalCount"], 5);
    let none = json(app.get("/v3/outputs?workflowNames=invoices&functionNames=other").await).await;
    assert_eq!(none["totalCount"], 0, "filters AND together");
    let labelled = json(app.get("/v1-alpha/events?isLabelled=true").await).await;
    assert_eq!(labelled["totalCount"], 0, "nothing is corrected yet");
    assert_error(app.get("/v1-alpha/events?startingAfter=abc").await, 400).await;
    assert_error(app.get("/v1-alpha/events?limit=101").await, 400).await;
    assert_error(app.get("/v1-alpha/events?eventIDs=").await, 400).await;
    assert_error(
        app.get(&format!("/v1-alpha/events?startingAfter={}&endingBefore={}", ids[0], ids[1])).await,
        400,
    )
    .await;
}

#[tokio::test]
async fn a_call_cut_off_by_a_crash_resumes_without_emitting_an_event_twice() {
    let mut app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    app.router_function().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("two-steps", &["router", "invoice"], &[("router", "invoice")]).await;
    let (status, body) = app.call_text("two-steps", INVOICE, json!({}), false).await;
    assert_eq!(status, 202);
    let call_id = body["call"]["callID"].as_str().unwrap().to_string();
    // A worker takes the job and runs the call...
    let records = app.app().state.records.clone();
    let job = records.claim_job("worker-that-died", 500).await.unwrap().expect("the call's job");
    let handler = canon::calls::executor::CallJob { service: app.app().state.calls.clone() };
    handler.run(job.payload.clone()).await.unwrap();
    let before = json(app.get(&format!("/v3/calls/{call_id}/trace")).await).await;
    let router_event = before["trace"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["functionName"] == "router")
        .expect("the router's event")
        .clone();
    // ...but the process died while the second node ran: its run is left `running`, its
    // event unwritten, the call `running`, the job's lease held by a dead worker.
    let pool = sqlx::AnyPool::connect(&app.config.records_url()).await.unwrap();
    sqlx::query("UPDATE function_calls SET status = 'running', output = NULL, finished_at = NULL WHERE call_id = $1 AND node_name = 'invoice'")
        .bind(&call_id).execute(&pool).await.unwrap();
    sqlx::query("DELETE FROM events WHERE call_id = $1 AND function_name = 'invoice'")
        .bind(&call_id)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("UPDATE calls SET status = 'running', finished_at = NULL WHERE id = $1")
        .bind(&call_id)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    app.stop().await;
    app.config.workers = 1;
    app.start().await;
    let call = app.finished_call(&call_id).await;
    assert_eq!(call["status"], "completed");
    assert_eq!(call["outputs"].as_array().unwrap().len(), 1);
    let after = json(app.get(&format!("/v3/calls/{call_id}/trace")).await).await;
    let events = after["trace"]["events"].as_array().unwrap();
    assert_eq!(events.len(), 2, "one event per node, none twice: {events:?}");
    assert_eq!(
        events.iter().filter(|e| e["eventID"] == router_event["eventID"]).count(),
        1,
        "the router's event is reused"
    );
    let runs = after["trace"]["functionCalls"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let all = json(app.get(&format!("/v1-alpha/events?callIDs={call_id}")).await).await;
    assert_eq!(all["totalCount"], 1, "only the terminal event is listed");
}

#[tokio::test]
async fn the_call_and_event_endpoints_are_in_the_openapi_document() {
    let app = spawn_app().await;
    let doc = json(app.get("/openapi.json").await).await;
    for path in [
        "/v3/workflows/{workflowName}/call",
        "/v3/calls",
        "/v3/calls/{callID}",
        "/v3/calls/{callID}/trace",
        "/v3/outputs",
        "/v3/outputs/{eventID}",
        "/v3/errors",
        "/v3/errors/{eventID}",
        "/v1-alpha/events",
        "/v1-alpha/events/{eventID}",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} documented");
    }
}

#[tokio::test]
async fn a_waited_call_still_running_at_the_wait_limit_answers_202() {
    // A webhook that answers only after the wait limit has passed.
    let slow = axum::Router::new().route(
        "/hook",
        axum::routing::post(|| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            "ok"
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, slow).await });
    let app = spawn_app_with(Handlers::default(), |config| {
        config.call_wait_seconds = 1;
        config.allow_private_network = true; // the webhook listens on loopback
    })
    .await;
    app.create_function(
        json!({"functionName": "notify", "type": "send", "destinationType": "webhook", "webhookUrl": hook}),
    )
    .await;
    app.pipeline("slow", &["notify"], &[]).await;
    let (status, body) = app.call_text("slow", INVOICE, json!({}), true).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["call"]["status"], "running");
    let call = app.finished_call(body["call"]["callID"].as_str().unwrap()).await;
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(call["outputs"][0]["eventType"], "send");
}

#[tokio::test]
async fn a_classifier_routes_the_call_down_the_edge_labelled_with_its_choice() {
    let app = spawn_app().await;
    app.create_function(json!({"functionName": "kind", "type": "classify", "description": "document kind",
    "classifications": [
        {"name": "invoice", "description": "an invoice", "regex": {"patterns": ["(?i)invoice number"]}},
        {"name": "letter", "description": "a letter", "regex": {"patterns": ["(?i)dear "]}}
    ]}))
    .await;
    app.extract_function("invoice", invoice_schema()).await;
    app.create_function(json!({"functionName": "letter", "type": "transform", "outputSchemaName": "L",
        "outputSchema": {"type": "object"}}))
        .await;
    let body = json!({
        "name": "sorter", "mainNodeName": "kind",
        "nodes": [{"name": "kind", "function": {"name": "kind"}}, {"name": "invoice", "function": {"name": "invoice"}},
                  {"name": "letter", "function": {"name": "letter"}}],
        "edges": [{"sourceNodeName": "kind", "destinationNodeName": "invoice", "destinationName": "invoice"},
                  {"sourceNodeName": "kind", "destinationNodeName": "letter", "destinationName": "letter"}]
    });
    let response = app.post("/v3/workflows", body).await;
    assert_eq!(response.status(), 200);
    let (_, body) = app.call_text("sorter", INVOICE, json!({}), true).await;
    let call = &body["call"];
    assert_eq!(call["status"], "completed", "{call}");
    let outputs = call["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1, "only the chosen branch ran: {outputs:?}");
    assert_eq!(outputs[0]["functionName"], "invoice");
    let trace = json(app.get(&format!("/v3/calls/{}/trace", call["callID"].as_str().unwrap())).await).await;
    let runs = trace["trace"]["functionCalls"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let routed = runs.iter().find(|r| r["workflowNodeName"] == "invoice").unwrap();
    assert_eq!(routed["incomingDestinationName"], "invoice");
}

#[tokio::test]
async fn a_call_whose_job_is_given_up_fails_instead_of_running_forever() {
    let app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    let (_, body) = app.call_text("invoices", INVOICE, json!({}), false).await;
    let call_id = body["call"]["callID"].as_str().unwrap().to_string();
    let handler = canon::calls::executor::CallJob { service: app.app().state.calls.clone() };
    handler.gave_up(json!({ "callID": call_id }), "the record store was down").await;
    let call = json(app.get(&format!("/v3/calls/{call_id}")).await).await;
    assert_eq!(call["call"]["status"], "failed");
    assert!(call["call"]["finishedAt"].is_string());
    assert!(call["error"].as_str().unwrap().contains("could not be run"), "{call}");
}

#[tokio::test]
async fn a_file_that_cannot_be_decoded_is_an_error_event_of_the_main_node() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    let content = base64::engine::general_purpose::STANDARD.encode(b"this is not a PDF at all");
    let body = json!({ "input": { "singleFile": { "inputContent": content, "inputType": "pdf" } } });
    let response = app.post("/v3/workflows/invoices/call?wait=true", body).await;
    assert_eq!(response.status(), 200);
    let call = json(response).await["call"].clone();
    assert_eq!(call["status"], "failed", "{call}");
    assert_eq!(call["errors"][0]["kind"], "input_decoding", "{call}");
    assert_eq!(call["errors"][0]["workflowNodeName"], "invoice");
}

#[tokio::test]
async fn a_trace_reads_a_bounded_part_of_a_calls_values_and_says_what_it_left_out() {
    // A trace reads 1 MiB of one value and 32 MiB together (a call's runs may output 128 MiB,
    // stored twice); the total is lowered here so that three runs of 40 KB reach it.
    let app = spawn_app_with(Handlers::default(), |config| {
        assert_eq!(config.max_trace_bytes, 32 * 1024 * 1024, "the production bound");
        config.max_trace_bytes = 100 * 1024;
    })
    .await;
    for name in ["first", "second", "third"] {
        app.create_function(json!({"functionName": name, "type": "transform"})).await;
    }
    app.pipeline("chain", &["first", "second", "third"], &[("first", "second"), ("second", "third")]).await;
    let text = "a".repeat(40_000);
    let (_, body) = app.call_text("chain", &text, json!({}), true).await;
    assert_eq!(body["call"]["status"], "completed", "{body}");
    let call_id = body["call"]["callID"].as_str().unwrap();
    let trace = json(app.get(&format!("/v3/calls/{call_id}/trace")).await).await;
    let runs = trace["trace"]["functionCalls"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|run| run["functionName"].as_str().unwrap()).collect();
    assert_eq!(names, ["first", "second", "third"], "every run is listed, in order");
    // Two outputs of 40 KB and the inputs before them fit in 100 KiB; the third run's do not.
    for run in &runs[..2] {
        assert!(run["output"].to_string().contains(&text), "shown whole: {}", run["functionName"]);
        assert!(run.get("outputOmitted").is_none(), "{run}");
    }
    let third = &runs[2];
    assert_eq!(third["output"], Value::Null, "{third}");
    assert_eq!(third["status"], "completed");
    let bytes = third["outputOmitted"]["jsonBytes"].as_i64().unwrap();
    assert!((40_000..41_000).contains(&bytes), "{third}");
    let reason = third["outputOmitted"]["reason"].as_str().unwrap();
    assert!(reason.contains("past the bytes a trace shows together (33554432 at most)"), "{reason}");
    assert!(reason.contains("GET /v3/outputs/{eventID}"), "{reason}");
    assert!(third["inputOmitted"]["jsonBytes"].as_i64().unwrap() > 0, "{third}");
    // The events' bodies come after the runs' values: none is left for them.
    let events = trace["trace"]["events"].as_array().unwrap();
    assert_eq!(events.len(), 3, "{trace}");
    for event in events {
        assert!(event["bodyOmitted"]["jsonBytes"].as_i64().unwrap() > 40_000, "{event}");
        assert!(event["eventID"].as_str().is_some() && event["eventType"].as_str().is_some(), "{event}");
    }
    // What was left out is read whole where the reason says.
    let terminal = &body["call"]["outputs"][0];
    let read = json(app.get(&format!("/v3/outputs/{}", terminal["eventID"].as_str().unwrap())).await).await;
    assert!(read.to_string().contains(&text));
    assert!(events.iter().any(|e| e["eventID"] == terminal["eventID"]));

    // One value past 1 MiB is left out whatever the total.
    let long = "b".repeat(1_100_000);
    let (_, body) = app.call_text("chain", &long, json!({}), true).await;
    assert_eq!(body["call"]["status"], "completed");
    let trace =
        json(app.get(&format!("/v3/calls/{}/trace", body["call"]["callID"].as_str().unwrap())).await).await;
    let first = &trace["trace"]["functionCalls"][0];
    assert_eq!(first["output"], Value::Null, "{first}");
    let reason = first["outputOmitted"]["reason"].as_str().unwrap();
    assert!(reason.contains("longer than the 1048576 bytes a trace shows of one value"), "{reason}");
}

#[tokio::test]
async fn a_listed_call_shows_its_files_without_their_content_whether_written_before_or_after_the_upgrade() {
    use canon::store::records::calls::{file_summaries, CallFilter, CallRow, FileSummary};
    use canon::store::records::filters::Cursor;
    use canon::store::records::Owner;
    let dir = tempfile::tempdir().expect("temp dir");
    // The schema of the canon that listed calls with their inputs and plans whole.
    let (records, url) = crate::helpers::records_through(dir.path(), 24).await;
    // As a call stores its files (`InputFile`).
    let files = json!([{"inputType": "pdf", "content": "QUJD", "itemReferenceId": "r1"},
                       {"inputType": "text", "content": "QUJD"}]);
    let raw = sqlx::AnyPool::connect(&url).await.expect("a second connection");
    sqlx::query(
        "INSERT INTO calls (id, account_id, environment, workflow_id, workflow_name, workflow_version_num, \
         reference_id, status, input, plan, metadata, bucket, created_at, finished_at) \
         VALUES ('cal_old', 'acc_old', 'sandbox', 'wf_x', 'intake', 1, NULL, 'completed', $1, '{\"plan\": 1}', \
         NULL, NULL, 1, 2)",
    )
    .bind(files.to_string())
    .execute(&raw)
    .await
    .expect("an older call");
    raw.close().await;
    records.migrate().await.expect("upgrade");
    let new = CallRow {
        id: "cal_new".into(),
        account_id: "acc_old".into(),
        environment: "sandbox".into(),
        workflow_id: "wf_x".into(),
        workflow_name: "intake".into(),
        workflow_version_num: 1,
        reference_id: None,
        status: "pending".into(),
        input: json!([{"inputType": "csv", "content": "QUJD", "fileName": "a.csv"}]).to_string(),
        plan: "{\"plan\": 2}".into(),
        metadata: None,
        bucket: None,
        created_at: 3,
        finished_at: None,
        error: None,
    };
    records.insert_call(&new, 0, None).await.expect("a call now");
    let owner = Owner { account_id: "acc_old", environment: "sandbox" };
    let (listed, total) =
        records.list_calls(owner, &CallFilter::default(), &Cursor::First, true, 10).await.expect("list");
    assert_eq!(total, 2);
    let file = |input_type: &str, reference: Option<&str>| FileSummary {
        input_type: Some(input_type.into()),
        item_reference_id: reference.map(str::to_string),
    };
    let shown: Vec<(String, Vec<FileSummary>, String)> =
        listed.iter().map(|call| (call.id.clone(), file_summaries(&call.input), call.plan.clone())).collect();
    assert_eq!(
        shown,
        [
            ("cal_new".into(), vec![file("csv", None)], String::new()),
            ("cal_old".into(), vec![file("pdf", Some("r1")), file("text", None)], String::new()),
        ]
    );
    // Only the summary is read: no content in it.
    assert!(listed.iter().all(|call| !call.input.contains("QUJD")), "{listed:?}");
    // A call read on its own is whole.
    let whole = records.call_by_id("cal_old").await.expect("read").expect("the call");
    assert_eq!(
        (serde_json::from_str::<Value>(&whole.input).unwrap(), whole.plan.as_str()),
        (files, "{\"plan\": 1}")
    );
    records.close().await;
}

#[tokio::test]
async fn a_files_item_reference_is_shown_where_it_was_sent_read_alone_or_listed() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("one", &["invoice"], &[]).await;
    let content = base64::engine::general_purpose::STANDARD.encode(INVOICE);
    let file = json!({"inputContent": content, "inputType": "text", "itemReferenceID": "ref-7"});
    let response = app.post("/v3/workflows/one/call", json!({"input": {"singleFile": file}})).await;
    assert_eq!(response.status(), 202);
    let call = json(response).await["call"].clone();
    let shown = json!({"inputType": "text", "itemReferenceID": "ref-7"});
    assert_eq!(call["input"]["singleFile"], shown, "{call}");
    let id = call["callID"].as_str().unwrap();
    let read = json(app.get(&format!("/v3/calls/{id}")).await).await;
    assert_eq!(read["call"]["input"]["singleFile"], shown, "{read}");
    let listed = json(app.get("/v3/calls?limit=10").await).await;
    assert_eq!(listed["calls"][0]["input"]["singleFile"], shown, "{listed}");
}
