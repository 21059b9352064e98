//! Curation: status transitions, type assignment, canonical names, synonyms, bulk validation.

use crate::helpers::{assert_error, json, spawn_app};
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn approving_or_rejecting_is_allowed_once_from_a_pre_terminal_state() {
    let app = spawn_app().await;
    let id = app.entity("Hooli", "Company").await;
    let path = format!("/v3/entities/{id}");
    let approved = json(app.patch(&path, json!({ "status": "approved" })).await).await;
    assert_eq!(approved["status"], "approved");
    chrono::DateTime::parse_from_rfc3339(approved["validatedAt"].as_str().unwrap()).unwrap();
    assert!(approved.get("validatedByUserID").is_none(), "no user behind an API key");
    assert_error(app.patch(&path, json!({ "status": "rejected" })).await, 409).await;
    assert_error(app.patch(&path, json!({ "status": "approved" })).await, 409).await;
    for bad in ["merged", "proposed", "extracted", "done"] {
        assert_error(app.patch(&path, json!({ "status": bad })).await, 400).await;
    }
    let other = app.entity("Pied Piper", "Company").await;
    let rejected =
        json(app.patch(&format!("/v3/entities/{other}"), json!({ "status": "rejected" })).await).await;
    assert_eq!(rejected["status"], "rejected");
    assert_error(
        app.patch("/v3/entities/ent_01NOSUCH000000000000000000", json!({ "status": "approved" })).await,
        404,
    )
    .await;
}

#[tokio::test]
async fn a_dashboard_user_who_validates_is_recorded() {
    let app = spawn_app().await;
    let id = app.entity("Aviato", "Company").await;
    let (user, token) = app.dashboard_token("operator").await;
    let response = app
        .as_user(Method::PATCH, &format!("/v3/entities/{id}"), &token)
        .json(&json!({ "status": "approved" }))
        .send()
        .await
        .unwrap();
    let entity = json(response).await;
    assert_eq!(entity["validatedByUserID"], user.as_str());
}

#[tokio::test]
async fn assigning_a_type_changes_the_effective_type_and_the_empty_string_clears_it() {
    let app = spawn_app().await;
    let id = app.entity("Raviga", "Organisation").await;
    let fund = app.create_type("Fund", None).await;
    let path = format!("/v3/entities/{id}");
    let assigned = json(app.patch(&path, json!({ "assignedTypeID": fund })).await).await;
    assert_eq!((assigned["type"].as_str(), assigned["typeID"].as_str()), (Some("Fund"), Some(fund.as_str())));
    // The type now has a live entity: it cannot be deleted.
    assert_error(app.delete(&format!("/v3/entity-types/{fund}")).await, 409).await;
    let cleared = json(app.patch(&path, json!({ "assignedTypeID": "" })).await).await;
    assert!(cleared.get("typeID").is_none(), "{cleared}");
    assert_eq!(cleared["type"], "Organisation", "back to the inferred type");
    assert_eq!(app.delete(&format!("/v3/entity-types/{fund}")).await.status(), 204);
    assert_error(app.patch(&path, json!({ "assignedTypeID": "ety_01NOSUCH00000000000000000" })).await, 404)
        .await;
    // Re-keyed under the assigned type: a seed of the same name and that type finds it.
    let person = app.create_type("Person", None).await;
    app.patch(&path, json!({ "assignedTypeID": person })).await;
    let body = app.seed(json!([{ "canonical": "raviga", "type": "Person" }])).await;
    assert_eq!(body["results"][0]["entityID"], id.as_str());
}

#[tokio::test]
async fn synonyms_are_added_listed_as_surface_forms_and_removed_unless_extracted() {
    let app = spawn_app().await;
    let id = app.entity("Massive Dynamic", "Company").await;
    let response = app
        .post(&format!("/v3/entities/{id}/synonyms"), json!({ "text": "MassDyn", "locale": "en-US" }))
        .await;
    assert_eq!(response.status(), 200);
    let synonym = json(response).await;
    let synonym_id = synonym["synonymID"].as_str().unwrap().to_string();
    assert!(synonym_id.starts_with("esn_"));
    assert_eq!(
        (synonym["source"].as_str(), synonym["normalizedText"].as_str(), synonym["locale"].as_str()),
        (Some("customer_defined"), Some("massdyn"), Some("en-US"))
    );
    let again =
        json(app.post(&format!("/v3/entities/{id}/synonyms"), json!({ "text": "MassDyn" })).await).await;
    assert_eq!(again["synonymID"], synonym_id.as_str(), "idempotent");
    let other = app.entity("Other Co", "Company").await;
    assert_error(
        app.post(&format!("/v3/entities/{other}/synonyms"), json!({ "text": "massdyn" })).await,
        409,
    )
    .await;
    assert_error(app.post(&format!("/v3/entities/{id}/synonyms"), json!({ "text": "..." })).await, 400).await;

    // An extracted surface form (from a mention) cannot be removed.
    app.post("/v3/mentions", json!({ "entityID": id, "surface": "MD Labs", "referenceID": "doc-1" })).await;
    let extracted = app
        .cypher("MATCH (k:Key {entityID: $id, source: 'extracted'}) RETURN k.id AS id", json!({ "id": id }))
        .await;
    let extracted_id = extracted[0]["id"].as_str().unwrap();
    assert_error(app.delete(&format!("/v3/entities/{id}/synonyms/{extracted_id}")).await, 409).await;

    assert_eq!(app.delete(&format!("/v3/entities/{id}/synonyms/{synonym_id}")).await.status(), 204);
    let entity = json(app.get(&format!("/v3/entities/{id}")).await).await;
    let forms = entity["surfaceForms"].as_array().unwrap();
    assert!(!forms.iter().any(|f| f == "MassDyn") && forms.iter().any(|f| f == "MD Labs"), "{forms:?}");
    assert_error(app.delete(&format!("/v3/entities/{id}/synonyms/{synonym_id}")).await, 404).await;
    // The released name can now name the other entity.
    assert_eq!(
        app.post(&format!("/v3/entities/{other}/synonyms"), json!({ "text": "massdyn" })).await.status(),
        200
    );
}

