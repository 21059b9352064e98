//! Entity types: unique immutable names, hierarchy without cycles, soft delete, listing.

use crate::helpers::{assert_error, json, spawn_app};
use serde_json::json;

#[tokio::test]
async fn a_created_type_is_returned_with_every_field() {
    let app = spawn_app().await;
    let response = app
        .post(
            "/v3/entity-types",
            json!({ "name": "Drug", "description": "a medicine", "attributeSchema": { "unit": "mg", "range": [0, 100] } }),
        )
        .await;
    assert_eq!(response.status(), 200);
    let created = json(response).await;
    assert!(created["typeID"].as_str().unwrap().starts_with("ety_"));
    assert_eq!(created["name"], "Drug");
    assert_eq!(created["description"], "a medicine");
    assert_eq!(created["parentTypeID"], "");
    assert_eq!(created["attributeSchema"], json!({ "unit": "mg", "range": [0, 100] }));
    let id = created["typeID"].as_str().unwrap();
    assert_eq!(json(app.get(&format!("/v3/entity-types/{id}")).await).await, created);
}

#[tokio::test]
async fn a_duplicate_name_is_a_409() {
    let app = spawn_app().await;
    app.create_type("Company", None).await;
    assert_error(app.post("/v3/entity-types", json!({ "name": "Company" })).await, 409).await;
}

#[tokio::test]
async fn a_patch_that_sends_name_is_a_400_and_changes_nothing() {
    let app = spawn_app().await;
    let id = app.create_type("Person", None).await;
    let body = assert_error(
        app.patch(&format!("/v3/entity-types/{id}"), json!({ "name": "Human", "description": "x" })).await,
        400,
    )
    .await;
    assert_eq!(body["details"]["field"], "name");
    let current = json(app.get(&format!("/v3/entity-types/{id}")).await).await;
    assert_eq!((current["name"].as_str(), current["description"].as_str()), (Some("Person"), Some("")));
}

