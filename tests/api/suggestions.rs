//! Merge suggestions: automatic merges above one threshold, suggestions between two.

use crate::helpers::{assert_error, json, spawn_app, spawn_app_with, TestApp};
use canon::jobs::Handlers;
use serde_json::{json, Value};

async fn refresh(app: &TestApp) -> Value {
    let response = app.post("/v3/merge-suggestions/refresh", json!({})).await;
    assert_eq!(response.status(), 200);
    json(response).await
}

fn pair_of(suggestion: &Value) -> Vec<String> {
    crate::helpers::sorted_canonicals(suggestion)
}

#[tokio::test]
async fn near_certain_duplicates_merge_automatically_and_likely_ones_wait_for_review() {
    merges_and_suggestions_among_companies(&spawn_app().await).await;
}

#[tokio::test]
async fn a_refresh_reading_its_entities_a_page_at_a_time_finds_the_pairs_across_pages() {
    // One entity per statement: every pair spans two pages.
    let app = spawn_app_with(Handlers::default(), |config| config.refresh_page = 1).await;
    merges_and_suggestions_among_companies(&app).await;
}

/// Seven names of which one pair merges automatically and one waits for review.
async fn merges_and_suggestions_among_companies(app: &TestApp) {
    let globex = app.entity("Globex Corporation International", "Company").await;
    let typo = app.entity("Globex Corporaton International", "Company").await;
    app.entity("Initech Software", "Company").await;
    app.entity("Initech Software Group", "Company").await;
    app.entity("Umbrella Pharmaceuticals", "Company").await;
    app.entity("Jordan River", "Place").await;
    app.entity("Jordan Rivers", "Person").await;

    let result = refresh(app).await;
    assert_eq!(result["autoMerged"], 1, "{result}");
    assert_eq!(result["suggested"], 1, "{result}");
    assert_eq!(resolved(app, &typo).await, resolved(app, &globex).await);
    let history = json(app.get(&format!("/v3/entities/{globex}/merges")).await).await;
    assert_eq!(
        history["merges"].as_array().unwrap().len(),
        1,
        "an automatic merge is recorded (and undoable)"
    );

    let page = json(app.get("/v3/merge-suggestions").await).await;
    let suggestions = page["suggestions"].as_array().unwrap();
    assert_eq!(suggestions.len(), 1);
    assert_eq!(pair_of(&suggestions[0]), vec!["Initech Software", "Initech Software Group"]);
    let score = suggestions[0]["score"].as_f64().unwrap();
    assert!((0.80..0.95).contains(&score), "between the thresholds: {score}");
    assert!(suggestions[0]["signals"]["nameSimilarity"].as_f64().unwrap() > 0.8);
    let meaning =
        suggestions[0]["signals"]["embeddingSimilarity"].as_f64().expect("MiniLM compares the names");
    assert!(meaning > 0.5, "{meaning}");
    assert_eq!(page["hasMore"], false);
}

#[tokio::test]
async fn a_dismissed_pair_is_not_suggested_again_and_an_accepted_one_merges() {
    let app = spawn_app().await;
    app.entity("Initech Software", "Company").await;
    app.entity("Initech Software Group", "Company").await;
    app.entity("Hooli Cloud", "Company").await;
    app.entity("Hooli Cloud Services", "Company").await;
    assert_eq!(refresh(&app).await["suggested"], 2);
    let page = json(app.get("/v3/merge-suggestions").await).await;
    let suggestions = page["suggestions"].as_array().unwrap().clone();
    let initech = suggestions.iter().find(|s| pair_of(s)[0] == "Initech Software").unwrap();
    let hooli = suggestions.iter().find(|s| pair_of(s)[0] == "Hooli Cloud").unwrap();

    let id = initech["suggestionID"].as_str().unwrap();
    let dismissed = json(app.post(&format!("/v3/merge-suggestions/{id}/dismiss"), json!({})).await).await;
    assert_eq!(dismissed["status"], "dismissed");
    assert_error(app.post(&format!("/v3/merge-suggestions/{id}/dismiss"), json!({})).await, 409).await;
    assert_eq!(refresh(&app).await["suggested"], 0, "not suggested again");

    let id = hooli["suggestionID"].as_str().unwrap();
    let merged = json(app.post(&format!("/v3/merge-suggestions/{id}/accept"), json!({})).await).await;
    assert_eq!(merged["merges"].as_array().unwrap().len(), 1);
    assert_eq!(merged["entity"]["canonical"], "Hooli Cloud");
    let forms = merged["entity"]["surfaceForms"].as_array().unwrap();
    assert!(forms.iter().any(|f| f == "Hooli Cloud Services"));
    assert!(json(app.get("/v3/merge-suggestions").await).await["suggestions"].as_array().unwrap().is_empty());
    assert_error(
        app.post("/v3/merge-suggestions/msg_01NOSUCH000000000000000000/accept", json!({})).await,
        404,
    )
    .await;
}

