//! Hostile input: control characters and NUL bytes in names, IDs and filters are 400s that
//! name the field and never reach (or kill) the graph engine; the answers hyper gives by
//! itself (malformed header, URI or headers too large) come in the JSON envelope too.

use crate::helpers::{assert_error, json, spawn_app, TestApp};
use canon::store::graph::GraphError;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Asserts a 400 naming `field` first in its message and in `details.field`.
async fn assert_refused(response: reqwest::Response, field: &str) -> Value {
    let body = assert_error(response, 400).await;
    let message = body["message"].as_str().unwrap();
    assert!(message.starts_with(&format!("{field}: ")), "{field} named in {body}");
    assert!(message.contains("control characters"), "says why: {body}");
    assert_eq!(body["details"]["field"], field, "{body}");
    body
}

#[tokio::test]
async fn a_control_character_in_a_name_is_a_400_naming_the_field_and_falkordb_keeps_running() {
    let app = spawn_app().await;
    let pid = app.app().falkordb_pid().await;
    let bucket = app.create_bucket("fine").await;
    let entity = app.entity("Initech", "Company").await;

    assert_refused(app.post("/v3/buckets", json!({ "name": "a\u{1}b" })).await, "name").await;
    assert_refused(app.patch(&format!("/v3/buckets/{bucket}"), json!({ "name": "a\u{1}b" })).await, "name")
        .await;
    assert_refused(app.post("/v3/entity-types", json!({ "name": "a\u{1}b" })).await, "name").await;
    let rows = json!({ "entities": [{ "canonical": "Acme", "type": "Company" }, { "canonical": "Acme", "type": "Org\u{1}" }] });
    assert_refused(app.post("/v3/entities/bulk", rows).await, "entities[1].type").await;
    assert_refused(
        app.patch(&format!("/v3/entities/{entity}"), json!({ "canonical": "In\u{85}itech" })).await,
        "canonical",
    )
    .await;
    // GraphQL runs the same services, so it refuses the same way.
    let response = app
        .post(
            "/graphql",
            json!({ "query": "mutation($id: ID!) { addSynonym(id: $id, text: \"I\\u0001T\") { synonymID } }",
                    "variables": { "id": entity } }),
        )
        .await;
    let body = json(response).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], 400, "{body}");
    assert_eq!(body["errors"][0]["extensions"]["details"]["field"], "text", "{body}");

    if let Some(pid) = pid {
        // Below the services, the engine adapter refuses what none of them checked.
        let params = serde_json::Map::from_iter([("key".to_string(), json!("x\u{1}y"))]);
        let sent = app.app().state.graph.engine().run("CREATE (:Bucket {liveNameKey: $key})", &params).await;
        assert!(matches!(sent, Err(GraphError::Unsendable { .. })), "{sent:?}");
        tokio::time::sleep(Duration::from_millis(600)).await; // a supervisor tick
        assert_eq!(app.app().falkordb_pid().await, Some(pid), "FalkorDB is the same process");
    }
    let listed = json(app.get("/v3/buckets").await).await;
    assert_eq!(listed["totalCount"], 2, "nothing was written: {listed}");
}

