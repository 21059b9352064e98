//! Connectors: a `box` connector watching a folder of a local server that answers as Box's
//! REST API does, each new file submitted as a call once; `paragon` refused.

use crate::helpers::{assert_error, json, spawn_app_with, TestApp};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use canon::jobs::Handlers;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Files in the watched folder: (id, name, content); and how often each was downloaded.
#[derive(Clone, Default)]
struct FakeBox {
    files: Arc<Mutex<Vec<(String, String, String)>>>,
    downloads: Arc<Mutex<Vec<String>>>,
    /// `(offset, limit)` of each folder listing asked.
    listings: Arc<Mutex<Vec<(usize, usize)>>>,
}

fn authorised(headers: &HeaderMap) -> bool {
    headers.get("authorization").and_then(|v| v.to_str().ok()) == Some("Bearer box-token")
}

/// Box's token, folder-items and content endpoints, as the connector calls them.
async fn fake_box() -> (String, FakeBox) {
    let state = FakeBox::default();
    let router = axum::Router::new()
        .route(
            "/oauth2/token",
            post(|body: String| async move {
                let ok = body.contains("grant_type=client_credentials")
                    && body.contains("client_id=box-client")
                    && body.contains("client_secret=s3cret")
                    && body.contains("box_subject_id=ent-1");
                if ok {
                    (StatusCode::OK, axum::Json(json!({"access_token": "box-token", "expires_in": 3600})))
                } else {
                    (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_client"})))
                }
            }),
        )
        .route(
            "/2.0/folders/{folder}/items",
            get(
                |State(state): State<FakeBox>,
                 Path(folder): Path<String>,
                 Query(page): Query<HashMap<String, String>>,
                 headers: HeaderMap| async move {
                    if !authorised(&headers) || folder != "777" {
                        return (StatusCode::NOT_FOUND, axum::Json(json!({"type": "error"})));
                    }
                    // Box's paging: `offset` and `limit` (at most 1,000) over the folder's items.
                    let number = |key: &str, default: usize| page.get(key).and_then(|v| v.parse().ok()).unwrap_or(default);
                    let (offset, limit) = (number("offset", 0), number("limit", 100).min(1_000));
                    state.listings.lock().unwrap().push((offset, limit));
                    let mut entries = vec![json!({"type": "folder", "id": "9", "name": "archive"})];
                    for (id, name, _) in state.files.lock().unwrap().iter() {
                        entries.push(json!({"type": "file", "id": id, "name": name}));
                    }
                    let total = entries.len();
                    let entries: Vec<Value> = entries.into_iter().skip(offset).take(limit).collect();
                    (
                        StatusCode::OK,
                        axum::Json(json!({"entries": entries, "total_count": total, "offset": offset, "limit": limit})),
                    )
                },
            ),
        )
        .route(
            "/2.0/files/{id}/content",
            get(|State(state): State<FakeBox>, Path(id): Path<String>, headers: HeaderMap| async move {
                if !authorised(&headers) {
                    return (StatusCode::UNAUTHORIZED, String::new());
                }
                state.downloads.lock().unwrap().push(id.clone());
                let files = state.files.lock().unwrap();
                match files.iter().find(|(file, _, _)| *file == id) {
                    Some((_, _, content)) => (StatusCode::OK, content.clone()),
                    None => (StatusCode::NOT_FOUND, String::new()),
                }
            }),
        )
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}"), state)
}

/// A poller of `app`'s connectors against the fake Box at `box_url`, reading `items` and
/// submitting `files` a pass (production: 10,000 and 20).
fn test_poller(app: &TestApp, box_url: &str, items: usize, files: usize) -> canon::connectors::BoxPoller {
    let state = &app.app().state;
    canon::connectors::BoxPoller::new(
        state.connectors.clone(),
        state.calls.clone(),
        canon::connectors::boxapi::BoxApi::new(box_url).unwrap(),
        Duration::from_secs(3_600),
        canon::connectors::PollBounds { items, files },
    )
}