#[tokio::test]
async fn a_patch_changes_only_the_fields_it_sends() {
    let app = spawn_app().await;
    let parent = app.create_type("Organisation", None).await;
    let id = json(
        app.post(
            "/v3/entity-types",
            json!({ "name": "Company", "description": "d1", "attributeSchema": { "a": 1 } }),
        )
        .await,
    )
    .await["typeID"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/v3/entity-types/{id}");
    let patched = json(app.patch(&path, json!({ "description": "d2" })).await).await;
    assert_eq!(patched["description"], "d2");
    assert_eq!(patched["attributeSchema"], json!({ "a": 1 }));
    let patched = json(app.patch(&path, json!({ "attributeSchema": { "b": 2 } })).await).await;
    assert_eq!(
        (patched["description"].as_str(), &patched["attributeSchema"]),
        (Some("d2"), &json!({ "b": 2 }))
    );
    let patched = json(app.patch(&path, json!({ "parentTypeID": parent })).await).await;
    assert_eq!(patched["parentTypeID"], parent.as_str());
    assert_eq!(patched["description"], "d2");
    let cleared = json(app.patch(&path, json!({ "parentTypeID": "" })).await).await;
    assert_eq!(cleared["parentTypeID"], "");
}

#[tokio::test]
async fn attribute_schema_must_be_an_object() {
    let app = spawn_app().await;
    let body = assert_error(
        app.post("/v3/entity-types", json!({ "name": "X", "attributeSchema": [1, 2] })).await,
        400,
    )
    .await;
    assert_eq!(body["details"]["field"], "attributeSchema");
    let id = app.create_type("Y", None).await;
    assert_error(
        app.patch(&format!("/v3/entity-types/{id}"), json!({ "attributeSchema": "text" })).await,
        400,
    )
    .await;
}

#[tokio::test]
async fn an_unknown_parent_is_a_404_on_create_and_on_patch() {
    let app = spawn_app().await;
    let missing = "ety_01NOSUCHTYPE0000000000000";
    assert_error(
        app.post("/v3/entity-types", json!({ "name": "Orphan", "parentTypeID": missing })).await,
        404,
    )
    .await;
    assert_eq!(json(app.get("/v3/entity-types").await).await["totalCount"], 0, "nothing was created");
    let id = app.create_type("Child", None).await;
    assert_error(app.patch(&format!("/v3/entity-types/{id}"), json!({ "parentTypeID": missing })).await, 404)
        .await;
    assert_error(app.patch(&format!("/v3/entity-types/{missing}"), json!({ "description": "x" })).await, 404)
        .await;
}

#[tokio::test]
async fn a_parent_that_would_make_a_cycle_is_a_422() {
    let app = spawn_app().await;
    let root = app.create_type("Root", None).await;
    let middle = app.create_type("Middle", Some(&root)).await;
    let leaf = app.create_type("Leaf", Some(&middle)).await;
    let body = assert_error(
        app.patch(&format!("/v3/entity-types/{root}"), json!({ "parentTypeID": leaf })).await,
        422,
    )
    .await;
    assert_eq!(body["details"]["field"], "parentTypeID");
    assert_error(app.patch(&format!("/v3/entity-types/{root}"), json!({ "parentTypeID": root })).await, 422)
        .await;
    assert_error(
        app.patch(&format!("/v3/entity-types/{middle}"), json!({ "parentTypeID": leaf })).await,
        422,
    )
    .await;
    // Moving a subtree elsewhere is fine.
    let other = app.create_type("Other", None).await;
    let moved =
        json(app.patch(&format!("/v3/entity-types/{middle}"), json!({ "parentTypeID": other })).await).await;
    assert_eq!(moved["parentTypeID"], other.as_str());
}

#[tokio::test]
async fn listing_by_parent_returns_direct_children_only() {
    let app = spawn_app().await;
    let root = app.create_type("Root", None).await;
    let a = app.create_type("A", Some(&root)).await;
    let b = app.create_type("B", Some(&root)).await;
    app.create_type("A1", Some(&a)).await;
    let body = json(app.get(&format!("/v3/entity-types?parentTypeId={root}")).await).await;
    let mut ids: Vec<&str> =
        body["entityTypes"].as_array().unwrap().iter().map(|t| t["typeID"].as_str().unwrap()).collect();
    ids.sort();
    let mut expected = vec![a.as_str(), b.as_str()];
    expected.sort();
    assert_eq!(ids, expected);
    assert_eq!(body["totalCount"], 2);
    let all = json(app.get("/v3/entity-types").await).await;
    assert_eq!(all["totalCount"], 4);
}

#[tokio::test]
async fn types_page_forward_and_backward_by_type_id() {
    let app = spawn_app().await;
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(app.create_type(&format!("T{i}"), None).await);
    }
    ids.sort();
    let first = json(app.get("/v3/entity-types?limit=2").await).await;
    let page: Vec<&str> =
        first["entityTypes"].as_array().unwrap().iter().map(|t| t["typeID"].as_str().unwrap()).collect();
    assert_eq!(page, vec![ids[0].as_str(), ids[1].as_str()]);
    let next = json(app.get(&format!("/v3/entity-types?limit=2&startingAfter={}", ids[1])).await).await;
    let page: Vec<&str> =
        next["entityTypes"].as_array().unwrap().iter().map(|t| t["typeID"].as_str().unwrap()).collect();
    assert_eq!(page, vec![ids[2].as_str(), ids[3].as_str()]);
    let back = json(app.get(&format!("/v3/entity-types?limit=2&endingBefore={}", ids[4])).await).await;
    let page: Vec<&str> =
        back["entityTypes"].as_array().unwrap().iter().map(|t| t["typeID"].as_str().unwrap()).collect();
    assert_eq!(page, vec![ids[2].as_str(), ids[3].as_str()]);
    assert_error(
        app.get(&format!("/v3/entity-types?startingAfter={}&endingBefore={}", ids[0], ids[1])).await,
        400,
    )
    .await;
    assert_error(app.get("/v3/entity-types?limit=201").await, 400).await;
}

