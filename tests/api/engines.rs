//! The engines on real inputs: a PDF through pdftotext, a scanned PNG through Tesseract, an
//! .eml with an attachment, MiniLM for classification, a collection for enrich, a local
//! webhook receiver, a folder for object storage, and a stub of an OpenAI-compatible
//! chat-completions API for the language-model engine.

use crate::helpers::{json, spawn_app, vendor_dir, TestApp};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use canon::egress::{Egress, EgressPolicy};
use canon::embeddings::minilm::MiniLm;
use canon::engines::{self, Context, Document, EngineError, Outcome, Payload};
use canon::graph::Tenant;
use canon::store::records::keys::Environment;
use canon::versions::FunctionVersion;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn fixture(name: &str) -> Vec<u8> {
    let path = crate::helpers::source_dir().join("tests/fixtures").join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn function(function_type: &str, body: Value) -> FunctionVersion {
    let mut body = body;
    body["type"] = json!(function_type);
    FunctionVersion {
        function_id: "f-test".into(),
        function_name: format!("test-{function_type}"),
        version_num: 1,
        function_type: function_type.into(),
        body,
    }
}

/// The engines' context for this app's tenant; the local receivers below listen on loopback,
/// so the private network is open (as `CANON_ALLOW_PRIVATE_NETWORK=true` does).
fn context(app: &TestApp) -> Context {
    let policy = EgressPolicy { allow_private_network: true, ..app.config.egress_policy() };
    Context {
        tenant: Tenant { account_id: app.account_id.clone(), environment: Environment::Sandbox },
        embedder: MiniLm::shared(&vendor_dir().join("minilm")).expect("MiniLM is provisioned"),
        collections: app.app().state.collections.clone(),
        egress: Egress::new(policy).expect("egress"),
        secrets: app.app().state.secrets.clone(),
        rules: Default::default(),
    }
}

async fn output(function: &FunctionVersion, input: &Payload, context: &Context) -> Value {
    match engines::run(function, input, context).await {
        Ok(Outcome::Output(value)) => value,
        other => panic!("expected an output, got {other:?}"),
    }
}

fn decode(input_type: &str, fixture_name: &str) -> Document {
    engines::decode(input_type, &fixture(fixture_name)).unwrap_or_else(|err| panic!("{fixture_name}: {err}"))
}

fn invoice_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "invoiceNumber": {"type": "string"},
            "date": {"type": "string", "format": "date"},
            "total": {"type": "number"},
            "billTo": {"type": "string"},
            "contact": {"type": "string", "format": "email"},
            "phone": {"type": "string", "format": "phone"}
        },
        "required": ["invoiceNumber", "total"]
    })
}

#[tokio::test]
async fn a_pdf_text_layer_is_split_into_pages_and_its_labelled_values_extracted() {
    let document = decode("pdf", "invoice.pdf");
    assert_eq!(document.pages.len(), 2, "{:?}", document.pages);
    assert!(document.pages[0].contains("Invoice number: INV-42"), "{:?}", document.pages[0]);
    assert!(document.pages[1].contains("billing@acme.example"), "{:?}", document.pages[1]);

    let app = spawn_app().await;
    let context = context(&app);
    let input = Payload::Document(document);
    let extract = function("extract", json!({"outputSchema": invoice_schema()}));
    assert_eq!(
        output(&extract, &input, &context).await,
        json!({
            "invoiceNumber": "INV-42",
            "date": "2024-03-02",
            "total": 1234.5,
            "billTo": "Globex Corporation",
            "contact": "billing@acme.example",
            "phone": "+442079460958"
        })
    );

    let analyze = function(
        "analyze",
        json!({"outputSchema": {"type": "object", "properties": {
        "invoiceNumber": {"type": "string"}}}}),
    );
    let analysis = output(&analyze, &input, &context).await;
    assert_eq!(analysis["invoiceNumber"], "INV-42");
    assert_eq!(analysis["statistics"]["pages"], 2);
    assert!(analysis["statistics"]["words"].as_u64().unwrap() >= 25, "{analysis}");
}

