//! Mentions, relations, the knowledge-graph view, and merges seen through every read.

use crate::helpers::{assert_error, json, spawn_app, spawn_app_with, strings, TestApp};
use canon::jobs::Handlers;
use serde_json::{json, Value};

async fn relate(app: &TestApp, source: &str, target: &str, relation_type: &str) -> Value {
    let response = app
        .post(
            "/v3/relations",
            json!({ "sourceEntityID": source, "targetEntityID": target, "relationType": relation_type }),
        )
        .await;
    assert_eq!(response.status(), 200);
    json(response).await
}

async fn mention(app: &TestApp, entity: &str, surface: &str, reference: &str) -> Value {
    let response = app
        .post("/v3/mentions", json!({ "entityID": entity, "surface": surface, "referenceID": reference, "page": 1, "sectionLabel": "intro" }))
        .await;
    assert_eq!(response.status(), 200);
    json(response).await
}

#[tokio::test]
async fn mentions_count_and_the_first_two_are_previewed() {
    let app = spawn_app().await;
    let id = app.entity("Wayne Enterprises", "Company").await;
    let first = mention(&app, &id, "Wayne Ent.", "doc-1").await;
    assert!(first["mentionID"].as_str().unwrap().starts_with("men_"));
    assert_eq!((first["page"].as_i64(), first["sectionLabel"].as_str()), (Some(1), Some("intro")));
    let second = mention(&app, &id, "Wayne Enterprises", "doc-2").await;
    mention(&app, &id, "WE", "doc-3").await;
    let entity = json(app.get(&format!("/v3/entities/{id}")).await).await;
    assert_eq!(entity["mentionCount"], 3);
    assert_eq!(
        strings(&entity["previewMentions"], "mentionID"),
        vec![first["mentionID"].as_str().unwrap(), second["mentionID"].as_str().unwrap()]
    );
    assert!(entity["surfaceForms"].as_array().unwrap().iter().any(|f| f == "WE"));
    assert_error(
        app.post("/v3/mentions", json!({ "entityID": "ent_01NOSUCH000000000000000000", "surface": "x" }))
            .await,
        404,
    )
    .await;
    assert_error(app.post("/v3/mentions", json!({ "entityID": id, "surface": "  " })).await, 400).await;
}

#[tokio::test]
async fn an_entity_with_thousands_of_names_and_hundreds_of_mentions_is_read_whole() {
    // Its record is read in time linear in its names and mentions: the names are unwound, the
    // first two mentions found by their IDs (not every mention sorted into a list). The key's
    // burst is raised for the 300 mentions written one after another.
    let app = spawn_app_with(Handlers::default(), |config| config.rate_limit_burst = 1_000).await;
    let id = app.entity("Hub", "Company").await;
    for batch in 0..3 {
        let synonyms: Vec<String> = (0..1_000).map(|i| format!("Hub alias {batch}-{i}")).collect();
        let added = app.patch(&format!("/v3/entities/{id}"), json!({ "addSynonyms": synonyms })).await;
        assert_eq!(added.status(), 200);
    }
    let mut ids = Vec::new();
    for n in 0..300 {
        ids.push(
            mention(&app, &id, "Hub", &format!("doc-{n}")).await["mentionID"].as_str().unwrap().to_string(),
        );
    }
    ids.sort();
    let entity = json(app.get(&format!("/v3/entities/{id}")).await).await;
    assert_eq!(entity["mentionCount"], 300);
    assert_eq!(strings(&entity["previewMentions"], "mentionID"), ids[..2].to_vec());
    assert_eq!(entity["previewMentions"][1]["surface"], "Hub");
    let forms = entity["surfaceForms"].as_array().unwrap();
    assert_eq!(forms.len(), 1_000, "the name and its 3,000 synonyms, cut to the thousand a record lists");
    // An entity with no mention and no other name still reads.
    let bare = app.entity("Bare", "Company").await;
    let bare = json(app.get(&format!("/v3/entities/{bare}")).await).await;
    assert_eq!((&bare["mentionCount"], &bare["previewMentions"]), (&json!(0), &json!([])));
}

