//! Merge suggestions: automatic merges above one threshold, suggestions between two.

use crate::helpers::{assert_error, json, spawn_app, TestApp};
use serde_json::{json, Value};

async fn refresh(app: &TestApp) -> Value {
    let response = app.post("/v3/merge-suggestions/refresh", json!({})).await;
    assert_eq!(response.status(), 200);
    json(response).await
}

fn pair_of(suggestion: &Value) -> Vec<String> {
    let mut names: Vec<String> = suggestion["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["canonical"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn near_certain_duplicates_merge_automatically_and_likely_ones_wait_for_review() {
    let app = spawn_app().await;
    let globex = app.entity("Globex Corporation International", "Company").await;
    let typo = app.entity("Globex Corporaton International", "Company").await;
    app.entity("Initech Software", "Company").await;
    app.entity("Initech Software Group", "Company").await;
    app.entity("Umbrella Pharmaceuticals", "Company").await;
    app.entity("Jordan River", "Place").await;
    app.entity("Jordan Rivers", "Person").await;

    let result = refresh(&app).await;
    assert_eq!(result["autoMerged"], 1, "{result}");
    assert_eq!(result["suggested"], 1, "{result}");
    assert_eq!(json(app.get(&format!("/v3/entities/{typo}")).await).await["entityID"], globex.as_str());
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
    assert_eq!(json(app.get(&format!("/v3/entities/{acmee}")).await).await["entityID"], acmee.as_str());
    assert_ne!(acme, acmee);
}
