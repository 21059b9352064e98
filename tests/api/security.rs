//! A tenant holding an ordinary API key attacks the server: its environment, its files, its
//! private network, another account's dashboard. Every request goes to canon over real HTTP;
//! the "attacker's" listeners run on loopback.

use crate::calls::INVOICE;
use crate::helpers::{assert_error, json, spawn_app, spawn_app_with, unique, TestApp};
use axum::http::HeaderMap;
use canon::jobs::Handlers;
use reqwest::Method;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// Every request a listener received: method, path, `authorization`, body.
type Seen = Arc<Mutex<Vec<(String, String, String, String)>>>;

/// A loopback listener that records everything and answers like a chat-completions API.
async fn listener() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let router = axum::Router::new().fallback(
        move |method: Method, uri: axum::http::Uri, headers: HeaderMap, body: String| {
            let record = record.clone();
            async move {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                record.lock().unwrap().push((method.to_string(), uri.path().to_string(), auth, body));
                axum::Json(json!({"choices": [{"index": 0, "message": {"role": "assistant",
                "content": "{\"invoiceNumber\": \"INV-42\", \"total\": 1}"}}]}))
            }
        },
    );
    let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = socket.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(socket, router).await });
    (format!("127.0.0.1:{}", address.port()), seen)
}

fn invoice_schema() -> Value {
    json!({"type": "object", "properties": {"invoiceNumber": {"type": "string"}, "total": {"type": "number"}}})
}

fn model_function(name: &str, llm: Value) -> Value {
    json!({"functionName": name, "type": "extract", "outputSchemaName": "Invoice",
           "outputSchema": invoice_schema(), "extraConfig": {"llm": llm}})
}

/// A server variable only this test sets, holding a value nobody else knows.
fn canary() -> (String, String) {
    let name = format!("SECURITY_CANARY_{}", ulid::Ulid::new());
    let value = format!("canary-{}", ulid::Ulid::new());
    std::env::set_var(&name, &value);
    (name, value)
}

async fn spawn_private_app(allowlist: &[&str]) -> TestApp {
    let allowlist: Vec<String> = allowlist.iter().map(|s| s.to_string()).collect();
    spawn_app_with(Handlers::default(), |config| {
        config.allow_private_network = true;
        config.tenant_env_allowlist = allowlist;
    })
    .await
}

/// Runs a one-node workflow of `function` on an invoice text and returns the finished call.
async fn run_once(app: &TestApp, function: &str) -> Value {
    let workflow = unique("wf");
    app.pipeline(&workflow, &[function], &[]).await;
    let (status, body) = app.call_text(&workflow, INVOICE, json!({}), true).await;
    assert!(status == 200 || status == 202, "{body}");
    app.finished_call(body["call"]["callID"].as_str().unwrap()).await
}