#[tokio::test]
async fn a_scanned_png_is_read_by_tesseract() {
    let document = decode("png", "scanned-invoice.png");
    for words in ["ACME WIDGETS", "INV-2024-017", "15 March 2024", "$1,234.50"] {
        assert!(document.text.contains(words), "OCR text lacks {words:?}: {:?}", document.text);
    }
    assert_eq!(document.image.as_deref(), Some(fixture("scanned-invoice.png").as_slice()));

    let extracted = engines::transform::extract(
        &function("extract", json!({"outputSchema": invoice_schema()})),
        &Payload::Document(document),
    )
    .unwrap();
    assert_eq!(extracted["invoiceNumber"], "INV-2024-017");
    assert_eq!(extracted["date"], "2024-03-15");
    assert_eq!(extracted["total"], 1234.5);
}

#[test]
fn a_pdf_without_a_text_layer_is_read_by_ocr() {
    let document = decode("pdf", "scanned-invoice.pdf");
    assert_eq!(document.pages.len(), 1);
    for words in ["ACME WIDGETS", "INV-2024-017", "$1,234.50"] {
        assert!(document.text.contains(words), "OCR text lacks {words:?}: {:?}", document.text);
    }
}

#[tokio::test]
async fn an_email_gives_headers_body_and_decoded_attachments() {
    let document = decode("eml", "purchase-order.eml");
    let email = document.email.clone().expect("e-mail headers");
    assert_eq!(email.from, "orders@globex.example");
    assert_eq!(email.to, "intake@canon.example");
    assert_eq!(email.delivered_to, "intake@canon.example");
    assert_eq!(email.subject, "Purchase order PO-7781");
    assert!(document.text.contains("PO number: PO-7781"), "{:?}", document.text);
    assert!(!document.text.contains("<p>"), "the text part, not the HTML one: {:?}", document.text);
    assert_eq!(document.attachments.len(), 1);
    let attachment = &document.attachments[0];
    assert_eq!(attachment.file_name.as_deref(), Some("order-lines.csv"));
    let rows = attachment.rows.as_ref().expect("CSV rows");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["description"], "Gear, large");

    let input = Payload::Document(document);
    let schema = json!({"type": "object", "properties": {
        "poNumber": {"type": "string", "title": "PO number"},
        "deliveryDate": {"type": "string", "format": "date"},
        "from": {"type": "string", "format": "email"},
        "lines": {"type": "array", "items": {"type": "object", "properties": {
            "sku": {"type": "string"}, "qty": {"type": "integer"}, "unitPrice": {"type": "number"}}}}
    }});
    let extracted =
        engines::transform::extract(&function("extract", json!({"outputSchema": schema})), &input).unwrap();
    assert_eq!(
        extracted,
        json!({
            "poNumber": "PO-7781",
            "deliveryDate": "2024-03-22",
            "from": "orders@globex.example",
            "lines": [{"sku": "W-100", "qty": 4, "unitPrice": 12.5}, {"sku": "W-200", "qty": 1, "unitPrice": 99.0}]
        })
    );

    let split = function("split", json!({"splitConfig": {"by": "attachments"}}));
    let items = engines::split::run(&split, &input).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].output["fileName"], "order-lines.csv");
    assert_eq!(items[0].output["printPageOutput"], json!({"itemOffset": 0, "itemCount": 1}));
    let stats = engines::analyze::statistics(&input);
    assert_eq!(stats["attachments"], 1);
}

#[test]
fn unsupported_input_types_are_refused() {
    assert_eq!(engines::supported_input_type("docx"), None);
    assert_eq!(engines::supported_input_type("jfif"), Some("jpeg"));
    let err = engines::decode("mp3", b"ID3").unwrap_err();
    assert!(err.message.contains("unsupported inputType"), "{err}");
    assert_eq!(engines::decode("pdf", b"not a pdf").unwrap_err().kind, "input_decoding");
}