#[tokio::test]
async fn relations_are_read_by_direction_type_and_page() {
    let app = spawn_app().await;
    let hub = app.entity("Hub", "Company").await;
    let a = app.entity("Spoke A", "Company").await;
    let b = app.entity("Spoke B", "Company").await;
    let r1 = relate(&app, &hub, &a, "supplies").await;
    relate(&app, &hub, &b, "owns").await;
    relate(&app, &a, &hub, "supplies").await;
    let again = relate(&app, &hub, &a, "supplies").await;
    assert_eq!(
        (again["relationID"].clone(), again["mentionCount"].as_i64()),
        (r1["relationID"].clone(), Some(2))
    );

    let both = json(app.get(&format!("/v3/entities/{hub}/relations")).await).await;
    assert_eq!(
        (both["outbound"].as_array().unwrap().len(), both["inbound"].as_array().unwrap().len()),
        (2, 1)
    );
    assert_eq!(both["inbound"][0]["sourceEntity"]["id"], a.as_str());
    assert_eq!(both["inbound"][0]["sourceEntity"]["depth"], 1);
    let out =
        json(app.get(&format!("/v3/entities/{hub}/relations?direction=outbound&relationType=owns")).await)
            .await;
    assert_eq!(out["outbound"].as_array().unwrap().len(), 1);
    assert_eq!(out["outbound"][0]["targetEntity"]["canonical"], "Spoke B");
    assert_eq!(out["inbound"].as_array().unwrap().len(), 0);
    let inbound = json(app.get(&format!("/v3/entities/{hub}/relations?direction=inbound")).await).await;
    assert_eq!(inbound["outbound"].as_array().unwrap().len(), 0);

    let mut seen = Vec::new();
    let mut query = format!("/v3/entities/{hub}/relations?limit=1");
    loop {
        let page = json(app.get(&query).await).await;
        for side in ["outbound", "inbound"] {
            seen.extend(strings(&page[side], "relationID"));
        }
        match page["nextCursor"].as_str() {
            Some(cursor) => query = format!("/v3/entities/{hub}/relations?limit=1&cursor={cursor}"),
            None => break,
        }
    }
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!((seen.len(), sorted), (3, seen.clone()), "three edges, each once, in ID order");
    assert_error(app.get(&format!("/v3/entities/{hub}/relations?direction=sideways")).await, 400).await;
    assert_error(app.get("/v3/entities/ent_01NOSUCH000000000000000000/relations").await, 404).await;
}

#[tokio::test]
async fn relations_stay_inside_one_bucket() {
    let app = spawn_app().await;
    let bucket = app.create_bucket("Elsewhere").await;
    let here = app.entity("Here", "Company").await;
    let body = json(
        app.post(
            "/v3/entities/bulk",
            json!({ "entities": [{ "canonical": "There", "type": "Company" }], "bucket": bucket }),
        )
        .await,
    )
    .await;
    let there = body["results"][0]["entityID"].as_str().unwrap();
    let response = app
        .post(
            "/v3/relations",
            json!({ "sourceEntityID": here, "targetEntityID": there, "relationType": "x" }),
        )
        .await;
    assert_error(response, 422).await;
}

