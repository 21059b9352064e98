//! Events delivery over real HTTP: subscriptions, signed webhooks, rotation, retries, 410,
//! tenancy, the delivery log, and an outbox that survives `kill -9`.

use crate::calls::INVOICE;
use crate::helpers::{assert_error, json, spawn_app, spawn_app_with, unique, TestApp};
use axum::http::{HeaderMap, StatusCode};
use canon::jobs::Handlers;
use canon::signature;
use reqwest::Method;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a receiver got: the `svc-signature` header and the raw body.
pub(crate) type Received = Arc<Mutex<Vec<(String, String)>>>;

/// A loopback receiver answering each request with the next status of `answers` (then 200).
pub(crate) async fn receiver(answers: Vec<u16>) -> (String, Received) {
    let received: Received = Arc::default();
    let answers = Arc::new(Mutex::new(answers.into_iter()));
    let log = received.clone();
    let router = axum::Router::new().fallback(move |headers: HeaderMap, body: String| {
        let (log, answers) = (log.clone(), answers.clone());
        async move {
            let signed = headers.get(signature::HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
            log.lock().unwrap().push((signed.to_string(), body));
            let status = answers.lock().unwrap().next().unwrap_or(200);
            StatusCode::from_u16(status).unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}/hook"), received)
}

pub(crate) async fn spawn_delivering_app(configure: impl FnOnce(&mut canon::config::Config)) -> TestApp {
    spawn_app_with(Handlers::default(), |config| {
        config.allow_private_network = true; // receivers listen on loopback
        config.delivery_retry_scale = 0.002; // 10 s → 20 ms
        configure(config);
    })
    .await
}

impl TestApp {
    /// An extract → transform workflow named `workflow`; returns nothing.
    pub(crate) async fn two_step_workflow(&self, workflow: &str) {
        self.extract_function("reader", crate::calls::invoice_schema()).await;
        self.create_function(
            json!({"functionName": "shaper", "type": "transform", "outputSchemaName": "Row",
            "outputSchema": {"type": "object", "properties": {"invoiceNumber": {"type": "string"}}}}),
        )
        .await;
        self.pipeline(workflow, &["reader", "shaper"], &[("reader", "shaper")]).await;
    }

    pub(crate) async fn subscribe(&self, function: &str, webhook: &str) -> String {
        let response = self
            .post(
                "/v3/subscriptions",
                json!({"name": unique("sub"), "type": "transform", "functionName": function,
                                              "webhookURL": webhook}),
            )
            .await;
        assert_eq!(response.status(), 200);
        json(response).await["subscriptionID"].as_str().unwrap().to_string()
    }

    pub(crate) async fn generate_secret(&self) -> String {
        let response = self
            .request(Method::POST, "/v3/webhook-secret")
            .header("content-type", "application/json")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        json(response).await["secret"].as_str().unwrap().to_string()
    }

    pub(crate) async fn run_workflow(&self, workflow: &str) -> Value {
        let (status, body) = self.call_text(workflow, INVOICE, json!({}), true).await;
        assert_eq!(status, 200, "{body}");
        body["call"].clone()
    }
}

/// Waits until `received` holds `count` requests.
pub(crate) async fn wait_for(received: &Received, count: usize) -> Vec<(String, String)> {
    for _ in 0..600 {
        if received.lock().unwrap().len() >= count {
            return received.lock().unwrap().clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("expected {count} deliveries, got {:?}", received.lock().unwrap());
}

/// A delivery log once none of its deliveries is pending (an attempt is recorded just after
/// the destination answered).
pub(crate) async fn settled_log(app: &TestApp, path: &str) -> Value {
    for _ in 0..200 {
        let log = json(app.get(path).await).await;
        if log["deliveries"].as_array().is_some_and(|all| all.iter().all(|d| d["status"] != "pending")) {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{path} still pending");
}

pub(crate) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// An independent check of the signature: Python's `hmac`, as a receiver in Python would.
fn python_verifies(header: &str, body: &str, secret: &str) -> bool {
    let script = r#"
import hmac, hashlib, sys, time
header, body, secret = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
parts = [p.split("=", 1) for p in header.split(",")]
t = [v for k, v in parts if k == "t"][0]
sigs = [v for k, v in parts if k == "v1"]
want = hmac.new(secret, t.encode() + b"." + body, hashlib.sha256).hexdigest()
ok = abs(time.time() - int(t)) <= 300 and any(hmac.compare_digest(want, s) for s in sigs)
sys.exit(0 if ok else 1)
"#;
    std::process::Command::new("python3")
        .args(["-c", script, header, body, secret])
        .status()
        .unwrap()
        .success()
}

#[tokio::test]
async fn a_terminal_event_reaches_the_webhook_signed_with_the_body_the_read_endpoints_return() {
    let app = spawn_delivering_app(|_| {}).await;
    let (url, received) = receiver(vec![]).await;
    app.two_step_workflow("invoices").await;
    app.subscribe("shaper", &url).await;
    app.subscribe("reader", &url).await; // an intermediate node: never fires
    let secret = app.generate_secret().await;
    assert!(secret.starts_with("whsec_"));
    let masked = json(app.get("/v3/webhook-secret").await).await;
    assert!(!masked.to_string().contains(&secret[6..]), "never shown again: {masked}");

    let call = app.run_workflow("invoices").await;
    let (header, body) = wait_for(&received, 1).await.remove(0);
    let event_id = call["outputs"][0]["eventID"].as_str().unwrap();
    let read = app.get(&format!("/v1-alpha/events/{event_id}")).await.text().await.unwrap();
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), serde_json::from_str::<Value>(&read).unwrap());
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["functionName"], "shaper");

    assert_eq!(signature::verify(&header, body.as_bytes(), &[&secret], now()), Ok(()));
    assert!(python_verifies(&header, &body, &secret), "Python's hmac agrees: {header}");
    let tampered = body.replace("INV-42", "INV-43");
    assert_eq!(
        signature::verify(&header, tampered.as_bytes(), &[&secret], now()),
        Err(signature::VerifyError::Mismatch)
    );
    assert!(!python_verifies(&header, &tampered, &secret));
    assert!(signature::verify(&header, body.as_bytes(), &[&secret], now() + 301).is_err(), "stale");

    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(received.lock().unwrap().len(), 1, "the intermediate node's event was not delivered");
    let log = settled_log(&app, &format!("/v3/events/{event_id}/deliveries")).await;
    assert_eq!(log["deliveries"][0]["status"], "delivered", "{log}");
    assert_eq!(log["deliveries"][0]["attempts"][0]["statusCode"], 200);

    // Revoked: deliveries go out unsigned.
    assert_eq!(app.delete("/v3/webhook-secret").await.status(), 204);
    assert_error(app.get("/v3/webhook-secret").await, 404).await;
    app.run_workflow("invoices").await;
    assert_eq!(wait_for(&received, 2).await[1].0, "", "unsigned after revocation");
}

#[tokio::test]
async fn during_a_rotation_both_secrets_sign_and_afterwards_only_the_new_one() {
    let app = spawn_delivering_app(|config| config.webhook_rotation_hours = 2.0 / 3600.0).await;
    let (url, received) = receiver(vec![]).await;
    app.two_step_workflow("invoices").await;
    app.subscribe("shaper", &url).await;
    let old = app.generate_secret().await;
    let new = app.generate_secret().await;
    assert_ne!(old, new);
    app.run_workflow("invoices").await;
    let (header, body) = wait_for(&received, 1).await.remove(0);
    assert_eq!(header.matches("v1=").count(), 2, "{header}");
    for secret in [&old, &new] {
        assert_eq!(signature::verify(&header, body.as_bytes(), &[secret], now()), Ok(()));
        assert!(python_verifies(&header, &body, secret));
    }
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    app.run_workflow("invoices").await;
    let (header, body) = wait_for(&received, 2).await.remove(1);
    assert_eq!(signature::verify(&header, body.as_bytes(), &[&new], now()), Ok(()));
    assert!(signature::verify(&header, body.as_bytes(), &[&old], now()).is_err(), "the old secret is over");
}

#[tokio::test]
async fn a_failing_receiver_gets_the_same_event_until_it_answers_2xx() {
    let app = spawn_delivering_app(|_| {}).await;
    let (url, received) = receiver(vec![500, 503]).await;
    app.two_step_workflow("invoices").await;
    let subscription = app.subscribe("shaper", &url).await;
    app.run_workflow("invoices").await;
    let got = wait_for(&received, 3).await;
    let ids: Vec<Value> =
        got.iter().map(|(_, body)| serde_json::from_str::<Value>(body).unwrap()["eventID"].clone()).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let log = settled_log(&app, &format!("/v3/subscriptions/{subscription}/deliveries")).await;
    let delivery = &log["deliveries"][0];
    assert_eq!(delivery["status"], "delivered", "{log}");
    let codes: Vec<Value> =
        delivery["attempts"].as_array().unwrap().iter().map(|a| a["statusCode"].clone()).collect();
    assert_eq!(codes, vec![json!(500), json!(503), json!(200)]);
    assert!(delivery["attempts"][0]["nextRetryAt"].is_string());

    // Redelivering by hand sends it once more.
    let id = delivery["deliveryID"].as_str().unwrap();
    assert_eq!(app.post(&format!("/v3/deliveries/{id}/redeliver"), json!({})).await.status(), 202);
    wait_for(&received, 4).await;
}

#[tokio::test]
async fn a_redelivered_delivery_logs_every_attempt_in_order() {
    let app = spawn_delivering_app(|_| {}).await;
    let (url, received) = receiver(vec![200, 202]).await;
    app.two_step_workflow("invoices").await;
    let subscription = app.subscribe("shaper", &url).await;
    app.run_workflow("invoices").await;
    wait_for(&received, 1).await;
    let path = format!("/v3/subscriptions/{subscription}/deliveries");
    let log = settled_log(&app, &path).await;
    let id = log["deliveries"][0]["deliveryID"].as_str().unwrap().to_string();
    assert_eq!(app.post(&format!("/v3/deliveries/{id}/redeliver"), json!({})).await.status(), 202);
    wait_for(&received, 2).await;
    // Redelivery made it pending; settled again, both attempts are written.
    let log = settled_log(&app, &path).await;
    let attempts = log["deliveries"][0]["attempts"].as_array().unwrap();
    assert!(attempts.iter().all(|a| a["attemptedAt"].is_string() && a["latencyMs"].is_i64()), "{log}");
    let codes: Vec<Value> = attempts.iter().map(|a| a["statusCode"].clone()).collect();
    assert_eq!(codes, vec![json!(200), json!(202)], "the first attempt, then the redelivery");
}

#[tokio::test]
async fn gone_disables_the_subscription_and_a_disabled_one_receives_nothing() {
    let app = spawn_delivering_app(|_| {}).await;
    let (url, received) = receiver(vec![410]).await;
    app.two_step_workflow("invoices").await;
    let subscription = app.subscribe("shaper", &url).await;
    app.run_workflow("invoices").await;
    wait_for(&received, 1).await;
    settled_log(&app, &format!("/v3/subscriptions/{subscription}/deliveries")).await;
    let shown = json(app.get(&format!("/v3/subscriptions/{subscription}")).await).await;
    assert_eq!(shown["disabled"], true, "{shown}");
    app.run_workflow("invoices").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(received.lock().unwrap().len(), 1, "nothing after 410");

    let (url, paused) = receiver(vec![]).await;
    let other = app.subscribe("shaper", &url).await;
    let response = app.patch(&format!("/v3/subscriptions/{other}"), json!({"disabled": true})).await;
    assert_eq!(json(response).await["disabled"], true);
    app.run_workflow("invoices").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(paused.lock().unwrap().is_empty(), "a paused subscription receives nothing");
}

#[tokio::test]
async fn another_tenants_subscription_receives_nothing() {
    let app = spawn_delivering_app(|_| {}).await;
    let (mine, received) = receiver(vec![]).await;
    let (theirs, rival_received) = receiver(vec![]).await;
    app.two_step_workflow("invoices").await;
    app.subscribe("shaper", &mine).await;
    let rival = app.new_key(Some(&unique("rival")), canon::store::records::keys::Environment::Sandbox).await;
    let as_rival = |method: Method, path: &str| {
        app.client.request(method, format!("{}{path}", app.address)).header("x-api-key", &rival)
    };
    let body = json!({"functionName": "shaper", "type": "transform", "outputSchema": {"type": "object"}});
    assert_eq!(as_rival(Method::POST, "/v3/functions").json(&body).send().await.unwrap().status(), 200);
    let sub = json!({"name": "spy", "type": "transform", "functionName": "shaper", "webhookURL": theirs});
    assert_eq!(as_rival(Method::POST, "/v3/subscriptions").json(&sub).send().await.unwrap().status(), 200);
    let listed: Value =
        as_rival(Method::GET, "/v3/subscriptions").send().await.unwrap().json().await.unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "only their own: {listed}");

    app.run_workflow("invoices").await;
    wait_for(&received, 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(rival_received.lock().unwrap().is_empty());
}

#[tokio::test]
async fn subscriptions_are_checked_listed_and_paged_as_the_sdk_expects() {
    let app = spawn_delivering_app(|config| config.allow_private_network = false).await;
    app.two_step_workflow("invoices").await;
    for (body, field) in [
        (
            json!({"type": "transform", "functionName": "shaper", "webhookURL": "https://h.example.com"}),
            "name",
        ),
        (
            json!({"name": "a", "type": "nope", "functionName": "shaper", "webhookURL": "https://h.example.com"}),
            "type",
        ),
        (
            json!({"name": "a", "type": "transform", "functionName": "missing", "webhookURL": "https://h.example.com"}),
            "functionName",
        ),
        (
            json!({"name": "  ", "type": "transform", "functionName": "shaper", "webhookURL": "https://h.example.com"}),
            "name",
        ),
        (
            json!({"name": "a\u{7}b", "type": "transform", "functionName": "shaper", "webhookURL": "https://h.example.com"}),
            "name",
        ),
        (json!({"name": "a", "type": "transform", "functionName": "shaper"}), "webhookURL"),
        (
            json!({"name": "a", "type": "transform", "functionName": "shaper", "webhookURL": "https://127.0.0.1/x"}),
            "webhookURL",
        ),
        (json!({"name": "a", "type": "transform", "functionName": "shaper", "s3Bucket": "/etc"}), "s3Bucket"),
        (
            json!({"name": "a", "type": "entity_proposed", "functionName": "shaper", "webhookURL": "https://h.example.com"}),
            "type",
        ),
    ] {
        let error = assert_error(app.post("/v3/subscriptions", body.clone()).await, 400).await;
        assert_eq!(error["details"]["field"], field, "{body}: {error}");
    }
    let mut ids = Vec::new();
    for function in ["shaper", "reader", "shaper"] {
        // A tab is taken in a name, as in every other tenant text.
        let body = json!({"name": "s\tone", "type": "transform", "functionName": function, "webhookURL": "https://h.example.com/x"});
        ids.push(
            json(app.post("/v3/subscriptions", body).await).await["subscriptionID"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(json(app.get(&format!("/v3/subscriptions/{}", ids[0])).await).await["name"], "s\tone");
    let legacy = app
        .post(
            "/v1-alpha/subscriptions",
            json!({"name": "old", "type": "error", "functionName": "reader",
                                                            "webhookURL": "https://h.example.com/y"}),
        )
        .await;
    assert_eq!(legacy.status(), 200);
    let page = json(app.get("/v3/subscriptions?limit=2").await).await;
    assert_eq!(page.as_array().unwrap().len(), 2);
    let after = json(app.get(&format!("/v3/subscriptions?limit=2&startingAfter={}", ids[1])).await).await;
    assert_eq!(after[0]["subscriptionID"], ids[2].as_str());
    let shapers = json(app.get("/v3/subscriptions?functionNames=shaper").await).await;
    assert_eq!(shapers.as_array().unwrap().len(), 2);
    let both = json(app.get("/v3/subscriptions?functionNames=shaper,reader").await).await;
    assert_eq!(both.as_array().unwrap().len(), 4);
    assert_error(app.get("/v3/subscriptions?functionNames=").await, 400).await;
    assert_error(app.get("/v3/subscriptions?limit=101").await, 400).await;
    assert_eq!(app.delete(&format!("/v3/subscriptions/{}", ids[0])).await.status(), 204);
    assert_error(app.get(&format!("/v3/subscriptions/{}", ids[0])).await, 404).await;
}

#[tokio::test]
async fn object_store_and_google_drive_destinations_receive_the_event() {
    let drive_requests: Arc<Mutex<Vec<(String, String, String)>>> = Arc::default();
    let log = drive_requests.clone();
    let drive =
        axum::Router::new().fallback(move |uri: axum::http::Uri, headers: HeaderMap, body: String| {
            let log = log.clone();
            async move {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                let kind =
                    headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
                let ok = uri.path() == "/upload/drive/v3/files"
                    && uri.query() == Some("uploadType=multipart")
                    && auth == "Bearer drive-token"
                    && kind.starts_with("multipart/related; boundary=");
                log.lock().unwrap().push((uri.to_string(), kind, body));
                if ok {
                    StatusCode::OK
                } else {
                    StatusCode::BAD_REQUEST
                }
            }
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let drive_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, drive).await });

    let app = spawn_delivering_app(|config| config.google_drive_api_url = drive_url).await;
    app.two_step_workflow("invoices").await;
    let response =
        app.post("/v3/secrets", json!({"name": "google-drive-token", "value": "drive-token"})).await;
    assert_eq!(response.status(), 201);
    let body = json!({"name": "archive", "type": "transform", "functionName": "shaper", "s3Bucket": "archive",
                      "s3FilePath": "invoices/2026", "googleDriveFolderID": "folder-123"});
    let subscription = json(app.post("/v3/subscriptions", body).await).await;
    assert_eq!(subscription["googleDriveFolderID"], "folder-123");
    let call = app.run_workflow("invoices").await;
    let event_id = call["outputs"][0]["eventID"].as_str().unwrap().to_string();
    let file = app
        .config
        .data_dir
        .join("objects")
        .join(&app.account_id)
        .join("sandbox/archive/invoices/2026")
        .join(format!("{event_id}.json"));
    for _ in 0..200 {
        if file.is_file() && !drive_requests.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let stored: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(stored["eventID"], event_id.as_str());
    let (_, _, upload) = drive_requests.lock().unwrap()[0].clone();
    assert!(
        upload.contains(r#""parents":["folder-123"]"#) && upload.contains(&format!("{event_id}.json")),
        "{upload}"
    );
    assert!(upload.contains(&format!(r#""eventID":"{event_id}""#)), "{upload}");
    let log = settled_log(&app, &format!("/v3/events/{event_id}/deliveries")).await;
    let statuses: Vec<&str> =
        log["deliveries"].as_array().unwrap().iter().map(|d| d["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, vec!["delivered", "delivered"], "{log}");
}

/// A thousand deliveries pending when canon is killed all arrive after it starts again.
#[tokio::test]
async fn deliveries_pending_at_a_kill_arrive_after_a_restart() {
    const CALLS: usize = 1_000;
    let data = tempfile::tempdir().unwrap();
    let key = crate::helpers::cli_key(data.path(), "kill-co");
    // A port nothing listens on yet: every delivery fails and waits for its retry.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let settings = [
        ("CANON_ALLOW_PRIVATE_NETWORK", "true"),
        ("CANON_DELIVERY_RETRY_SCALE", "0.01"),
        ("CANON_RATE_LIMIT_PER_SECOND", "100000"),
        ("CANON_RATE_LIMIT_BURST", "100000"),
    ];
    let (mut canon, address) = crate::helpers::serve_process_with(data.path(), &settings);
    let client = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        client.post(format!("{address}{path}")).header("x-api-key", &key).json(&body).send()
    };
    assert_eq!(
        post("/v3/functions", json!({"functionName": "shaper", "type": "transform"})).await.unwrap().status(),
        200
    );
    let workflow = json!({"name": "flow", "mainNodeName": "shaper", "nodes": [{"name": "shaper", "function": {"name": "shaper"}}]});
    assert_eq!(post("/v3/workflows", workflow).await.unwrap().status(), 200);
    let hook = format!("http://127.0.0.1:{port}/hook");
    let sub = json!({"name": "all", "type": "transform", "functionName": "shaper", "webhookURL": hook});
    assert_eq!(post("/v3/subscriptions", sub).await.unwrap().status(), 200);
    let input = json!({"input": {"singleFile": {"inputContent": "aGVsbG8=", "inputType": "text"}}});
    for _ in 0..CALLS {
        assert_eq!(post("/v3/workflows/flow/call", input.clone()).await.unwrap().status(), 202);
    }
    let outputs = loop {
        let page: Value = client
            .get(format!("{address}/v3/outputs?limit=1"))
            .header("x-api-key", &key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if page["totalCount"] == CALLS {
            break page;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(outputs["totalCount"], CALLS);
    // SAFETY: killing the child process this test started.
    unsafe { libc::kill(canon.id() as i32, libc::SIGKILL) };
    canon.wait().unwrap();

    let seen: Arc<Mutex<std::collections::HashSet<String>>> = Arc::default();
    let record = seen.clone();
    let router = axum::Router::new().fallback(move |body: String| {
        let record = record.clone();
        async move {
            let event: Value = serde_json::from_str(&body).unwrap_or_default();
            record.lock().unwrap().insert(event["eventID"].as_str().unwrap_or_default().to_string());
            StatusCode::OK
        }
    });
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    let (mut canon, _) = crate::helpers::serve_process_with(data.path(), &settings);
    for _ in 0..1_200 {
        if seen.lock().unwrap().len() >= CALLS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let delivered = seen.lock().unwrap().len();
    unsafe { libc::kill(canon.id() as i32, libc::SIGTERM) };
    canon.wait().unwrap();
    assert_eq!(delivered, CALLS, "lost {} of {CALLS}", CALLS - delivered);
}

#[tokio::test]
async fn entity_status_changes_reach_the_account_wide_subscriptions() {
    let app = spawn_delivering_app(|_| {}).await;
    let mut receivers = Vec::new();
    for kind in ["entity_proposed", "entity_validated", "entity_rejected"] {
        let (url, received) = receiver(vec![]).await;
        let response =
            app.post("/v3/subscriptions", json!({"name": kind, "type": kind, "webhookURL": url})).await;
        assert_eq!(response.status(), 200, "{kind}");
        receivers.push(received);
    }
    let (user_id, token) = app.dashboard_token("admin").await;
    let acme = app.entity("Acme Corporation", "Company").await;
    let globex = app.entity("Globex", "Company").await;
    app.entity("Acme Corporation", "Company").await; // a merge proposes nothing new

    let proposed: Vec<Value> = wait_for(&receivers[0], 2)
        .await
        .iter()
        .map(|(_, body)| serde_json::from_str(body).unwrap())
        .collect();
    let mut ids: Vec<&str> = proposed.iter().map(|e| e["entityID"].as_str().unwrap()).collect();
    ids.sort();
    let mut expected = vec![acme.as_str(), globex.as_str()];
    expected.sort();
    assert_eq!(ids, expected);
    assert_eq!(proposed[0]["eventType"], "entity_proposed");
    assert_eq!(proposed[0]["newStatus"], "proposed");
    assert_eq!(proposed[0]["typeName"], "Company");
    assert!(proposed[0]["timestamp"].is_string());

    let patched = app
        .as_user(Method::PATCH, &format!("/v3/entities/{acme}"), &token)
        .json(&json!({"status": "approved"}));
    assert_eq!(patched.send().await.unwrap().status(), 200);
    let (_, body) = wait_for(&receivers[1], 1).await.remove(0);
    let validated: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(validated["entityID"], acme.as_str());
    assert_eq!(validated["priorStatus"], "proposed");
    assert_eq!(validated["newStatus"], "approved");
    assert_eq!(validated["actorUserID"], user_id.as_str());

    let response =
        app.post("/v3/entities/bulk-validate", json!({"entityIDs": [globex], "status": "rejected"})).await;
    assert_eq!(response.status(), 200);
    let (_, body) = wait_for(&receivers[2], 1).await.remove(0);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["entityID"], globex.as_str());

    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receivers[0].lock().unwrap().len(), 2, "proposed once each");
    let listed = json(app.get("/v1-alpha/events").await).await;
    assert_eq!(listed["totalCount"], 0, "entity events stay out of the pipeline's lists: {listed}");
}

#[tokio::test]
async fn a_bulk_seed_job_proposes_each_new_entity_once_across_its_event_batches() {
    let app = spawn_delivering_app(|_| {}).await;
    let (proposed_url, proposed) = receiver(vec![]).await;
    let (validated_url, validated) = receiver(vec![]).await;
    for (kind, url) in [("entity_proposed", proposed_url), ("entity_validated", validated_url)] {
        let response =
            app.post("/v3/subscriptions", json!({"name": kind, "type": kind, "webhookURL": url})).await;
        assert_eq!(response.status(), 200, "{kind}");
    }
    // More rows than one write of entity events holds (1,000), and two rows of one name.
    let mut rows: Vec<Value> =
        (0..1_200).map(|i| json!({"canonical": format!("Company {i:04}"), "type": "Company"})).collect();
    rows.push(json!({"canonical": "Company 0001", "type": "Company"}));
    let accepted = json(app.post("/v3/entities/bulk", json!({"entities": rows})).await).await;
    let status = app.wait_for_seed(accepted["seedJobID"].as_str().expect("a seed job")).await;
    assert_eq!(status["createdCount"], 1_200, "{status}");

    let delivered = wait_for(&proposed, 1_200).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut ids: Vec<String> = delivered
        .iter()
        .map(|(_, body)| {
            serde_json::from_str::<Value>(body).unwrap()["entityID"].as_str().unwrap().to_string()
        })
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 1_200, "one event per new entity");
    assert_eq!(proposed.lock().unwrap().len(), 1_200, "and each delivered once");
    assert!(validated.lock().unwrap().is_empty(), "nothing was validated");
}

#[tokio::test]
async fn a_send_node_delivers_with_the_same_signed_wire_format() {
    let app = spawn_delivering_app(|_| {}).await;
    let (url, received) = receiver(vec![]).await;
    let secret = app.generate_secret().await;
    app.create_function(
        json!({"functionName": "notify", "type": "send", "destinationType": "webhook", "webhookUrl": url}),
    )
    .await;
    app.pipeline("notifier", &["notify"], &[]).await;
    app.run_workflow("notifier").await;
    let (header, body) = wait_for(&received, 1).await.remove(0);
    assert_eq!(signature::verify(&header, body.as_bytes(), &[&secret], now()), Ok(()));
    assert!(python_verifies(&header, &body, &secret));
}

#[tokio::test]
async fn a_collection_subscription_receives_the_event_its_items_acknowledged() {
    let app = spawn_delivering_app(|_| {}).await;
    let (url, received) = receiver(vec![]).await;
    assert_eq!(app.post("/v3/collections", json!({"collectionName": "parts"})).await.status(), 200);
    let sub = json!({"name": "embedded", "type": "collection_processing", "collectionName": "parts", "webhookURL": url});
    assert_eq!(app.post("/v3/subscriptions", sub).await.status(), 200);
    let ack = json(
        app.post(
            "/v3/collections/items",
            json!({"collectionName": "parts", "items": [{"data": "Water filter ZK-0042"}]}),
        )
        .await,
    )
    .await;
    let (_, body) = wait_for(&received, 1).await.remove(0);
    let event: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(event["eventType"], "collection_processing");
    assert_eq!(event["eventID"], ack["eventID"], "{ack} / {event}");
}

#[tokio::test]
async fn an_s3_destination_puts_a_signed_object_at_the_tenants_endpoint() {
    type Puts = Arc<Mutex<Vec<(String, HeaderMap, Vec<u8>)>>>;
    let puts: Puts = Arc::default();
    let log = puts.clone();
    let stub = axum::Router::new().fallback(
        move |uri: axum::http::Uri, headers: HeaderMap, body: axum::body::Bytes| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push((uri.path().to_string(), headers, body.to_vec()));
                StatusCode::OK
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, stub).await });

    let app = spawn_delivering_app(|_| {}).await;
    for (name, value) in [
        ("s3-endpoint", endpoint.as_str()),
        ("s3-access-key-id", "AKIDSUB"),
        ("s3-secret-access-key", "sub-secret"),
        ("s3-region", "eu-west-1"),
    ] {
        assert_eq!(app.post("/v3/secrets", json!({"name": name, "value": value})).await.status(), 201);
    }
    app.two_step_workflow("invoices").await;
    let body = json!({"name": "s3", "type": "transform", "functionName": "shaper", "s3Bucket": "invoices", "s3FilePath": "in"});
    assert_eq!(app.post("/v3/subscriptions", body).await.status(), 200);
    let call = app.run_workflow("invoices").await;
    let event_id = call["outputs"][0]["eventID"].as_str().unwrap().to_string();
    for _ in 0..200 {
        if !puts.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let (path, headers, body) = puts.lock().unwrap().pop().expect("one PUT");
    assert_eq!(path, format!("/invoices/in/{event_id}.json"));
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap()["eventID"], event_id.as_str());
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let hash = canon::engines::sigv4::sha256_hex(&body);
    let (date, host) = (header("x-amz-date"), header("host"));
    let signed =
        [("host", host.as_str()), ("x-amz-content-sha256", hash.as_str()), ("x-amz-date", date.as_str())];
    let expected = canon::engines::sigv4::authorization(
        &canon::engines::sigv4::Request {
            method: "PUT",
            path: &path,
            query: "",
            headers: &signed,
            payload_sha256: &hash,
            amz_date: &date,
        },
        &canon::engines::sigv4::Credentials {
            access_key_id: "AKIDSUB",
            secret_access_key: "sub-secret",
            region: "eu-west-1",
        },
    );
    assert_eq!(header("authorization"), expected);
}

#[tokio::test]
async fn a_receiver_answering_a_nul_byte_is_logged_and_stalls_no_later_delivery() {
    let app = spawn_delivering_app(|_| {}).await;
    let router = axum::Router::new().fallback(|| async { (StatusCode::OK, "ok\0done") });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hostile = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let (url, received) = receiver(vec![]).await;
    app.two_step_workflow("invoices").await;
    let answered_nul = app.subscribe("shaper", &hostile).await;
    app.subscribe("shaper", &url).await;

    app.run_workflow("invoices").await;
    app.run_workflow("invoices").await;
    wait_for(&received, 2).await;
    let log = settled_log(&app, &format!("/v3/subscriptions/{answered_nul}/deliveries")).await;
    let deliveries = log["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 2, "{log}");
    for delivery in deliveries {
        assert_eq!(delivery["status"], "delivered", "{log}");
        assert_eq!(delivery["attempts"][0]["responseExcerpt"], "ok\u{fffd}done", "{log}");
    }
}

#[tokio::test]
async fn at_most_50_subscriptions_watch_one_function_and_a_patch_cannot_move_a_51st_onto_it() {
    // Each event of a function is queued for every subscription on it, in the event's own
    // write: the fan-out of one event is bounded by this.
    let app = spawn_app().await;
    for name in ["watched", "other"] {
        app.create_function(json!({"functionName": name, "type": "transform"})).await;
    }
    let on = |function: &str, n: usize| json!({"name": format!("s{n}"), "type": "transform", "functionName": function, "googleDriveFolderID": "folder"});
    for n in 0..50 {
        assert_eq!(app.post("/v3/subscriptions", on("watched", n)).await.status(), 200, "subscription {n}");
    }
    let error = assert_error(app.post("/v3/subscriptions", on("watched", 50)).await, 422).await;
    assert!(
        error["message"].as_str().unwrap().contains("at most 50 subscriptions watch one function"),
        "{error}"
    );
    assert_eq!(error["details"]["limit"], "subscriptionsPerSource");
    // Another function has room, but a PATCH cannot move that subscription onto the full one.
    let other = json(app.post("/v3/subscriptions", on("other", 50)).await).await;
    let id = other["subscriptionID"].as_str().unwrap();
    let moved = app.patch(&format!("/v3/subscriptions/{id}"), json!({"functionName": "watched"})).await;
    assert_eq!(assert_error(moved, 422).await["details"]["limit"], "subscriptionsPerSource");
    // A PATCH of one already there counts it once.
    let listed = json(app.get("/v3/subscriptions?functionNames=watched&limit=1").await).await;
    let first = listed[0]["subscriptionID"].as_str().unwrap();
    let renamed = app.patch(&format!("/v3/subscriptions/{first}"), json!({"name": "renamed"})).await;
    assert_eq!(renamed.status(), 200);
}
