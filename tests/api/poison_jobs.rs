//! No poison jobs: a call whose worker keeps stopping while running it (it may be what kills
//! canon) fails once its attempts are used up, saying why, and no start runs it again.

use crate::calls::{invoice_schema, INVOICE};
use crate::helpers::{json, spawn_app_with, TestApp};
use canon::jobs::Handlers;
use serde_json::{json, Value};
use std::time::Duration;

const STOPPED_FIVE_TIMES: &str = "the worker stopped while running this job 5 times; it is not retried";

/// The ID of the job that runs `call_id`.
async fn job_of(app: &TestApp, call_id: &str) -> String {
    job_with(app, json!({ "callID": call_id })).await
}

/// The ID of the job whose payload is `payload`.
async fn job_with(app: &TestApp, payload: Value) -> String {
    let pool = sqlx::AnyPool::connect(&app.config.records_url()).await.unwrap();
    let id: String = sqlx::query_scalar("SELECT id FROM jobs WHERE payload = $1")
        .bind(payload.to_string())
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    id
}

/// A workflow call submitted without waiting, on an app with no job workers.
async fn submitted_call(app: &TestApp) -> String {
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    let (status, body) = app.call_text("invoices", INVOICE, json!({}), false).await;
    assert_eq!(status, 202, "{body}");
    body["call"]["callID"].as_str().unwrap().to_string()
}

/// A worker takes the call's job and canon dies while it runs: the lease is all that is
/// left, and canon starts again on the same data.
async fn die_while_running(app: &mut TestApp, job: &str, attempt: i64) {
    let records = app.app().state.records.clone();
    let claimed = records.claim_job("worker-that-died", 300).await.unwrap().expect("the call's job");
    assert_eq!((claimed.id.as_str(), claimed.attempts), (job, attempt), "each start offers the job again");
    app.stop().await;
    app.start().await;
    // On PostgreSQL a dead worker's lease only runs out (no start can tell it is dead).
    tokio::time::sleep(Duration::from_millis(400)).await;
}