#[tokio::test]
async fn the_knowledge_graph_filters_by_type_search_centre_and_pages_its_edges() {
    let app = spawn_app().await;
    let acme = app.entity("Acme", "Company").await;
    let globex = app.entity("Globex", "Company").await;
    let alice = app.entity("Alice", "Person").await;
    let bob = app.entity("Bob", "Person").await;
    let far = app.entity("Far Away", "Company").await;
    relate(&app, &alice, &acme, "works_at").await;
    relate(&app, &acme, &globex, "competes_with").await;
    relate(&app, &bob, &globex, "works_at").await;
    relate(&app, &globex, &far, "supplies").await;

    let all = json(app.get("/v3/knowledge-graph").await).await;
    assert_eq!(all["edges"].as_array().unwrap().len(), 4);
    assert_eq!(all["nodes"].as_array().unwrap().len(), 5, "distinct endpoints");

    let company = json(app.get("/v3/entity-types").await).await["entityTypes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Company")
        .unwrap()["typeID"]
        .as_str()
        .unwrap()
        .to_string();
    let companies = json(app.get(&format!("/v3/knowledge-graph?type={company}")).await).await;
    let mut types: Vec<&str> =
        companies["edges"].as_array().unwrap().iter().map(|e| e["relationType"].as_str().unwrap()).collect();
    types.sort();
    assert_eq!(types, vec!["competes_with", "supplies"], "an edge needs both endpoints of the type");
    let brackets = json(app.get(&format!("/v3/knowledge-graph?type[]={company}")).await).await;
    assert_eq!(brackets["edges"], companies["edges"]);

    let search = json(app.get("/v3/knowledge-graph?search=GLOB").await).await;
    assert_eq!(search["edges"].as_array().unwrap().len(), 0, "both endpoints must match the search");
    app.post(&format!("/v3/entities/{acme}/synonyms"), json!({ "text": "Glob-Acme" })).await;
    let search = json(app.get("/v3/knowledge-graph?search=glob").await).await;
    assert_eq!(
        strings(&search["edges"], "relationType"),
        vec!["competes_with"],
        "surface forms are searched too"
    );

    let centred = json(app.get(&format!("/v3/knowledge-graph?nodeID={alice}&maxDepth=2")).await).await;
    let depth: std::collections::HashMap<String, i64> = centred["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap().to_string(), n["depth"].as_i64().unwrap()))
        .collect();
    assert_eq!(depth.get(&alice), Some(&0));
    assert_eq!(depth.get(&acme), Some(&1));
    assert_eq!(depth.get(&globex), Some(&2));
    assert!(!depth.contains_key(&far) && !depth.contains_key(&bob), "beyond two hops: {depth:?}");
    assert_error(app.get(&format!("/v3/knowledge-graph?nodeID={alice}&maxDepth=9")).await, 400).await;

    let mut walked = Vec::new();
    let mut query = "/v3/knowledge-graph?limit=3".to_string();
    loop {
        let page = json(app.get(&query).await).await;
        let edges = strings(&page["edges"], "relationID");
        assert!(edges.len() <= 3);
        let endpoints: std::collections::HashSet<&str> = page["edges"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|e| [e["sourceId"].as_str().unwrap(), e["targetId"].as_str().unwrap()])
            .collect();
        assert_eq!(
            endpoints.len(),
            page["nodes"].as_array().unwrap().len(),
            "nodes are this page's endpoints"
        );
        walked.extend(edges);
        match page["nextCursor"].as_str() {
            Some(cursor) => query = format!("/v3/knowledge-graph?limit=3&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(walked, strings(&all["edges"], "relationID"));
    let future = json(app.get("/v3/knowledge-graph?since=2999-01-01T00:00:00Z").await).await;
    assert_eq!(future["edges"].as_array().unwrap().len(), 0);
    assert_error(app.get("/v3/knowledge-graph?since=yesterday").await, 400).await;
}

#[tokio::test]
async fn a_merged_away_id_reads_as_its_survivor_until_the_merge_is_undone() {
    let app = spawn_app().await;
    let survivor = app.entity("Cyberdyne Systems", "Company").await;
    let merged = app.entity("Cyberdyne Sys", "Company").await;
    let partner = app.entity("Skynet", "Product").await;
    mention(&app, &survivor, "Cyberdyne Systems", "doc-s").await;
    mention(&app, &merged, "CDS", "doc-m").await;
    relate(&app, &merged, &partner, "makes").await;
    relate(&app, &partner, &merged, "supplies").await;
    relate(&app, &partner, &survivor, "made_by").await;

    let response =
        app.post(&format!("/v3/entities/{survivor}/merge"), json!({ "entityIDs": [merged] })).await;
    assert_eq!(response.status(), 200);
    let result = json(response).await;
    let record = &result["merges"][0];
    assert_eq!(
        (record["keysMoved"].as_i64(), record["mentionsMoved"].as_i64(), record["relationsMoved"].as_i64()),
        (Some(2), Some(1), Some(2)),
        "its name and the mention's surface form; one edge out, one in"
    );
    assert!(record["mergedBy"].as_str().unwrap().starts_with("key_"));
    let merge_id = record["mergeID"].as_str().unwrap().to_string();

    let read = json(app.get(&format!("/v3/entities/{merged}")).await).await;
    assert_eq!(read["entityID"], survivor.as_str());
    assert_eq!(read["mentionCount"], 2);
    assert!(read["surfaceForms"].as_array().unwrap().iter().any(|f| f == "CDS"));
    let relations = json(app.get(&format!("/v3/entities/{merged}/relations?direction=outbound")).await).await;
    assert_eq!(relations["outbound"][0]["targetEntity"]["id"], partner.as_str());
    let graph = json(app.get("/v3/knowledge-graph").await).await;
    let nodes = strings(&graph["nodes"], "id");
    assert!(!nodes.contains(&merged) && nodes.contains(&survivor));
    let queue = json(app.get("/v3/review-queue").await).await;
    assert!(!strings(&queue["entities"], "entityID").contains(&merged), "merged entities leave the queue");
    let with_merged = json(app.get("/v3/review-queue?status=merged").await).await;
    assert_eq!(strings(&with_merged["entities"], "entityID"), vec![merged.clone()]);
    let relation = app
        .post(
            "/v3/relations",
            json!({ "sourceEntityID": merged, "targetEntityID": partner, "relationType": "sells" }),
        )
        .await;
    assert_eq!(json(relation).await["sourceEntityID"], survivor.as_str(), "writes resolve too");
    // The seeding resolver finds the survivor by the merged entity's name.
    let seeded = app.seed(json!([{ "canonical": "Cyberdyne Sys", "type": "Company" }])).await;
    assert_eq!(seeded["results"][0]["entityID"], survivor.as_str());

    assert_error(
        app.post(&format!("/v3/entities/{survivor}/merge"), json!({ "entityIDs": [merged] })).await,
        422,
    )
    .await;
    let undone = app.post(&format!("/v3/merges/{merge_id}/undo"), json!({})).await;
    assert_eq!(undone.status(), 200);
    let restored = json(undone).await;
    assert_eq!(
        (restored["entityID"].as_str(), restored["status"].as_str()),
        (Some(merged.as_str()), Some("proposed"))
    );
    assert_eq!(restored["mentionCount"], 1);
    assert_eq!(restored["previewMentions"][0]["surface"], "CDS");
    let back = json(app.get(&format!("/v3/entities/{survivor}")).await).await;
    assert_eq!(back["mentionCount"], 1);
    assert!(!back["surfaceForms"].as_array().unwrap().iter().any(|f| f == "CDS"));
    let relations = json(app.get(&format!("/v3/entities/{merged}/relations")).await).await;
    assert_eq!(strings(&relations["outbound"], "relationID").len(), 1, "{relations}");
    assert_eq!(relations["outbound"][0]["relationType"], "makes");
    assert_eq!(strings(&relations["inbound"], "relationID").len(), 1, "{relations}");
    assert_eq!(relations["inbound"][0]["relationType"], "supplies");
    assert_error(app.post(&format!("/v3/merges/{merge_id}/undo"), json!({})).await, 409).await;
    let history = json(app.get(&format!("/v3/entities/{merged}/merges")).await).await;
    assert!(history["merges"][0]["undoneAt"].is_string());
}

#[tokio::test]
async fn merges_chain_and_must_be_undone_latest_first() {
    let app = spawn_app().await;
    let a = app.entity("Entity A", "Company").await;
    let b = app.entity("Entity B", "Company").await;
    let c = app.entity("Entity C", "Company").await;
    let first = json(app.post(&format!("/v3/entities/{b}/merge"), json!({ "entityIDs": [a] })).await).await;
    let second = json(app.post(&format!("/v3/entities/{c}/merge"), json!({ "entityIDs": [b] })).await).await;
    assert_eq!(json(app.get(&format!("/v3/entities/{a}")).await).await["entityID"], c.as_str(), "A → B → C");
    let first_id = first["merges"][0]["mergeID"].as_str().unwrap();
    let second_id = second["merges"][0]["mergeID"].as_str().unwrap();
    // B survived the first merge and was merged in the second: its history has both, newest first.
    let history = json(app.get(&format!("/v3/entities/{b}/merges")).await).await;
    assert_eq!(strings(&history["merges"], "mergeID"), vec![second_id, first_id], "{history}");
    assert_error(app.post(&format!("/v3/merges/{first_id}/undo"), json!({})).await, 409).await;
    assert_eq!(app.post(&format!("/v3/merges/{second_id}/undo"), json!({})).await.status(), 200);
    // Live again, B answers GraphQL's batched history with both (the second one undone).
    let graphql = json(
        app.post(
            "/graphql",
            json!({ "query": format!("{{ entity(id: \"{b}\") {{ merges {{ mergeID }} }} }}") }),
        )
        .await,
    )
    .await;
    assert_eq!(
        strings(&graphql["data"]["entity"]["merges"], "mergeID"),
        vec![second_id, first_id],
        "{graphql}"
    );
    assert_eq!(app.post(&format!("/v3/merges/{first_id}/undo"), json!({})).await.status(), 200);
    for id in [&a, &b, &c] {
        assert_eq!(json(app.get(&format!("/v3/entities/{id}")).await).await["entityID"], id.as_str());
    }
}