#[tokio::test]
async fn split_by_pages_then_transform_then_join() {
    let input = Payload::Document(decode("pdf", "invoice.pdf"));
    let split = function("split", json!({"splitType": "print_page"}));
    let items = engines::split::run(&split, &input).unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(
        items[1].output,
        json!({"outputType": "print_page", "printPageOutput": {"itemOffset": 1, "itemCount": 2}})
    );

    let transform = function(
        "transform",
        json!({"outputSchema": invoice_schema()
        .as_object().unwrap().iter().filter(|(k, _)| *k != "required")
        .map(|(k, v)| (k.clone(), v.clone())).collect::<serde_json::Map<_, _>>()}),
    );
    let outputs: Vec<Value> =
        items.iter().map(|item| engines::transform::run(&transform, &item.payload).unwrap()).collect();
    assert_eq!(outputs[0]["invoiceNumber"], "INV-42");
    assert_eq!(outputs[1]["contact"], "billing@acme.example");
    assert!(outputs[1].get("invoiceNumber").is_none());

    let join = function("join", json!({"joinType": "standard", "outputSchema": invoice_schema()}));
    let joined = engines::join::run(&join, &outputs).unwrap();
    assert_eq!(joined["invoiceNumber"], "INV-42");
    assert_eq!(joined["contact"], "billing@acme.example");
    assert_eq!(joined["items"].as_array().unwrap().len(), 2);

    let strict = function("join", json!({"outputSchema": {"type": "object", "required": ["poNumber"]}}));
    let err = engines::join::run(&strict, &outputs).unwrap_err();
    assert_eq!(err.kind, "output_schema");
    assert!(err.message.starts_with("outputSchema constraint violation: "), "{}", err.message);
}

#[tokio::test]
async fn output_that_breaks_the_schema_is_an_output_schema_error() {
    let input = Payload::Json(json!({"invoice": {"total": "not a number"}}));
    let extract = function("extract", json!({"outputSchema": invoice_schema()}));
    let err = engines::transform::extract(&extract, &input).unwrap_err();
    assert_eq!(err.kind, "output_schema");
    assert!(err.message.starts_with("outputSchema constraint violation: "), "{}", err.message);
    assert!(err.message.contains("invoiceNumber"), "{}", err.message);
    assert!(err.message.contains("/total"), "{}", err.message);
}

#[tokio::test]
async fn payload_shaping_reshapes_json() {
    let shaping = function(
        "payload_shaping",
        json!({"shapingSchema": "{id: invoice.number, skus: lines[*].sku, first: lines[0].{sku: sku, n: qty}}"}),
    );
    let input = Payload::Json(
        json!({"invoice": {"number": "INV-9"}, "lines": [{"sku": "A", "qty": 2}, {"sku": "B"}]}),
    );
    let shaped = engines::transform::run(&shaping, &input).unwrap();
    assert_eq!(shaped, json!({"id": "INV-9", "skus": ["A", "B"], "first": {"sku": "A", "n": 2}}));
}

#[tokio::test]
async fn classify_by_rules_then_by_minilm_similarity() {
    let app = spawn_app().await;
    let context = context(&app);
    let classify = function(
        "classify",
        json!({"classifications": [
            {"name": "invoice", "description": "An invoice or bill asking for payment of an amount due for goods or services."},
            {"name": "recipe", "description": "A cooking recipe with ingredients and steps to prepare a dish."},
            {"name": "urgent", "description": "Anything", "regex": {"patterns": ["(?i)\\burgent\\b"]}}
        ]}),
    );
    let routed = |outcome: Result<Outcome, EngineError>| match outcome {
        Ok(Outcome::Routed { outlet, output }) => (outlet, output),
        other => panic!("expected a route, got {other:?}"),
    };

    let text = "Whisk two eggs with flour and milk, then bake the batter for twenty minutes at 180 degrees.";
    let (outlet, output) =
        routed(engines::run(&classify, &Payload::Document(text_document(text)), &context).await);
    assert_eq!(outlet, "recipe", "{output}");
    assert_eq!(output["choice"], "recipe");
    assert_eq!(output["method"], "embedding");
    let scores = &output["scores"];
    assert!(scores["recipe"].as_f64().unwrap() > scores["invoice"].as_f64().unwrap(), "{scores}");

    let pdf = Payload::Document(decode("pdf", "invoice.pdf"));
    let (outlet, _) = routed(engines::run(&classify, &pdf, &context).await);
    assert_eq!(outlet, "invoice");

    let urgent = Payload::Document(text_document("URGENT: bake a cake for the party"));
    let (outlet, output) = routed(engines::run(&classify, &urgent, &context).await);
    assert_eq!(outlet, "urgent");
    assert_eq!(output["method"], "rule");
}

