//! Concurrent clients: call deduplication under a burst, seeding that ends as some serial
//! order would, review-queue paging that returns every entity exactly once, and bounds on
//! counts that hold when the creates that would pass them arrive at once.

use crate::calls::invoice_schema;
use crate::helpers::{json, spawn_app, strings, TestApp};
use futures::future::join_all;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[tokio::test]
async fn a_burst_of_calls_sharing_references_all_succeed_and_dedupe_exactly() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    // 200 submissions at once (the key's whole burst), 8 per reference, on 4 connections.
    let clients: Vec<reqwest::Client> = (0..4).map(|_| reqwest::Client::new()).collect();
    let submissions = (0..200).map(|i| {
        let client = &clients[i % 4];
        let app = &app;
        async move {
            let reference = format!("burst-{}", i % 25);
            let body = json!({
                "callReferenceID": reference,
                "input": { "singleFile": { "inputContent": "SW52b2ljZSBudW1iZXI6IElOVi00Mg==", "inputType": "text" } },
            });
            let response = client
                .post(format!("{}/v3/workflows/invoices/call", app.address))
                .header("x-api-key", &app.api_key)
                .json(&body)
                .send()
                .await
                .expect("request");
            (reference, response.status().as_u16(), json(response).await)
        }
    });
    let answers = join_all(submissions).await;
    let mut calls_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (reference, status, body) in &answers {
        assert!(matches!(status, 200 | 202), "{reference}: {status} {body}");
        calls_of
            .entry(reference.clone())
            .or_default()
            .insert(body["call"]["callID"].as_str().unwrap().into());
    }
    for (reference, calls) in &calls_of {
        assert_eq!(calls.len(), 1, "{reference} names one call, not {calls:?}");
    }
    let listed = json(app.get("/v3/calls?limit=100").await).await;
    assert_eq!(listed["totalCount"], 25, "one call per reference");
}

impl TestApp {
    /// Seeds rows in one request and returns the per-row results.
    async fn seed_results(&self, rows: Vec<Value>) -> Vec<Value> {
        let body = self.seed(json!(rows)).await;
        body["results"].as_array().expect("results").clone()
    }
}

#[tokio::test]
async fn concurrent_seeds_sharing_synonyms_end_as_some_serial_order_would() {
    let app = spawn_app().await;
    for phase in 0..3 {
        // Four clients, each row its own name and a synonym shared with the other clients'
        // row of the same index: in any serial order the first such row creates the entity
        // and takes the synonym, and the three others merge into it through the synonym.
        let seeds = (0..4).map(|client| {
            let rows = (0..90)
                .map(|i| {
                    json!({
                        "canonical": format!("Org {phase}-{client}-{i}"),
                        "type": "Company",
                        "synonyms": [format!("Shared {phase}-{i}")],
                    })
                })
                .collect();
            app.seed_results(rows)
        });
        let results = join_all(seeds).await;
        for i in 0..90 {
            let rows: Vec<&Value> = results.iter().map(|client| &client[i]).collect();
            let entities: BTreeSet<&str> = rows.iter().map(|r| r["entityID"].as_str().unwrap()).collect();
            let created = rows.iter().filter(|r| r["outcome"] == "created").count();
            assert_eq!(
                (entities.len(), created),
                (1, 1),
                "phase {phase}, rows sharing synonym {i}: {rows:?}"
            );
            assert!(rows.iter().all(|r| r.get("synonymsNotTaken").is_none()), "{rows:?}");
        }
    }
}

#[tokio::test]
async fn a_row_reports_a_declared_synonym_another_entity_keeps() {
    let app = spawn_app().await;
    let first = app.entity("Alpha Corp", "Company").await;
    let other = app
        .seed_results(vec![json!({ "canonical": "Beta", "type": "Company", "synonyms": ["Gamma"] })])
        .await;
    let results = app
        .seed_results(vec![
            json!({ "canonical": "Alpha Corp", "type": "Company", "synonyms": ["Gamma", "Delta"] }),
        ])
        .await;
    assert_eq!(results[0]["outcome"], "merged-with");
    assert_eq!(results[0]["entityID"], first.as_str());
    assert_eq!(results[0]["synonymsNotTaken"], json!(["Gamma"]), "{results:?}");
    let beta = json(app.get(&format!("/v3/entities/{}", other[0]["entityID"].as_str().unwrap())).await).await;
    assert!(beta.to_string().contains("Gamma"), "Gamma stays with Beta: {beta}");
}

/// A page with more after it: at most `limit` rows, its cursor the last row's ID or, where its
/// scan bound ended it (a second of windows on FalkorDB: under load, it may), past it.
fn check_more_after(ids: &[String], limit: usize, cursor: Option<&str>, page: &Value) {
    let cursor = cursor.expect("a page with more after it has a cursor");
    assert!(ids.len() <= limit, "{page}");
    assert!(
        ids.last().is_none_or(|last| last.as_str() <= cursor),
        "the cursor is not before the last ID: {page}"
    );
}

