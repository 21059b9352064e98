//! Buckets: the default bucket, CRUD, soft and cascade delete, filtering, pagination.

use crate::helpers::{assert_error, json, spawn_app, spawn_app_with, strings, unique, TestApp};
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use serde_json::{json, Value};

async fn bucket_names(app: &TestApp, query: &str) -> (Vec<String>, i64) {
    let body = json(app.get(&format!("/v3/buckets{query}")).await).await;
    let names =
        body["buckets"].as_array().unwrap().iter().map(|b| b["name"].as_str().unwrap().to_string()).collect();
    (names, body["totalCount"].as_i64().unwrap())
}

/// Plants two entities with a mention each and a relation between them, in `bucket`.
async fn plant_entities(app: &TestApp, bucket: &str) {
    app.cypher(
        "MATCH (b:Bucket {id: $bucket}) \
         CREATE (a:Entity {id: $a, accountID: b.accountID, environment: b.environment, bucketID: b.id}) \
         CREATE (c:Entity {id: $c, accountID: b.accountID, environment: b.environment, bucketID: b.id}) \
         CREATE (:Mention {id: $m1, bucketID: b.id})-[:MENTIONS]->(a) \
         CREATE (:Mention {id: $m2, bucketID: b.id})-[:MENTIONS]->(c) \
         CREATE (a)-[:RELATES_TO {relationType: 'supplies'}]->(c)",
        json!({ "bucket": bucket, "a": format!("ent_a_{bucket}"), "c": format!("ent_c_{bucket}"),
                "m1": format!("men_1_{bucket}"), "m2": format!("men_2_{bucket}") }),
    )
    .await;
}

async fn count_in_bucket(app: &TestApp, bucket: &str) -> (i64, i64, i64) {
    let rows = app
        .cypher(
            "OPTIONAL MATCH (e:Entity {bucketID: $bucket}) WITH count(e) AS entities \
             OPTIONAL MATCH (m:Mention {bucketID: $bucket}) WITH entities, count(m) AS mentions \
             OPTIONAL MATCH (x:Entity {bucketID: $bucket})-[r:RELATES_TO]->(y:Entity) \
             RETURN entities, mentions, count(r) AS relations",
            json!({ "bucket": bucket }),
        )
        .await;
    let n = |k: &str| rows[0][k].as_i64().unwrap();
    (n("entities"), n("mentions"), n("relations"))
}

#[tokio::test]
async fn the_default_bucket_exists_from_the_first_request() {
    let app = spawn_app().await;
    let body = json(app.get("/v3/buckets").await).await;
    assert_eq!(body["totalCount"], 1);
    let default = &body["buckets"][0];
    assert_eq!(default["isDefault"], true);
    assert_eq!(default["name"], "default");
    assert!(default["bucketID"].as_str().unwrap().starts_with("bkt_"));
    for field in ["createdAt", "updatedAt"] {
        chrono::DateTime::parse_from_rfc3339(default[field].as_str().unwrap()).expect("RFC 3339");
    }
}

#[tokio::test]
async fn concurrent_first_requests_still_make_one_default_bucket() {
    let app = spawn_app().await;
    let requests = (0..16).map(|_| app.get("/v3/buckets"));
    for response in futures::future::join_all(requests).await {
        assert_eq!(response.status(), 200);
    }
    let rows = app
        .cypher(
            "MATCH (b:Bucket {accountID: $account, isDefault: true}) RETURN count(b) AS defaults",
            json!({ "account": app.account_id }),
        )
        .await;
    assert_eq!(rows[0]["defaults"], 1);
}

#[tokio::test]
async fn a_created_bucket_can_be_read_and_listed() {
    let app = spawn_app().await;
    let response =
        app.post("/v3/buckets", json!({ "name": "Invoices", "description": "2024 invoices" })).await;
    assert_eq!(response.status(), 200);
    let created = json(response).await;
    assert_eq!(created["name"], "Invoices");
    assert_eq!(created["description"], "2024 invoices");
    assert_eq!(created["isDefault"], false);
    let id = created["bucketID"].as_str().unwrap();
    assert_eq!(json(app.get(&format!("/v3/buckets/{id}")).await).await, created);
    let (names, total) = bucket_names(&app, "").await;
    assert_eq!((names.len(), total), (2, 2));
    assert!(names.contains(&"Invoices".to_string()));
}

#[tokio::test]
async fn a_bucket_name_taken_by_a_live_bucket_is_a_409() {
    let app = spawn_app().await;
    app.create_bucket("Contracts").await;
    assert_error(app.post("/v3/buckets", json!({ "name": "Contracts" })).await, 409).await;
    let other = app.create_bucket("Other").await;
    assert_error(app.patch(&format!("/v3/buckets/{other}"), json!({ "name": "Contracts" })).await, 409).await;
}