#[tokio::test]
async fn short_names_are_only_ever_suggested() {
    let app = spawn_app().await;
    let acme = app.entity("Acme", "Company").await;
    let acmee = app.entity("Acmee", "Company").await;
    let result = refresh(&app).await;
    assert_eq!((result["autoMerged"].as_i64(), result["suggested"].as_i64()), (Some(0), Some(1)), "{result}");
    assert_ne!(resolved(&app, &acme).await, resolved(&app, &acmee).await);
}

#[tokio::test]
async fn a_short_name_merges_automatically_only_when_its_attributes_alone_make_it_sure() {
    let app = spawn_app().await;
    let schema = json!({ "properties": {
        "ssid": { "type": "string", "x-compare": "identifier" },
        "dateOfBirth": { "type": "string", "x-compare": "date" },
        "postcode": { "type": "string", "x-compare": "identifier" },
    }});
    let created = app.post("/v3/entity-types", json!({ "name": "Person", "attributeSchema": schema })).await;
    assert!(created.status().is_success());
    let person = |name: &str, ssid: &str, born: &str, postcode: &str| {
        json!({ "canonical": name, "type": "Person",
                "attributes": { "ssid": ssid, "dateOfBirth": born, "postcode": postcode } })
    };
    let mut rows = vec![
        person("Green", "9262880", "19310903", "2747"),
        person("Emma Green", "9262880", "19310903", "2747"),
        person("Webb", "3308042", "19470429", "4870"),
        person("Kyra Webb", "4191569", "19190528", "6258"),
    ];
    // Unrelated people, so that chance agreement (u) is estimated from more than the pairs.
    for i in 0..20 {
        let name =
            format!("Person{} Family{}", ["a", "b", "c", "d", "e"][i % 5], ["x", "y", "z", "w"][i / 5]);
        rows.push(person(
            &name,
            &format!("{}", 1_000_003 * (i + 11) % 9_999_991),
            &format!("19{:02}0{}1{}", 20 + i, i % 9 + 1, i % 10),
            &format!("{}", 2000 + i * 37),
        ));
    }
    let ids = seeded_ids(&app, rows).await;
    let result = refresh(&app).await;
    assert_eq!(
        resolved(&app, &ids[0]).await,
        resolved(&app, &ids[1]).await,
        "same ID, birth date and postcode: {result}"
    );
    assert_ne!(
        resolved(&app, &ids[2]).await,
        resolved(&app, &ids[3]).await,
        "nothing but a short name: {result}"
    );
}

/// A `Restaurant` type whose phone and city compare, and one entity per row.
async fn restaurants(app: &TestApp, rows: &[(&str, &str, &str)]) -> Vec<String> {
    let schema = json!({ "properties": {
        "phone": { "type": "string", "x-compare": "identifier" },
        "city": { "type": "string", "x-compare": "exact" },
    }});
    let created =
        app.post("/v3/entity-types", json!({ "name": "Restaurant", "attributeSchema": schema })).await;
    assert!(created.status().is_success());
    let rows: Vec<Value> = rows
        .iter()
        .map(|(name, phone, city)| {
            json!({ "canonical": name, "type": "Restaurant", "attributes": { "phone": phone, "city": city } })
        })
        .collect();
    seeded_ids(app, rows).await
}

