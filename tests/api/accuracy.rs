//! Function accuracy over HTTP: corrections, metrics, evaluations, review, score runs and
//! the regression loop (calls → feedback → new version → regression → corrections →
//! compare).

use crate::calls::INVOICE;
use crate::helpers::{
    assert_error, assert_error_saying, chat_model, json, spawn_app, spawn_app_with, unique, Seen, TestApp,
};
use axum::http::StatusCode;
use base64::Engine as _;
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use serde_json::{json, Value};
use std::time::Duration;

/// The invoice schema plus a PO number whose label (`PO:`) version 1 does not know.
fn schema(knows_po_label: bool) -> Value {
    let mut po = json!({"type": "string"});
    if knows_po_label {
        po["x-labels"] = json!(["PO"]);
    }
    json!({"type": "object", "properties": {
        "invoiceNumber": {"type": "string"}, "total": {"type": "number"},
        "dueDate": {"type": "string", "format": "date"}, "poNumber": po}})
}

fn document(number: &str) -> String {
    format!("{}PO: PO-{}\n", INVOICE.replace("INV-42", number), &number[4..])
}

fn truth(number: &str) -> Value {
    json!({"invoiceNumber": number, "total": 1234.5, "dueDate": "2026-01-31", "poNumber": format!("PO-{}", &number[4..])})
}

impl TestApp {
    /// A function `name` in a one-node workflow of the same name.
    async fn invoice_pipeline(&self, name: &str) {
        self.extract_function(name, schema(false)).await;
        self.pipeline(name, &[name], &[]).await;
    }

    /// Calls the workflow with one text; returns its output event.
    async fn output_of(&self, workflow: &str, text: &str) -> Value {
        let (status, body) = self.call_text(workflow, text, json!({}), true).await;
        assert_eq!(status, 200, "{body}");
        body["call"]["outputs"][0].clone()
    }

    async fn feedback(&self, event_id: &str, correction: Value) -> reqwest::Response {
        self.post(&format!("/v3/events/{event_id}/feedback"), json!({ "correction": correction })).await
    }