#[tokio::test]
async fn a_form_of_the_canonical_name_is_no_synonym_and_the_409_says_why() {
    let app = spawn_app().await;
    let id = app.entity("Initech", "Company").await;
    let synonyms = format!("/v3/entities/{id}/synonyms");
    let body = assert_error(app.post(&synonyms, json!({ "text": "Initech LLC" })).await, 409).await;
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("canonical name") && message.contains("\"initech\""), "{message}");
    let entity = json(app.get(&format!("/v3/entities/{id}")).await).await;
    assert_eq!(entity["surfaceForms"], json!(["Initech"]), "the 409 changed nothing");

    // A PATCH states the entity's names: one it already has is no error, and the answer says
    // which were not added and why (the entity itself is the SDK's Entity, unchanged).
    let patched = app
        .patch(&format!("/v3/entities/{id}"), json!({ "addSynonyms": ["Initech LLC", "Initech Labs"] }))
        .await;
    assert_eq!(patched.status(), 200);
    let patched = json(patched).await;
    let not_added = patched["synonymsNotAdded"].as_array().expect("synonymsNotAdded").clone();
    assert_eq!(not_added.len(), 1, "{patched}");
    assert_eq!(not_added[0]["text"], "Initech LLC");
    assert!(not_added[0]["reason"].as_str().unwrap().contains("canonical name"), "{patched}");
    assert_eq!(patched["surfaceForms"], json!(["Initech", "Initech Labs"]), "{patched}");
    let plain =
        json(app.patch(&format!("/v3/entities/{id}"), json!({ "addSynonyms": ["Initech Research"] })).await)
            .await;
    assert!(plain.get("synonymsNotAdded").is_none(), "all added: {plain}");

    // The rule follows the canonical name: after a rename the former name is a plain synonym.
    let renamed = app.patch(&format!("/v3/entities/{id}"), json!({ "canonical": "Initrode" })).await;
    assert_eq!(json(renamed).await["canonical"], "Initrode");
    assert_error(app.post(&synonyms, json!({ "text": "INITRODE Inc." })).await, 409).await;
    let former = json(app.post(&synonyms, json!({ "text": "Initech LLC" })).await).await;
    assert_eq!(former["source"], "customer_defined", "{former}");
    let former_id = former["synonymID"].as_str().unwrap();
    assert_eq!(app.delete(&format!("{synonyms}/{former_id}")).await.status(), 204);
    let body = app.seed(json!([{ "canonical": "initrode", "type": "Company" }])).await;
    assert_eq!(body["results"][0]["entityID"], id.as_str(), "the canonical name still resolves");
}

#[tokio::test]
async fn a_patch_can_rename_and_edit_synonyms_in_one_go() {
    let app = spawn_app().await;
    let id = app.entity("Soylent", "Company").await;
    let first = json(
        app.patch(&format!("/v3/entities/{id}"), json!({ "addSynonyms": ["Soylent Corp International"] }))
            .await,
    )
    .await;
    assert!(first["surfaceForms"].as_array().unwrap().iter().any(|f| f == "Soylent Corp International"));
    let synonym = app
        .cypher(
            "MATCH (k:Key {entityID: $id, source: 'customer_defined'}) RETURN k.id AS id",
            json!({ "id": id }),
        )
        .await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let renamed = json(
        app.patch(
            &format!("/v3/entities/{id}"),
            json!({ "canonical": "Soylent Green", "removeSynonymIDs": [synonym], "addSynonyms": ["SG"] }),
        )
        .await,
    )
    .await;
    assert_eq!(renamed["canonical"], "Soylent Green");
    let forms = renamed["surfaceForms"].as_array().unwrap();
    assert!(forms.iter().any(|f| f == "SG") && forms.iter().any(|f| f == "Soylent"), "{forms:?}");
    assert!(!forms.iter().any(|f| f == "Soylent Corp International"));
    let taken = app.entity("Tyrell", "Company").await;
    assert_error(app.patch(&format!("/v3/entities/{id}"), json!({ "canonical": "tyrell" })).await, 409).await;
    assert_ne!(taken, id);
}

#[tokio::test]
async fn bulk_validate_reports_each_row() {
    let app = spawn_app().await;
    let a = app.entity("Alpha", "Company").await;
    let b = app.entity("Beta", "Company").await;
    app.patch(&format!("/v3/entities/{b}"), json!({ "status": "rejected" })).await;
    let missing = "ent_01NOSUCH000000000000000000";
    let response = app
        .post("/v3/entities/bulk-validate", json!({ "entityIDs": [a, b, missing], "status": "approved" }))
        .await;
    assert_eq!(response.status(), 200);
    let body = json(response).await;
    let outcomes: Vec<&str> =
        body["results"].as_array().unwrap().iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, vec!["validated", "rejected-row", "skipped"]);
    assert_eq!(body["summary"], json!({ "validated": 1, "skipped": 1, "rejectedRow": 1 }));
    assert_eq!(json(app.get(&format!("/v3/entities/{a}")).await).await["status"], "approved");
    assert_error(
        app.post("/v3/entities/bulk-validate", json!({ "entityIDs": [a], "status": "merged" })).await,
        400,
    )
    .await;
    assert_error(
        app.post("/v3/entities/bulk-validate", json!({ "entityIDs": [], "status": "approved" })).await,
        400,
    )
    .await;
}
