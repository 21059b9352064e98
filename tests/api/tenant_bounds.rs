//! What one account may hold at most (entities, mentions, relations): past a bound its writes
//! are refused saying so, and another account writes on.

use crate::helpers::spawn_app_with;
use crate::helpers::{json, TestApp};
use canon::jobs::Handlers;
use serde_json::{json, Value};

fn outcomes(body: &Value) -> Vec<String> {
    body["results"].as_array().unwrap().iter().map(|r| r["outcome"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn a_tenant_at_its_entity_bound_has_further_rows_rejected_and_others_seed_on() {
    let app = spawn_app_with(Handlers::default(), |config| config.max_entities_per_tenant = 5).await;
    let names = |names: &[&str]| {
        json!(names.iter().map(|n| json!({ "canonical": n, "type": "Company" })).collect::<Vec<_>>())
    };
    let first = app.seed(names(&["Alpha", "Bravo", "Charlie"])).await;
    assert!(outcomes(&first).iter().all(|outcome| outcome == "created"), "{first}");

    let second = app.seed(names(&["Delta", "Echo", "Foxtrot", "Golf"])).await;
    let rows = second["results"].as_array().unwrap();
    let outcome = |i: usize| rows[i]["outcome"].as_str().unwrap();
    assert_eq!(
        [outcome(0), outcome(1), outcome(2), outcome(3)],
        ["created", "created", "rejected", "rejected"],
        "{second}"
    );
    let reason = rows[2]["reason"].as_str().unwrap();
    assert!(reason.contains("holds 3 entities") && reason.contains("the most it may hold (5)"), "{reason}");

    let stranger = app.another_tenant().await;
    let theirs = app
        .client
        .post(format!("{}/v3/entities/bulk", app.address))
        .header("x-api-key", &stranger)
        .json(&json!({ "entities": names(&["Hotel", "India"]) }))
        .send()
        .await
        .unwrap();
    let theirs = json(theirs).await;
    assert!(outcomes(&theirs).iter().all(|outcome| outcome == "created"), "{theirs}");
}

/// Posts `body` to `path` as the account of `key`.
async fn post_as(app: &TestApp, key: &str, path: &str, body: Value) -> reqwest::Response {
    app.client
        .post(format!("{}{path}", app.address))
        .header("x-api-key", key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_tenant_at_its_mention_and_relation_bounds_is_refused_more_and_others_write_on() {
    let app = spawn_app_with(Handlers::default(), |config| {
        config.max_mentions_per_tenant = 2;
        config.max_relations_per_tenant = 1;
    })
    .await;
    let alpha = app.entity("Alpha", "Company").await;
    let bravo = app.entity("Bravo", "Company").await;
    for surface in ["Alpha Co", "Alpha Inc."] {
        let response = app.post("/v3/mentions", json!({ "entityID": alpha, "surface": surface })).await;
        assert_eq!(response.status(), 200, "{surface}");
    }
    let third = app.post("/v3/mentions", json!({ "entityID": alpha, "surface": "ALPHA" })).await;
    assert_eq!(third.status(), 422);
    let message = json(third).await["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("holds 2 mentions") && message.contains("the most it may hold (2)"),
        "{message}"
    );
    let entity = json(app.get(&format!("/v3/entities/{alpha}")).await).await;
    assert_eq!(entity["mentionCount"], 2, "the refused mention was not written");

    let relation =
        |kind: &str| json!({ "sourceEntityID": alpha, "targetEntityID": bravo, "relationType": kind });
    assert_eq!(app.post("/v3/relations", relation("SUPPLIES")).await.status(), 200);
    let second = app.post("/v3/relations", relation("OWNS")).await;
    assert_eq!(second.status(), 422);
    let message = json(second).await["message"].as_str().unwrap().to_string();
    assert!(message.contains("holds 1 relations"), "{message}");

    let stranger = app.another_tenant().await;
    let seeded = post_as(
        &app,
        &stranger,
        "/v3/entities/bulk",
        json!({ "entities": [
        { "canonical": "Hotel", "type": "Company" }, { "canonical": "India", "type": "Company" }
    ] }),
    )
    .await;
    let seeded = json(seeded).await;
    let ids: Vec<&str> =
        seeded["results"].as_array().unwrap().iter().map(|r| r["entityID"].as_str().unwrap()).collect();
    for surface in ["Hotel Ltd", "Hotel Group"] {
        let response =
            post_as(&app, &stranger, "/v3/mentions", json!({ "entityID": ids[0], "surface": surface })).await;
        assert_eq!(response.status(), 200, "another account's own bound: {surface}");
    }
    let theirs = json!({ "sourceEntityID": ids[0], "targetEntityID": ids[1], "relationType": "OWNS" });
    assert_eq!(post_as(&app, &stranger, "/v3/relations", theirs).await.status(), 200);
}
