//! Real inputs through workflow calls (a scanned PNG read by Tesseract, a PDF's text layer,
//! an e-mail with an attachment, multipart uploads) and cross-document linking into the
//! knowledge graph.

use crate::calls::invoice_schema;
use crate::helpers::{json, spawn_app, TestApp};
use base64::Engine as _;
use serde_json::{json, Value};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(crate::helpers::source_dir().join("tests/fixtures").join(name)).expect("fixture")
}

impl TestApp {
    /// Uploads a file as multipart (`file` part named `file_name`) and waits for the call.
    async fn upload(&self, workflow: &str, file_name: &str, bytes: Vec<u8>) -> Value {
        let part = reqwest::multipart::Part::bytes(bytes).file_name(file_name.to_string());
        let form = reqwest::multipart::Form::new().part("file", part).text("wait", "true");
        let response = self
            .request(reqwest::Method::POST, &format!("/v3/workflows/{workflow}/call"))
            .multipart(form)
            .send()
            .await
            .expect("request sent");
        assert_eq!(response.status(), 200, "upload of {file_name}");
        json(response).await["call"].clone()
    }

    /// Calls with one base64 file of `input_type`, waiting; returns the call.
    pub(crate) async fn call_file(
        &self,
        workflow: &str,
        input_type: &str,
        bytes: &[u8],
        extra: Value,
    ) -> Value {
        let content = base64::engine::general_purpose::STANDARD.encode(bytes);
        let mut body =
            json!({ "input": { "singleFile": { "inputContent": content, "inputType": input_type } } });
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        let response = self.post(&format!("/v3/workflows/{workflow}/call?wait=true"), body).await;
        assert_eq!(response.status(), 200);
        json(response).await["call"].clone()
    }
}

#[tokio::test]
async fn a_scanned_png_uploaded_as_multipart_is_read_by_ocr() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("scans", &["invoice"], &[]).await;
    let call = app.upload("scans", "scanned-invoice.png", fixture("scanned-invoice.png")).await;
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(call["input"]["singleFile"]["inputType"], "png");
    let content = &call["outputs"][0]["transformedContent"];
    assert_eq!(content["invoiceNumber"], "INV-2024-017");
    assert_eq!(content["total"], 1234.5);
}

#[tokio::test]
async fn a_pdf_text_layer_is_extracted() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("pdfs", &["invoice"], &[]).await;
    let call = app.call_file("pdfs", "pdf", &fixture("invoice.pdf"), json!({})).await;
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(call["outputs"][0]["transformedContent"]["invoiceNumber"], "INV-42");
}

#[tokio::test]
async fn an_email_with_an_attachment_splits_into_its_attachment_and_names_its_sender() {
    let app = spawn_app().await;
    app.create_function(
        json!({"functionName": "attachments", "type": "split", "splitConfig": {"by": "attachments"}}),
    )
    .await;
    app.pipeline("mail", &["attachments"], &[]).await;
    let call = app.call_file("mail", "email", &fixture("purchase-order.eml"), json!({})).await;
    assert_eq!(call["status"], "completed", "{call}");
    let outputs = call["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1, "one attachment, one item: {outputs:?}");
    assert_eq!(outputs[0]["transformedContent"]["fileName"], "order-lines.csv");
    let email = &outputs[0]["inboundEmail"];
    assert_eq!(email["subject"], "Purchase order PO-7781");
    assert!(email["from"].as_str().unwrap().contains("orders@globex.example"), "{email}");
    assert!(email["deliveredTo"].as_str().unwrap().contains("intake@canon.example"), "{email}");
}

/// An extract function whose `vendor` and `buyer` are companies, linked across documents,
/// with a declared relation between them.
async fn linking_function(app: &TestApp) {
    app.create_function(json!({
        "functionName": "parties", "type": "extract", "linkAcrossDocuments": true, "outputSchemaName": "Parties",
        "outputSchema": {
            "type": "object",
            "properties": {
                "invoiceNumber": {"type": "string"},
                "vendor": {"type": "string", "x-entityType": "Company"},
                "buyer": {"type": "string", "x-entityType": "Company"}
            },
            "required": ["invoiceNumber"],
            "x-relations": [{"source": "/vendor", "target": "/buyer", "type": "SELLS_TO"}]
        }
    }))
    .await;
    app.pipeline("linked", &["parties"], &[]).await;
}

/// The Company nodes of the knowledge graph whose name contains `text` (any case).
async fn companies(app: &TestApp, text: &str) -> Vec<Value> {
    let graph = json(app.get("/v3/knowledge-graph").await).await;
    let named = |n: &&Value| n["canonical"].as_str().unwrap_or_default().to_lowercase().contains(text);
    graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["type"] == "Company")
        .filter(named)
        .cloned()
        .collect()
}