fn text_document(text: &str) -> Document {
    engines::decode("text", text.as_bytes()).unwrap()
}

/// A local HTTP endpoint that records the JSON bodies it receives and answers `status`.
async fn receiver(status: StatusCode) -> (String, Arc<Mutex<Vec<Value>>>) {
    let received = Arc::new(Mutex::new(Vec::new()));
    async fn receive(
        State((status, received)): State<(StatusCode, Arc<Mutex<Vec<Value>>>)>,
        axum::Json(body): axum::Json<Value>,
    ) -> (StatusCode, &'static str) {
        received.lock().unwrap().push(body);
        (status, "thanks")
    }
    let router = axum::Router::new().route("/hook", post(receive)).with_state((status, received.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}/hook"), received)
}

#[tokio::test]
async fn send_posts_to_a_webhook_and_writes_to_a_folder() {
    let app = spawn_app().await;
    let context = context(&app);
    let payload = Payload::Json(json!({"invoiceNumber": "INV-42", "total": 1234.5}));

    let (url, received) = receiver(StatusCode::OK).await;
    let send = function("send", json!({"destinationType": "webhook", "webhookUrl": url}));
    let delivered = output(&send, &payload, &context).await;
    assert_eq!(delivered["deliveryStatus"], "success");
    assert_eq!(delivered["destinationType"], "webhook");
    assert_eq!(delivered["webhookOutput"], json!({"httpStatusCode": 200, "httpResponseBody": "thanks"}));
    assert_eq!(*received.lock().unwrap(), vec![json!({"invoiceNumber": "INV-42", "total": 1234.5})]);

    let (failing, _) = receiver(StatusCode::INTERNAL_SERVER_ERROR).await;
    let send = function("send", json!({"destinationType": "webhook", "webhookUrl": failing}));
    let err = engines::run(&send, &payload, &context).await.unwrap_err();
    assert_eq!(err.kind, "send_failed");
    assert!(err.message.contains("500"), "{err}");

    let tenant_folder = app.config.data_dir.join("objects").join(&app.account_id).join("sandbox");
    let send = function(
        "send",
        json!({"destinationType": "object_store", "s3Bucket": "exports", "s3Prefix": "2024/q1"}),
    );
    let stored = output(&send, &payload, &context).await;
    let key = stored["s3Output"]["key"].as_str().unwrap();
    assert!(key.starts_with("2024/q1/") && key.ends_with(".json"), "{key}");
    assert_eq!(stored["s3Output"]["bucketName"], "exports");
    let written: Value =
        serde_json::from_slice(&std::fs::read(tenant_folder.join("exports").join(key)).unwrap()).unwrap();
    assert_eq!(written, json!({"invoiceNumber": "INV-42", "total": 1234.5}));

    let send = function("send", json!({"destinationType": "s3", "s3Bucket": "outbox"}));
    let stored = output(&send, &payload, &context).await;
    let key = stored["s3Output"]["key"].as_str().unwrap();
    assert!(tenant_folder.join("outbox").join(key).is_file(), "{stored}");
}

#[tokio::test]
async fn a_send_to_a_webhook_is_signed_with_the_environment_s_secret_as_deliveries_are() {
    let app = spawn_app().await;
    let context = context(&app);
    let payload = Payload::Json(json!({"invoiceNumber": "INV-42"}));
    let (url, received) = crate::delivery::receiver(vec![]).await;
    let send = function("send", json!({"destinationType": "webhook", "webhookUrl": url}));

    output(&send, &payload, &context).await;
    let secret = app.generate_secret().await;
    output(&send, &payload, &context).await;

    let got = received.lock().unwrap().clone();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "", "unsigned while the environment has no secret");
    let (header, body) = &got[1];
    assert_eq!(serde_json::from_str::<Value>(body).unwrap(), json!({"invoiceNumber": "INV-42"}));
    let now = crate::delivery::now();
    assert_eq!(canon::signature::verify(header, body.as_bytes(), &[&secret], now), Ok(()), "{header}");
    let other = "whsec_another-environment-s-secret";
    assert!(canon::signature::verify(header, body.as_bytes(), &[other], now).is_err());
}