/// The calls with this referenceID, once at least `want` exist (or after 15 s).
async fn calls_for(app: &TestApp, reference: &str, want: usize) -> Vec<Value> {
    for _ in 0..150 {
        let calls = json(app.get(&format!("/v3/calls?referenceIDs={reference}")).await).await;
        let calls = calls["calls"].as_array().cloned().unwrap_or_default();
        if calls.len() >= want {
            return calls;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Vec::new()
}

#[tokio::test]
async fn a_box_connector_submits_each_new_file_of_its_folder_once() {
    let (box_url, fake) = fake_box().await;
    let app = spawn_app_with(Handlers::default(), |config| {
        config.box_api_url = box_url;
        config.box_poll_seconds = 0.1;
    })
    .await;
    app.create_function(json!({"functionName": "intake", "type": "transform"})).await;
    let workflow = app.pipeline("intake", &["intake"], &[]).await;
    fake.files.lock().unwrap().push(("f1".into(), "first.txt".into(), "Invoice number: INV-1".into()));

    let created = app
        .post("/v3/connectors", json!({"name": "inbox", "type": "box", "workflowName": "intake",
            "boxClientID": "box-client", "boxClientSecret": "s3cret", "boxEnterpriseID": "ent-1", "boxFolderID": "777"}))
        .await;
    assert_eq!(created.status(), 200);
    let connector = json(created).await;
    assert_eq!(connector["workflowID"], workflow["workflow"]["id"]);
    assert_eq!(connector["boxClientSecret"], "********", "the secret is never shown");
    let listed = json(app.get("/v3/connectors?workflowName=intake").await).await;
    assert_eq!(listed["connectors"].as_array().unwrap().len(), 1);

    let first = calls_for(&app, "box:f1", 1).await;
    assert_eq!(first.len(), 1, "the file already there is submitted");
    fake.files.lock().unwrap().push(("f2".into(), "second.txt".into(), "Invoice number: INV-2".into()));
    assert_eq!(calls_for(&app, "box:f2", 1).await.len(), 1, "a new file is submitted");
    tokio::time::sleep(Duration::from_millis(500)).await; // several more polls
    assert_eq!(calls_for(&app, "box:f1", 1).await.len(), 1, "once");
    let downloads = fake.downloads.lock().unwrap().clone();
    assert_eq!(downloads, vec!["f1", "f2"], "each file is fetched once");

    // Deleting the workflow tears its connector down.
    let deleted = json(app.delete("/v3/workflows/intake").await).await;
    assert_eq!(deleted["connectorErrors"], json!([]));
    let listed = json(app.get("/v3/connectors").await).await;
    assert_eq!(listed["connectors"], json!([]));
}

#[tokio::test]
async fn connectors_are_checked_and_deleted_and_paragon_is_refused_plainly() {
    let app = spawn_app_with(Handlers::default(), |_| {}).await;
    app.create_function(json!({"functionName": "intake", "type": "transform"})).await;
    let workflow = app.pipeline("intake", &["intake"], &[]).await;
    let id = workflow["workflow"]["id"].as_str().unwrap();
    let paragon = app
        .post("/v3/connectors", json!({"name": "drive", "type": "paragon", "workflowID": id, "paragonIntegration": "googledrive"}))
        .await;
    let error = assert_error(paragon, 422).await;
    assert!(error["message"].as_str().unwrap().contains("Paragon"), "{error}");
    let missing = app.post("/v3/connectors", json!({"name": "b", "type": "box", "workflowID": id})).await;
    assert_eq!(assert_error(missing, 400).await["details"]["field"], "boxFolderID");
    let disagree = app
        .post(
            "/v3/connectors",
            json!({"name": "b", "type": "box", "workflowID": id, "workflowName": "other",
            "boxClientID": "c", "boxClientSecret": "s", "boxFolderID": "1"}),
        )
        .await;
    assert_eq!(assert_error(disagree, 400).await["details"]["field"], "workflowName");
    let created = json(
        app.post(
            "/v3/connectors",
            json!({"name": "b", "type": "box", "workflowID": id,
            "boxClientID": "c", "boxClientSecret": "s", "boxFolderID": "1"}),
        )
        .await,
    )
    .await;
    let connector = created["connectorID"].as_str().unwrap();
    let deleted = app.delete(&format!("/v3/connectors/{connector}")).await;
    assert_eq!(deleted.status(), 200);
    assert!(deleted.text().await.unwrap().contains(connector));
    assert_error(app.delete(&format!("/v3/connectors/{connector}")).await, 404).await;
}

#[tokio::test]
async fn a_poll_reads_a_bounded_part_of_a_large_folder_and_later_polls_go_on_until_each_file_is_submitted_once(
) {
    // The test's pollers do the work, their bounds lowered: 50 items read and 7 files
    // submitted a poll (production: 10,000 and 20). Each poll is a new poller's (a restart, or
    // another instance): where the last stopped is kept with the connector. The app's own
    // poller reaches no Box: it polls at its start, which on a loaded machine came after the
    // connector was made and read this folder with the production bounds.
    let (box_url, fake) = fake_box().await;
    let app = spawn_app_with(Handlers::default(), |config| {
        config.box_api_url = "http://127.0.0.1:9".into();
        config.box_poll_seconds = 3_600.0;
    })
    .await;
    app.create_function(json!({"functionName": "intake", "type": "transform"})).await;
    app.pipeline("intake", &["intake"], &[]).await;
    for n in 0..120 {
        fake.files.lock().unwrap().push((
            format!("f{n}"),
            format!("file{n}.txt"),
            format!("Invoice number: INV-{n}"),
        ));
    }
    let created = app
        .post("/v3/connectors", json!({"name": "inbox", "type": "box", "workflowName": "intake",
            "boxClientID": "box-client", "boxClientSecret": "s3cret", "boxEnterpriseID": "ent-1", "boxFolderID": "777"}))
        .await;
    assert_eq!(created.status(), 200);
    let poller = || test_poller(&app, &box_url, 50, 7);
    let mut per_poll = Vec::new();
    while fake.downloads.lock().unwrap().len() < 120 && per_poll.len() < 40 {
        let listed_before = fake.listings.lock().unwrap().len();
        per_poll.push(poller().poll_once().await.expect("poll"));
        let listings = fake.listings.lock().unwrap().clone();
        let read: usize = listings[listed_before..].iter().map(|(_, limit)| limit).sum();
        assert!(read <= 50, "a poll reads at most 50 items: {:?}", &listings[listed_before..]);
    }
    assert!(per_poll.iter().all(|&n| n <= 7), "{per_poll:?}");
    assert_eq!(per_poll.iter().sum::<usize>(), 120, "{per_poll:?}");
    // 121 items (a folder first) in pages of 50, each read again until its files are in:
    // 49 files in 7 polls, 50 in 8 (the last submits one), 21 in 3.
    assert_eq!(per_poll.len(), 18, "{per_poll:?}");
    let mut downloads = fake.downloads.lock().unwrap().clone();
    downloads.sort();
    downloads.dedup();
    assert_eq!(downloads.len(), 120, "each file fetched once");
    assert_eq!(calls_for(&app, "box:f119", 1).await.len(), 1);
    // Nothing new: a further pass over the whole folder submits nothing.
    for _ in 0..3 {
        assert_eq!(poller().poll_once().await.expect("poll"), 0);
    }
    assert_eq!(fake.downloads.lock().unwrap().len(), 120);
}

#[tokio::test]
async fn an_environment_holds_at_most_100_connectors() {
    let app = spawn_app_with(Handlers::default(), |_| {}).await;
    app.create_function(json!({"functionName": "intake", "type": "transform"})).await;
    app.pipeline("intake", &["intake"], &[]).await;
    let body = json!({"name": "b", "type": "box", "workflowName": "intake",
                      "boxClientID": "c", "boxClientSecret": "s", "boxFolderID": "1"});
    for n in 0..100 {
        assert_eq!(app.post("/v3/connectors", body.clone()).await.status(), 200, "connector {n}");
    }
    let error = assert_error(app.post("/v3/connectors", body.clone()).await, 422).await;
    assert!(error["message"].as_str().unwrap().contains("at most 100 connectors"), "{error}");
    assert_eq!(error["details"]["limit"], "connectorsPerEnvironment");
    let listed = json(app.get("/v3/connectors").await).await;
    let first = listed["connectors"][0]["connectorID"].as_str().unwrap().to_string();
    assert_eq!(app.delete(&format!("/v3/connectors/{first}")).await.status(), 200);
    assert_eq!(app.post("/v3/connectors", body).await.status(), 200, "room again after a delete");
}

#[tokio::test]
async fn an_environments_connectors_share_one_passs_bounds_take_turns_and_leave_other_tenants_theirs() {
    // Bounds lowered as above: 50 items and 4 files a pass for all of an environment's
    // connectors together (they were per connector: 100 connectors took 100 shares).
    let (box_url, fake) = fake_box().await;
    let app = spawn_app_with(Handlers::default(), |config| {
        config.box_api_url = "http://127.0.0.1:9".into();
        config.box_poll_seconds = 3_600.0;
    })
    .await;
    let files: Vec<String> = (0..10).map(|n| format!("f{n}")).collect();
    for (n, id) in files.iter().enumerate() {
        fake.files.lock().unwrap().push((id.clone(), format!("file{n}.txt"), format!("Invoice INV-{n}")));
    }
    let stranger = app.another_tenant().await;
    let post = |key: &str, path: &str, body: Value| {
        app.client.post(format!("{}{path}", app.address)).header("x-api-key", key).json(&body).send()
    };
    let connector = |name: &str| {
        json!({"name": name, "type": "box", "workflowName": "intake", "boxClientID": "box-client",
               "boxClientSecret": "s3cret", "boxEnterpriseID": "ent-1", "boxFolderID": "777"})
    };
    let mut ids: Vec<Vec<String>> = Vec::new();
    for (key, connectors) in [(app.api_key.as_str(), 3), (stranger.as_str(), 1)] {
        let function = json!({"functionName": "intake", "type": "transform"});
        let workflow = json!({"name": "intake", "mainNodeName": "intake",
                              "nodes": [{"name": "intake", "function": {"name": "intake"}}]});
        for (path, body) in [("/v3/functions", function), ("/v3/workflows", workflow)] {
            assert_eq!(post(key, path, body).await.unwrap().status(), 200);
        }
        let mut made = Vec::new();
        for n in 0..connectors {
            let created = json(post(key, "/v3/connectors", connector(&format!("c{n}"))).await.unwrap()).await;
            made.push(created["connectorID"].as_str().expect("created").to_string());
        }
        ids.push(made);
    }
    let state = &app.app().state;
    let poller = test_poller(&app, &box_url, 50, 4);
    // Files each connector has taken (claimed), mine in ascending order, after each pass.
    let mut mine = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..8 {
        poller.poll_once().await.expect("poll");
        let mut counts = Vec::new();
        for id in ids.concat() {
            counts.push(
                state
                    .records
                    .claimed_connector_files(&id, &files.iter().map(String::as_str).collect::<Vec<_>>())
                    .await
                    .unwrap()
                    .len(),
            );
        }
        theirs.push(counts.pop().unwrap());
        counts.sort_unstable();
        mine.push(counts);
    }
    // 4 files a pass among my three connectors, each first in turn; the stranger's one
    // connector takes its 4 a pass beside them.
    let expected: Vec<Vec<usize>> = vec![
        vec![0, 0, 4],
        vec![0, 4, 4],
        vec![4, 4, 4],
        vec![4, 4, 8],
        vec![4, 8, 8],
        vec![8, 8, 8],
        vec![8, 10, 10],
        vec![10, 10, 10],
    ];
    assert_eq!(mine, expected);
    assert_eq!(theirs, [4, 8, 10, 10, 10, 10, 10, 10]);
}