/// Seeds the rows; the entity each row landed on, in row order.
async fn seeded_ids(app: &TestApp, rows: Vec<Value>) -> Vec<String> {
    let body = app.seed(json!(rows)).await;
    body["results"].as_array().unwrap().iter().map(|r| r["entityID"].as_str().unwrap().to_string()).collect()
}

/// The entity an ID opens: itself, or the survivor it was merged into.
async fn resolved(app: &TestApp, id: &str) -> String {
    json(app.get(&format!("/v3/entities/{id}")).await).await["entityID"].as_str().unwrap().to_string()
}

fn explained_score(page: &Value, name: &str) -> (f64, Value) {
    let suggestion = page["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| pair_of(s).iter().any(|n| n == name))
        .unwrap_or_else(|| panic!("no suggestion for {name}: {page}"));
    (suggestion["score"].as_f64().unwrap(), suggestion["signals"]["explanation"].clone())
}

#[tokio::test]
async fn agreeing_attributes_raise_a_score_and_disagreeing_ones_lower_it_with_the_reasons_shown() {
    let app = spawn_app().await;
    app.entity("Initech Software", "Company").await;
    app.entity("Initech Software Group", "Company").await;
    restaurants(
        &app,
        &[
            ("Initech Software", "212 555 0100", "austin"),
            ("Initech Software Group", "(212) 555-0100", "austin"),
        ],
    )
    .await;
    // A third type keeps the disagreeing pair apart from the agreeing one.
    let schema = json!({ "properties": { "city": { "type": "string", "x-compare": "exact" } } });
    let shop = app.post("/v3/entity-types", json!({ "name": "Shop", "attributeSchema": schema })).await;
    assert!(shop.status().is_success());
    app.seed(json!([
        { "canonical": "Initech Software", "type": "Shop", "attributes": { "city": "austin" } },
        { "canonical": "Initech Software Group", "type": "Shop", "attributes": { "city": "berlin" } },
    ]))
    .await;
    refresh(&app).await;

    let page = json(app.get("/v3/merge-suggestions").await).await;
    let by_type = |type_name: &str| {
        page["suggestions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["entities"][0]["type"] == type_name)
            .map(|s| (s["score"].as_f64().unwrap(), s["signals"]["explanation"].clone()))
    };
    let (name_only, explanation) = by_type("Company").expect("the name-only pair is suggested");
    assert_eq!(explanation["fields"][0]["field"], "name", "{explanation}");
    assert!(explanation["fields"][0]["weight"].as_f64().is_some());
    assert!(explanation["fields"][0]["level"].is_string());
    // Phone and city agree: merged automatically (so no longer suggested).
    assert!(by_type("Restaurant").is_none(), "{page}");
    // City disagrees: below the name-only score, or not suggested at all.
    if let Some((lower, explanation)) = by_type("Shop") {
        assert!(lower < name_only, "{lower} {name_only}");
        let city = explanation["fields"].as_array().unwrap().iter().find(|f| f["field"] == "city").unwrap();
        assert_eq!(city["level"], "different");
        assert!(city["weight"].as_f64().unwrap() < 0.0, "{city}");
    }
}

#[tokio::test]
async fn names_that_differ_but_share_a_phone_and_city_merge_and_one_word_spellings_do_not() {
    let app = spawn_app().await;
    let ids = restaurants(
        &app,
        &[
            ("Arnie Morton's of Chicago", "310 246 1501", "los angeles"),
            ("Arnie Morton's Steakhouse", "310-246-1501", "los angeles"),
            ("Zarela", "212 644 6740", "new york"),
            ("Zarzuela", "202 555 0199", "washington"),
        ],
    )
    .await;
    let result = refresh(&app).await;
    // Which of a merged pair survives depends on their (random) IDs: compare what each
    // resolves to.
    assert_eq!(resolved(&app, &ids[0]).await, resolved(&app, &ids[1]).await, "{result}");
    assert_ne!(resolved(&app, &ids[2]).await, resolved(&app, &ids[3]).await, "zarela / zarzuela: {result}");
    // Names alone: one-word spelling variants wait for a person at most.
    let zarela = app.entity("Zarela", "Company").await;
    let zarzuela = app.entity("Zarzuela", "Company").await;
    let marichu = app.entity("Marichu", "Company").await;
    let march = app.entity("March", "Company").await;
    refresh(&app).await;
    for (a, b) in [(&zarela, &zarzuela), (&marichu, &march)] {
        assert_ne!(resolved(&app, a).await, resolved(&app, b).await, "{a} {b}");
    }
    let page = json(app.get("/v3/merge-suggestions").await).await;
    if page["suggestions"].as_array().unwrap().iter().any(|s| pair_of(s).contains(&"Zarela".to_string())) {
        assert!(explained_score(&page, "Zarela").1["fields"].is_array());
    }
}

#[tokio::test]
async fn a_refresh_run_twice_gives_the_same_suggestions() {
    let app = spawn_app().await;
    for name in
        ["Initech Software", "Initech Software Group", "Hooli Cloud", "Hooli Cloud Services", "Acme", "Acmee"]
    {
        app.entity(name, "Company").await;
    }
    let first = refresh(&app).await;
    let page = json(app.get("/v3/merge-suggestions").await).await;
    let second = refresh(&app).await;
    assert_eq!(
        (second["suggested"].as_i64(), second["autoMerged"].as_i64()),
        (Some(0), Some(0)),
        "{first} {second}"
    );
    assert_eq!(json(app.get("/v3/merge-suggestions").await).await, page);
}

/// The score of a new "Vandelay Software" pair after a person decided on an "Initech
/// Software" pair: `none`, `dismiss` (the suggestion), `merge` (by hand) or `unmerge`;
/// 1 when it merged automatically, 0 when it was not even suggested.
async fn vandelay_score_after(decision: &str) -> f64 {
    let app = spawn_app().await;
    let initech = app.entity("Initech Software", "Company").await;
    let group = app.entity("Initech Software Group", "Company").await;
    match decision {
        "dismiss" => {
            refresh(&app).await;
            let page = json(app.get("/v3/merge-suggestions").await).await;
            let id = page["suggestions"][0]["suggestionID"].as_str().unwrap().to_string();
            assert_eq!(
                app.post(&format!("/v3/merge-suggestions/{id}/dismiss"), json!({})).await.status(),
                200
            );
        }
        "merge" | "unmerge" => {
            let merged =
                app.post(&format!("/v3/entities/{initech}/merge"), json!({ "entityIDs": [group] })).await;
            let merged = json(merged).await;
            if decision == "unmerge" {
                let merge_id = merged["merges"][0]["mergeID"].as_str().unwrap().to_string();
                assert_eq!(app.post(&format!("/v3/merges/{merge_id}/undo"), json!({})).await.status(), 200);
                assert_eq!(refresh(&app).await["suggested"], 0, "an undone merge is not suggested again");
            }
        }
        _ => {}
    }
    app.entity("Vandelay Software", "Company").await;
    app.entity("Vandelay Software Group", "Company").await;
    if refresh(&app).await["autoMerged"] == 1 {
        return 1.0; // above the automatic-merge threshold
    }
    let page = json(app.get("/v3/merge-suggestions").await).await;
    let vandelay = page["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| pair_of(s)[0] == "Vandelay Software")
        .map(|s| s["score"].as_f64().unwrap());
    vandelay.unwrap_or(0.0)
}

#[tokio::test]
async fn a_dismissed_suggestion_teaches_the_model_to_score_pairs_like_it_lower() {
    let untaught = vandelay_score_after("none").await;
    let taught = vandelay_score_after("dismiss").await;
    assert!(untaught > 0.0, "suggested before any label");
    assert!(taught < untaught, "{taught} {untaught}");
}

#[tokio::test]
async fn a_manual_merge_raises_and_an_unmerge_lowers_the_scores_of_pairs_like_it() {
    let untaught = vandelay_score_after("none").await;
    let merged = vandelay_score_after("merge").await;
    let unmerged = vandelay_score_after("unmerge").await;
    assert!(merged > untaught, "{merged} {untaught}");
    assert!(unmerged < merged, "{unmerged} {merged}");
}

#[tokio::test]
async fn open_suggestions_page_in_each_order_from_the_store_and_skip_pairs_merged_meanwhile() {
    let app = spawn_app().await;
    let names = ["Anvil", "Beacon", "Cobalt", "Dynamo", "Ember", "Falcon", "Granite", "Harbor"];
    let mut entities = Vec::new();
    for name in names {
        entities.push(app.entity(name, "Company").await);
    }
    // Stored as a refresh would store them; two share a score, so the ID breaks the tie.
    let scores = [0.9, 0.55, 0.7, 0.45, 0.9, 0.3, 0.62];
    let signals = json!({});
    for (i, score) in scores.iter().enumerate() {
        let new = canon::store::records::suggestions::NewSuggestion {
            account_id: &app.account_id,
            environment: "sandbox",
            bucket_id: "bkt_paging",
            entity_a: &entities[i],
            entity_b: &entities[i + 1],
            score: *score,
            signals: &signals,
            status: "open",
        };
        assert!(app.app().state.records.insert_suggestion(new).await.expect("stored"));
    }
    // Granite merged into Falcon: the pairs holding Granite are no longer listed.
    let merged =
        app.post(&format!("/v3/entities/{}/merge", entities[5]), json!({"entityIDs": [entities[6]]})).await;
    assert_eq!(merged.status(), 200);

    let graph = &app.app().state.graph;
    let before = graph.queries_run();
    let all = json(app.get("/v3/merge-suggestions?limit=100").await).await;
    assert_eq!(
        graph.queries_run() - before,
        1,
        "one graph read for the page's entities, not one a suggestion"
    );
    let listed: Vec<(String, f64)> = all["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["suggestionID"].as_str().unwrap().to_string(), s["score"].as_f64().unwrap()))
        .collect();
    assert_eq!(listed.len(), 5, "two of seven hold Granite: {all}");
    for order in ["score", "uncertain", "recent"] {
        let mut expected = listed.clone();
        let uncertainty = |s: &(String, f64)| (s.1 - 0.5).abs();
        match order {
            "score" => expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))),
            "uncertain" => {
                expected.sort_by(|a, b| uncertainty(a).total_cmp(&uncertainty(b)).then(a.0.cmp(&b.0)))
            }
            _ => expected.sort_by(|a, b| b.0.cmp(&a.0)),
        }
        let expected: Vec<String> = expected.into_iter().map(|s| s.0).collect();
        // Two a page, each page after the last one listed.
        let mut paged: Vec<String> = Vec::new();
        let mut cursor = String::new();
        loop {
            let after = if cursor.is_empty() { String::new() } else { format!("&startingAfter={cursor}") };
            let page =
                json(app.get(&format!("/v3/merge-suggestions?order={order}&limit=2{after}")).await).await;
            let ids: Vec<String> = page["suggestions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["suggestionID"].as_str().unwrap().to_string())
                .collect();
            paged.extend(ids.clone());
            if page["hasMore"] != true {
                break;
            }
            assert_eq!(page["nextCursor"].as_str(), ids.last().map(String::as_str), "{page}");
            cursor = ids.last().unwrap().clone();
            assert!(paged.len() <= 10, "the cursor leads on forever");
        }
        assert_eq!(paged, expected, "order={order}");
    }
}
