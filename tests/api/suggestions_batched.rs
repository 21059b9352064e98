//! Merge suggestions recorded in batches: a refresh writes its merges a few hundred a
//! statement, and each stays a merge of its own, recorded and undoable.

use crate::helpers::{json, spawn_app, spawn_app_with, TestApp};
use canon::graph::audit::Actor;
use canon::graph::Tenant;
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use serde_json::{json, Value};

/// A made-up three-word name, unique for each `i`.
fn name(i: usize) -> String {
    const SYLLABLES: [&str; 24] = [
        "ka", "lo", "mi", "ra", "te", "su", "no", "vi", "da", "pe", "zo", "ha", "ri", "ba", "ne", "to", "gu",
        "sa", "le", "mo", "fi", "ku", "ja", "de",
    ];
    let x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let word = |k: u32| -> String {
        (0..3).map(|s| SYLLABLES[((x >> (k * 15 + s * 5)) % 24) as usize]).collect::<String>()
    };
    format!("{} {} {}", word(0), word(1), word(2))
}

/// The name with two letters of its last word swapped: a typo of it.
fn typo(name: &str) -> String {
    let mut chars: Vec<char> = name.chars().collect();
    let at = chars.len() - 3;
    chars.swap(at, at + 1);
    chars.into_iter().collect()
}

/// Seeds `pairs` people twice each (the second a typo with the same ID number), 90 rows a
/// request; the entity IDs in row order (original, copy, original, copy, ...).
async fn people_and_their_copies(app: &TestApp, pairs: usize) -> Vec<String> {
    let schema = json!({ "properties": { "ssid": { "type": "string", "x-compare": "identifier" } } });
    let created = app.post("/v3/entity-types", json!({ "name": "Person", "attributeSchema": schema })).await;
    assert!(created.status().is_success());
    let rows: Vec<Value> = (0..pairs)
        .flat_map(|i| {
            let ssid = format!("{}", 7_000_001 + i * 7_919);
            let person = |canonical: String| {
                json!({ "canonical": canonical, "type": "Person", "attributes": { "ssid": ssid } })
            };
            [person(name(i)), person(typo(&name(i)))]
        })
        .collect();
    let mut ids = Vec::new();
    for chunk in rows.chunks(90) {
        let body = app.seed(json!(chunk)).await;
        ids.extend(
            body["results"].as_array().unwrap().iter().map(|r| r["entityID"].as_str().unwrap().to_string()),
        );
    }
    assert_eq!(ids.len(), 2 * pairs);
    ids
}

async fn resolved(app: &TestApp, id: &str) -> String {
    let body = json(app.get(&format!("/v3/entities/{id}")).await).await;
    body["entityID"].as_str().unwrap_or_else(|| panic!("{id}: {body}")).to_string()
}

#[tokio::test]
async fn a_refresh_of_hundreds_of_merges_records_each_and_each_can_be_undone() {
    // Some 1,500 requests: over the default rate limit's burst.
    let app = spawn_app_with(Handlers::default(), |config| config.rate_limit_burst = 100_000).await;
    let pairs = 300; // past one merge statement's 250
    let ids = people_and_their_copies(&app, pairs).await;
    let result = json(app.post("/v3/merge-suggestions/refresh", json!({})).await).await;
    assert_eq!(result["autoMerged"], pairs, "every copy and only copies: {result}");

    // Each pair is one merge of its own, the older entity (smaller ID) surviving, recorded
    // with what moved.
    let mut merges = Vec::new();
    for (i, pair) in ids.chunks(2).enumerate() {
        let (survivor, merged) = (pair[0].clone().min(pair[1].clone()), pair[0].clone().max(pair[1].clone()));
        assert_eq!(resolved(&app, &merged).await, survivor);
        let history = json(app.get(&format!("/v3/entities/{merged}/merges")).await).await;
        let history = history["merges"].as_array().unwrap().clone();
        assert_eq!(history.len(), 1, "{history:?}");
        assert_eq!(history[0]["survivorID"], survivor.as_str());
        assert!(history[0]["keysMoved"].as_i64().unwrap() >= 1, "its name moved: {history:?}");
        let canonical = if merged == pair[0] { name(i) } else { typo(&name(i)) };
        merges.push((history[0]["mergeID"].as_str().unwrap().to_string(), merged, survivor, canonical));
    }

    let again = json(app.post("/v3/merge-suggestions/refresh", json!({})).await).await;
    assert_eq!((again["autoMerged"].as_u64(), again["suggested"].as_u64()), (Some(0), Some(0)), "{again}");

    for (merge, merged, survivor, canonical) in &merges {
        let restored = app.post(&format!("/v3/merges/{merge}/undo"), json!({})).await;
        assert_eq!(restored.status(), 200);
        let restored = json(restored).await;
        assert_eq!(restored["entityID"], merged.as_str());
        assert_eq!(&restored["canonical"], canonical);
        assert_eq!(&resolved(&app, merged).await, merged);
        assert_eq!(&resolved(&app, survivor).await, survivor);
    }
}

#[tokio::test]
async fn a_batch_of_merges_leaves_out_a_pair_merged_away_meanwhile_and_makes_the_others() {
    let app = spawn_app().await;
    let ids = people_and_their_copies(&app, 3).await;
    let graph = &app.app().state.graph;
    let tenant = Tenant { account_id: app.account_id.clone(), environment: Environment::Sandbox };
    let actor = Actor { user_id: None, key_id: Some("key_test".into()) };
    // A person merges the second copy elsewhere first.
    let manual = app.post(&format!("/v3/entities/{}/merge", ids[0]), json!({ "entityIDs": [ids[3]] })).await;
    assert_eq!(manual.status(), 200);

    let bucket = json(app.get(&format!("/v3/entities/{}", ids[0])).await).await["bucketID"].clone();
    let bucket = bucket.as_str().unwrap().to_string();
    let pairs: Vec<(String, String, String)> =
        ids.chunks(2).map(|pair| (pair[0].clone(), pair[1].clone(), bucket.clone())).collect();
    let done = graph.merge_pairs(&tenant, &pairs, &actor).await.unwrap();
    assert_eq!(done, vec![true, false, true]);
    // The pair left out wrote nothing: one merge only, the person's.
    let history = json(app.get(&format!("/v3/entities/{}/merges", ids[3])).await).await;
    assert_eq!(history["merges"].as_array().unwrap().len(), 1, "{history}");
    assert_eq!(resolved(&app, &ids[3]).await, ids[0]);
    let history = json(app.get(&format!("/v3/entities/{}/merges", ids[2])).await).await;
    assert_eq!(history["merges"].as_array().unwrap().len(), 0, "{history}");
    assert_eq!(resolved(&app, &ids[5]).await, ids[4]);
}