/// Every page of the review queue from the start, as entity IDs per page.
async fn review_pages(app: &TestApp, limit: usize) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut query = format!("/v3/review-queue?limit={limit}");
    loop {
        let page = json(app.get(&query).await).await;
        let ids = strings(&page["entities"], "entityID");
        let more = page["hasMore"] == true;
        if more {
            check_more_after(&ids, limit, page["nextCursor"].as_str(), &page);
        }
        pages.push(ids);
        if !more {
            return pages;
        }
        query = format!("/v3/review-queue?limit={limit}&cursor={}", page["nextCursor"].as_str().unwrap());
    }
}

#[tokio::test]
async fn review_queue_paging_returns_every_entity_once_while_others_write() {
    let app = spawn_app().await;
    for batch in 0..7 {
        let rows = (0..99)
            .map(|i| json!({ "canonical": format!("Queued {batch}-{i}"), "type": "Company" }))
            .collect();
        app.seed_results(rows).await;
    }
    let before: BTreeSet<String> = review_pages(&app, 200).await.concat().into_iter().collect();
    assert_eq!(before.len(), 693);
    let writers = async {
        for batch in 0..10 {
            let rows = (0..20)
                .map(|i| json!({ "canonical": format!("Late {batch}-{i}"), "type": "Company" }))
                .collect();
            app.seed_results(rows).await;
        }
    };
    let readers = join_all([7, 13, 50, 64, 99, 101, 200].map(|limit| review_pages(&app, limit)));
    let (_, pagings) = tokio::join!(writers, readers);
    for pages in pagings {
        let ids = pages.concat();
        let mut counts: HashMap<&String, usize> = HashMap::new();
        for id in &ids {
            *counts.entry(id).or_default() += 1;
        }
        let repeated: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
        assert!(repeated.is_empty(), "entities repeated across pages: {repeated:?}");
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "pages run in ID order");
        let missing: Vec<_> = before.iter().filter(|id| !counts.contains_key(id)).collect();
        assert!(missing.is_empty(), "entities that were there all along are missing: {missing:?}");
    }
}

/// Every page of the knowledge graph from the start, as relation IDs.
async fn graph_pages(app: &TestApp, limit: usize) -> Vec<String> {
    let mut ids = Vec::new();
    let mut query = format!("/v3/knowledge-graph?limit={limit}");
    loop {
        let page = json(app.get(&query).await).await;
        let edges = strings(&page["edges"], "relationID");
        match page["nextCursor"].as_str() {
            Some(cursor) => {
                check_more_after(&edges, limit, Some(cursor), &page);
                query = format!("/v3/knowledge-graph?limit={limit}&cursor={cursor}");
                ids.extend(edges);
            }
            None => {
                ids.extend(edges);
                return ids;
            }
        }
    }
}

/// Relates entity `i` to entity `i + 1` for each `i` in `range`, four requests at a time.
async fn relate_chain(app: &TestApp, entities: &[String], range: std::ops::Range<usize>) {
    let range: Vec<usize> = range.collect();
    for chunk in range.chunks(4) {
        join_all(chunk.iter().map(|&i| async move {
            let body = json!({ "sourceEntityID": entities[i], "targetEntityID": entities[i + 1], "relationType": "next" });
            assert_eq!(app.post("/v3/relations", body).await.status(), 200);
        }))
        .await;
    }
}

#[tokio::test]
async fn knowledge_graph_paging_returns_every_edge_once_while_others_write() {
    let app = spawn_app().await;
    let rows = (0..99).map(|i| json!({ "canonical": format!("Node {i}"), "type": "Company" })).collect();
    let entities: Vec<String> =
        app.seed_results(rows).await.iter().map(|r| r["entityID"].as_str().unwrap().to_string()).collect();
    relate_chain(&app, &entities, 0..80).await;
    let before: BTreeSet<String> = graph_pages(&app, 200).await.into_iter().collect();
    assert_eq!(before.len(), 80);
    let writers = relate_chain(&app, &entities, 80..98);
    let readers = join_all([3, 7, 16, 33].map(|limit| graph_pages(&app, limit)));
    let (_, pagings) = tokio::join!(writers, readers);
    for ids in pagings {
        let unique: BTreeSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "edges repeated across pages: {ids:?}");
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "pages run in ID order");
        assert!(before.iter().all(|id| unique.contains(id)), "an edge that was there all along is missing");
    }
}