#[tokio::test]
async fn nul_bytes_anywhere_in_graph_requests_are_400s_naming_the_field() {
    let app = spawn_app().await;
    let pid = app.app().falkordb_pid().await;
    let entity = app.entity("Umbrella", "Company").await;
    let other = app.entity("Hooli", "Company").await;
    let row = |extra: Value| {
        let mut row = json!({ "canonical": "Acme", "type": "Company" });
        row.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        json!({ "entities": [row] })
    };
    let posts = [
        ("/v3/entities/bulk", row(json!({ "canonical": "Ac\u{0}me" })), "entities[0].canonical"),
        ("/v3/entities/bulk", row(json!({ "synonyms": ["ok", "A\u{0}"] })), "entities[0].synonyms[1]"),
        ("/v3/entities/bulk", row(json!({ "description": "d\u{0}" })), "entities[0].description"),
        ("/v3/entities/bulk", row(json!({ "attributes": { "k": "v\u{0}" } })), "entities[0].attributes.k"),
        ("/v3/entities/bulk", row(json!({ "attributes": { "k\u{0}": 1 } })), "entities[0].attributes.k\\0"),
        ("/v3/mentions", json!({ "entityID": entity, "surface": "Umb\u{0}rella" }), "surface"),
        (
            "/v3/mentions",
            json!({ "entityID": entity, "surface": "Umbrella", "sectionLabel": "\u{0}" }),
            "sectionLabel",
        ),
        (
            "/v3/relations",
            json!({ "sourceEntityID": entity, "targetEntityID": other, "relationType": "owns\u{0}" }),
            "relationType",
        ),
        (&format!("/v3/entities/{entity}/synonyms"), json!({ "text": "U\u{0}C" }), "text"),
        ("/v3/buckets", json!({ "name": "b", "description": "\u{0}" }), "description"),
    ];
    for (path, body, field) in posts {
        assert_refused(app.post(path, body).await, field).await;
    }
    assert_refused(
        app.patch(&format!("/v3/entities/{entity}"), json!({ "canonical": "U\u{0}" })).await,
        "canonical",
    )
    .await;
    for (path, field) in [
        ("/v3/buckets?nameSubstring=%00", "nameSubstring"),
        ("/v3/entities/%00", "id"),
        ("/v3/entities/ent_x%00/relations", "id"),
        ("/v3/review-queue?type=%00", "type"),
        ("/v3/knowledge-graph?search=%00", "search"),
        ("/v3/knowledge-graph?type=ety_1%00", "type"),
        ("/v3/outputs?referenceID=r%00", "referenceID"),
        ("/v3/calls?referenceIDSubstring=%01", "referenceIDSubstring"),
    ] {
        assert_refused(app.get(path).await, field).await;
    }
    assert_eq!(app.app().falkordb_pid().await, pid, "FalkorDB is the same process");
    assert_eq!(json(app.get(&format!("/v3/entities/{entity}")).await).await["canonical"], "Umbrella");
}

/// Sends raw bytes to canon and reads the answer until it closes the connection.
async fn raw_exchange(app: &TestApp, request: &[u8]) -> (u16, Value) {
    let address = app.address.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await.unwrap().unwrap();
    let text = String::from_utf8(answer).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete answer");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    assert!(head.to_lowercase().contains("content-type: application/json"), "{head}");
    (status, serde_json::from_str(body).unwrap_or_else(|_| panic!("a JSON body: {body:?}")))
}

#[tokio::test]
async fn answers_hyper_gives_by_itself_come_in_the_json_envelope() {
    let app = spawn_app().await;
    let key_with_control =
        format!("GET /v3/buckets HTTP/1.1\r\nhost: canon\r\nx-api-key: {}\u{1}\r\n\r\n", app.api_key);
    let long_path = format!("GET /v3/buckets/{} HTTP/1.1\r\nhost: canon\r\n\r\n", "b".repeat(100_000));
    // Many small headers rather than a huge one: canon reads all of it, so the answer is
    // not lost to a reset of a connection closed with unread bytes.
    let many_headers = format!(
        "GET /v3/buckets HTTP/1.1\r\nhost: canon\r\n{}\r\n",
        (0..150).map(|i| format!("x-filler-{i}: f\r\n")).collect::<String>()
    );
    for (request, status, says) in [
        (key_with_control, 400, "control characters"),
        (long_path, 414, "65,534 bytes"),
        (many_headers, 431, "100 headers"),
    ] {
        let (got, body) = raw_exchange(&app, request.as_bytes()).await;
        assert_eq!(got, status, "{body}");
        assert_eq!(body["code"], status, "{body}");
        assert!(body["message"].as_str().unwrap().contains(says), "{body}");
    }
    // A key hyper lets through but that is not text is a 400 of canon's own, not a bare one.
    let response = app
        .client
        .get(format!("{}/v3/buckets", app.address))
        .header("x-api-key", reqwest::header::HeaderValue::from_bytes(b"ck_\xff\xfe").unwrap())
        .send()
        .await
        .unwrap();
    let body = assert_error(response, 400).await;
    assert_eq!(body["details"]["field"], "x-api-key", "{body}");
    // The connection-level rewrite leaves ordinary answers alone.
    assert_eq!(app.get("/v3/buckets").await.status(), 200);
    assert_error(app.get("/v3/no-such-route").await, 404).await;
}

#[tokio::test]
async fn names_longer_than_the_model_window_are_still_compared_for_merge_suggestions() {
    let app = spawn_app().await;
    // 150 × "x1" is 300 MiniLM tokens: over its 256-token window, within the 500-character name limit.
    let long = "x1 ".repeat(150);
    app.seed(json!([{ "canonical": format!("{long}alpha"), "type": "Code" }, { "canonical": format!("{long}alphb"), "type": "Code" }]))
        .await;
    let response = app.post("/v3/merge-suggestions/refresh", json!({})).await;
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
}
