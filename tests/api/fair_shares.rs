//! Fair shares: one tenant's backlog of calls to a model that never answers holds at most its
//! share of the job workers, and another tenant's call runs at once.

use crate::calls::{invoice_schema, INVOICE};
use crate::helpers::{json, spawn_app_with, TestApp};
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use futures::StreamExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Calls the flooding tenant queues (the figure; the test raises the key's burst).
const FLOOD: usize = 1_000;

/// A language-model endpoint that takes every connection and never answers; returns its
/// base URL. The connections are kept open so the callers wait out their whole timeout.
async fn hung_model() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    format!("http://{address}/v1")
}

/// Submits `count` calls of `workflow` without waiting, a few at a time.
async fn flood(app: &TestApp, workflow: &str, count: usize) {
    let statuses: Vec<u16> = futures::stream::iter(0..count)
        .map(|_| async { app.call_text(workflow, INVOICE, json!({}), false).await.0 })
        .buffer_unordered(8)
        .collect()
        .await;
    assert!(statuses.iter().all(|s| *s == 202), "every call is accepted: {statuses:?}");
}

/// The tenant's calls in `status`.
async fn calls_in(app: &TestApp, status: &str) -> i64 {
    let body = json(app.get(&format!("/v3/calls?statuses={status}&limit=1")).await).await;
    body["totalCount"].as_i64().unwrap_or_else(|| panic!("{body}"))
}

/// Switches `app` to a new tenant B and submits one call of a workflow that completes on its
/// own; returns tenant A's key, B's finished call and how long after submission it finished.
async fn tenant_b_call(app: &mut TestApp) -> (String, Value, Duration) {
    let tenant_b = app.new_key(Some("tenant-b"), Environment::Sandbox).await;
    let tenant_a = std::mem::replace(&mut app.api_key, tenant_b);
    app.extract_function("quick", invoice_schema()).await;
    app.pipeline("quick", &["quick"], &[]).await;
    let submitted = Instant::now();
    let (status, body) = app.call_text("quick", INVOICE, json!({}), false).await;
    assert_eq!(status, 202, "{body}");
    let call = app.finished_call(body["call"]["callID"].as_str().unwrap()).await;
    (tenant_a, call, submitted.elapsed())
}

#[tokio::test]
async fn a_tenant_flooding_a_hung_model_does_not_delay_another_tenants_call() {
    let mut app = spawn_app_with(Handlers::default(), |config| {
        config.allow_private_network = true;
        // The flood is queued, not rate limited: one key's burst is 200 requests by default.
        config.rate_limit_burst = 2 * FLOOD as u32;
        config.rate_limit_per_second = 1_000.0;
    })
    .await;
    let (workers, per_tenant) = (app.config.workers, app.config.jobs_per_tenant);
    let model = hung_model().await;
    app.create_function(json!({"functionName": "hung", "type": "extract", "outputSchema": invoice_schema(),
        "extraConfig": {"llm": {"baseUrl": model, "model": "stub-model"}}}))
        .await;
    app.pipeline("hung", &["hung"], &[]).await;
    let flooded = Instant::now();
    flood(&app, "hung", FLOOD).await;
    println!("tenant A queued {FLOOD} calls to a hung model in {:?}", flooded.elapsed());
    // Let A's calls take every worker they can.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let running = calls_in(&app, "running").await;
    assert!(running <= per_tenant as i64, "A runs at most its share ({per_tenant}): {running} running");

    // Tenant B: an account of its own, a workflow that completes on its own.
    let (tenant_a, call, delay) = tenant_b_call(&mut app).await;
    println!(
        "fairness: tenant B's call finished {delay:?} after submission, behind tenant A's {FLOOD} \
         calls to a hung model ({workers} workers, {per_tenant} per tenant)"
    );
    assert_eq!(call["status"], "completed", "{call}");
    assert!(delay < Duration::from_secs(15), "B waited {delay:?}");

    app.api_key = tenant_a;
    assert!(calls_in(&app, "pending").await >= (FLOOD - per_tenant) as i64, "A's backlog is still waiting");
}

/// A reader → shaper workflow named `flow` for the current key's tenant, with `count`
/// subscriptions of the shaper's events sent to `webhook`.
async fn subscribed_workflow(app: &TestApp, flow: &str, webhook: &str, count: usize) {
    app.extract_function("reader", invoice_schema()).await;
    app.create_function(json!({"functionName": "shaper", "type": "transform", "outputSchemaName": "Row",
        "outputSchema": {"type": "object", "properties": {"invoiceNumber": {"type": "string"}}}}))
        .await;
    app.pipeline(flow, &["reader", "shaper"], &[("reader", "shaper")]).await;
    for n in 0..count {
        let body = json!({"name": format!("{flow}-{n}"), "type": "transform", "functionName": "shaper",
            "webhookURL": webhook});
        let response = app.post("/v3/subscriptions", body).await;
        assert_eq!(response.status(), 200, "{}", json(response).await);
    }
}