/// A large seed holds SQLite's write lock in long stretches; calls submitted meanwhile wait
/// for it (or, when it is held past the busy timeout, answer 503 with Retry-After and are
/// accepted when sent again): never a 500, never a call lost.
#[tokio::test]
async fn calls_submitted_during_a_large_seed_are_accepted_or_told_when_to_retry() {
    let app = spawn_app().await;
    app.extract_function("invoice", invoice_schema()).await;
    app.pipeline("invoices", &["invoice"], &[]).await;
    let rows: Vec<Value> = (0..3_000)
        .map(|i| json!({ "canonical": format!("Load Company {i}"), "type": "Company", "synonyms": [format!("LC{i}")] }))
        .collect();
    let seeding = app.post("/v3/entities/bulk", json!({ "entities": rows })).await;
    assert_eq!(seeding.status(), 202, "a seed of 3,000 rows runs as a job");
    let status_url = json(seeding).await["statusURL"].as_str().unwrap().to_string();

    let submit = |i: usize| {
        let app = &app;
        async move {
            let body = json!({
                "callReferenceID": format!("during-seed-{i}"),
                "input": { "singleFile": { "inputContent": "SW52b2ljZSBudW1iZXI6IElOVi00Mg==", "inputType": "text" } },
            });
            for _ in 0..20 {
                let response = app.post("/v3/workflows/invoices/call", body.clone()).await;
                let status = response.status().as_u16();
                if status == 503 {
                    let wait = response.headers().get("retry-after").and_then(|v| v.to_str().ok());
                    let wait: u64 = wait.expect("a 503 says when to retry").parse().expect("seconds");
                    tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
                    continue;
                }
                let body = json(response).await;
                assert!(matches!(status, 200 | 202), "call {i} answered {status}: {body}");
                return body["call"]["callID"].as_str().unwrap().to_string();
            }
            panic!("call {i} was refused 20 times");
        }
    };
    let mut accepted = BTreeSet::new();
    for wave in 0..11 {
        for call in join_all((0..4).map(|n| submit(wave * 4 + n))).await {
            accepted.insert(call);
        }
    }
    assert_eq!(accepted.len(), 44, "every submission is one call");
    let listed = json(app.get("/v3/calls?limit=100").await).await;
    assert_eq!(listed["totalCount"], 44, "every accepted call is kept");

    let path = status_url.trim_start_matches(app.address.as_str());
    for _ in 0..600 {
        let status = json(app.get(path).await).await;
        if status["status"] == "completed" {
            return;
        }
        assert_ne!(status["status"], "failed", "the seed job failed: {status}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    panic!("the seed job did not finish");
}

/// The statuses of `bodies` posted to `path` all at once.
async fn posted_at_once(app: &TestApp, path: &str, bodies: Vec<Value>) -> BTreeMap<u16, usize> {
    let answers = join_all(bodies.into_iter().map(|body| app.post(path, body))).await;
    let mut statuses = BTreeMap::new();
    for answer in answers {
        *statuses.entry(answer.status().as_u16()).or_default() += 1;
    }
    statuses
}

#[tokio::test]
async fn counted_bounds_hold_when_the_creates_that_would_pass_them_arrive_at_once() {
    // Each bound is counted in the write itself: on PostgreSQL two conditional inserts could
    // each miss the other's row and both pass it. 30 creates arrive together where 10 fit.
    let app = spawn_app().await;
    app.create_function(json!({"functionName": "watched", "type": "transform"})).await;
    app.pipeline("intake", &["watched"], &[]).await;
    let watching = |n: usize| json!({"name": format!("s{n}"), "type": "transform", "functionName": "watched", "googleDriveFolderID": "folder"});
    for n in 0..40 {
        assert_eq!(app.post("/v3/subscriptions", watching(n)).await.status(), 200, "subscription {n}");
    }
    let statuses = posted_at_once(&app, "/v3/subscriptions", (40..70).map(watching).collect()).await;
    assert_eq!(statuses, BTreeMap::from([(200, 10), (422, 20)]), "subscriptions on one function");
    let listed = json(app.get("/v3/subscriptions?functionNames=watched&limit=100").await).await;
    assert_eq!(listed.as_array().unwrap().len(), 50);

    let connector = json!({"name": "b", "type": "box", "workflowName": "intake",
                           "boxClientID": "c", "boxClientSecret": "s", "boxFolderID": "1"});
    for n in 0..90 {
        assert_eq!(app.post("/v3/connectors", connector.clone()).await.status(), 200, "connector {n}");
    }
    let statuses = posted_at_once(&app, "/v3/connectors", vec![connector; 30]).await;
    assert_eq!(statuses, BTreeMap::from([(200, 10), (422, 20)]), "connectors");
    assert_eq!(json(app.get("/v3/connectors").await).await["connectors"].as_array().unwrap().len(), 100);

    let records = &app.app().state.records;
    let owner = canon::store::records::Owner { account_id: &app.account_id, environment: "sandbox" };
    for n in 0..990 {
        assert!(
            records.insert_secret(owner, &format!("s{n}"), "sealed", 1, 1_000).await.unwrap(),
            "secret {n}"
        );
    }
    let secrets = (0..30).map(|n| json!({"name": format!("late-{n}"), "value": "v"})).collect();
    let statuses = posted_at_once(&app, "/v3/secrets", secrets).await;
    assert_eq!(statuses, BTreeMap::from([(201, 10), (422, 20)]), "secrets");
    assert_eq!(json(app.get("/v3/secrets").await).await["secrets"].as_array().unwrap().len(), 1_000);
}
