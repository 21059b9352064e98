//! Several canons on one record store: each records itself, and an embedded vector store,
//! which only one process can own, is never opened beside a live instance; calls, seeds and a
//! dying instance's work through two instances on one database.

use crate::calls::{invoice_schema, INVOICE};
use crate::helpers::{json, spawn_app, spawn_app_with, vendor_dir, TestApp};
use canon::app::App;
use canon::config::Config;
use canon::jobs::Handlers;
use canon::store::records::instances::InstanceRow;
use futures::future::join_all;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A second canon's configuration: its own data folder, the first one's record store.
fn beside(first: &crate::helpers::TestApp, data: &std::path::Path) -> Config {
    let mut config = Config::embedded(data, &vendor_dir());
    config.database_url = Some(first.database_url());
    config
}

async fn refusal(config: &Config) -> String {
    match App::spawn(config, Handlers::default()).await {
        Ok(app) => {
            app.stop().await;
            panic!("a second canon started beside a live one with an embedded vector store")
        }
        Err(err) => format!("{err:#}"),
    }
}

#[tokio::test]
async fn a_second_canon_with_the_embedded_vector_store_refuses_to_start_beside_a_live_one_naming_canon_qdrant_url(
) {
    let first = spawn_app().await;
    let data = tempfile::tempdir().unwrap();
    let message = refusal(&beside(&first, data.path())).await;
    assert!(message.contains("another canon instance is live"), "{message}");
    assert!(message.contains("CANON_QDRANT_URL"), "{message}");
    assert!(message.contains(&format!("pid {}", std::process::id())), "names the live one: {message}");
    // The refused one left nothing behind: the first still answers, and is still alone.
    let buckets = first.get("/v3/buckets").await;
    assert_eq!(buckets.status(), 200);
    let rows = first.app().state.records.instances_beating_since(0).await.unwrap();
    assert_eq!(rows.len(), 1, "only the live instance is recorded: {rows:?}");
}

#[tokio::test]
async fn a_canon_with_a_qdrant_server_refuses_to_start_beside_one_that_keeps_vectors_in_its_own_folder() {
    let first = spawn_app().await;
    let data = tempfile::tempdir().unwrap();
    let mut config = beside(&first, data.path());
    config.qdrant_url = Some("http://127.0.0.1:9".into());
    let message = refusal(&config).await;
    assert!(message.contains("vectors embedded:"), "says why the other cannot be shared: {message}");
}

#[tokio::test]
async fn a_canon_that_stopped_or_died_does_not_keep_the_next_one_from_starting() {
    let mut app = spawn_app().await;
    // A clean stop removes the instance; the next start on the same data is alone.
    app.restart().await;
    assert_eq!(app.app().state.records.instances_beating_since(0).await.unwrap().len(), 1);
    app.stop().await;
    let records = canon::store::records::Records::connect(&app.database_url()).await.unwrap();
    // A crash leaves rows behind, still beating recently: one of a process of this machine
    // that has exited, one of this process that no instance of it runs any more.
    let mut exited = std::process::Command::new("true").spawn().unwrap();
    exited.wait().unwrap();
    let now = canon::ids::now_millis();
    for (id, pid) in
        [("inst_crashed", i64::from(exited.id())), ("inst_dropped", i64::from(std::process::id()))]
    {
        let row = InstanceRow {
            id: id.into(),
            host: canon::instances::this_host(),
            pid,
            vectors: "embedded:/elsewhere".into(),
            started_at: now,
            heartbeat_at: now,
        };
        records.register_instance(&row).await.unwrap();
    }
    app.start().await;
    assert_eq!(app.get("/v3/buckets").await.status(), 200);
    let rows = app.app().state.records.instances_beating_since(0).await.unwrap();
    assert_eq!(rows.len(), 1, "the dead instances' rows were removed: {rows:?}");
}

