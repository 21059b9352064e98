//! An entity's lists over GraphQL (synonyms, timeline, per entity of a page) as REST pages them.

use super::{assert_same, data, error_code, gql};
use crate::helpers::{json, spawn_app};
use serde_json::{json, Value};

#[tokio::test]
async fn an_entitys_synonyms_list_as_rest_lists_them() {
    let app = spawn_app().await;
    let a = app.entity("Synonym Source Inc", "Thing").await;
    let path = format!("/v3/entities/{a}/synonyms");
    assert_eq!(app.post(&path, json!({ "text": "SSI" })).await.status(), 200);
    assert_eq!(app.post(&path, json!({ "text": "Source Co", "source": "sme_approved" })).await.status(), 200);
    let query = "query($id: ID!) { entitySynonyms(id: $id) { synonymID text normalizedText source locale createdAt } }";
    let got = data(&app, query, json!({ "id": a })).await;
    let rest = json(app.get(&path).await).await;
    let (g, r) = (got["entitySynonyms"].as_array().unwrap(), rest["synonyms"].as_array().unwrap());
    assert_eq!(g.len(), 2, "{got}");
    assert_eq!(g.len(), r.len());
    for (g, r) in g.iter().zip(r) {
        assert_same(g, r);
    }
    let missing = gql(&app, query, json!({ "id": "ent_01J00000000000000000000000" })).await;
    assert_eq!(error_code(&missing), 404, "{missing}");
}