#[tokio::test]
async fn an_empty_or_overlong_name_is_a_400() {
    let app = spawn_app().await;
    let body = assert_error(app.post("/v3/buckets", json!({ "name": "  " })).await, 400).await;
    assert_eq!(body["details"]["field"], "name");
    assert_error(app.post("/v3/buckets", json!({ "name": "x".repeat(101) })).await, 400).await;
}

#[tokio::test]
async fn a_bucket_can_be_renamed_and_redescribed_and_an_empty_patch_changes_nothing() {
    let app = spawn_app().await;
    let id = app.create_bucket("Drafts").await;
    let before = json(app.get(&format!("/v3/buckets/{id}")).await).await;
    let unchanged = json(app.patch(&format!("/v3/buckets/{id}"), json!({})).await).await;
    assert_eq!(unchanged["name"], "Drafts");
    assert_eq!(unchanged["description"], before["description"]);
    let renamed = json(app.patch(&format!("/v3/buckets/{id}"), json!({ "name": "Final" })).await).await;
    assert_eq!(renamed["name"], "Final");
    let described =
        json(app.patch(&format!("/v3/buckets/{id}"), json!({ "description": "done" })).await).await;
    assert_eq!(
        (described["name"].as_str(), described["description"].as_str()),
        (Some("Final"), Some("done"))
    );
    assert!(described["updatedAt"].as_str() >= before["updatedAt"].as_str());
    // The old name is free again.
    app.create_bucket("Drafts").await;
}

#[tokio::test]
async fn a_patch_sent_as_an_array_is_a_400_and_changes_nothing() {
    let app = spawn_app().await;
    let id = app.create_bucket("Drafts").await;
    let before = json(app.get(&format!("/v3/buckets/{id}")).await).await;
    // serde reads a struct from an array field by field: this renamed the bucket.
    let refused = app.patch(&format!("/v3/buckets/{id}"), json!(["Renamed", "by position"])).await;
    let body = assert_error(refused, 400).await;
    assert!(body["message"].as_str().unwrap().contains("expected struct"), "{body}");
    let after = json(app.get(&format!("/v3/buckets/{id}")).await).await;
    assert_eq!(after, before);
}

#[tokio::test]
async fn a_bucket_read_a_moment_ago_shows_its_rename_and_delete_at_once_and_only_to_its_tenant() {
    let app = spawn_app().await;
    let id = app.create_bucket("Inbox").await;
    let path = format!("/v3/buckets/{id}");
    assert_eq!(json(app.get(&path).await).await["name"], "Inbox");
    // Another account presenting the same ID finds nothing, though canon just read it.
    let stranger = app.new_key(Some(&unique("globex")), Environment::Sandbox).await;
    let theirs = app.client.get(format!("{}{path}", app.address)).header("x-api-key", stranger);
    assert_error(theirs.send().await.unwrap(), 404).await;
    app.patch(&path, json!({ "name": "Archive" })).await;
    assert_eq!(json(app.get(&path).await).await["name"], "Archive");
    assert_eq!(app.delete(&path).await.status(), 204);
    assert_error(app.get(&path).await, 404).await;
}

#[tokio::test]
async fn the_default_bucket_can_be_renamed_but_never_deleted() {
    let app = spawn_app().await;
    let body = json(app.get("/v3/buckets").await).await;
    let default = body["buckets"][0]["bucketID"].as_str().unwrap().to_string();
    let renamed = json(app.patch(&format!("/v3/buckets/{default}"), json!({ "name": "Main" })).await).await;
    assert_eq!((renamed["name"].as_str(), renamed["isDefault"].as_bool()), (Some("Main"), Some(true)));
    assert_error(app.delete(&format!("/v3/buckets/{default}")).await, 409).await;
    assert_error(app.delete(&format!("/v3/buckets/{default}?cascade=true")).await, 409).await;
    assert_eq!(app.get(&format!("/v3/buckets/{default}")).await.status(), 200);
}

#[tokio::test]
async fn an_empty_bucket_is_soft_deleted() {
    let app = spawn_app().await;
    let id = app.create_bucket("Temporary").await;
    assert_eq!(app.delete(&format!("/v3/buckets/{id}")).await.status(), 204);
    assert_error(app.get(&format!("/v3/buckets/{id}")).await, 404).await;
    assert_error(app.delete(&format!("/v3/buckets/{id}")).await, 404).await;
    assert_error(app.patch(&format!("/v3/buckets/{id}"), json!({ "name": "x" })).await, 404).await;
    let (names, total) = bucket_names(&app, "").await;
    assert_eq!((names, total), (vec!["default".to_string()], 1));
    // Soft: the node is kept, marked deleted.
    let rows =
        app.cypher("MATCH (b:Bucket {id: $id}) RETURN b.deletedAt AS deletedAt", json!({ "id": id })).await;
    assert!(rows[0]["deletedAt"].is_string());
}