/// A loopback receiver counting requests; the first `hang` of them are held open for good.
async fn counting_receiver(hang: usize) -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let router = axum::Router::new().fallback(move || {
        let hits = counted.clone();
        async move {
            if hits.fetch_add(1, Ordering::SeqCst) < hang {
                std::future::pending::<()>().await;
            }
            "ok"
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}/hook"), hits)
}

impl TestApp {
    /// An extract → send workflow `notify` whose send posts to `hook`.
    async fn notifying_workflow(&self, hook: &str) {
        self.extract_function("invoice", invoice_schema()).await;
        let send = json!({"functionName": "notify", "type": "send", "destinationType": "webhook", "webhookUrl": hook});
        assert_eq!(self.post("/v3/functions", send).await.status(), 200);
        self.pipeline("notify", &["invoice", "notify"], &[("invoice", "notify")]).await;
    }

    /// Submits a call of `notify` without waiting; returns its ID.
    async fn submit(&self, reference: &str) -> String {
        let body = json!({"callReferenceID": reference,
            "input": {"singleFile": {"inputContent": INVOICE, "inputType": "text"}}});
        let response = self.post("/v3/workflows/notify/call", body).await;
        let status = response.status().as_u16();
        let body = json(response).await;
        assert!(matches!(status, 200 | 202), "{reference}: {status} {body}");
        body["call"]["callID"].as_str().unwrap().to_string()
    }

    /// The call once it finished (up to `within`).
    async fn call_finished_within(&self, call: &str, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let shown = json(self.get(&format!("/v3/calls/{call}")).await).await;
            let status = shown["call"]["status"].as_str().unwrap_or_default().to_string();
            if status == "completed" || status == "failed" {
                return shown["call"].clone();
            }
            assert!(Instant::now() < deadline, "call {call} finishes: {shown}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn with_receivers(config: &mut Config) {
    config.allow_private_network = true; // the receiver listens on loopback
}

#[tokio::test]
async fn calls_submitted_to_two_instances_each_run_exactly_once_and_a_reference_names_one_call_across_both() {
    let first = spawn_app_with(Handlers::default(), with_receivers).await;
    let second = first.second_instance(|_| {}).await;
    let (hook, hits) = counting_receiver(0).await;
    first.notifying_workflow(&hook).await;
    // 40 submissions, two per reference, the two of each through different instances.
    let submissions = (0..40).map(|i| {
        let instance = if i % 2 == 0 { &first } else { &second };
        let reference = format!("across-{}", i / 2);
        async move { (reference.clone(), instance.submit(&reference).await) }
    });
    let mut calls_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (reference, call) in join_all(submissions).await {
        calls_of.entry(reference).or_default().insert(call);
    }
    assert_eq!(calls_of.len(), 20);
    for (reference, calls) in &calls_of {
        assert_eq!(calls.len(), 1, "{reference} names one call across both instances: {calls:?}");
    }
    for (i, calls) in calls_of.values().enumerate() {
        let instance = if i % 2 == 0 { &first } else { &second };
        let call = instance.call_finished_within(calls.first().unwrap(), Duration::from_secs(60)).await;
        assert_eq!(call["status"], "completed", "{call}");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 20, "each call's send ran once, on one of the instances");
}

#[tokio::test]
async fn seeds_through_two_instances_at_once_leave_no_duplicate_entity_and_no_dropped_synonym() {
    let first = spawn_app().await;
    let second = first.second_instance(|_| {}).await;
    // Eight clients, four per instance; each row has its own name and a synonym shared with the
    // other clients' row of the same index: in any serial order one row creates the entity and
    // the seven others merge into it through the synonym.
    let seeds = (0..8).map(|client| {
        let instance = if client % 2 == 0 { &first } else { &second };
        let rows: Vec<Value> = (0..60)
            .map(|i| json!({"canonical": format!("Org {client}-{i}"), "type": "Company", "synonyms": [format!("Shared {i}")]}))
            .collect();
        async move { instance.seed(json!(rows)).await["results"].as_array().expect("results").clone() }
    });
    let results = join_all(seeds).await;
    for i in 0..60 {
        let rows: Vec<&Value> = results.iter().map(|client| &client[i]).collect();
        let entities: BTreeSet<&str> = rows.iter().map(|r| r["entityID"].as_str().unwrap()).collect();
        let created = rows.iter().filter(|r| r["outcome"] == "created").count();
        assert_eq!((entities.len(), created), (1, 1), "rows sharing synonym {i}: {rows:?}");
    }
    // Every name of every row is a name of its one entity, seen from either instance.
    let entity = &results[0][7]["entityID"];
    for instance in [&first, &second] {
        let shown = json(instance.get(&format!("/v3/entities/{}", entity.as_str().unwrap())).await).await;
        let names = shown.to_string();
        for client in 0..8 {
            assert!(names.contains(&format!("Org {client}-7")), "no synonym dropped: {shown}");
        }
    }
}

#[tokio::test]
async fn a_call_running_on_an_instance_that_dies_is_finished_by_another_once_its_lease_ends() {
    // The first instance holds the database and the graph and runs no job; the call runs on
    // the second, which dies while its send hangs; a third finishes it.
    let first = spawn_app_with(Handlers::default(), |config| {
        with_receivers(config);
        config.workers = 0;
    })
    .await;
    let (hook, hits) = counting_receiver(1).await;
    first.notifying_workflow(&hook).await;
    let mut doomed = first.second_instance(|_| {}).await;
    let call = first.submit("outlives-its-instance").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while hits.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the send reaches the receiver");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    doomed.app.take().unwrap().abort();
    let survivor = first.second_instance(|_| {}).await;
    let finished = survivor.call_finished_within(&call, Duration::from_secs(90)).await;
    assert_eq!(finished["status"], "completed", "{finished}");
    assert_eq!(finished["outputs"].as_array().map(Vec::len), Some(1), "one output, none twice: {finished}");
    assert_eq!(hits.load(Ordering::SeqCst), 2, "the cut-off send ran again, once");
}

#[tokio::test]
async fn each_delivery_goes_out_once_while_two_instances_deliver() {
    let first = spawn_app_with(Handlers::default(), |config| {
        with_receivers(config);
        config.delivery_retry_scale = 0.002;
    })
    .await;
    let second = first.second_instance(|_| {}).await;
    let (hook, received) = body_receiver().await;
    first.extract_function("reader", invoice_schema()).await;
    let shaper = json!({"functionName": "shaper", "type": "transform", "outputSchemaName": "Row",
        "outputSchema": {"type": "object", "properties": {"invoiceNumber": {"type": "string"}}}});
    assert_eq!(first.post("/v3/functions", shaper).await.status(), 200);
    first.pipeline("shape", &["reader", "shaper"], &[("reader", "shaper")]).await;
    let subscription =
        json!({"name": "both", "type": "transform", "functionName": "shaper", "webhookURL": hook});
    assert_eq!(first.post("/v3/subscriptions", subscription).await.status(), 200);
    for i in 0..12 {
        let instance = if i % 2 == 0 { &first } else { &second };
        let (status, body) = instance.call_text("shape", INVOICE, json!({}), true).await;
        assert_eq!(status, 200, "{body}");
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while received.lock().unwrap().len() < 12 {
        assert!(Instant::now() < deadline, "12 deliveries arrive: {:?}", received.lock().unwrap().len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Both instances' delivery workers keep polling a while longer: nothing goes out twice.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let bodies = received.lock().unwrap().clone();
    let events: BTreeSet<String> = bodies
        .iter()
        .map(|body| {
            serde_json::from_str::<Value>(body).unwrap()["eventID"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert_eq!((bodies.len(), events.len()), (12, 12), "one delivery per event: {bodies:?}");
}

/// A loopback receiver keeping each request's body.
async fn body_receiver() -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    let received: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let log = received.clone();
    let router = axum::Router::new().fallback(move |body: String| {
        let log = log.clone();
        async move {
            log.lock().unwrap().push(body);
            "ok"
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}/hook"), received)
}
