//! An entity's synonyms: listed with IDs and sources (`GET /v3/entities/{id}/synonyms`),
//! removed one by one, and the same on the review dashboard's entity card in chromium
//! (`tests/browser/synonyms.mjs`, skipped and said so without a browser).

use crate::helpers::{assert_error, browser_script, json, spawn_app, unique, TestApp};
use canon::store::records::keys::Environment;
use serde_json::{json, Value};

/// Acme with a customer-defined, an SME-approved and an extracted synonym (a mention's
/// surface); the entity's ID and the IDs of the three synonyms in that order.
async fn acme(app: &TestApp) -> (String, [String; 3]) {
    let id = app.entity("Acme Anvils Inc.", "Company").await;
    let path = format!("/v3/entities/{id}/synonyms");
    let add = |body: Value| async {
        let response = app.post(&path, body).await;
        assert_eq!(response.status(), 200, "adding a synonym");
        json(response).await
    };
    let added = add(json!({ "text": "ACME" })).await;
    let approved = add(json!({ "text": "Road Runner Supply", "source": "sme_approved" })).await;
    let mention = app
        .post("/v3/mentions", json!({ "entityID": id, "surface": "Acme A.", "referenceID": "report.pdf" }))
        .await;
    assert_eq!(mention.status(), 200, "the mention is recorded");
    let extracted =
        listed(app, &id).await.into_iter().find(|s| s["source"] == "extracted").expect("extracted one");
    let synonym_id = |s: &Value| s["synonymID"].as_str().expect("synonymID").to_string();
    (id.clone(), [synonym_id(&added), synonym_id(&approved), synonym_id(&extracted)])
}

async fn listed(app: &TestApp, id: &str) -> Vec<Value> {
    let response = app.get(&format!("/v3/entities/{id}/synonyms")).await;
    assert_eq!(response.status(), 200, "listing the synonyms");
    json(response).await["synonyms"].as_array().expect("synonyms").clone()
}