#[tokio::test]
async fn two_documents_naming_one_company_two_ways_end_in_one_entity_with_two_mentions() {
    let app = spawn_app().await;
    linking_function(&app).await;
    let first = "Invoice number: INV-1\nVendor: Acme Corporation\nBuyer: Initech\n";
    let second = "Invoice number: INV-2\nVendor: ACME Corp.\nBuyer: Umbrella Ltd\n";
    let text = |t: &str| t.as_bytes().to_vec();
    let one = app.call_file("linked", "text", &text(first), json!({"callReferenceID": "doc-1"})).await;
    let two = app.call_file("linked", "text", &text(second), json!({"callReferenceID": "doc-2"})).await;
    assert_eq!((one["status"].as_str(), two["status"].as_str()), (Some("completed"), Some("completed")));
    let acme = companies(&app, "acme").await;
    assert_eq!(acme.len(), 1, "one entity for both surface forms: {acme:?}");
    let id = acme[0]["id"].as_str().unwrap();
    let entity = json(app.get(&format!("/v3/entities/{id}")).await).await;
    assert_eq!(entity["mentionCount"], 2, "{entity}");
    let mentions = entity["previewMentions"].as_array().unwrap();
    let references: Vec<&str> = mentions.iter().map(|m| m["referenceID"].as_str().unwrap()).collect();
    assert_eq!(references, vec!["doc-1", "doc-2"]);
    let surfaces: Vec<&str> = mentions.iter().map(|m| m["surface"].as_str().unwrap()).collect();
    assert_eq!(surfaces, vec!["Acme Corporation", "ACME Corp."]);
    assert_eq!(mentions[0]["sectionLabel"], "page 1 › paragraph 1", "the section naming it");
    assert_eq!(mentions[0]["page"], 1);
    let transformation = one["outputs"][0]["transformationID"].as_str().unwrap();
    assert_eq!(
        mentions[0]["transformationID"], transformation,
        "the mention names the event's transformation"
    );
    // The declared relation: each vendor sells to its buyer.
    let relations = json(app.get(&format!("/v3/entities/{id}/relations?direction=outbound")).await).await;
    let targets: Vec<&str> = relations["outbound"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["targetEntity"]["canonical"].as_str().unwrap())
        .collect();
    assert_eq!(targets.len(), 2, "{relations}");
    assert!(targets.contains(&"Initech") && targets.contains(&"Umbrella Ltd"), "{targets:?}");
}

#[tokio::test]
async fn known_entities_named_in_the_text_are_linked_by_the_gazetteer() {
    let app = spawn_app().await;
    let globex = app.entity("Globex Corporation", "Company").await;
    linking_function(&app).await;
    let text = "Invoice number: INV-9\nThank you for choosing Globex for your order.\n";
    let call = app.call_file("linked", "text", text.as_bytes(), json!({"callReferenceID": "doc-g"})).await;
    assert_eq!(call["status"], "completed", "{call}");
    let entity = json(app.get(&format!("/v3/entities/{globex}")).await).await;
    assert_eq!(entity["mentionCount"], 1, "{entity}");
    assert_eq!(entity["previewMentions"][0]["surface"], "Globex");
    assert_eq!(entity["previewMentions"][0]["sectionLabel"], "page 1 › paragraph 1");
    assert_eq!(entity["previewMentions"][0]["referenceID"], "doc-g");
}

#[tokio::test]
async fn without_the_linking_setting_the_graph_is_left_alone() {
    let app = spawn_app().await;
    app.create_function(
        json!({"functionName": "plain", "type": "extract", "outputSchemaName": "P", "outputSchema": {
        "type": "object", "properties": {"vendor": {"type": "string", "x-entityType": "Company"}}}}),
    )
    .await;
    app.pipeline("plain", &["plain"], &[]).await;
    let call = app.call_file("plain", "text", b"Vendor: Hooli Inc.\n", json!({})).await;
    assert_eq!(call["status"], "completed", "{call}");
    assert!(companies(&app, "hooli").await.is_empty());
}

#[tokio::test]
async fn linked_entities_land_in_the_bucket_the_call_names() {
    let app = spawn_app().await;
    let bucket = app.create_bucket("suppliers").await;
    linking_function(&app).await;
    let text = b"Invoice number: INV-5\nVendor: Stark Industries\nBuyer: Wayne Enterprises\n";
    let call = app.call_file("linked", "text", text, json!({"bucket": "suppliers"})).await;
    assert_eq!(call["status"], "completed", "{call}");
    let stark = companies(&app, "stark").await;
    let entity = json(app.get(&format!("/v3/entities/{}", stark[0]["id"].as_str().unwrap())).await).await;
    assert_eq!(entity["bucketID"], bucket.as_str());
    let body = json!({ "input": { "singleFile": { "inputContent": "aGk=", "inputType": "text" } }, "bucket": "nope" });
    let error = crate::helpers::assert_error(app.post("/v3/workflows/linked/call", body).await, 400).await;
    assert!(error["message"].as_str().unwrap().contains("bucket"), "{error}");
}

#[tokio::test]
async fn replaying_a_linked_call_after_a_crash_adds_no_mention_or_event() {
    let app = spawn_app().await;
    linking_function(&app).await;
    let text = b"Invoice number: INV-8\nVendor: Soylent Corp\nBuyer: Tyrell Inc\n";
    let call = app.call_file("linked", "text", text, json!({"callReferenceID": "doc-r"})).await;
    let call_id = call["callID"].as_str().unwrap().to_string();
    // As if canon died after the run was checkpointed and linked but before the call was
    // marked finished: its job runs the whole call again.
    let pool = sqlx::AnyPool::connect(&app.config.records_url()).await.unwrap();
    sqlx::query("UPDATE calls SET status = 'running', finished_at = NULL WHERE id = $1")
        .bind(&call_id)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let handler = canon::calls::executor::CallJob { service: app.app().state.calls.clone() };
    canon::jobs::JobHandler::run(&handler, json!({ "callID": call_id })).await.unwrap();
    let again = json(app.get(&format!("/v3/calls/{call_id}")).await).await;
    assert_eq!(again["call"]["status"], "completed");
    assert_eq!(again["call"]["outputs"], call["outputs"], "the same event, not a second one");
    let soylent = companies(&app, "soylent").await;
    let entity = json(app.get(&format!("/v3/entities/{}", soylent[0]["id"].as_str().unwrap())).await).await;
    assert_eq!(entity["mentionCount"], 1, "{entity}");
    let relations =
        json(app.get(&format!("/v3/entities/{}/relations", soylent[0]["id"].as_str().unwrap())).await).await;
    assert_eq!(relations["outbound"][0]["mentionCount"], 1, "{relations}");
}
