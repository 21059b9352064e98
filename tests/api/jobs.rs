//! The durable job queue: retries with backoff, one worker per job, survival across restarts.

use crate::helpers::{spawn_app_with, TestApp};
use async_trait::async_trait;
use canon::jobs::{Handlers, JobHandler};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Records every run; fails a payload's first `failFirst` attempts; takes `sleepMs`.
#[derive(Default)]
struct Recorder {
    runs: Mutex<HashMap<String, u32>>,
    running: Mutex<HashSet<String>>,
    overlaps: Mutex<u32>,
    given_up: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl JobHandler for Recorder {
    async fn run(&self, payload: Value) -> anyhow::Result<()> {
        let key = payload["key"].as_str().unwrap_or_default().to_string();
        if !self.running.lock().unwrap().insert(key.clone()) {
            *self.overlaps.lock().unwrap() += 1;
        }
        tokio::time::sleep(Duration::from_millis(payload["sleepMs"].as_u64().unwrap_or(0))).await;
        self.running.lock().unwrap().remove(&key);
        let attempt = {
            let mut runs = self.runs.lock().unwrap();
            let count = runs.entry(key.clone()).or_insert(0);
            *count += 1;
            *count
        };
        let fail_first = payload["failFirst"].as_u64().unwrap_or(0) as u32;
        if attempt <= fail_first {
            anyhow::bail!("planned failure {attempt} of {key}");
        }
        Ok(())
    }

    async fn gave_up(&self, payload: Value, error: &str) {
        let key = payload["key"].as_str().unwrap_or_default().to_string();
        self.given_up.lock().unwrap().push((key, error.to_string()));
    }
}

async fn app_with_recorder(workers: usize) -> (TestApp, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let mut handlers = Handlers::default();
    handlers.register("test.record", recorder.clone());
    let app = spawn_app_with(handlers, |config| config.workers = workers).await;
    (app, recorder)
}

async fn wait_for_status(
    app: &TestApp,
    job: &str,
    status: &str,
    within: Duration,
) -> canon::store::records::jobs::JobState {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let state = app.app().state.records.job_state(job).await.unwrap().expect("job exists");
        if state.status == status {
            return state;
        }
        assert!(tokio::time::Instant::now() < deadline, "job {job} is still {state:?}, expected {status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_job_enqueued_before_a_stop_runs_after_the_restart() {
    let (mut app, recorder) = app_with_recorder(0).await;
    let job = app
        .app()
        .state
        .records
        .enqueue_job("test.record", &json!({ "key": "survivor" }), 3, None)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.app().state.records.job_state(&job).await.unwrap().unwrap().status, "queued");
    app.stop().await;
    app.config.workers = 2;
    app.start().await;
    wait_for_status(&app, &job, "done", Duration::from_secs(10)).await;
    assert_eq!(recorder.runs.lock().unwrap()["survivor"], 1);
}

#[tokio::test]
async fn a_job_held_by_a_worker_that_died_runs_again_after_restart() {
    let (mut app, recorder) = app_with_recorder(0).await;
    let records = app.app().state.records.clone();
    let job = records.enqueue_job("test.record", &json!({ "key": "orphan" }), 3, None).await.unwrap();
    // A worker claims it and dies without finishing: its lease is all that is left.
    let claimed = records.claim_job("worker-that-died", 500).await.unwrap().expect("claimed");
    assert_eq!(claimed.id, job);
    app.stop().await;
    app.config.workers = 1;
    app.start().await;
    let state = wait_for_status(&app, &job, "done", Duration::from_secs(10)).await;
    assert_eq!(state.attempts, 2, "the dead worker's attempt counts");
    assert_eq!(recorder.runs.lock().unwrap()["orphan"], 1);
}

#[tokio::test]
async fn a_failing_job_is_retried_with_backoff_until_it_succeeds() {
    let (app, recorder) = app_with_recorder(1).await;
    let started = std::time::Instant::now();
    let job = app
        .app()
        .state
        .records
        .enqueue_job("test.record", &json!({ "key": "flaky", "failFirst": 2 }), 5, None)
        .await
        .unwrap();
    let state = wait_for_status(&app, &job, "done", Duration::from_secs(20)).await;
    assert_eq!(state.attempts, 3);
    assert_eq!(recorder.runs.lock().unwrap()["flaky"], 3);
    assert!(started.elapsed() >= Duration::from_secs(3), "waited 1 s then 2 s between attempts");
}

#[tokio::test]
async fn a_job_that_keeps_failing_stops_at_its_attempt_limit_with_the_error() {
    let (app, recorder) = app_with_recorder(1).await;
    let records = &app.app().state.records;
    let job = records
        .enqueue_job("test.record", &json!({ "key": "doomed", "failFirst": 99 }), 2, None)
        .await
        .unwrap();
    let state = wait_for_status(&app, &job, "failed", Duration::from_secs(10)).await;
    assert_eq!(state.attempts, 2);
    assert!(state.last_error.unwrap().contains("planned failure 2 of doomed"));
    assert_eq!(recorder.runs.lock().unwrap()["doomed"], 2);
    // The handler hears once that its job is given up (not after the first, retried failure).
    let given_up = recorder.given_up.lock().unwrap().clone();
    assert_eq!(given_up.len(), 1, "{given_up:?}");
    assert_eq!(given_up[0].0, "doomed");
    assert!(given_up[0].1.contains("planned failure 2 of doomed"));
    let unknown = records.enqueue_job("no.such.kind", &json!({}), 3, None).await.unwrap();
    let state = wait_for_status(&app, &unknown, "failed", Duration::from_secs(10)).await;
    assert!(state.last_error.unwrap().contains("no handler"));
}

#[tokio::test]
async fn each_job_runs_once_and_never_on_two_workers_at_a_time() {
    let (app, recorder) = app_with_recorder(4).await;
    let records = &app.app().state.records;
    let mut jobs = Vec::new();
    for i in 0..16 {
        jobs.push(
            records
                .enqueue_job("test.record", &json!({ "key": format!("j{i}"), "sleepMs": 100 }), 3, None)
                .await
                .unwrap(),
        );
    }
    for job in &jobs {
        wait_for_status(&app, job, "done", Duration::from_secs(20)).await;
    }
    let runs = recorder.runs.lock().unwrap();
    assert_eq!(runs.len(), 16);
    assert!(runs.values().all(|&n| n == 1), "{runs:?}");
    assert_eq!(*recorder.overlaps.lock().unwrap(), 0);
}

/// An account has at most its bound of seed jobs and of collection writes waiting for a
/// worker (lowered here to 1; no workers, so they wait): past it, a 422 naming the bound;
/// another account still queues its own.
#[tokio::test]
async fn an_account_queues_at_most_its_bound_of_seed_jobs_and_collection_writes() {
    let app = spawn_app_with(Handlers::default(), |config| {
        assert_eq!(config.queue_bounds, canon::jobs::QUEUE_BOUNDS);
        config.workers = 0;
        config.queue_bounds = canon::jobs::QueueBounds { seeds: 1, embeddings: 1, evaluations: 1 };
    })
    .await;
    let rows = |prefix: &str| -> Value {
        let rows: Vec<Value> =
            (0..150).map(|i| json!({ "canonical": format!("{prefix} {i}"), "type": "T" })).collect();
        json!({ "entities": rows })
    };
    assert_eq!(app.post("/v3/entities/bulk", rows("First")).await.status(), 202, "queued");
    let refused =
        crate::helpers::assert_error(app.post("/v3/entities/bulk", rows("Second")).await, 422).await;
    assert_eq!(refused["details"], json!({"limit": "queuedSeedJobsPerAccount", "max": 1}), "{refused}");
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("1 seed jobs waiting for a worker and at most 1 may wait"), "{message}");

    assert_eq!(app.post("/v3/collections", json!({ "collectionName": "docs" })).await.status(), 200);
    let add = json!({ "collectionName": "docs", "items": [{ "data": "one" }] });
    assert_eq!(app.post("/v3/collections/items", add.clone()).await.status(), 202);
    let refused = crate::helpers::assert_error(app.post("/v3/collections/items", add).await, 422).await;
    assert_eq!(refused["details"]["limit"], "queuedEmbeddingWritesPerAccount", "{refused}");

    let other = app.another_tenant().await;
    let theirs = app.client.post(format!("{}/v3/entities/bulk", app.address)).header("x-api-key", &other);
    let theirs = theirs.json(&rows("Theirs")).send().await.unwrap();
    assert_eq!(theirs.status(), 202, "another account queues its own");
}
