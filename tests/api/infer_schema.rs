//! `POST /v3/infer-schema` with a plain multipart request (bem-sdk 0.36's
//! `infer_schema.create` sends a broken body: see the README).

use crate::helpers::{assert_error, json, TestApp};
use crate::helpers::{chat_model, spawn_app, spawn_app_with, Seen};
use axum::http::StatusCode;
use canon::jobs::Handlers;
use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

impl TestApp {
    async fn infer(&self, file_name: &str, bytes: Vec<u8>) -> reqwest::Response {
        let form = Form::new().part("file", Part::bytes(bytes).file_name(file_name.to_string()));
        self.request(Method::POST, "/v3/infer-schema").multipart(form).send().await.expect("request sent")
    }
}

#[tokio::test]
async fn labelled_values_and_tables_of_a_text_document_become_a_typed_schema() {
    let app = spawn_app().await;
    let text = "INVOICE\n\nInvoice number: INV-2024-017\nInvoice date: 2024-03-05\nTotal: $1,234.50\n\
                Contact: billing@acme.example\n\nLine Items\nItem        Qty      Price\nBolts       10       5.00\nNuts        20       2.50\n";
    let response = app.infer("invoice.txt", text.as_bytes().to_vec()).await;
    assert_eq!(response.status(), 200);
    let body = json(response).await;
    assert_eq!(body["filename"], "invoice.txt");
    let analysis = &body["analysis"];
    assert_eq!(analysis["documentTypes"][0]["name"], "invoice");
    assert_eq!(
        (analysis["fileType"].as_str(), analysis["contentNature"].as_str()),
        (Some("document"), Some("textual"))
    );
    assert_eq!(analysis["sizeBytes"], text.len());
    assert_eq!(analysis["isMultiDocument"], false);
    assert!(analysis["description"].as_str().unwrap().starts_with("An invoice"), "{analysis}");
    let properties = &analysis["schema"]["properties"];
    assert_eq!(properties["invoiceNumber"]["type"], "string");
    assert_eq!(properties["invoiceDate"]["format"], "date");
    assert_eq!(properties["total"]["type"], "number");
    assert_eq!(properties["contact"]["format"], "email");
    let line = &properties["lineItems"]["items"]["properties"];
    assert_eq!(
        (line["item"]["type"].as_str(), line["qty"]["type"].as_str(), line["price"]["type"].as_str()),
        (Some("string"), Some("integer"), Some("number")),
        "{properties}"
    );
}

#[tokio::test]
async fn json_and_csv_structure_is_kept_and_bad_uploads_are_refused() {
    let app = spawn_app().await;
    let order =
        json!({"orderID": "PO-1", "placedAt": "2024-03-05T10:00:00Z", "lines": [{"sku": "A", "qty": 2}]});
    let body = json(app.infer("order.json", order.to_string().into_bytes()).await).await;
    let schema: &Value = &body["analysis"]["schema"];
    assert_eq!(schema["properties"]["placedAt"]["format"], "date-time");
    assert_eq!(schema["properties"]["lines"]["items"]["properties"]["qty"]["type"], "integer");
    let csv = json(app.infer("people.csv", b"name,age\nAnn,31\nBo,45\n".to_vec()).await).await;
    assert_eq!(csv["analysis"]["fileType"], "spreadsheet");
    assert_eq!(
        csv["analysis"]["schema"]["properties"]["rows"]["items"]["properties"]["age"]["type"],
        "integer"
    );

    assert_error(app.infer("deck.pptx", b"PK..".to_vec()).await, 422).await;
    let form = Form::new().text("other", "x");
    let missing = app.request(Method::POST, "/v3/infer-schema").multipart(form).send().await.unwrap();
    assert_eq!(assert_error(missing, 400).await["details"]["field"], "file");
    let big = app.infer("big.txt", vec![b'a'; 20 * 1024 * 1024 + 1]).await;
    assert_eq!(big.status(), 413);
}

/// A chat-completions endpoint answering `answers` in order (status, message content).
async fn scripted_model(answers: Vec<(StatusCode, Value)>) -> (String, Seen) {
    let queue = Arc::new(Mutex::new(answers.into_iter().rev().collect::<Vec<_>>()));
    chat_model(move |_| queue.lock().unwrap().pop().expect("a scripted answer")).await
}

#[tokio::test]
async fn a_configured_model_refines_the_schema_and_an_invalid_or_failed_answer_keeps_the_inferred_one() {
    let refined = json!({"type": "object", "properties": {
        "invoiceNumber": {"type": "string", "description": "The invoice's number"},
        "totalDue": {"type": "number", "description": "Amount to pay"}}});
    let (url, seen) = scripted_model(vec![
        (StatusCode::OK, json!({"schemaJSON": refined.to_string(), "description": "An invoice from Acme."})),
        (
            StatusCode::OK,
            json!({"schemaJSON": "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": 7}}}",
            "description": "x"}),
        ),
        (StatusCode::SERVICE_UNAVAILABLE, json!({"error": "overloaded"})),
    ])
    .await;
    let app = spawn_app_with(Handlers::default(), |c| {
        c.allow_private_network = true;
        c.infer_schema_llm_url = Some(url);
        c.infer_schema_llm_model = "schema-model".into();
        c.infer_schema_llm_api_key = Some("sk-operator".into());
    })
    .await;
    let text = b"INVOICE\nInvoice number: INV-7\nTotal: $12.00\n".to_vec();

    let first = json(app.infer("invoice.txt", text.clone()).await).await;
    let analysis = &first["analysis"];
    assert_eq!(analysis["refinement"]["status"], "refined", "{analysis}");
    assert_eq!(analysis["schema"], refined);
    assert_eq!(analysis["description"], "An invoice from Acme.");
    let request = seen.lock().unwrap()[0].clone();
    assert_eq!(request["model"], "schema-model");
    let asked = request["messages"][1]["content"].as_str().unwrap();
    assert!(
        asked.contains("INV-7") && asked.contains("invoiceNumber"),
        "the model sees the text and the inferred schema: {asked}"
    );

    let second = json(app.infer("invoice.txt", text.clone()).await).await;
    let analysis = &second["analysis"];
    assert_eq!(analysis["refinement"]["status"], "rejected", "{analysis}");
    assert!(analysis["refinement"]["reason"].as_str().unwrap().contains("valid JSON Schema"));
    assert_eq!(
        analysis["schema"]["properties"]["invoiceNumber"]["type"], "string",
        "the inferred schema stands"
    );
    assert_eq!(analysis["schema"]["properties"]["total"]["type"], "number");

    let third = json(app.infer("invoice.txt", text).await).await;
    let analysis = &third["analysis"];
    assert_eq!(analysis["refinement"]["status"], "failed", "{analysis}");
    assert!(analysis["refinement"]["error"].as_str().unwrap().contains("503"));
    assert_eq!(analysis["schema"]["properties"]["total"]["type"], "number");
}