    /// Polls evaluation results until none is pending.
    async fn evaluations(&self, event_ids: &[String]) -> Value {
        for _ in 0..300 {
            let body =
                json(self.get(&format!("/v3/eval/results?eventIDs={}", event_ids.join(","))).await).await;
            if body["pending"].as_array().is_none_or(|p| p.is_empty()) {
                return body;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("evaluations did not finish");
    }

    async fn metrics_of(&self, name: &str) -> Value {
        let body = json(self.get(&format!("/v3/functions/metrics?functionNames={name}")).await).await;
        assert_eq!(body["totalCount"], 1, "{body}");
        body["functions"][0].clone()
    }
}

#[tokio::test]
async fn accuracy_paths_are_not_read_as_function_names() {
    let app = spawn_app().await;
    let metrics = app.get("/v3/functions/metrics").await;
    assert_eq!(metrics.status(), 200);
    assert_eq!(json(metrics).await, json!({"functions": [], "totalCount": 0}));
    for path in ["/v3/functions/review", "/v3/functions/regression", "/v3/functions/compare"] {
        let answer = assert_error(app.post(path, json!({"functionName": "nothing"})).await, 404).await;
        assert!(answer["message"].as_str().unwrap().contains("nothing"), "{path}: {answer}");
    }
}

#[tokio::test]
async fn feedback_labels_the_event_shows_the_correction_and_a_second_one_overwrites_it() {
    let app = spawn_app().await;
    app.invoice_pipeline("inv").await;
    let first = app.output_of("inv", &document("INV-101")).await;
    let second = app.output_of("inv", &document("INV-102")).await;
    let id = first["eventID"].as_str().unwrap();
    // Version 1 misses the PO number and is otherwise right.
    let wrong =
        json!({"invoiceNumber": "INV-999", "total": 1234.5, "dueDate": "2026-01-31", "poNumber": "PO-101"});
    let answer = json(app.feedback(id, wrong).await).await;
    assert_eq!(answer["eventID"], id);
    assert_eq!(answer["functionType"], "extract");
    assert!(answer["createdAt"].is_string());
    let m = app.metrics_of("inv").await;
    assert_eq!(
        (m["metrics"]["tp"].clone(), m["metrics"]["fp"].clone(), m["metrics"]["fn"].clone()),
        (json!(2), json!(1), json!(1))
    );

    let answer = json(app.feedback(id, truth("INV-101")).await).await;
    assert_eq!(answer["correction"], truth("INV-101"));
    let labelled = json(app.get("/v1-alpha/events?isLabelled=true").await).await;
    assert_eq!(labelled["totalCount"], 1, "{labelled}");
    assert_eq!(labelled["events"][0]["eventID"], id);
    assert_eq!(labelled["events"][0]["correction"], truth("INV-101"));
    let unlabelled = json(app.get("/v1-alpha/events?isLabelled=false").await).await;
    assert_eq!(unlabelled["events"][0]["eventID"], second["eventID"]);

    // Overwritten: right on 3 fields, the PO number missed; 1 labelled of 2 results.
    let m = app.metrics_of("inv").await;
    assert_eq!(m["totalLabeledResults"], 1);
    assert_eq!(m["totalResults"], 2);
    assert_eq!(
        m["metrics"],
        json!({"tp": 3, "fp": 0, "fn": 1, "tn": 0, "accuracy": 0.75,
        "precision": 1.0, "recall": 0.75, "f1Score": 6.0 / 7.0})
    );
    let fields: Vec<(String, Value)> = m["fieldMetrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["fieldPath"].as_str().unwrap().to_string(), f["metrics"]["fn"].clone()))
        .collect();
    assert_eq!(fields.len(), 4);
    assert!(fields.contains(&("/poNumber".into(), json!(1))), "{fields:?}");

    assert_error(app.feedback(id, json!("not an object")).await, 400).await;
    // Within 256 KB, but a long key on each of 100 fields is 20 MB of field paths: refused,
    // and the event keeps its correction.
    let fields: serde_json::Map<String, Value> = (0..100).map(|i| (format!("f{i}"), json!(0))).collect();
    let wide = app.feedback(id, json!({ "k".repeat(200_000): fields })).await;
    let refused = assert_error(wide, 400).await;
    assert_eq!(refused["details"]["field"], "correction", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("more than 50000 fields or 8 MiB of field paths"));
    let labelled = json(app.get("/v1-alpha/events?isLabelled=true").await).await;
    assert_eq!(labelled["events"][0]["correction"], truth("INV-101"));
    // A correction is required and not null, as the document says.
    let path = format!("/v3/events/{id}/feedback");
    for body in [json!({"orderMatching": false}), json!({"correction": null})] {
        assert_error_saying(app.post(&path, body).await, 400, "correction: required").await;
    }
    let doc = json(app.get("/openapi.json").await).await;
    let feedback = &doc["components"]["schemas"]["Feedback"];
    assert_eq!(feedback["required"], json!(["correction"]), "{feedback}");
    assert_eq!(feedback["properties"]["correction"]["not"], json!({"type": "null"}), "{feedback}");
    assert_error(app.feedback("2bUnknownEventIDxxxxxxxxxxxx", json!({})).await, 404).await;
    app.create_function(json!({"functionName": "pages", "type": "split", "splitType": "print_page",
        "splitConfig": {"by": "delimiter", "delimiter": "---"}}))
        .await;
    app.pipeline("pages", &["pages"], &[]).await;
    let split = app.output_of("pages", "a\n---\nb\n").await;
    let refused = assert_error(app.feedback(split["eventID"].as_str().unwrap(), json!({})).await, 400).await;
    assert!(refused["message"].as_str().unwrap().contains("split"), "{refused}");
}

#[tokio::test]
async fn the_legacy_correction_batch_answers_207_when_one_transformation_is_unknown() {
    let app = spawn_app().await;
    app.invoice_pipeline("inv").await;
    let event = app.output_of("inv", &document("INV-201")).await;
    let body = json!({"transformations": [
        {"transformationID": event["transformationID"], "correctedJSON": truth("INV-201")},
        {"transformationID": "tr_unknown", "correctedJSON": {}},
    ]});
    let response = app.patch("/v1-beta/transformations", body).await;
    assert_eq!(response.status(), 207);
    let answer = json(response).await;
    assert_eq!(answer["successCount"], 1);
    assert_eq!(answer["totalCount"], 2);
    assert_eq!(answer["results"][0]["success"], true);
    assert_eq!(answer["results"][1]["success"], false);
    assert!(answer["results"][1]["error"].as_str().unwrap().contains("not found"));
    assert_eq!(app.metrics_of("inv").await["totalLabeledResults"], 1);
    // A control character is no unknown ID but a malformed one: the batch is refused by name.
    let malformed = json!({"transformations": [{"transformationID": "tr_\u{84}", "correctedJSON": {}}]});
    assert_error_saying(
        app.patch("/v1-beta/transformations", malformed).await,
        400,
        "transformations[0].transformationID: must not contain control characters",
    )
    .await;
}

#[tokio::test]
async fn another_tenant_cannot_correct_a_transformation_it_did_not_make() {
    let app = spawn_app().await;
    app.invoice_pipeline("inv").await;
    let event = app.output_of("inv", &document("INV-202")).await;
    let stranger = app.new_key(Some(&unique("globex")), Environment::Sandbox).await;
    let body = json!({"transformations": [
        {"transformationID": event["transformationID"], "correctedJSON": truth("INV-202")},
    ]});
    let theirs =
        app.client.patch(format!("{}/v1-beta/transformations", app.address)).header("x-api-key", stranger);
    let answer = json(theirs.json(&body).send().await.unwrap()).await;
    assert_eq!(answer["results"][0]["success"], false, "{answer}");
    assert!(answer["results"][0]["error"].as_str().unwrap().contains("not found"), "{answer}");
    assert_eq!(app.metrics_of("inv").await["totalLabeledResults"], 0, "the owner's output stays unlabelled");
}

/// A model that answers every request with `content`.
async fn model_stub(content: Value) -> String {
    chat_model(move |_| (StatusCode::OK, content.clone())).await.0
}

#[tokio::test]
async fn an_evaluation_flags_a_planted_value_and_passes_values_found_in_the_document() {
    let app = spawn_app_with(Handlers::default(), |c| c.allow_private_network = true).await;
    // The model plants a PO number the document does not hold.
    let url = model_stub(json!({"invoiceNumber": "INV-42", "total": 1234.5, "poNumber": "PO-31337"})).await;
    app.create_function(json!({"functionName": "llm", "type": "extract", "outputSchema": schema(true),
        "extraConfig": {"llm": {"baseUrl": url, "model": "stub-model"}}}))
        .await;
    app.pipeline("llm", &["llm"], &[]).await;
    let event = app.output_of("llm", &document("INV-42")).await;
    let queued =
        app.post("/v3/eval", json!({"transformationIDs": [event["transformationID"], "tr_unknown"]})).await;
    assert_eq!(queued.status(), 202);
    let queued = json(queued).await;
    assert_eq!(queued["queued"], 1);
    assert!(queued["errors"]["tr_unknown"].is_string(), "{queued}");
    let id = event["eventID"].as_str().unwrap().to_string();
    let results = app.evaluations(std::slice::from_ref(&id)).await;
    let result = &results["results"][&id];
    let fields = &result["fields"];
    assert_eq!(fields["/poNumber"]["hallucination"], true, "{result}");
    assert_eq!(fields["/poNumber"]["grounded"], false);
    // Canon's own extraction read PO-42 from the text: the engines disagree.
    assert_eq!(fields["/poNumber"]["agreement"], false);
    assert_eq!(fields["/invoiceNumber"]["grounded"], true);
    assert_eq!(fields["/invoiceNumber"]["page"], 1);
    assert_eq!(fields["/total"]["confidence"], 1.0);
    assert!(fields["/poNumber"]["confidence"].as_f64().unwrap() < 0.5);
    assert_eq!(result["hallucinations"], json!(["/poNumber"]));
    // Asking again skips; results by transformation ID are keyed by event ID too.
    let again =
        json(app.post("/v3/eval", json!({"transformationIDs": [event["transformationID"]]})).await).await;
    assert_eq!((again["queued"].clone(), again["skipped"].clone()), (json!(0), json!(1)));
    let by_transformation = json(
        app.get(&format!(
            "/v3/eval/results?transformationIDs={}",
            event["transformationID"].as_str().unwrap()
        ))
        .await,
    )
    .await;
    assert!(by_transformation["results"][&id].is_object());
    assert_error(app.get(&format!("/v3/eval/results?eventIDs={id}&transformationIDs=tr_x")).await, 400).await;
    let legacy = json(
        app.post(
            "/v1-beta/transformations/eval/results",
            json!({"transformationIDs": [event["transformationID"], "tr_x"]}),
        )
        .await,
    )
    .await;
    assert!(legacy["results"][event["transformationID"].as_str().unwrap()].is_object(), "{legacy}");
    assert!(legacy["errors"]["tr_x"].is_string());
}

/// A model that extracts `extraction` and, asked for verdicts (the judge), answers `judge`
/// — or 500 when `judge` is null. Returns its base URL and the requests it saw.
async fn judging_model_stub(extraction: Value, judge: Value) -> (String, Seen) {
    chat_model(move |request| match request["response_format"]["json_schema"]["name"] == "verdicts" {
        true if judge.is_null() => (StatusCode::INTERNAL_SERVER_ERROR, json!({"error": "down"})),
        true => (StatusCode::OK, judge.clone()),
        false => (StatusCode::OK, extraction.clone()),
    })
    .await
}

#[tokio::test]
async fn the_model_judges_each_field_and_a_failing_judge_leaves_the_other_checks_standing() {
    let app = spawn_app_with(Handlers::default(), |c| c.allow_private_network = true).await;
    // The invoice number is in the document, so every other check passes it; the judge
    // alone says it is the wrong field (say, an order number printed as an invoice number).
    let extraction = json!({"invoiceNumber": "INV-42", "total": 1234.5});
    let verdicts = json!({"fields": [
        {"path": "/invoiceNumber", "correct": false, "reason": "that is the order number"},
        {"path": "/total", "correct": true, "reason": "stated as the total"}]});
    let (judging, seen) = judging_model_stub(extraction.clone(), verdicts).await;
    let (failing, _) = judging_model_stub(extraction, Value::Null).await;
    for (name, url) in [("judged", &judging), ("unjudged", &failing)] {
        app.create_function(json!({"functionName": name, "type": "extract", "outputSchema": schema(true),
            "extraConfig": {"llm": {"baseUrl": url, "model": "stub-model"}}}))
            .await;
        app.pipeline(name, &[name], &[]).await;
    }
    let mut results = Vec::new();
    for name in ["judged", "unjudged"] {
        let event = app.output_of(name, &document("INV-42")).await;
        let queued = app.post("/v3/eval", json!({"transformationIDs": [event["transformationID"]]})).await;
        assert_eq!(queued.status(), 202);
        let id = event["eventID"].as_str().unwrap().to_string();
        let body = app.evaluations(std::slice::from_ref(&id)).await;
        results.push(body["results"][&id].clone());
    }
    let (judged, unjudged) = (&results[0], &results[1]);
    assert_eq!(judged["judge"]["status"], "judged", "{judged}");
    assert_eq!(judged["flagged"], json!(["/invoiceNumber"]));
    assert_eq!(judged["fields"]["/invoiceNumber"]["flagged"], true);
    assert_eq!(judged["fields"]["/invoiceNumber"]["judgeReason"], "that is the order number");
    assert_eq!(judged["fields"]["/total"]["judged"], true);
    assert_eq!(judged["fields"]["/total"]["confidence"], 1.0);
    let wrong = judged["fields"]["/invoiceNumber"]["confidence"].as_f64().unwrap();
    assert!(wrong < 0.8, "a field the judge calls wrong loses confidence: {judged}");
    // The judge was shown the document and the values it judges.
    let asks_verdicts = |request: &&Value| request["response_format"]["json_schema"]["name"] == "verdicts";
    let request = seen.lock().unwrap().iter().find(asks_verdicts).cloned().expect("the judge was asked");
    let asked = request["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(asked.contains("INV-42") && asked.contains("/invoiceNumber"), "{asked}");
    // A judge that fails leaves the evaluation complete on canon's own checks.
    assert_eq!(unjudged["judge"]["status"], "unavailable", "{unjudged}");
    assert!(unjudged["judge"]["error"].as_str().unwrap().contains("500"), "{unjudged}");
    assert_eq!(unjudged["fields"]["/invoiceNumber"]["judged"], Value::Null);
    assert!(unjudged["fields"]["/invoiceNumber"]["confidence"].as_f64().unwrap() > wrong, "{unjudged}");
    assert_eq!(unjudged["flagged"], json!([]));
}

#[tokio::test]
async fn review_buckets_evaluated_outputs_and_tabulates_thresholds() {
    let app = spawn_app().await;
    app.invoice_pipeline("inv").await;
    let mut ids = Vec::new();
    for n in 301..305 {
        let number = format!("INV-{n}");
        let event = app.output_of("inv", &document(&number)).await;
        let transformation = event["transformationID"].clone();
        let id = event["eventID"].as_str().unwrap().to_string();
        // Half are right as extracted (no PO number in the truth), half miss the PO number.
        let mut correct = truth(&number);
        if n % 2 == 0 {
            correct.as_object_mut().unwrap().remove("poNumber");
        }
        assert_eq!(app.feedback(&id, correct).await.status(), 200);
        app.post("/v3/eval", json!({"transformationIDs": [transformation]})).await;
        ids.push(id);
    }
    app.evaluations(&ids).await;
    let body = json!({"functionName": "inv", "confidenceLevels": [90, 95], "confidenceMethod": "wilson",
        "thresholdMin": 0.5, "thresholdMax": 1.0, "thresholdStep": 0.25});
    let review = json(app.post("/v3/functions/review", body).await).await;
    let estimate = &review["estimate"];
    assert_eq!(review["functionVersionNum"], 1);
    assert_eq!(estimate["totalTransformations"], 4, "{review}");
    assert_eq!(estimate["labeledTransformations"], 4);
    assert_eq!(estimate["unlabeledTransformations"], 0, "the SDK's Estimate requires it");
    assert_eq!(estimate["missingEvaluations"], 0);
    // Every value is valid and in the document: confidence 1, all high.
    assert_eq!(estimate["confidenceDistribution"], json!({"high": 4, "medium": 0, "low": 0}));
    let matrix = estimate["thresholdMatrix"].as_array().unwrap();
    assert_eq!(matrix.len(), 3);
    assert_eq!((matrix[0]["tp"].clone(), matrix[0]["fp"].clone()), (json!(2), json!(2)));
    let precision = &matrix[0]["precision"]["95"];
    assert_eq!(precision["currentSample"], 4);
    assert_eq!(precision["mid"], 0.5);
    assert!(precision["ciLower"].as_f64().unwrap() < 0.5 && precision["ciUpper"].as_f64().unwrap() > 0.5);
    assert!(matrix[0]["precision"]["90"].is_object());
    // Recall is 2/2 here: an observed 1 says nothing of the variance, so the sample is
    // planned at p = 0.5 (all 4 outputs), not "none needed".
    let recall = &matrix[0]["recall"]["95"];
    assert_eq!((recall["mid"].clone(), recall["sampleNeeded"].clone()), (json!(1.0), json!(4)), "{recall}");
    // All outputs share one confidence, so the PR curve is one point: AP = share right.
    assert_eq!(estimate["precisionRecallAuc"], 0.5);
    let sizes = estimate["sampleSizes"].as_array().unwrap();
    assert_eq!(sizes[0]["sampleSize"], 4, "a sample never exceeds the population: {sizes:?}");
    assert_error(
        app.post("/v3/functions/review", json!({"functionName": "inv", "confidenceLevels": [0.95]})).await,
        400,
    )
    .await;
}

#[tokio::test]
async fn an_account_queues_at_most_its_bound_of_calls_and_a_score_run_needs_room_for_every_pair() {
    // No job workers: calls stay queued. The bound is lowered from 10,000 to 3.
    let app = spawn_app_with(Handlers::default(), |c| {
        assert_eq!(c.max_queued_calls, 10_000, "the production bound");
        c.workers = 0;
        c.max_queued_calls = 3;
    })
    .await;
    app.invoice_pipeline("inv").await;
    for n in 0..2 {
        let (status, body) = app.call_text("inv", &document(&format!("INV-{n}")), json!({}), false).await;
        assert_eq!(status, 202, "{body}");
    }
    let content = base64::engine::general_purpose::STANDARD.encode(document("INV-402"));
    let pair = json!({"input": {"inputContent": content, "inputType": "text"}, "expected": truth("INV-402")});
    let two = json!({"functionName": "inv", "pairs": [pair.clone(), pair.clone()]});
    let refused = assert_error(app.post("/v3/eval/score", two).await, 422).await;
    assert_eq!(refused["details"]["limit"], "queuedCallsPerAccount", "{refused}");
    let one = app.post("/v3/eval/score", json!({"functionName": "inv", "pairs": [pair]})).await;
    assert_eq!(one.status(), 202);
    let (status, body) = app.call_text("inv", &document("INV-9"), json!({}), false).await;
    assert_eq!(status, 422, "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(message.contains("3 calls waiting for a worker and at most 3 may wait at once"), "{body}");
}

#[tokio::test]
async fn a_score_run_still_waiting_is_cancelled_and_stays_cancelled() {
    // No job workers: the run's calls stay queued, so the run is in flight when cancelled.
    let app = spawn_app_with(Handlers::default(), |c| c.workers = 0).await;
    app.invoice_pipeline("inv").await;
    let content = base64::engine::general_purpose::STANDARD.encode(document("INV-402"));
    let body = json!({"functionName": "inv", "pairs": [{"input": {"inputContent": content, "inputType": "text"}, "expected": truth("INV-402")}]});
    let created = json(app.post("/v3/eval/score", body).await).await;
    let run_id = created["scoreRunID"].as_str().unwrap().to_string();
    let waiting = json(app.get(&format!("/v3/eval/score/{run_id}")).await).await;
    assert_eq!(waiting["status"], "pending", "{waiting}");
    let cancelled = json(app.post(&format!("/v3/eval/score/{run_id}/cancel"), json!(null)).await).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let read = json(app.get(&format!("/v3/eval/score/{run_id}")).await).await;
    assert_eq!(read["status"], "cancelled", "{read}");
}

#[tokio::test]
async fn a_score_run_compares_each_pair_on_read_and_options_loosen_the_comparison() {
    let app = spawn_app().await;
    app.invoice_pipeline("inv").await;
    let content = base64::engine::general_purpose::STANDARD.encode(document("INV-401"));
    let mut expected = truth("INV-401");
    expected["total"] = json!(1234.0);
    expected["invoiceNumber"] = json!("inv-401 ");
    let body = json!({"functionName": "inv", "pairs": [{"input": {"inputContent": content, "inputType": "text"}, "expected": expected}]});
    let created = app.post("/v3/eval/score", body.clone()).await;
    assert_eq!(created.status(), 202);
    let created = json(created).await;
    let run_id = created["scoreRunID"].as_str().unwrap().to_string();
    let mut run = Value::Null;
    for _ in 0..300 {
        run = json(app.get(&format!("/v3/eval/score/{run_id}")).await).await;
        if run["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["progress"], json!({"completed": 1, "failed": 0, "total": 1}));
    let aggregate = &run["aggregate"];
    assert_eq!(
        (aggregate["matches"].clone(), aggregate["mismatches"].clone(), aggregate["missing"].clone()),
        (json!(1), json!(2), json!(1)),
        "{run}"
    );
    let total = run["perPair"][0]["fieldResults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "/total")
        .unwrap()
        .clone();
    assert_eq!(total["delta"], 0.5);
    let loose = json(
        app.get(&format!(
            "/v3/eval/score/{run_id}?numericTolerance=1&fuzzyThreshold=0.8&ignorePaths=/poNumber"
        ))
        .await,
    )
    .await;
    assert_eq!(loose["aggregate"]["matches"], 3, "{loose}");
    assert_eq!(loose["aggregate"]["missing"], 0);
    // Cancelling a run that finished keeps it as it finished.
    let late = app.post(&format!("/v3/eval/score/{run_id}/cancel"), json!(null)).await;
    assert_eq!(late.status(), 200);
    let late = json(late).await;
    assert_eq!(
        (late["status"].clone(), late["aggregate"].clone()),
        (json!("completed"), run["aggregate"].clone())
    );
    let again = json(app.get(&format!("/v3/eval/score/{run_id}")).await).await;
    assert_eq!(again["status"], "completed", "{again}");
    // The same pair kept in a golden dataset scores the same.
    let columns = json!([{"name": "document", "role": "input", "type": "file"},
                         {"name": "truth", "role": "corrected", "type": "json"}]);
    let dataset = json(app.post("/v3/datasets", json!({"name": "golden", "columns": columns})).await).await;
    let dataset_id = dataset["datasetID"].as_str().unwrap().to_string();
    let row = json!({"columns": [
        {"columnName": "document", "value": {"fileValue": {"inputType": "text", "inputContent": content}}},
        {"columnName": "truth", "value": {"jsonValue": expected}},
    ]});
    assert_eq!(app.post(&format!("/v3/datasets/{dataset_id}/rows/inv-401/columns"), row).await.status(), 200);
    let from_dataset =
        app.post("/v3/eval/score", json!({"functionName": "inv", "datasetID": dataset_id})).await;
    assert_eq!(from_dataset.status(), 202);
    let dataset_run = json(from_dataset).await["scoreRunID"].as_str().unwrap().to_string();
    let mut scored = Value::Null;
    for _ in 0..300 {
        scored = json(app.get(&format!("/v3/eval/score/{dataset_run}")).await).await;
        if scored["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(scored["aggregate"], run["aggregate"], "{scored}");
    let unknown =
        app.post("/v3/eval/score", json!({"functionName": "inv", "datasetID": "gds_unknown"})).await;
    assert_error(unknown, 404).await;
    let mut later = body.clone();
    later["functionVersionNum"] = json!(2);
    assert_error(app.post("/v3/eval/score", later).await, 422).await;
}

#[tokio::test]
async fn a_regression_run_with_copied_corrections_shows_the_new_versions_lift() {
    // One request copies at most 2 corrections here (10,000 in production): the rest are
    // `remaining`, for the next.
    let app = spawn_app_with(Handlers::default(), |config| config.max_regression_corrections = 2).await;
    app.invoice_pipeline("inv").await;
    for n in 501..504 {
        let number = format!("INV-{n}");
        let event = app.output_of("inv", &document(&number)).await;
        assert_eq!(app.feedback(event["eventID"].as_str().unwrap(), truth(&number)).await.status(), 200);
    }
    // Version 2 knows the `PO:` label.
    app.update_function("inv", json!({"outputSchema": schema(true)})).await;
    let run =
        json(app.post("/v3/functions/regression", json!({"functionName": "inv", "sampleSize": 5})).await)
            .await;
    assert_eq!(run["result"]["totalSamples"], 3, "{run}");
    for call in run["result"]["calls"].as_array().unwrap() {
        assert!(call["originalReferenceID"].is_string());
        app.finished_call(call["callID"].as_str().unwrap()).await;
    }
    let regression = json(app.get("/v3/outputs?isRegression=true").await).await;
    assert_eq!(regression["totalCount"], 3, "{regression}");
    assert!(regression["outputs"].as_array().unwrap().iter().all(|o| o["functionVersionNum"] == 2));
    assert_eq!(json(app.get("/v3/outputs?isRegression=false").await).await["totalCount"], 3);

    let copy = json!({"functionName": "inv", "baselineVersionNum": 1, "comparisonVersionNum": 2});
    let applied = json(app.post("/v3/functions/regression/corrections", copy.clone()).await).await;
    assert_eq!(
        (&applied["applied"], &applied["skipped"], &applied["remaining"]),
        (&json!(2), &json!(0), &json!(1))
    );
    assert_eq!(applied["appliedEventIDs"].as_array().unwrap().len(), 2);
    assert_eq!(applied["errors"], json!({}));
    let rest = json(app.post("/v3/functions/regression/corrections", copy.clone()).await).await;
    assert_eq!((&rest["applied"], &rest["skipped"], &rest["remaining"]), (&json!(1), &json!(2), &json!(0)));
    let first = applied["appliedEventIDs"].as_array().unwrap();
    assert!(!first.contains(&rest["appliedEventIDs"][0]), "the third output is another: {rest}");
    let again = json(app.post("/v3/functions/regression/corrections", copy).await).await;
    assert_eq!(
        (&again["applied"], &again["skipped"], &again["remaining"]),
        (&json!(0), &json!(3), &json!(0))
    );

    let compared =
        json(app.post("/v3/functions/compare", json!({"functionName": "inv", "isRegression": true})).await)
            .await;
    assert_eq!(compared["baselineVersionNum"], 1);
    assert_eq!(compared["comparisonVersionNum"], 2);
    assert_eq!(compared["baselineTransformationCount"], 3);
    assert_eq!(compared["comparisonTransformationCount"], 3);
    let recall = &compared["aggregateComparison"]["recall"];
    assert_eq!(
        (recall["baselineValue"].clone(), recall["comparisonValue"].clone()),
        (json!(0.75), json!(1.0)),
        "{compared}"
    );
    assert!((recall["liftPercent"].as_f64().unwrap() - 100.0 / 3.0).abs() < 1e-9);
    let changes = compared["fieldMetricsChanges"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["fieldPath"], "/poNumber");
    let incompatible =
        json!({"outputSchema": {"type": "object", "properties": {"total": {"type": "string"}}}});
    app.update_function("inv", incompatible).await;
    let refused = assert_error(
        app.post("/v3/functions/regression", json!({"functionName": "inv", "baselineVersionNum": 2})).await,
        400,
    )
    .await;
    assert_eq!(refused["details"]["diffs"][0]["fieldPath"], "/total", "{refused}");
}

#[tokio::test]
async fn a_classify_correction_names_one_of_the_declared_classifications() {
    let app = spawn_app().await;
    app.create_function(json!({"functionName": "kind", "type": "classify", "description": "document kind",
    "classifications": [
        {"name": "invoice", "description": "an invoice", "regex": {"patterns": ["(?i)invoice number"]}},
        {"name": "letter", "description": "a letter", "regex": {"patterns": ["(?i)dear "]}}
    ]}))
    .await;
    app.pipeline("kind", &["kind"], &[]).await;
    let event = app.output_of("kind", INVOICE).await;
    assert_eq!(event["choice"], "invoice", "{event}");
    let id = event["eventID"].as_str().unwrap();
    let refused = assert_error(app.feedback(id, json!("memo")).await, 400).await;
    assert!(refused["message"].as_str().unwrap().contains("letter"), "{refused}");
    let answer = json(app.feedback(id, json!("letter")).await).await;
    assert_eq!(answer["functionType"], "classify");
    // The document takes a string here too: a correction is any JSON its event's type fits.
    let doc = json(app.get("/openapi.json").await).await;
    let correction = &doc["components"]["schemas"]["Feedback"]["properties"]["correction"];
    assert!(correction.is_object() && correction["type"].is_null(), "{correction}");
    let m = app.metrics_of("kind").await;
    assert_eq!((m["metrics"]["fp"].clone(), m["metrics"]["fn"].clone()), (json!(1), json!(0)), "{m}");
}

#[tokio::test]
async fn a_score_read_compares_at_most_64_mib_of_outputs_and_fails_the_pairs_past_it_saying_so() {
    // No job workers: the run's calls stay queued and their outputs are recorded here, as a
    // call would record them: 260 outputs of 260,000 characters, 68 MB in all.
    let app = spawn_app_with(Handlers::default(), |c| c.workers = 0).await;
    app.invoice_pipeline("inv").await;
    let content = base64::engine::general_purpose::STANDARD.encode(document("INV-500"));
    let pair =
        json!({"input": {"inputContent": content, "inputType": "text"}, "expected": {"note": "short"}});
    let created =
        json(app.post("/v3/eval/score", json!({"functionName": "inv", "pairs": vec![pair; 260]})).await)
            .await;
    let run_id = created["scoreRunID"].as_str().unwrap().to_string();
    let waiting = json(app.get(&format!("/v3/eval/score/{run_id}")).await).await;
    let owner = canon::store::records::Owner { account_id: &app.account_id, environment: "sandbox" };
    for (n, pair) in waiting["perPair"].as_array().unwrap().iter().enumerate() {
        let call_id = pair["callID"].as_str().unwrap();
        let event_id = canon::ids::new_ksuid();
        let body = json!({"eventID": event_id, "eventType": "extract", "callID": call_id,
                          "transformedContent": {"note": "x".repeat(260_000)}});
        let key = format!("{call_id}-out");
        let event = canon::store::records::events::NewEvent {
            id: &event_id,
            event_type: "extract",
            body: &body,
            call_id,
            function_call_id: &key,
            workflow_id: "wf_score",
            workflow_name: "inv",
            function_id: "fn_inv",
            function_name: "inv",
            function_version_num: 1,
            reference_id: "",
            intermediate: false,
            dedupe_key: &key,
            now: canon::ids::now_millis() + n as i64,
        };
        app.app().state.records.record_pipeline_event(owner, event).await.expect("output recorded");
    }

    // 257 outputs fit in 64 MiB (67,108,864 characters); the last three are not read.
    let run = json(app.get(&format!("/v3/eval/score/{run_id}")).await).await;
    let pairs = run["perPair"].as_array().unwrap();
    let statuses: Vec<&str> = pairs.iter().map(|p| p["status"].as_str().unwrap()).collect();
    assert_eq!(statuses[..257], ["completed"; 257]);
    assert_eq!(statuses[257..], ["failed"; 3]);
    for unread in &pairs[257..] {
        assert_eq!(unread["fieldResults"], Value::Null, "{unread}");
        let message = unread["errorMessage"].as_str().unwrap();
        assert!(message.contains("67108864 characters one read compares together"), "{message}");
        assert!(message.contains("scoredOutputCharactersPerRead"), "{message}");
    }
    assert_eq!(run["progress"], json!({"completed": 257, "failed": 3, "total": 260}));
}

#[tokio::test]
async fn an_account_at_its_bound_of_waiting_evaluations_is_refused_naming_it() {
    // The bound is lowered from 10,000 to none, so the first request reaches it.
    let app = spawn_app_with(Handlers::default(), |c| c.queue_bounds.evaluations = 0).await;
    app.invoice_pipeline("inv").await;
    let event = app.output_of("inv", &document("INV-7")).await;
    let body = json!({"transformationIDs": [event["transformationID"]]});
    let refused = assert_error(app.post("/v3/eval", body).await, 422).await;
    assert_eq!(refused["details"], json!({"limit": "queuedEvaluationsPerAccount", "max": 0}), "{refused}");
}