/// A stand-in for an S3-compatible endpoint: records each PUT (path, headers, body).
async fn object_store_stub() -> (String, Arc<Mutex<Vec<(String, axum::http::HeaderMap, Vec<u8>)>>>) {
    type Puts = Arc<Mutex<Vec<(String, axum::http::HeaderMap, Vec<u8>)>>>;
    let puts: Puts = Arc::new(Mutex::new(Vec::new()));
    async fn put(
        State(puts): State<Puts>,
        uri: axum::http::Uri,
        headers: axum::http::HeaderMap,
        body: axum::body::Bytes,
    ) -> StatusCode {
        puts.lock().unwrap().push((uri.path().to_string(), headers, body.to_vec()));
        StatusCode::OK
    }
    let router = axum::Router::new().route("/{*path}", axum::routing::put(put)).with_state(puts.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}"), puts)
}

/// No real S3 here: this checks the request canon signs and sends (path-style key, payload
/// hash, SigV4 authorization over the headers actually sent), not that AWS accepts it.
#[tokio::test]
async fn send_to_an_s3_endpoint_puts_a_signed_object() {
    let app = spawn_app().await;
    let context = context(&app);
    for (name, value) in [("s3-key-id", "AKIDENGINESTEST"), ("s3-secret", "engines-test-secret")] {
        let response = app.post("/v3/secrets", json!({"name": name, "value": value})).await;
        assert_eq!(response.status(), 201);
    }
    let (endpoint, puts) = object_store_stub().await;
    let send = function(
        "send",
        json!({"destinationType": "s3", "s3Bucket": "invoices", "s3Prefix": "in", "s3Endpoint": endpoint,
               "s3Region": "eu-west-1", "s3AccessKeyIdSecret": "s3-key-id",
               "s3SecretAccessKeySecret": "s3-secret"}),
    );
    let payload = Payload::Json(json!({"invoiceNumber": "INV-42"}));
    let stored = output(&send, &payload, &context).await;
    let key = stored["s3Output"]["key"].as_str().unwrap().to_string();
    assert_eq!(stored["s3Output"]["bucketName"], "invoices");
    assert!(key.starts_with("in/") && key.ends_with(".json"), "{key}");

    let (path, headers, body) = puts.lock().unwrap().pop().expect("one PUT");
    assert_eq!(path, format!("/invoices/{key}"));
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), json!({"invoiceNumber": "INV-42"}));
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let payload_hash = engines::sigv4::sha256_hex(&body);
    assert_eq!(header("x-amz-content-sha256"), payload_hash);
    let amz_date = header("x-amz-date");
    let host = header("host");
    let signed = [
        ("host", host.as_str()),
        ("x-amz-content-sha256", payload_hash.as_str()),
        ("x-amz-date", amz_date.as_str()),
    ];
    let expected = engines::sigv4::authorization(
        &engines::sigv4::Request {
            method: "PUT",
            path: &path,
            query: "",
            headers: &signed,
            payload_sha256: &payload_hash,
            amz_date: &amz_date,
        },
        &engines::sigv4::Credentials {
            access_key_id: "AKIDENGINESTEST",
            secret_access_key: "engines-test-secret",
            region: "eu-west-1",
        },
    );
    assert_eq!(header("authorization"), expected);
    assert!(expected.starts_with(&format!(
        "AWS4-HMAC-SHA256 Credential=AKIDENGINESTEST/{}/eu-west-1/s3/aws4_request",
        &amz_date[..8]
    )));

    let unset = function(
        "send",
        json!({"destinationType": "s3", "s3Bucket": "b", "s3Endpoint": endpoint,
               "s3AccessKeyIdEnv": "ENGINES_TEST_UNSET_VARIABLE"}),
    );
    let err = engines::run(&unset, &payload, &context).await.unwrap_err();
    assert!(err.message.contains("ENGINES_TEST_UNSET_VARIABLE"), "{err}");
    assert!(err.message.contains("CANON_TENANT_ENV_ALLOWLIST"), "not listed, so never read: {err}");
}