fn error_message(call: &Value) -> String {
    call["errors"][0]["message"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn a_configuration_cannot_name_a_server_variable_the_operator_did_not_list() {
    let app = spawn_app().await;
    let (name, _) = canary();
    for variable in ["CANON_JWT_SECRET", name.as_str(), "HOME"] {
        let body = model_function(
            "m",
            json!({"baseUrl": "https://models.example.com/v1", "model": "x",
                                              "apiKeyEnv": variable}),
        );
        let error = assert_error(app.post("/v3/functions", body).await, 400).await;
        assert_eq!(error["details"]["field"], "extraConfig.llm.apiKeyEnv", "{error}");
        let s3 = json!({"functionName": "s", "type": "send", "destinationType": "s3", "s3Bucket": "b",
                        "s3Endpoint": "https://s3.example.com", "s3AccessKeyIdEnv": variable});
        let error = assert_error(app.post("/v3/functions", s3).await, 400).await;
        assert_eq!(error["details"]["field"], "s3AccessKeyIdEnv", "{error}");
        assert!(error["message"].as_str().unwrap().contains("/v3/secrets") || variable.starts_with("CANON_"));
    }
}

#[tokio::test]
async fn an_allowlisted_variable_is_sent_and_stops_being_sent_once_delisted() {
    let (name, value) = canary();
    let mut app = spawn_private_app(&[name.as_str(), "CANON_JWT_SECRET"]).await;
    let (address, seen) = listener().await;
    let base = format!("http://{address}/v1");
    // Listed or not, canon's own configuration stays out of reach.
    let jwt = model_function("jwt", json!({"baseUrl": base, "model": "x", "apiKeyEnv": "CANON_JWT_SECRET"}));
    assert_error(app.post("/v3/functions", jwt).await, 400).await;

    app.create_function(model_function("model", json!({"baseUrl": base, "model": "x", "apiKeyEnv": name})))
        .await;
    let call = run_once(&app, "model").await;
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(seen.lock().unwrap().pop().unwrap().2, format!("Bearer {value}"));

    app.stop().await;
    app.config.tenant_env_allowlist.clear();
    app.start().await;
    let call = run_once(&app, "model").await;
    assert_eq!(call["status"], "failed", "{call}");
    assert!(error_message(&call).contains("CANON_TENANT_ENV_ALLOWLIST"), "{call}");
    assert!(seen.lock().unwrap().is_empty(), "nothing was sent once the variable was delisted");
}

#[tokio::test]
async fn a_model_key_comes_from_the_tenants_secret_store_and_is_never_shown() {
    let app = spawn_private_app(&[]).await;
    let (address, seen) = listener().await;
    let created = app.post("/v3/secrets", json!({"name": "model-key", "value": "sk-first"})).await;
    assert_eq!(created.status(), 201);
    let created = json(created).await;
    assert_eq!(created["name"], "model-key");
    assert!(created.get("value").is_none(), "{created}");
    assert_error(app.post("/v3/secrets", json!({"name": "model-key", "value": "again"})).await, 409).await;
    assert_error(app.post("/v3/secrets", json!({"name": "../etc", "value": "v"})).await, 400).await;

    let llm = json!({"baseUrl": format!("http://{address}/v1"), "model": "x", "apiKeySecret": "model-key"});
    app.create_function(model_function("model", llm)).await;
    assert_eq!(run_once(&app, "model").await["status"], "completed");
    assert_eq!(seen.lock().unwrap().pop().unwrap().2, "Bearer sk-first");

    let shown = app.read("/v3/functions/model?includeExtraSettings=true").await.to_string();
    let listed = app.read("/v3/secrets").await;
    assert_eq!(listed["secrets"][0]["name"], "model-key");
    for text in [shown, listed.to_string()] {
        assert!(!text.contains("sk-first"), "the value never comes back: {text}");
    }

    let rotated = app
        .request(Method::PUT, "/v3/secrets/model-key")
        .json(&json!({"value": "sk-second"}))
        .send()
        .await
        .unwrap();
    assert_eq!(rotated.status(), 200);
    run_once(&app, "model").await;
    assert_eq!(seen.lock().unwrap().pop().unwrap().2, "Bearer sk-second");

    assert_eq!(app.delete("/v3/secrets/model-key").await.status(), 204);
    let call = run_once(&app, "model").await;
    assert_eq!(call["status"], "failed");
    assert!(error_message(&call).contains("model-key"), "{call}");
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn one_tenant_cannot_use_another_tenants_secret() {
    let app = spawn_private_app(&[]).await;
    let response = app.post("/v3/secrets", json!({"name": "shared-name", "value": "mine"})).await;
    assert_eq!(response.status(), 201);
    let other = app.new_key(Some(&unique("rival")), canon::store::records::keys::Environment::Sandbox).await;
    let llm = json!({"baseUrl": "http://127.0.0.1:9/v1", "model": "x", "apiKeySecret": "shared-name"});
    let response = app
        .client
        .post(format!("{}/v3/functions", app.address))
        .header("x-api-key", &other)
        .json(&model_function("theirs", llm))
        .send()
        .await
        .unwrap();
    let error = assert_error(response, 400).await;
    assert!(error["message"].as_str().unwrap().contains("does not exist"), "{error}");
    let listed: Value = app
        .client
        .get(format!("{}/v3/secrets", app.address))
        .header("x-api-key", &other)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["secrets"], json!([]));
}

#[tokio::test]
async fn s3_credentials_come_from_secrets_and_the_environment_is_never_a_fallback() {
    let app = spawn_private_app(&[]).await;
    std::env::set_var("AWS_ACCESS_KEY_ID", "AKIA-SERVER-OWN");
    let (address, seen) = listener().await;
    let send = json!({"functionName": "s3", "type": "send", "destinationType": "s3", "s3Bucket": "b",
                      "s3Endpoint": format!("http://{address}")});
    app.create_function(send).await;
    let call = run_once(&app, "s3").await;
    assert_eq!(call["status"], "failed");
    assert!(error_message(&call).contains("s3AccessKeyIdSecret"), "{call}");
    assert!(seen.lock().unwrap().is_empty(), "no request without the tenant's own credentials");
}

#[tokio::test]
async fn local_object_store_sends_write_only_under_the_tenants_own_folder() {
    let app = spawn_app().await;
    for (field, value) in [
        ("s3Bucket", "file:///tmp/canon-attack"),
        ("s3Bucket", "/tmp/canon-attack"),
        ("s3Bucket", "../../falkordb"),
        ("s3Prefix", "../../../tmp"),
    ] {
        let mut body = json!({"functionName": "out", "type": "send", "destinationType": "object_store",
                              "s3Bucket": "fine"});
        body[field] = json!(value);
        let error = assert_error(app.post("/v3/functions", body).await, 400).await;
        assert_eq!(error["details"]["field"], field, "{value}: {error}");
    }
    assert!(!std::path::Path::new("/tmp/canon-attack").exists());

    let data = app.config.data_dir.clone();
    let before = std::fs::read_dir(data.join("falkordb")).map(|d| d.count()).unwrap_or(0);
    app.create_function(json!({"functionName": "falkor", "type": "send", "destinationType": "object_store",
                               "s3Bucket": "falkordb"}))
        .await;
    let call = run_once(&app, "falkor").await;
    assert_eq!(call["status"], "completed", "{call}");
    let key = call["outputs"][0]["transformedContent"]["s3Output"]["key"].as_str().unwrap().to_string();
    let home = data.join("objects").join(&app.account_id).join("sandbox");
    assert!(home.join("falkordb").join(&key).is_file(), "written under the tenant's folder");
    let after = std::fs::read_dir(data.join("falkordb")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(before, after, "nothing new in the server's FalkorDB directory");
    assert!(!call.to_string().contains(data.to_str().unwrap()), "no server path is shown: {call}");

    // A link inside the tenant's folder that leads out is refused, not followed.
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), home.join("escape")).unwrap();
    app.create_function(json!({"functionName": "escape", "type": "send", "destinationType": "object_store",
                               "s3Bucket": "escape"}))
        .await;
    let call = run_once(&app, "escape").await;
    assert_eq!(call["status"], "failed", "{call}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "no file outside the root");
}

#[tokio::test]
async fn outbound_urls_to_loopback_private_and_metadata_addresses_are_refused() {
    let app = spawn_app().await;
    let (address, seen) = listener().await;
    let port = address.rsplit(':').next().unwrap();
    for url in [
        format!("http://{address}/hook"),
        format!("https://{address}/hook"),
        format!("https://[::1]:{port}/hook"),
        format!("https://[::ffff:127.0.0.1]:{port}/hook"),
        format!("https://0.0.0.0:{port}/hook"),
        format!("https://localhost:{port}/hook"),
        "https://169.254.169.254/latest/meta-data/".into(),
        "https://10.0.0.1/".into(),
        "https://[fd00::1]/".into(),
    ] {
        let hook =
            json!({"functionName": "hook", "type": "send", "destinationType": "webhook", "webhookUrl": url});
        let error = assert_error(app.post("/v3/functions", hook).await, 400).await;
        assert_eq!(error["details"]["field"], "webhookUrl", "{url}: {error}");
        let model = model_function("m", json!({"baseUrl": url, "model": "x"}));
        let error = assert_error(app.post("/v3/functions", model).await, 400).await;
        assert_eq!(error["details"]["field"], "extraConfig.llm.baseUrl", "{url}: {error}");
        let s3 = json!({"functionName": "s", "type": "send", "destinationType": "s3", "s3Bucket": "b", "s3Endpoint": url});
        let error = assert_error(app.post("/v3/functions", s3).await, 400).await;
        assert_eq!(error["details"]["field"], "s3Endpoint", "{url}: {error}");
    }
    let error = assert_error(
        app.post(
            "/v3/functions",
            json!({"functionName": "hook", "type": "send", "webhookUrl": "https://169.254.169.254/"}),
        )
        .await,
        400,
    )
    .await;
    assert!(error["message"].as_str().unwrap().contains("CANON_ALLOW_PRIVATE_NETWORK"), "{error}");
    assert!(seen.lock().unwrap().is_empty(), "no request reached the loopback listener");
}

#[tokio::test]
async fn a_destination_saved_while_the_network_was_open_is_refused_when_dialled() {
    let mut app = spawn_private_app(&[]).await;
    let (address, seen) = listener().await;
    app.create_function(json!({"functionName": "hook", "type": "send", "destinationType": "webhook",
                               "webhookUrl": format!("http://{address}/hook")}))
        .await;
    assert_eq!(run_once(&app, "hook").await["status"], "completed");
    assert_eq!(seen.lock().unwrap().drain(..).count(), 1, "delivered while allowed");

    app.stop().await;
    app.config.allow_private_network = false;
    app.start().await;
    let call = run_once(&app, "hook").await;
    assert_eq!(call["status"], "failed", "{call}");
    assert!(error_message(&call).contains("https"), "{call}");
    assert!(seen.lock().unwrap().is_empty(), "checked again at connect time");
}

#[tokio::test]
async fn a_dashboard_token_needs_its_user_in_the_account_it_names() {
    let app = spawn_app().await;
    let (_, genuine) = app.dashboard_token("admin").await;
    assert_eq!(app.as_user(Method::GET, "/v3/buckets", &genuine).send().await.unwrap().status(), 200);

    // Another account, with a user of its own.
    let records = &app.app().state.records;
    let rival = records.ensure_account(&unique("rival")).await.unwrap();
    let secret = app.app().state.jwt_secret.clone();
    let sign = |sub: &str, account: &str| {
        canon::tokens::sign(
            &canon::tokens::Claims {
                sub: sub.into(),
                email: "x@example.com".into(),
                role: "admin".into(),
                account: account.into(),
                environment: "sandbox".into(),
                exp: chrono::Utc::now().timestamp() + 3600,
            },
            &secret,
        )
    };
    let (user_id, _) = app.dashboard_token("operator").await;
    for forged in
        [sign(&user_id, &rival.id), sign("usr_01NOSUCHUSER", &app.account_id), sign(&user_id, "acc_gone")]
    {
        let response = app.as_user(Method::GET, "/v3/buckets", &forged).send().await.unwrap();
        assert_error(response, 401).await;
    }
    // Without the secret no signature verifies.
    let claims = canon::tokens::verify(&genuine, &secret, 0).unwrap();
    let forged =
        canon::tokens::sign(&canon::tokens::Claims { account: rival.id.clone(), ..claims }, b"guess");
    assert_error(app.as_user(Method::GET, "/v3/buckets", &forged).send().await.unwrap(), 401).await;
}

#[tokio::test]
async fn an_environment_holds_at_most_1000_secrets_and_a_taken_name_is_still_a_409() {
    // Their list is answered whole, so their number is bounded.
    let app = spawn_app().await;
    let records = &app.app().state.records;
    let owner = canon::store::records::Owner { account_id: &app.account_id, environment: "sandbox" };
    for n in 0..999 {
        let stored = records.insert_secret(owner, &format!("s{n}"), "sealed", 1, 1_000).await.unwrap();
        assert!(stored, "secret {n}");
    }
    let create = |name: &str| json!({"name": name, "value": "v"});
    assert_eq!(app.post("/v3/secrets", create("the-thousandth")).await.status(), 201);
    let error = assert_error(app.post("/v3/secrets", create("one-more")).await, 422).await;
    assert!(error["message"].as_str().unwrap().contains("at most 1000 secrets"), "{error}");
    assert_eq!(error["details"]["limit"], "secretsPerEnvironment");
    assert_error(app.post("/v3/secrets", create("s7")).await, 409).await;
    let listed = json(app.get("/v3/secrets").await).await;
    assert_eq!(listed["secrets"].as_array().unwrap().len(), 1_000);
    assert_eq!(app.delete("/v3/secrets/s7").await.status(), 204);
    assert_eq!(app.post("/v3/secrets", create("one-more")).await.status(), 201, "room after a delete");
}