/// A receiver that notes when its first delivery arrived.
async fn timed_receiver() -> (String, std::sync::Arc<std::sync::Mutex<Option<Instant>>>) {
    let arrived = std::sync::Arc::new(std::sync::Mutex::new(None));
    let noted = arrived.clone();
    let router = axum::Router::new().fallback(move || {
        let noted = noted.clone();
        async move {
            noted.lock().unwrap().get_or_insert_with(Instant::now);
            axum::http::StatusCode::OK
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}/hook"), arrived)
}

#[tokio::test]
async fn a_tenant_whose_receiver_hangs_does_not_delay_another_tenants_deliveries() {
    let mut app = spawn_app_with(Handlers::default(), |config| config.allow_private_network = true).await;
    // Tenant A: 10 subscriptions to a receiver that never answers, 16 calls: 160 deliveries,
    // more than the worker's 128 send slots, each waiting out the 15 s send timeout.
    let hung = hung_model().await.replace("/v1", "/hook");
    subscribed_workflow(&app, "flow", &hung, 10).await;
    for _ in 0..16 {
        let (status, body) = app.call_text("flow", INVOICE, json!({}), true).await;
        assert_eq!(status, 200, "{body}");
    }
    tokio::time::sleep(Duration::from_secs(1)).await;

    let tenant_b = app.new_key(Some("tenant-b"), Environment::Sandbox).await;
    app.api_key = tenant_b;
    let (webhook, arrived) = timed_receiver().await;
    subscribed_workflow(&app, "flow", &webhook, 1).await;
    let (status, body) = app.call_text("flow", INVOICE, json!({}), true).await;
    assert_eq!(status, 200, "{body}");
    let finished = Instant::now();
    let deadline = finished + Duration::from_secs(20);
    let delay = loop {
        if let Some(at) = *arrived.lock().unwrap() {
            break at.saturating_duration_since(finished);
        }
        assert!(Instant::now() < deadline, "tenant B's delivery never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    println!(
        "fairness: tenant B's delivery arrived {delay:?} after its call, beside tenant A's 160 hung sends"
    );
    assert!(delay < Duration::from_secs(10), "B's delivery waited {delay:?} (A's sends time out after 15 s)");
}

/// An OpenAI-compatible embeddings endpoint that answers canon's start-up probe and then
/// never answers again: every embedding job holds its worker until the 60 s timeout, as a
/// tenant's backfill against a hung or very slow model would.
async fn hung_embeddings_endpoint() -> String {
    async fn embeddings(axum::Json(body): axum::Json<serde_json::Value>) -> axum::Json<serde_json::Value> {
        if body["input"] != json!(["dimension probe"]) {
            std::future::pending::<()>().await;
        }
        axum::Json(json!({ "object": "list", "data": [{ "index": 0, "embedding": [1.0, 0.0, 0.0, 0.0] }] }))
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = axum::Router::new().route("/v1/embeddings", axum::routing::post(embeddings));
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}")
}

/// A queued seed job's status as its tenant polls it.
async fn seed_status(app: &TestApp, id: &str) -> String {
    let body = json(app.get(&format!("/v3/entities/seed/{id}")).await).await;
    body["status"].as_str().unwrap_or_else(|| panic!("{body}")).to_string()
}

#[tokio::test]
async fn a_tenants_queued_seeds_embeddings_and_evaluations_take_its_share_not_every_worker() {
    let url = hung_embeddings_endpoint().await;
    let mut app = spawn_app_with(Handlers::default(), |config| {
        config.allow_private_network = true;
        config.embeddings_url = Some(url);
        config.embeddings_model = "hung-model".into();
    })
    .await;
    let (workers, per_tenant) = (app.config.workers, app.config.jobs_per_tenant);
    // An output of tenant A's to evaluate later (a waited call runs in its request).
    app.extract_function("quick", invoice_schema()).await;
    app.pipeline("quick", &["quick"], &[]).await;
    let (status, body) = app.call_text("quick", INVOICE, json!({}), true).await;
    assert_eq!(status, 200, "{body}");
    let output = body["call"]["outputs"][0].clone();

    // Tenant A's backlog: more embedding writes than there are workers, each hung; then
    // seed jobs (100 rows each: queued, not seeded in the request) and an evaluation.
    let response = app.post("/v3/collections", json!({ "collectionName": "backfill" })).await;
    assert_eq!(response.status(), 200);
    for i in 0..2 * workers {
        let items = json!({ "collectionName": "backfill", "items": [{ "data": format!("item {i}") }] });
        assert_eq!(app.post("/v3/collections/items", items).await.status(), 202);
    }
    let mut seeds = Vec::new();
    for batch in 0..workers {
        let rows: Vec<_> = (0..100)
            .map(|i| json!({ "canonical": format!("Company {batch}-{i}"), "type": "Company" }))
            .collect();
        let response = app.post("/v3/entities/bulk", json!({ "entities": rows })).await;
        assert_eq!(response.status(), 202);
        seeds.push(json(response).await["seedJobID"].as_str().unwrap().to_string());
    }
    let queued =
        json(app.post("/v3/eval", json!({ "transformationIDs": [output["transformationID"]] })).await).await;
    assert_eq!(queued["queued"], 1, "{queued}");
    tokio::time::sleep(Duration::from_secs(1)).await;

    // Tenant B's call runs on a worker A's backlog left free.
    let (tenant_a, call, delay) = tenant_b_call(&mut app).await;
    println!(
        "fairness: tenant B's call finished {delay:?} after submission, behind tenant A's {} hung \
         embedding writes, {} seed jobs and an evaluation ({workers} workers, {per_tenant} per tenant)",
        2 * workers,
        seeds.len()
    );
    assert_eq!(call["status"], "completed", "{call}");
    assert!(delay < Duration::from_secs(15), "B waited {delay:?}");

    // A holds its share with two hung embeddings: the rest of its backlog waits, pending.
    // (Jobs that took a worker beside them ran before B's call, which was queued after.)
    app.api_key = tenant_a;
    tokio::time::sleep(Duration::from_secs(1)).await;
    for id in &seeds {
        assert_eq!(seed_status(&app, id).await, "pending", "A's seed job {id} waits for A's share");
    }
    let event = output["eventID"].as_str().unwrap();
    let results = json(app.get(&format!("/v3/eval/results?eventIDs={event}")).await).await;
    assert_eq!(results["pending"][0]["eventID"], event, "A's evaluation waits for A's share: {results}");
}