#[tokio::test]
async fn enrich_injects_the_best_collection_match() {
    let app = spawn_app().await;
    let context = context(&app);
    let response = app.post("/v3/collections", json!({"collectionName": "products"})).await;
    assert_eq!(response.status(), 200);
    let items = json!([
        {"data": {"sku": "W-100", "name": "Blue widget, small steel bracket"}},
        {"data": {"sku": "G-200", "name": "Large gear for industrial gearbox"}},
        {"data": {"sku": "F-300", "name": "Fresh basil and tomato pasta sauce"}}
    ]);
    let response =
        app.post("/v3/collections/items", json!({"collectionName": "products", "items": items})).await;
    assert_eq!(response.status(), 202);
    wait_until_embedded(&app, "products").await;

    let enrich = function(
        "enrich",
        json!({"config": {"steps": [{
            "source": "collection", "collectionName": "products", "sourceField": "lines[*].description",
            "targetField": "matches.products", "topK": 1, "includeScore": true, "scoreThreshold": 1.0
        }]}}),
    );
    let input =
        Payload::Json(json!({"lines": [{"description": "gear, large"}, {"description": "pasta sauce"}]}));
    let enriched = output(&enrich, &input, &context).await;
    let matches = &enriched["matches"]["products"];
    assert_eq!(matches[0][0]["data"]["sku"], "G-200", "{enriched}");
    assert_eq!(matches[1][0]["data"]["sku"], "F-300", "{enriched}");
    assert_eq!(matches[0][0]["rank"], 1);
    assert_eq!(matches[0][0]["scoreType"], "cosineDistance");
    assert_eq!(enriched["lines"][0]["description"], "gear, large", "the input is kept");

    let endpoint = function(
        "enrich",
        json!({"config": {"steps": [
        {"source": "endpoint", "endpointName": "crm", "sourceField": "a", "targetField": "b"}]}}),
    );
    assert_eq!(engines::run(&endpoint, &input, &context).await.unwrap_err().kind, "unsupported");

    // A step's options are read as given or refused by name: a whole float is that number,
    // text or a count past the bound fails the call instead of becoming the default.
    let step = |top_k: Value| {
        function(
            "enrich",
            json!({"config": {"steps": [{"collectionName": "products", "sourceField": "lines[*].description",
                                         "targetField": "m", "topK": top_k, "scoreThreshold": 1.0}]}}),
        )
    };
    let two = output(&step(json!(2.0)), &input, &context).await;
    assert_eq!(two["m"][0].as_array().map(Vec::len), Some(2), "{two}");
    for refused in [json!("5"), json!(500), json!(0), json!(1.5)] {
        let error = engines::run(&step(refused.clone()), &input, &context).await.unwrap_err();
        assert_eq!(error.kind, "invalid_config", "{refused}");
        assert!(
            error.message.contains("topK must be a whole number from 1 to 100"),
            "{refused}: {}",
            error.message
        );
    }
}

async fn wait_until_embedded(app: &TestApp, collection: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let page = json(app.get(&format!("/v3/collections/items?collectionName={collection}")).await).await;
        let items = page["items"].as_array().cloned().unwrap_or_default();
        if !items.is_empty() && items.iter().all(|item| item["status"] == "embedded") {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "items still pending: {page}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A stub of an OpenAI-compatible chat-completions API: records each request and answers
/// with `content` as the assistant message.
async fn model_stub(content: Value) -> (String, Arc<Mutex<Vec<Value>>>) {
    let requests = Arc::new(Mutex::new(Vec::new()));
    async fn complete(
        State((content, requests)): State<(Value, Arc<Mutex<Vec<Value>>>)>,
        headers: axum::http::HeaderMap,
        axum::Json(mut body): axum::Json<Value>,
    ) -> axum::Json<Value> {
        body["authorization"] = json!(headers.get("authorization").and_then(|v| v.to_str().ok()));
        requests.lock().unwrap().push(body);
        let text = content.as_str().map(str::to_string).unwrap_or_else(|| content.to_string());
        axum::Json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]
        }))
    }
    let router = axum::Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state((content, requests.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}/v1"), requests)
}

