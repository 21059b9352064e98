//! Several canons on one record store: each records itself, and an embedded vector store,
//! which only one process can own, is never opened beside a live instance.

use crate::helpers::{spawn_app, vendor_dir};
use canon::app::App;
use canon::config::Config;
use canon::jobs::Handlers;
use canon::store::records::instances::InstanceRow;

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
    let records = app.app().state.records.clone();
    assert_eq!(records.instances_beating_since(0).await.unwrap().len(), 1);
    app.stop().await;
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