#[tokio::test]
async fn deleting_a_non_empty_bucket_needs_cascade_which_removes_its_contents() {
    let app = spawn_app().await;
    let full = app.create_bucket("Full").await;
    let neighbour = app.create_bucket("Neighbour").await;
    plant_entities(&app, &full).await;
    plant_entities(&app, &neighbour).await;
    let body = assert_error(app.delete(&format!("/v3/buckets/{full}")).await, 409).await;
    assert!(body["message"].as_str().unwrap().contains("cascade=true"), "{body}");
    assert_error(app.delete(&format!("/v3/buckets/{full}?cascade=false")).await, 409).await;
    assert_eq!(count_in_bucket(&app, &full).await, (2, 2, 1), "nothing removed without cascade");
    assert_eq!(app.delete(&format!("/v3/buckets/{full}?cascade=true")).await.status(), 204);
    assert_error(app.get(&format!("/v3/buckets/{full}")).await, 404).await;
    assert_eq!(count_in_bucket(&app, &full).await, (0, 0, 0));
    assert_eq!(count_in_bucket(&app, &neighbour).await, (2, 2, 1), "other buckets are untouched");
}

#[tokio::test]
async fn a_refused_delete_counts_what_blocks_it_up_to_ten_thousand() {
    let app = spawn_app().await;
    let big = app.create_bucket("Big").await;
    for batch in [0..10_000, 10_000..10_100] {
        // Each a seed job (a hundred rows or more), waited for.
        let rows: Vec<Value> =
            batch.map(|i| json!({ "canonical": format!("Firm {i}"), "type": "Firm" })).collect();
        let seeded = app.post("/v3/entities/bulk", json!({ "entities": rows, "bucket": big })).await;
        assert_eq!(seeded.status(), 202);
        app.wait_for_seed(json(seeded).await["seedJobID"].as_str().unwrap()).await;
    }
    let body = assert_error(app.delete(&format!("/v3/buckets/{big}")).await, 409).await;
    assert!(body["message"].as_str().unwrap().contains("still holds more than 10000 entities"), "{body}");
    let types = json(app.get("/v3/entity-types").await).await;
    let firm = types["entityTypes"][0]["typeID"].as_str().unwrap().to_string();
    let body = assert_error(app.delete(&format!("/v3/entity-types/{firm}")).await, 409).await;
    assert!(body["message"].as_str().unwrap().contains("more than 10000 live entities"), "{body}");
    let small = app.create_bucket("Small").await;
    plant_entities(&app, &small).await;
    let body = assert_error(app.delete(&format!("/v3/buckets/{small}")).await, 409).await;
    assert!(body["message"].as_str().unwrap().contains("still holds 2 entities"), "{body}");
}

#[tokio::test]
async fn a_cascade_delete_removes_a_large_bucket_a_page_at_a_time_names_included() {
    // Each statement removes at most 3 mentions or entities here (5,000 in production), so
    // other writes run between them; the keys of the entities' names go too.
    let app = spawn_app_with(Handlers::default(), |config| config.bucket_delete_page = 3).await;
    let old = app.create_bucket("Old").await;
    let rows: Vec<Value> = (0..7)
        .map(|i| json!({ "canonical": format!("Acme {i}"), "type": "Company", "synonyms": [format!("Acme alias {i}")] }))
        .collect();
    let seeded = app.post("/v3/entities/bulk", json!({ "entities": rows, "bucket": old })).await;
    assert_eq!(seeded.status(), 200);
    let ids = strings(&json(seeded).await["results"], "entityID");
    for (i, id) in ids.iter().enumerate() {
        for n in 0..2 {
            let body =
                json!({ "entityID": id, "surface": format!("Acme {i}"), "referenceID": format!("doc-{n}") });
            assert_eq!(app.post("/v3/mentions", body).await.status(), 200);
        }
        let next = &ids[(i + 1) % ids.len()];
        let relation = json!({ "sourceEntityID": id, "targetEntityID": next, "relationType": "supplies" });
        assert_eq!(app.post("/v3/relations", relation).await.status(), 200);
    }
    let neighbour = app.create_bucket("Neighbour").await;
    plant_entities(&app, &neighbour).await;
    let keys = |bucket: &str| {
        let bucket = bucket.to_string();
        let app = &app;
        async move {
            let rows = app
                .cypher("MATCH (k:Key {bucketID: $b}) RETURN count(k) AS keys", json!({ "b": bucket }))
                .await;
            rows[0]["keys"].as_i64().unwrap()
        }
    };
    assert_eq!(count_in_bucket(&app, &old).await, (7, 14, 7));
    assert_eq!(keys(&old).await, 14, "a name and a synonym each");

    assert_eq!(app.delete(&format!("/v3/buckets/{old}?cascade=true")).await.status(), 204);
    assert_eq!(count_in_bucket(&app, &old).await, (0, 0, 0));
    assert_eq!(keys(&old).await, 0, "no key names a removed entity");
    assert_error(app.get(&format!("/v3/entities/{}", ids[0])).await, 404).await;
    assert_error(app.get(&format!("/v3/buckets/{old}")).await, 404).await;
    assert_eq!(count_in_bucket(&app, &neighbour).await, (2, 2, 1), "other buckets are untouched");
    // The same names are free again, in the default bucket.
    let again = app.seed(json!([{ "canonical": "Acme 0", "type": "Company" }])).await;
    assert_eq!(again["results"][0]["outcome"], "created", "{again}");
}