fn texts_and_sources(synonyms: &[Value]) -> Vec<(String, String)> {
    synonyms
        .iter()
        .map(|s| (s["text"].as_str().unwrap().into(), s["source"].as_str().unwrap().into()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[tokio::test]
async fn an_entitys_synonyms_are_listed_with_ids_and_sources_and_an_added_one_can_be_removed() {
    let app = spawn_app().await;
    let (id, [added, approved, extracted]) = acme(&app).await;

    let first = listed(&app, &id).await;
    assert_eq!(
        texts_and_sources(&first),
        pairs(&[
            ("ACME", "customer_defined"),
            ("Road Runner Supply", "sme_approved"),
            ("Acme A.", "extracted")
        ]),
        "oldest first, the canonical name not among them: {first:?}"
    );
    let ids: Vec<&str> = first.iter().map(|s| s["synonymID"].as_str().unwrap()).collect();
    assert_eq!(ids, [added.as_str(), approved.as_str(), extracted.as_str()]);
    assert_eq!(first[0]["normalizedText"], "acme");
    assert!(first[0]["createdAt"].as_str().is_some_and(|at| !at.is_empty()), "{first:?}");

    let removed = app.delete(&format!("/v3/entities/{id}/synonyms/{added}")).await;
    assert_eq!(removed.status(), 204);
    assert_eq!(
        texts_and_sources(&listed(&app, &id).await),
        pairs(&[("Road Runner Supply", "sme_approved"), ("Acme A.", "extracted")]),
        "the removed one is gone, the others stay"
    );

    assert_error(app.delete(&format!("/v3/entities/{id}/synonyms/{extracted}")).await, 409).await;
    assert_eq!(listed(&app, &id).await.len(), 2, "an extracted synonym stays");
}

#[tokio::test]
async fn another_tenant_and_an_unknown_entity_get_404_for_the_synonym_list() {
    let app = spawn_app().await;
    let (id, _) = acme(&app).await;
    let stranger = app.new_key(Some(&unique("globex")), Environment::Sandbox).await;
    let theirs = app
        .client
        .get(format!("{}/v3/entities/{id}/synonyms", app.address))
        .header("x-api-key", stranger)
        .send()
        .await
        .unwrap();
    assert_error(theirs, 404).await;
    assert_error(app.get("/v3/entities/ent_01J00000000000000000000000/synonyms").await, 404).await;
    assert_eq!(listed(&app, &id).await.len(), 3, "the owner still sees all three");
}

#[tokio::test]
async fn a_reviewer_removes_a_synonym_from_the_entity_card_and_rest_no_longer_lists_it() {
    let app = spawn_app().await;
    let (id, _) = acme(&app).await;
    // Tenant text that looks like markup must show as the characters typed.
    let markup = "<b>Acme</b> & Sons";
    let response = app.post(&format!("/v3/entities/{id}/synonyms"), json!({ "text": markup })).await;
    assert_eq!(response.status(), 200);

    let args = [app.address.as_str(), app.api_key.as_str(), id.as_str(), "ACME"];
    let Some(seen) = browser_script("synonyms.mjs", &args).await else { return };
    let shown: Vec<(String, String, Option<String>)> = seen["before"]
        .as_array()
        .expect("the list before")
        .iter()
        .map(|s| {
            (
                s["text"].as_str().unwrap().into(),
                s["source"].as_str().unwrap().into(),
                s["remove"].as_str().map(String::from),
            )
        })
        .collect();
    let row = |text: &str, source: &str, remove: bool| {
        (text.to_string(), format!("({source})"), remove.then(|| format!("Remove synonym {text}")))
    };
    assert_eq!(
        shown,
        vec![
            row("ACME", "customer-defined", true),
            row("Road Runner Supply", "SME-approved", true),
            row("Acme A.", "extracted", false),
            row(markup, "customer-defined", true),
        ],
        "{seen}"
    );
    let after: Vec<&str> =
        seen["after"].as_array().unwrap().iter().map(|s| s["text"].as_str().unwrap()).collect();
    assert_eq!(after, ["Road Runner Supply", "Acme A.", markup], "{seen}");
    assert_eq!(seen["errors"], json!([]), "{seen}");
    let texts: Vec<String> =
        listed(&app, &id).await.iter().map(|s| s["text"].as_str().unwrap().into()).collect();
    assert_eq!(texts, ["Road Runner Supply", "Acme A.", markup], "REST agrees the synonym is gone");
}

#[tokio::test]
async fn a_merged_away_id_lists_the_survivors_synonyms_without_either_canonical_name() {
    let app = spawn_app().await;
    let (survivor, _) = acme(&app).await;
    let merged = app.entity("Wile E. Coyote Supplies", "Company").await;
    let response =
        app.post(&format!("/v3/entities/{survivor}/merge"), json!({ "entityIDs": [merged] })).await;
    assert_eq!(response.status(), 200, "merging");
    let through_merged = texts_and_sources(&listed(&app, &merged).await);
    assert_eq!(through_merged, texts_and_sources(&listed(&app, &survivor).await));
    assert_eq!(
        through_merged,
        pairs(&[
            ("ACME", "customer_defined"),
            ("Road Runner Supply", "sme_approved"),
            ("Acme A.", "extracted")
        ]),
        "the merged entity's canonical name is a canonical name still, not a synonym"
    );
}

#[tokio::test]
async fn synonyms_removed_or_added_on_the_entity_card_are_taken_back_when_the_reviewer_presses_z() {
    let app = spawn_app().await;
    let (id, _) = acme(&app).await;
    let args = [app.address.as_str(), app.api_key.as_str(), id.as_str(), "Road Runner Supply", "undo"];
    let Some(seen) = browser_script("synonyms.mjs", &args).await else { return };
    let texts = |list: &Value| -> Vec<String> {
        list.as_array().unwrap().iter().map(|s| s["text"].as_str().unwrap().to_string()).collect()
    };
    assert!(!texts(&seen["after"]).contains(&"Road Runner Supply".to_string()), "{seen}");
    assert!(seen["status"].as_str().unwrap().contains("Press z to undo"), "{seen}");
    let restored = seen["restored"].as_array().unwrap();
    let back = restored.iter().find(|s| s["text"] == "Road Runner Supply").expect("the synonym is back");
    assert_eq!(back["source"], "(SME-approved)", "{seen}");
    assert!(seen["undoStatus"].as_str().unwrap().starts_with("Undone:"), "{seen}");
    assert_eq!(seen["errors"], json!([]), "{seen}");
    let rest = listed(&app, &id).await;
    let again = rest.iter().find(|s| s["text"] == "Road Runner Supply").expect("REST lists it again");
    assert_eq!(again["source"], "sme_approved", "its source as it was");
    assert_eq!(
        texts(&Value::Array(rest.clone())).len(),
        texts(&seen["before"]).len(),
        "nothing else changed"
    );
    // A synonym added on the card goes again on z.
    assert!(texts(&seen["added"]).contains(&"Zed Supply".to_string()), "{seen}");
    assert_eq!(texts(&seen["unadded"]), texts(&seen["restored"]), "{seen}");
    assert!(listed(&app, &id).await.iter().all(|s| s["text"] != "Zed Supply"), "REST no longer lists it");
    // Adding a synonym the entity has changes nothing, so z has nothing of it to undo.
    assert_eq!(seen["readdStatus"], "“Acme A.” was already a synonym.", "{seen}");
    assert_eq!(seen["undoAfterReadd"], "Nothing to undo.", "{seen}");
    assert_eq!(texts(&seen["afterReadd"]), texts(&seen["restored"]), "{seen}");
}