#[tokio::test]
async fn a_type_with_a_live_child_cannot_be_deleted_until_the_child_is() {
    let app = spawn_app().await;
    let parent = app.create_type("Parent", None).await;
    let child = app.create_type("Child", Some(&parent)).await;
    assert_error(app.delete(&format!("/v3/entity-types/{parent}")).await, 409).await;
    assert_eq!(app.delete(&format!("/v3/entity-types/{child}")).await.status(), 204);
    assert_eq!(app.delete(&format!("/v3/entity-types/{parent}")).await.status(), 204);
    assert_error(app.get(&format!("/v3/entity-types/{parent}")).await, 404).await;
    assert_error(app.delete(&format!("/v3/entity-types/{parent}")).await, 404).await;
    let listed = json(app.get("/v3/entity-types").await).await;
    assert_eq!(listed["totalCount"], 0);
}

#[tokio::test]
async fn a_deleted_type_frees_its_name_and_cannot_become_a_parent() {
    let app = spawn_app().await;
    let old = app.create_type("Vendor", None).await;
    assert_eq!(app.delete(&format!("/v3/entity-types/{old}")).await.status(), 204);
    let new = app.create_type("Vendor", None).await;
    assert_ne!(old, new);
    assert_error(app.post("/v3/entity-types", json!({ "name": "Sub", "parentTypeID": old })).await, 404)
        .await;
}

#[tokio::test]
async fn a_type_change_on_the_entity_card_is_taken_back_when_the_reviewer_presses_z() {
    let app = spawn_app().await;
    let vendor = app.create_type("Vendor", None).await;
    let customer = app.create_type("Customer", None).await;
    let acme = app.entity("Acme Undo Corp", "Company").await;
    let assigned = app.patch(&format!("/v3/entities/{acme}"), json!({ "assignedTypeID": vendor })).await;
    assert_eq!(assigned.status(), 200);
    let plain = app.entity("Plain Undo Ltd", "Company").await;
    let cleared = app.patch(&format!("/v3/entities/{plain}"), json!({ "assignedTypeID": "" })).await;
    assert_eq!(cleared.status(), 200);

    let type_id = |entity: serde_json::Value| entity["typeID"].as_str().map(String::from);
    // From one assigned type to another, and from none: each goes back to what it was.
    for (entity, before) in [(&acme, Some(vendor.clone())), (&plain, None)] {
        let now = json(app.get(&format!("/v3/entities/{entity}")).await).await;
        assert_eq!(type_id(now), before, "the type before the card changes it");
        let args = [app.address.as_str(), app.api_key.as_str(), entity.as_str(), customer.as_str()];
        let Some(seen) = crate::helpers::browser_script("type_undo.mjs", &args).await else { return };
        assert_eq!(seen["changed"], "Type changed. Press z to undo.", "{seen}");
        assert!(seen["undone"].as_str().unwrap().starts_with("Undone: type change of"), "{seen}");
        assert_eq!(seen["errors"], json!([]), "{seen}");
        let now = json(app.get(&format!("/v3/entities/{entity}")).await).await;
        assert_eq!(type_id(now), before, "REST reads the type it had before");
    }
}

#[tokio::test]
async fn a_type_sent_from_the_entity_card_before_it_has_loaded_is_refused_saying_so() {
    let app = spawn_app().await;
    let customer = app.create_type("Customer", None).await;
    let acme = app.entity("Acme Early Corp", "Company").await;
    let before = json(app.get(&format!("/v3/entities/{acme}")).await).await["typeID"].clone();
    let args = [app.address.as_str(), app.api_key.as_str(), acme.as_str(), customer.as_str()];
    let Some(seen) = crate::helpers::browser_script("card_loading.mjs", &args).await else { return };
    // Sent before the card knew its entity, the form says so and changes nothing (it used to
    // throw a TypeError, leaving the reviewer no word of it).
    assert_eq!(seen["early"], "The entity is still loading; try again in a moment.", "{seen}");
    assert_eq!(seen["patches"], 0, "{seen}");
    assert_eq!(seen["errors"], json!([]), "{seen}");
    assert!(seen["facts"].as_str().unwrap().starts_with(acme.as_str()), "the card loads after: {seen}");
    let after = json(app.get(&format!("/v3/entities/{acme}")).await).await["typeID"].clone();
    assert_eq!(after, before, "the type is unchanged");
}