#[tokio::test]
async fn cascade_must_be_a_boolean() {
    let app = spawn_app().await;
    let id = app.create_bucket("B").await;
    let body = assert_error(app.delete(&format!("/v3/buckets/{id}?cascade=yes")).await, 400).await;
    assert_eq!(body["details"]["field"], "cascade");
}

#[tokio::test]
async fn name_substring_matches_case_insensitively_and_counts_only_matches() {
    let app = spawn_app().await;
    for name in ["Invoices 2023", "invoices 2024", "Contracts"] {
        app.create_bucket(name).await;
    }
    let (mut names, total) = bucket_names(&app, "?nameSubstring=INVOICES").await;
    names.sort();
    assert_eq!(names, vec!["Invoices 2023", "invoices 2024"]);
    assert_eq!(total, 2);
}

#[tokio::test]
async fn limit_outside_1_to_200_and_both_cursors_at_once_are_400s() {
    let app = spawn_app().await;
    for query in ["?limit=0", "?limit=201", "?limit=-1", "?limit=ten"] {
        let body = assert_error(app.get(&format!("/v3/buckets{query}")).await, 400).await;
        assert_eq!(body["details"]["field"], "limit", "{query}");
    }
    assert_eq!(app.get("/v3/buckets?limit=200").await.status(), 200);
    let both = app.get("/v3/buckets?startingAfter=bkt_A&endingBefore=bkt_B").await;
    assert_error(both, 400).await;
    assert_error(app.get("/v3/buckets?startingAfter=ety_A").await, 400).await;
}

#[tokio::test]
async fn pages_walk_forward_and_backward_in_stable_bucket_id_order() {
    let app = spawn_app().await;
    for i in 0..7 {
        app.create_bucket(&format!("b{i}")).await;
    }
    let all = json(app.get("/v3/buckets?limit=200").await).await;
    let all_ids = strings(&all["buckets"], "bucketID");
    assert_eq!(all_ids.len(), 8);
    let mut sorted = all_ids.clone();
    sorted.sort();
    assert_eq!(all_ids, sorted, "ordered by bucketID");

    // Forward, three at a time, following the last ID of each page.
    let mut forward = Vec::new();
    let mut query = "?limit=3".to_string();
    loop {
        let page = json(app.get(&format!("/v3/buckets{query}")).await).await;
        assert_eq!(page["totalCount"], 8, "totalCount ignores the cursor");
        let ids = strings(&page["buckets"], "bucketID");
        if ids.is_empty() {
            break;
        }
        assert!(ids.len() <= 3);
        query = format!("?limit=3&startingAfter={}", ids.last().unwrap());
        forward.extend(ids);
    }
    assert_eq!(forward, all_ids);

    // Backward from the end, following the first ID of each page.
    let mut backward: Vec<String> = Vec::new();
    let mut query = format!("?limit=3&endingBefore={}", all_ids.last().unwrap());
    loop {
        let page = json(app.get(&format!("/v3/buckets{query}")).await).await;
        let ids = strings(&page["buckets"], "bucketID");
        if ids.is_empty() {
            break;
        }
        let mut sorted_page = ids.clone();
        sorted_page.sort();
        assert_eq!(ids, sorted_page, "a backward page is still in ascending order");
        query = format!("?limit=3&endingBefore={}", ids.first().unwrap());
        backward.splice(0..0, ids);
    }
    assert_eq!(backward, all_ids[..7].to_vec());
}