/// The job's state once it has left `running` (bounded: 30 s, to catch one that never does).
async fn job_settled(app: &TestApp, job: &str) -> canon::store::records::jobs::JobState {
    let started = std::time::Instant::now();
    loop {
        let state = app.app().state.records.job_state(job).await.unwrap().expect("the job");
        if state.status != "running" || started.elapsed() > Duration::from_secs(30) {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_call_whose_worker_stopped_five_times_fails_saying_so_and_no_start_runs_it_again() {
    let mut app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    let call_id = submitted_call(&app).await;
    let job = job_of(&app, &call_id).await;
    for attempt in 1..=5 {
        die_while_running(&mut app, &job, attempt).await;
    }
    // The sixth start has workers: the call's attempts are used up, so it is failed, not run.
    app.stop().await;
    app.config.workers = 1;
    app.start().await;
    let call = app.finished_call(&call_id).await;
    assert_eq!(call["status"], "failed", "{call}");
    let errors = call["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{call}");
    assert_eq!(errors[0]["errorMessage"], STOPPED_FIVE_TIMES, "{call}");
    assert_eq!(call["outputs"], json!([]));
    // The call is marked failed first, then its job (`jobs::abandon`): the job's row follows
    // within moments (on Neo4j + PostgreSQL under load it was read `running` in between).
    let state = job_settled(&app, &job).await;
    assert_eq!(state.status, "failed");
    assert_eq!(state.last_error.as_deref(), Some(STOPPED_FIVE_TIMES));

    // Further starts leave it failed and never run it.
    app.restart().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let again = app.app().state.records.job_state(&job).await.unwrap().expect("the job");
    assert_eq!(again, state, "no start claims it again");
    let read = json(app.get(&format!("/v3/calls/{call_id}")).await).await;
    assert_eq!(read["call"]["status"], "failed");
    assert_eq!(read["call"]["errors"][0]["errorMessage"], STOPPED_FIVE_TIMES);
    assert_eq!(read["error"], STOPPED_FIVE_TIMES, "the envelope's error says it too");
    let trace = json(app.get(&format!("/v3/calls/{call_id}/trace")).await).await;
    assert_eq!(trace["trace"]["functionCalls"], json!([]), "no node of it ever ran: {trace}");
    let listed = json(app.get("/v3/calls?statuses=failed").await).await;
    let listed: Vec<&Value> = listed["calls"].as_array().map(|c| c.iter().collect()).unwrap_or_default();
    assert!(
        listed
            .iter()
            .any(|c| c["callID"] == call_id.as_str() && c["errors"][0]["errorMessage"] == STOPPED_FIVE_TIMES),
        "the list shows the failure too: {listed:?}"
    );
}

#[tokio::test]
async fn a_call_whose_worker_stopped_fewer_times_than_its_limit_runs_to_completion() {
    let mut app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    let call_id = submitted_call(&app).await;
    let job = job_of(&app, &call_id).await;
    for attempt in 1..=4 {
        die_while_running(&mut app, &job, attempt).await;
    }
    app.stop().await;
    app.config.workers = 1;
    app.start().await;
    let call = app.finished_call(&call_id).await;
    assert_eq!(call["status"], "completed", "its fifth attempt runs: {call}");
    assert_eq!(call["errors"], json!([]));
    // The call completes before its job is marked done.
    let state = job_settled(&app, &job).await;
    assert_eq!((state.status.as_str(), state.attempts), ("done", 5));
}

#[tokio::test]
async fn a_seed_job_given_up_reads_failed_with_the_reason_instead_of_staying_in_progress() {
    let mut app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    let rows: Vec<Value> =
        (0..150).map(|i| json!({ "canonical": format!("Poison {i}"), "type": "Company" })).collect();
    let response = app.post("/v3/entities/bulk", json!({ "entities": rows })).await;
    assert_eq!(response.status(), 202);
    let id = json(response).await["seedJobID"].as_str().unwrap().to_string();
    let job = job_with(&app, json!({ "seedJobID": id })).await;
    // A seed job may run 10 times; each time canon dies while it runs.
    for attempt in 1..=10 {
        die_while_running(&mut app, &job, attempt).await;
    }
    app.stop().await;
    app.config.workers = 1;
    app.start().await;
    let stopped = "the worker stopped while running this job 10 times; it is not retried";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let status = json(app.get(&format!("/v3/entities/seed/{id}")).await).await;
        if status["status"] == "failed" {
            assert_eq!(status["error"], stopped, "{status}");
            assert_eq!(status["processedRows"], 0, "{status}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the seed job is still {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A run stopped at its time limit (the worker calls its handler's `stopped`) leaves what it
/// stood for failed with the reason, never pending: a call, and a collection write's items
/// and its event.
#[tokio::test]
async fn a_call_or_collection_write_stopped_at_its_time_limit_ends_failed_saying_so() {
    use canon::jobs::JobHandler;
    let app = spawn_app_with(Handlers::default(), |config| config.workers = 0).await;
    let reason = "the job ran for its time limit of 3600 s and was stopped; it is not retried";
    let call_id = submitted_call(&app).await;
    let calls = canon::calls::executor::CallJob { service: app.app().state.calls.clone() };
    calls.stopped(json!({ "callID": call_id }), reason).await;
    let call = app.finished_call(&call_id).await;
    assert_eq!(call["status"], "failed", "{call}");
    assert_eq!(call["errors"][0]["errorMessage"], reason, "{call}");

    assert_eq!(app.post("/v3/collections", json!({ "collectionName": "docs" })).await.status(), 200);
    let add = json!({ "collectionName": "docs", "items": [{ "data": "one" }, { "data": "two" }] });
    let ack = json(app.post("/v3/collections/items", add).await).await;
    let event_id = ack["eventID"].as_str().unwrap().to_string();
    let pool = sqlx::AnyPool::connect(&app.config.records_url()).await.unwrap();
    let payload: String = sqlx::query_scalar("SELECT payload FROM jobs WHERE kind = 'collections.embed'")
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    let embed = canon::collections::embed_job::EmbedJob { service: app.app().state.collections.clone() };
    embed.stopped(serde_json::from_str(&payload).unwrap(), reason).await;
    let items = json(app.get("/v3/collections/items?collectionName=docs").await).await;
    let items = items["items"].as_array().expect("items").clone();
    assert_eq!(items.len(), 2);
    for item in &items {
        assert_eq!(
            (item["status"].as_str(), item["errorMessage"].as_str()),
            (Some("failed"), Some(reason)),
            "{item}"
        );
    }
    let tenant = canon::graph::Tenant {
        account_id: app.account_id.clone(),
        environment: canon::store::records::keys::Environment::Sandbox,
    };
    let event = app.app().state.collections.event(&tenant, &event_id).await.unwrap().expect("the event");
    assert_eq!(event["status"], "failed", "{event}");
}