#[tokio::test]
async fn a_language_model_extracts_with_a_json_schema_and_sees_images_in_vision_mode() {
    let app = spawn_app().await;
    let context = context(&app);
    let schema = json!({"type": "object", "properties": {"invoiceNumber": {"type": "string"}, "total": {"type": "number"}},
        "required": ["invoiceNumber", "total"], "additionalProperties": false});
    let (url, requests) = model_stub(json!({"invoiceNumber": "INV-2024-017", "total": 1234.5})).await;
    let llm = |mode: &str| {
        function(
            "extract",
            json!({"outputSchema": schema, "outputSchemaName": "invoice",
            "extraConfig": {"llm": {"baseUrl": url, "model": "stub-model", "apiKey": "sk-test", "mode": mode}}}),
        )
    };
    let scan = Payload::Document(decode("png", "scanned-invoice.png"));

    let extracted = output(&llm("vision"), &scan, &context).await;
    assert_eq!(extracted, json!({"invoiceNumber": "INV-2024-017", "total": 1234.5}));
    let request = requests.lock().unwrap().pop().unwrap();
    assert_eq!(request["model"], "stub-model");
    assert_eq!(request["authorization"], "Bearer sk-test");
    assert_eq!(request["response_format"]["type"], "json_schema");
    assert_eq!(request["response_format"]["json_schema"]["name"], "invoice");
    assert_eq!(request["response_format"]["json_schema"]["strict"], true);
    assert_eq!(request["response_format"]["json_schema"]["schema"], schema);
    let parts = request["messages"][1]["content"].as_array().expect("text and image parts");
    let image = parts.iter().find(|p| p["type"] == "image_url").expect("an image part");
    assert!(
        image["image_url"]["url"].as_str().unwrap().starts_with("data:image/png;base64,iVBOR"),
        "{image}"
    );

    output(&llm("ocr"), &scan, &context).await;
    let request = requests.lock().unwrap().pop().unwrap();
    let prompt = request["messages"][1]["content"].as_str().expect("OCR mode sends text");
    assert!(prompt.contains("OCR text") && prompt.contains("INV-2024-017"), "{prompt}");

    let (bad_url, _) = model_stub(json!({"invoiceNumber": 17})).await;
    let bad = function(
        "extract",
        json!({"outputSchema": schema,
        "extraConfig": {"llm": {"baseUrl": bad_url, "model": "stub-model"}}}),
    );
    assert_eq!(engines::run(&bad, &scan, &context).await.unwrap_err().kind, "output_schema");
    let (prose_url, _) = model_stub(json!("I think the total is 12")).await;
    let prose = function(
        "extract",
        json!({"outputSchema": schema,
        "extraConfig": {"llm": {"baseUrl": prose_url, "model": "stub-model"}}}),
    );
    assert_eq!(engines::run(&prose, &scan, &context).await.unwrap_err().kind, "model_error");
}

#[tokio::test]
async fn a_language_model_classifies_among_the_route_names() {
    let app = spawn_app().await;
    let context = context(&app);
    let (url, requests) = model_stub(json!({"choice": "complaint"})).await;
    let classify = function(
        "route",
        json!({"classifications": [{"name": "order", "description": "purchase orders"},
                                   {"name": "complaint", "description": "unhappy customers"}],
               "extraConfig": {"llm": {"baseUrl": url, "model": "stub-model"}}}),
    );
    let input = Payload::Document(text_document("The parcel arrived broken, again."));
    let Outcome::Routed { outlet, output } = engines::run(&classify, &input, &context).await.unwrap() else {
        panic!("not routed")
    };
    assert_eq!(outlet, "complaint");
    assert_eq!(output, json!({"choice": "complaint", "method": "model"}));
    let request = requests.lock().unwrap().pop().unwrap();
    assert_eq!(
        request["response_format"]["json_schema"]["schema"]["properties"]["choice"]["enum"],
        json!(["order", "complaint"])
    );
    assert!(request["messages"][1]["content"].as_str().unwrap().contains("arrived broken"));

    let (wrong_url, _) = model_stub(json!({"choice": "spam"})).await;
    let mut wrong = classify.clone();
    wrong.body["extraConfig"]["llm"]["baseUrl"] = json!(wrong_url);
    assert_eq!(engines::run(&wrong, &input, &context).await.unwrap_err().kind, "model_error");
}