#[tokio::test]
async fn a_page_of_entities_lists_each_ones_synonyms_as_rest_does_in_a_few_statements() {
    let app = spawn_app().await;
    let rows: Vec<Value> =
        (0..12).map(|i| json!({ "canonical": format!("Synonym Page {i:02}"), "type": "Thing" })).collect();
    let seeded = app.seed(Value::Array(rows)).await;
    let ids: Vec<String> = seeded["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["entityID"].as_str().unwrap().into())
        .collect();
    for (i, id) in ids.iter().enumerate().skip(1) {
        let path = format!("/v3/entities/{id}/synonyms");
        assert_eq!(app.post(&path, json!({ "text": format!("SP{i:02}") })).await.status(), 200);
        if i % 2 == 0 {
            let body = json!({ "text": format!("Page Syn {i:02}"), "source": "sme_approved" });
            assert_eq!(app.post(&path, body).await.status(), 200);
        }
    }
    // A merge moves the merged entity's names to the survivor: both lists say so.
    assert_eq!(
        app.post(&format!("/v3/entities/{}/merge", ids[1]), json!({ "entityIDs": [ids[2]] })).await.status(),
        200
    );

    let query = "{ entities(first: 20) { edges { node { entityID synonyms(first: 10) { synonymID text normalizedText \
        source locale createdAt } } } } }";
    let graph = &app.app().state.graph;
    let page = "{ entities(first: 20) { edges { node { entityID } } } }";
    data(&app, page, json!({})).await; // the first page read does one-time work
    let before = graph.queries_run();
    data(&app, page, json!({})).await;
    let page_alone = graph.queries_run() - before;
    let before = graph.queries_run();
    let got = data(&app, query, json!({})).await;
    let used = graph.queries_run() - before;
    println!("graph queries for the page alone {page_alone}, with its synonyms {used}");
    let edges = got["entities"]["edges"].as_array().unwrap();
    assert_eq!(edges.len(), 11, "the merged-away entity is not listed: {got}");
    let mut listed = 0;
    for edge in edges {
        let node = &edge["node"];
        let rest =
            json(app.get(&format!("/v3/entities/{}/synonyms", node["entityID"].as_str().unwrap())).await)
                .await;
        let (g, r) = (node["synonyms"].as_array().unwrap(), rest["synonyms"].as_array().unwrap());
        assert_eq!(g.len(), r.len(), "{node} against {rest}");
        for (g, r) in g.iter().zip(r) {
            assert_same(g, r);
        }
        listed += g.len();
    }
    assert!(listed >= 16, "every added synonym listed once: {listed}");
    // One statement more for the page's synonyms; a few more when a loaded machine splits the
    // loader's batch window (see the mentions test); one each would cost 11 more.
    assert!(used < page_alone + 11, "{used} graph queries against {page_alone}: synonyms load per entity");

    // `first` keeps each entity's oldest; out of range is refused naming the field.
    let survivor = format!("{{ entity(id: \"{}\") {{ synonyms(first: 1) {{ text }} }} }}", ids[1]);
    let first = data(&app, &survivor, json!({})).await;
    let rest = json(app.get(&format!("/v3/entities/{}/synonyms", ids[1])).await).await;
    assert_eq!(rest["synonyms"].as_array().unwrap().len(), 3, "SP01, and SP02 and Page Syn 02 moved: {rest}");
    assert_eq!(first["entity"]["synonyms"], json!([{ "text": rest["synonyms"][0]["text"] }]), "{first}");
    let refused =
        gql(&app, "{ entities(first: 1) { edges { node { synonyms(first: 501) { text } } } } }", json!({}))
            .await;
    assert_eq!(error_code(&refused), 400, "{refused}");
}

#[tokio::test]
async fn a_page_of_entities_shows_each_ones_first_timeline_page_as_rest_does() {
    let app = spawn_app().await;
    let a = app.entity("Page Timeline One", "Thing").await;
    let b = app.entity("Page Timeline Two", "Thing").await;
    let c = app.entity("Page Timeline Three", "Thing").await;
    let quiet = app.entity("Page Timeline Quiet", "Thing").await;
    assert_eq!(app.patch(&format!("/v3/entities/{a}"), json!({ "status": "approved" })).await.status(), 200);
    assert_eq!(app.post(&format!("/v3/entities/{a}/synonyms"), json!({ "text": "PT1" })).await.status(), 200);
    assert_eq!(app.post(&format!("/v3/entities/{a}/merge"), json!({ "entityIDs": [b] })).await.status(), 200);
    assert_eq!(app.post(&format!("/v3/entities/{c}/synonyms"), json!({ "text": "PT3" })).await.status(), 200);

    let query = "{ entities(first: 20) { edges { node { entityID timeline(first: 2) { items { kind at actor \
        details } hasMore nextCursor } } } } }";
    let got = data(&app, query, json!({})).await;
    let nodes: Vec<&Value> =
        got["entities"]["edges"].as_array().unwrap().iter().map(|e| &e["node"]).collect();
    assert_eq!(nodes.len(), 3, "a, c and the quiet one (b was merged away): {got}");
    for node in &nodes {
        let id = node["entityID"].as_str().unwrap();
        let rest = json(app.get(&format!("/v3/entities/{id}/timeline?limit=2")).await).await;
        assert_eq!(node["timeline"]["items"], rest["items"], "{id}");
        assert_eq!(node["timeline"]["hasMore"], rest["hasMore"], "{id}");
        assert_eq!(
            node["timeline"]["nextCursor"],
            rest.get("nextCursor").cloned().unwrap_or(Value::Null),
            "{id}"
        );
    }
    let of = |id: &str| nodes.iter().find(|n| n["entityID"] == id).unwrap()["timeline"].clone();
    let kinds = |page: Value| -> Vec<String> {
        page["items"].as_array().unwrap().iter().map(|i| i["kind"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(kinds(of(&a)), ["merged", "synonym_added"], "newest first, cut at 2");
    assert_eq!(of(&a)["hasMore"], true);
    assert_eq!(kinds(of(&c)), ["synonym_added"]);
    assert_eq!(of(&quiet), json!({ "items": [], "hasMore": false, "nextCursor": null }));
    let refused = gql(
        &app,
        "{ entities(first: 1) { edges { node { timeline(first: 201) { hasMore } } } } }",
        json!({}),
    )
    .await;
    assert_eq!(error_code(&refused), 400, "{refused}");

    // More entities than one statement reads (200): the record store's entries of each, in
    // statements of 200, the entity past the first 200 included.
    let mut ids: Vec<String> = (0..250).map(|i| format!("ent_none{i:03}")).collect();
    ids.push(c.clone());
    ids.insert(0, a.clone());
    let records = &app.app().state.records;
    let found = records.audit_of_entities(&app.account_id, "sandbox", &ids, 5).await.expect("entries");
    let kinds_of =
        |id: &str| found.iter().filter(|e| e.entity_id == id).map(|e| e.kind.clone()).collect::<Vec<_>>();
    assert_eq!(kinds_of(&a), ["synonym_added", "status_changed"], "merges are the graph's, not here");
    assert_eq!(kinds_of(&c), ["synonym_added"], "the entity in the second statement");
    assert_eq!(found.len(), 3);
}

#[tokio::test]
async fn an_entitys_timeline_pages_as_rest_pages_it() {
    let app = spawn_app().await;
    let a = app.entity("Timeline One", "Thing").await;
    let b = app.entity("Timeline Two", "Thing").await;
    assert_eq!(app.patch(&format!("/v3/entities/{a}"), json!({ "status": "approved" })).await.status(), 200);
    let synonym = app.post(&format!("/v3/entities/{a}/synonyms"), json!({ "text": "T1" })).await;
    assert_eq!(synonym.status(), 200);
    assert_eq!(app.post(&format!("/v3/entities/{a}/merge"), json!({ "entityIDs": [b] })).await.status(), 200);

    let query = "query($id: ID!, $cursor: String, $limit: Int!) { entityTimeline(id: $id, cursor: $cursor, \
        limit: $limit) { items { kind at actor details } hasMore nextCursor } }";
    let rest = json(app.get(&format!("/v3/entities/{a}/timeline")).await).await;
    let whole = data(&app, query, json!({ "id": a, "limit": 50 })).await["entityTimeline"].clone();
    assert_eq!(whole["items"], rest["items"], "every item as REST lists it");
    let kinds: Vec<&str> =
        whole["items"].as_array().unwrap().iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["merged", "synonym_added", "status_changed"], "newest first");
    assert_eq!(whole["hasMore"], false);

    // Page by page with the cursor: the same items, each once.
    let (mut paged, mut cursor) = (Vec::new(), Value::Null);
    loop {
        let page = data(&app, query, json!({ "id": a, "cursor": cursor, "limit": 1 })).await
            ["entityTimeline"]
            .clone();
        paged.extend(page["items"].as_array().unwrap().iter().cloned());
        if page["hasMore"] == false {
            break;
        }
        cursor = page["nextCursor"].clone();
        assert!(cursor.is_string(), "a page with more has a cursor: {page}");
    }
    assert_eq!(Value::Array(paged), rest["items"]);

    let bad = gql(&app, query, json!({ "id": a, "cursor": "nonsense", "limit": 50 })).await;
    assert_eq!(error_code(&bad), 400, "a bad cursor is REST's 400: {bad}");
    let too_many = gql(&app, query, json!({ "id": a, "limit": 500 })).await;
    assert_eq!(error_code(&too_many), 400, "{too_many}");
}
