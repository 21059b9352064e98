//! GraphQL at /graphql: every field answers what its REST endpoint answers for the same data,
//! the same auth, curation mutations, errors coded as REST's statuses, no N+1; the explorer and
//! the committed SDL (`explorer`), reviewer operations (`reviewers`), an entity's lists
//! (`entity_lists`).

mod entity_lists;
mod explorer;
mod reviewers;

use crate::helpers::{json, spawn_app, spawn_app_with, TestApp};
use canon::jobs::Handlers;
use reqwest::Method;
use serde_json::{json, Value};

const ENTITY_FIELDS: &str = "entityID canonical type typeID description mentionCount surfaceForms status \
    createdAt updatedAt validatedAt validatedByUserID bucketID attributes \
    previewMentions { mentionID entityID referenceID transformationID page sectionLabel surface createdAt }";

/// Runs a GraphQL request with the app's API key; asserts HTTP 200 and returns the body.
pub(super) async fn gql(app: &TestApp, query: &str, variables: Value) -> Value {
    let response = app.post("/graphql", json!({ "query": query, "variables": variables })).await;
    assert_eq!(response.status(), 200);
    json(response).await
}

/// Runs a request expected to succeed and returns its `data`.
pub(super) async fn data(app: &TestApp, query: &str, variables: Value) -> Value {
    let body = gql(app, query, variables).await;
    assert!(body.get("errors").is_none(), "no errors in {body}");
    body["data"].clone()
}

/// The first error's `extensions.code`.
pub(super) fn error_code(body: &Value) -> Value {
    body["errors"][0]["extensions"]["code"].clone()
}

/// Asserts every field GraphQL returned equals REST's field of that name (REST omits absent
/// optional fields; GraphQL gives null).
pub(super) fn assert_same(graphql: &Value, rest: &Value) {
    let fields = graphql.as_object().expect("an object");
    for (name, value) in fields {
        let expected = rest.get(name).cloned().unwrap_or(Value::Null);
        assert_eq!(value, &expected, "field {name}: GraphQL {graphql} vs REST {rest}");
    }
}

pub(super) async fn relate(app: &TestApp, source: &str, target: &str, relation_type: &str) {
    let body = json!({ "sourceEntityID": source, "targetEntityID": target, "relationType": relation_type });
    assert_eq!(app.post("/v3/relations", body).await.status(), 200);
}

pub(super) async fn mention(app: &TestApp, entity: &str, surface: &str) {
    let body = json!({ "entityID": entity, "surface": surface, "referenceID": "doc-1", "page": 2 });
    assert_eq!(app.post("/v3/mentions", body).await.status(), 200);
}

#[tokio::test]
async fn an_entity_reads_as_rest_reads_it_and_a_merged_away_id_as_its_survivor() {
    let app = spawn_app().await;
    let acme = app.entity("Acme Corp", "Company").await;
    let other = app.entity("Acme Corporation Holdings", "Company").await;
    mention(&app, &acme, "ACME").await;
    mention(&app, &acme, "Acme Corp.").await;
    mention(&app, &acme, "the Acme company").await;
    let query = format!("query($id: ID!) {{ entity(id: $id) {{ {ENTITY_FIELDS} }} }}");
    let got = data(&app, &query, json!({ "id": acme })).await;
    let rest = json(app.get(&format!("/v3/entities/{acme}")).await).await;
    assert_same(&got["entity"], &rest);
    assert_eq!(got["entity"]["previewMentions"].as_array().unwrap().len(), 2);

    let merged = app.post(&format!("/v3/entities/{acme}/merge"), json!({ "entityIDs": [other] })).await;
    assert_eq!(merged.status(), 200);
    let got = data(&app, &query, json!({ "id": other })).await;
    assert_eq!(got["entity"]["entityID"], acme.as_str(), "the survivor answers for the merged-away ID");
    assert_same(&got["entity"], &json(app.get(&format!("/v3/entities/{other}")).await).await);
}

#[tokio::test]
async fn the_review_queue_and_the_entities_connection_page_as_rest_does() {
    let app = spawn_app().await;
    let rows: Vec<Value> =
        (0..5).map(|i| json!({ "canonical": format!("Queue Entity {i}"), "type": "Thing" })).collect();
    app.seed(Value::Array(rows)).await;
    let approved = app.entity("Approved Thing", "Thing").await;
    assert_eq!(
        app.patch(&format!("/v3/entities/{approved}"), json!({ "status": "approved" })).await.status(),
        200
    );

    let query = format!(
        "query($cursor: String) {{ reviewQueue(limit: 2, cursor: $cursor) {{ hasMore nextCursor entities {{ {ENTITY_FIELDS} }} }} }}"
    );
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let got = data(&app, &query, json!({ "cursor": cursor })).await["reviewQueue"].clone();
        let path = match &cursor {
            Some(c) => format!("/v3/review-queue?limit=2&cursor={c}"),
            None => "/v3/review-queue?limit=2".to_string(),
        };
        let rest = json(app.get(&path).await).await;
        assert_eq!(got["hasMore"], rest["hasMore"]);
        assert_eq!(got["nextCursor"], rest.get("nextCursor").cloned().unwrap_or(Value::Null));
        let (g, r) = (got["entities"].as_array().unwrap(), rest["entities"].as_array().unwrap());
        assert_eq!(g.len(), r.len());
        for (g, r) in g.iter().zip(r) {
            assert_same(g, r);
        }
        pages += 1;
        match got["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(pages, 3, "5 queued entities in pages of 2");

    // The connection lists every live status by default, and filters like the queue.
    let connection = "query($after: String, $filter: EntityFilter) { entities(first: 4, after: $after, filter: $filter) { \
        pageInfo { hasNextPage hasPreviousPage endCursor } edges { cursor node { entityID status } } } }";
    let first = data(&app, connection, json!({})).await["entities"].clone();
    assert_eq!(first["edges"].as_array().unwrap().len(), 4);
    assert_eq!(first["pageInfo"]["hasNextPage"], true);
    assert_eq!(first["pageInfo"]["hasPreviousPage"], false);
    let after = first["pageInfo"]["endCursor"].clone();
    let second = data(&app, connection, json!({ "after": after })).await["entities"].clone();
    assert_eq!(second["edges"].as_array().unwrap().len(), 2);
    assert_eq!(second["pageInfo"]["hasNextPage"], false);
    let all: Vec<Value> = first["edges"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["edges"].as_array().unwrap())
        .map(|e| e["node"]["entityID"].clone())
        .collect();
    assert!(all.contains(&json!(approved)));
    let approved_only = data(&app, connection, json!({ "filter": { "status": ["approved"] } })).await
        ["entities"]["edges"]
        .clone();
    assert_eq!(approved_only.as_array().unwrap().len(), 1);
    assert_eq!(approved_only[0]["node"]["entityID"], approved.as_str());
    assert_eq!(approved_only[0]["cursor"], approved.as_str(), "cursors are entity IDs");
}

#[tokio::test]
async fn relations_neighbors_and_the_knowledge_graph_match_rest() {
    let app = spawn_app().await;
    let hub = app.entity("Hub Industries", "Company").await;
    let a = app.entity("Spoke Alpha", "Company").await;
    let b = app.entity("Spoke Beta", "Company").await;
    let c = app.entity("Far Gamma", "Company").await;
    relate(&app, &hub, &a, "supplies").await;
    relate(&app, &b, &hub, "owns").await;
    relate(&app, &hub, &hub, "audits").await;
    relate(&app, &a, &c, "supplies").await;

    let query = "query($id: ID!, $dir: RelationDirection!, $type: String, $after: String) { entity(id: $id) { \
        relations(direction: $dir, relationType: $type, first: 2, after: $after) { pageInfo { hasNextPage } \
        edges { cursor node { relationID relationType mentionCount firstSeenAt direction \
        sourceEntity { id canonical depth type } targetEntity { id canonical depth type } other { entityID } } } } } }";
    for (dir, rest_dir) in [("BOTH", "both"), ("INBOUND", "inbound"), ("OUTBOUND", "outbound")] {
        let mut after: Option<String> = None;
        loop {
            let got = data(&app, query, json!({ "id": hub, "dir": dir, "after": after })).await;
            let connection = &got["entity"]["relations"];
            let path = match &after {
                Some(c) => format!("/v3/entities/{hub}/relations?direction={rest_dir}&limit=2&cursor={c}"),
                None => format!("/v3/entities/{hub}/relations?direction={rest_dir}&limit=2"),
            };
            let rest = json(app.get(&path).await).await;
            let mut expected: Vec<Value> = Vec::new();
            for (side, direction) in [("outbound", "OUTBOUND"), ("inbound", "INBOUND")] {
                for edge in rest[side].as_array().unwrap() {
                    let mut edge = edge.clone();
                    let object = edge.as_object_mut().unwrap();
                    object.insert("direction".into(), json!(direction));
                    object.entry("sourceEntity").or_insert(Value::Null);
                    object.entry("targetEntity").or_insert(Value::Null);
                    expected.push(edge);
                }
            }
            expected.sort_by_key(|e| e["relationID"].as_str().unwrap().to_string());
            let got_edges: Vec<Value> = connection["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    assert_eq!(e["cursor"], e["node"]["relationID"]);
                    let far =
                        e["node"]["targetEntity"]["id"].as_str().or(e["node"]["sourceEntity"]["id"].as_str());
                    assert_eq!(e["node"]["other"]["entityID"].as_str(), far);
                    let mut node = e["node"].clone();
                    node.as_object_mut().unwrap().remove("other");
                    node
                })
                .collect();
            assert_eq!(got_edges, expected, "direction {dir}");
            assert_eq!(connection["pageInfo"]["hasNextPage"], rest.get("nextCursor").is_some());
            match rest.get("nextCursor").and_then(Value::as_str) {
                Some(next) => after = Some(next.to_string()),
                None => break,
            }
        }
    }
    let only = data(&app, query, json!({ "id": hub, "dir": "BOTH", "type": "owns" })).await;
    assert_eq!(only["entity"]["relations"]["edges"].as_array().unwrap().len(), 1);

    let neighbors = "query($id: ID!, $depth: Int!, $type: String) { entity(id: $id) { neighbors(depth: $depth, relationType: $type) { id depth canonical entity { canonical } } } }";
    let one = data(&app, neighbors, json!({ "id": hub, "depth": 1 })).await["entity"]["neighbors"].clone();
    let ids: Vec<&str> = one.as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap()).collect();
    let mut expected = vec![a.as_str(), b.as_str()];
    expected.sort();
    assert_eq!(ids, expected);
    let two = data(&app, neighbors, json!({ "id": hub, "depth": 2 })).await["entity"]["neighbors"].clone();
    let far = two.as_array().unwrap().iter().find(|n| n["id"] == c.as_str()).expect("two hops away");
    assert_eq!((far["depth"].clone(), far["entity"]["canonical"].clone()), (json!(2), json!("Far Gamma")));
    let typed = data(&app, neighbors, json!({ "id": hub, "depth": 3, "type": "supplies" })).await;
    assert_eq!(typed["entity"]["neighbors"].as_array().unwrap().len(), 2, "a and c over `supplies` only");
    let too_deep = gql(&app, neighbors, json!({ "id": hub, "depth": 4 })).await;
    assert_eq!(error_code(&too_deep), 400);

    let kg = "query($node: ID, $search: String) { knowledgeGraph(nodeID: $node, maxDepth: 1, search: $search, limit: 50) { \
        nextCursor nodes { id canonical type mentionCount depth } edges { relationID relationType mentionCount sourceId targetId } } }";
    for (node, search, path) in [
        (None, None, "/v3/knowledge-graph?limit=50&maxDepth=1".to_string()),
        (Some(a.clone()), None, format!("/v3/knowledge-graph?limit=50&maxDepth=1&nodeID={a}")),
        (None, Some("spoke"), "/v3/knowledge-graph?limit=50&maxDepth=1&search=spoke".to_string()),
    ] {
        let got = data(&app, kg, json!({ "node": node, "search": search })).await["knowledgeGraph"].clone();
        let rest = json(app.get(&path).await).await;
        assert_eq!(got["nodes"], rest["nodes"], "{path}");
        assert_eq!(got["edges"], rest["edges"], "{path}");
        assert_eq!(got["nextCursor"], rest.get("nextCursor").cloned().unwrap_or(Value::Null));
    }
}

#[tokio::test]
async fn entity_types_buckets_and_merge_suggestions_match_rest() {
    let app = spawn_app().await;
    let org = app.create_type("Organization", None).await;
    let company = app.create_type("Company", Some(&org)).await;
    let bank = app.create_type("Bank", Some(&company)).await;
    app.create_bucket("Research").await;
    app.entity("Hooli Cloud", "Company").await;
    app.entity("Hooli Cloud Services", "Company").await;
    assert_eq!(app.post("/v3/merge-suggestions/refresh", json!({})).await.status(), 200);

    let before = app.app().state.graph.queries_run();
    let types = data(
        &app,
        "{ entityTypes { typeID name description parentTypeID attributeSchema createdAt updatedAt \
           parent { typeID } children { typeID } } }",
        json!({}),
    )
    .await["entityTypes"]
        .clone();
    let used = app.app().state.graph.queries_run() - before;
    assert!(used <= 6, "page, count, parents and children in batches: {used} statements");
    let rest = json(app.get("/v3/entity-types").await).await["entityTypes"].clone();
    let (g, r) = (types.as_array().unwrap(), rest.as_array().unwrap());
    assert_eq!(g.len(), 3);
    assert_eq!(g.len(), r.len());
    for (g, r) in g.iter().zip(r) {
        let mut g = g.clone();
        let object = g.as_object_mut().unwrap();
        let (parent, children) = (object.remove("parent").unwrap(), object.remove("children").unwrap());
        assert_same(&g, r);
        match g["typeID"].as_str().unwrap() {
            id if id == org => {
                assert_eq!(parent, Value::Null);
                assert_eq!(children, json!([{ "typeID": company }]));
            }
            id if id == company => {
                assert_eq!(parent, json!({ "typeID": org }));
                assert_eq!(children, json!([{ "typeID": bank }]));
            }
            _ => assert_eq!((parent, children), (json!({ "typeID": company }), json!([]))),
        }
    }

    let buckets =
        data(&app, "{ buckets { bucketID name description isDefault createdAt updatedAt } }", json!({}))
            .await["buckets"]
            .clone();
    let rest = json(app.get("/v3/buckets").await).await["buckets"].clone();
    assert_eq!(buckets.as_array().unwrap().len(), 2);
    for (g, r) in buckets.as_array().unwrap().iter().zip(rest.as_array().unwrap()) {
        assert_same(g, r);
    }

    let suggestions = data(
        &app,
        "{ mergeSuggestions { hasMore suggestions { suggestionID score signals status bucketID blind \
           entities { entityID canonical type mentionCount } } } }",
        json!({}),
    )
    .await["mergeSuggestions"]
        .clone();
    let rest = json(app.get("/v3/merge-suggestions").await).await;
    assert_eq!(suggestions["hasMore"], rest["hasMore"]);
    assert_eq!(suggestions["suggestions"], rest["suggestions"]);
    assert_eq!(suggestions["suggestions"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn graphql_takes_rest_credentials_and_scopes_to_the_callers_tenant() {
    let app = spawn_app().await;
    let id = app.entity("Scoped Entity", "Thing").await;
    let query =
        json!({ "query": "query($id: ID!) { entity(id: $id) { entityID } }", "variables": { "id": id } });

    // No credential: refused before running, with REST's 401 and a GraphQL error body.
    let response = app.client.post(format!("{}/graphql", app.address)).json(&query).send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["x-should-retry"], "false", "a retry cannot change a 401");
    let body = json(response).await;
    assert_eq!(error_code(&body), 401);
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("x-api-key"));
    let response = app
        .client
        .post(format!("{}/graphql", app.address))
        .header("x-api-key", "canon_sk_wrong")
        .json(&query)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);

    // Another account's key, and another environment's: not found.
    let stranger = app
        .new_key(Some(&crate::helpers::unique("other")), canon::store::records::keys::Environment::Sandbox)
        .await;
    for key in [stranger, app.new_key(None, canon::store::records::keys::Environment::Production).await] {
        let response = app
            .client
            .post(format!("{}/graphql", app.address))
            .header("x-api-key", key)
            .json(&query)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let body = json(response).await;
        assert_eq!(error_code(&body), 404, "{body}");
        assert_eq!(body["data"], Value::Null);
    }

    // A dashboard token works too, and its user validates.
    let (user, token) = app.dashboard_token("operator").await;
    let response = app
        .as_user(Method::POST, "/graphql", &token)
        .json(&json!({ "query": "mutation($id: ID!) { validate(id: $id) { status validatedByUserID } }", "variables": { "id": id } }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body = json(response).await;
    assert_eq!(body["data"]["validate"], json!({ "status": "approved", "validatedByUserID": user }));
}

#[tokio::test]
async fn curation_mutations_round_trip_and_errors_carry_rests_status() {
    let app = spawn_app().await;
    let id = app.entity("Globex", "Company").await;
    let dup = app.entity("Globex International", "Company").await;
    let rejected = app.entity("Not A Company", "Company").await;
    let company_type = app.create_type("Corporation", None).await;

    let body = gql(
        &app,
        "mutation($id: ID!) { validate(id: $id) { entityID status validatedAt } }",
        json!({ "id": id }),
    )
    .await;
    assert_eq!(body["data"]["validate"]["status"], "approved");
    let again = gql(&app, "mutation($id: ID!) { validate(id: $id) { status } }", json!({ "id": id })).await;
    assert_eq!(error_code(&again), 409, "{again}");
    assert!(again["errors"][0]["message"].as_str().unwrap().contains("approved"));
    let rest_again = app.patch(&format!("/v3/entities/{id}"), json!({ "status": "approved" })).await;
    assert_eq!(rest_again.status(), 409, "the same status REST gives");

    let body =
        data(&app, "mutation($id: ID!) { reject(id: $id) { status } }", json!({ "id": rejected })).await;
    assert_eq!(body["reject"]["status"], "rejected");

    let body = data(
        &app,
        "mutation($id: ID!, $t: ID) { assignType(id: $id, typeID: $t) { typeID type } }",
        json!({ "id": id, "t": company_type }),
    )
    .await;
    assert_eq!(body["assignType"], json!({ "typeID": company_type, "type": "Corporation" }));
    let unknown = gql(
        &app,
        "mutation($id: ID!) { assignType(id: $id, typeID: \"ety_01NOSUCH0000000000000000\") { typeID } }",
        json!({ "id": id }),
    )
    .await;
    assert_eq!(error_code(&unknown), 404);
    let body = data(
        &app,
        "mutation($id: ID!) { assignType(id: $id, typeID: null) { typeID type } }",
        json!({ "id": id }),
    )
    .await;
    assert_eq!(body["assignType"], json!({ "typeID": null, "type": "Company" }));

    let body = data(&app, "mutation($id: ID!) { editCanonical(id: $id, canonical: \"Globex Worldwide\") { canonical surfaceForms } }", json!({ "id": id })).await;
    assert_eq!(body["editCanonical"]["canonical"], "Globex Worldwide");
    assert!(body["editCanonical"]["surfaceForms"].as_array().unwrap().iter().any(|f| f == "Globex"));

    let body = data(&app, "mutation($id: ID!) { addSynonym(id: $id, text: \"GBX\", source: \"sme_approved\") { synonymID text source } }", json!({ "id": id })).await;
    let synonym = body["addSynonym"]["synonymID"].as_str().unwrap().to_string();
    assert_eq!(body["addSynonym"]["source"], "sme_approved");
    let bad = gql(
        &app,
        "mutation($id: ID!) { addSynonym(id: $id, text: \"x\", source: \"made_up\") { synonymID } }",
        json!({ "id": id }),
    )
    .await;
    assert_eq!(error_code(&bad), 400);
    assert_eq!(bad["errors"][0]["extensions"]["details"]["field"], "source");
    let body = data(
        &app,
        "mutation($id: ID!, $s: ID!) { removeSynonym(id: $id, synonymID: $s) }",
        json!({ "id": id, "s": synonym }),
    )
    .await;
    assert_eq!(body["removeSynonym"], true);
    let gone = gql(
        &app,
        "mutation($id: ID!, $s: ID!) { removeSynonym(id: $id, synonymID: $s) }",
        json!({ "id": id, "s": synonym }),
    )
    .await;
    assert_eq!(error_code(&gone), 404);
    let rest = json(app.get(&format!("/v3/entities/{id}")).await).await;
    assert!(!rest["surfaceForms"].as_array().unwrap().iter().any(|f| f == "GBX"));

    let merged = data(&app, "mutation($id: ID!, $ids: [ID!]!) { merge(id: $id, entityIDs: $ids) { entity { entityID surfaceForms } merges { mergeID mergedID mergedBy } } }", json!({ "id": id, "ids": [dup] })).await;
    let merge_id = merged["merge"]["merges"][0]["mergeID"].as_str().unwrap().to_string();
    assert_eq!(merged["merge"]["merges"][0]["mergedID"], dup.as_str());
    assert_eq!(json(app.get(&format!("/v3/entities/{dup}")).await).await["entityID"], id.as_str());
    let self_merge = gql(
        &app,
        "mutation($id: ID!) { merge(id: $id, entityIDs: [$id]) { entity { entityID } } }",
        json!({ "id": id }),
    )
    .await;
    assert_eq!(error_code(&self_merge), 422);
    let restored = data(
        &app,
        "mutation($m: ID!) { unmerge(mergeID: $m) { entityID canonical } }",
        json!({ "m": merge_id }),
    )
    .await;
    assert_eq!(restored["unmerge"], json!({ "entityID": dup, "canonical": "Globex International" }));
    let twice =
        gql(&app, "mutation($m: ID!) { unmerge(mergeID: $m) { entityID } }", json!({ "m": merge_id })).await;
    assert_eq!(error_code(&twice), 409);

    app.entity("Initech Software", "Company").await;
    app.entity("Initech Software Group", "Company").await;
    app.entity("Hooli Cloud", "Company").await;
    app.entity("Hooli Cloud Services", "Company").await;
    assert_eq!(app.post("/v3/merge-suggestions/refresh", json!({})).await.status(), 200);
    let page =
        data(&app, "{ mergeSuggestions { suggestions { suggestionID entities { canonical } } } }", json!({}))
            .await;
    let suggestions = page["mergeSuggestions"]["suggestions"].as_array().unwrap().clone();
    let find = |name: &str| {
        suggestions.iter().find(|s| s["entities"][0]["canonical"] == name).unwrap()["suggestionID"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (initech, hooli) = (find("Initech Software"), find("Hooli Cloud"));
    let dismissed = data(
        &app,
        "mutation($s: ID!) { dismissSuggestion(id: $s, blind: true) { status blind decidedBy } }",
        json!({ "s": initech }),
    )
    .await;
    assert_eq!(dismissed["dismissSuggestion"]["status"], "dismissed");
    assert_eq!(dismissed["dismissSuggestion"]["blind"], true, "recorded as blind: {dismissed}");
    assert!(dismissed["dismissSuggestion"]["decidedBy"].as_str().unwrap().starts_with("key_"), "{dismissed}");
    let again =
        gql(&app, "mutation($s: ID!) { dismissSuggestion(id: $s) { status } }", json!({ "s": initech }))
            .await;
    assert_eq!(error_code(&again), 409);
    let accepted = data(&app, "mutation($s: ID!) { acceptSuggestion(id: $s) { entity { canonical surfaceForms } merges { mergeID } } }", json!({ "s": hooli })).await;
    assert_eq!(accepted["acceptSuggestion"]["entity"]["canonical"], "Hooli Cloud");
    let missing =
        gql(&app, "mutation { acceptSuggestion(id: \"msg_nosuch\") { entity { entityID } } }", json!({}))
            .await;
    assert_eq!(error_code(&missing), 404);
}

#[tokio::test]
async fn a_nested_page_of_fifty_entities_costs_a_constant_number_of_graph_queries() {
    let app = spawn_app().await;
    let rows: Vec<Value> =
        (0..51).map(|i| json!({ "canonical": format!("Batch Entity {i:02}"), "type": "Thing" })).collect();
    let seeded = app.seed(Value::Array(rows)).await;
    let ids: Vec<String> = seeded["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["entityID"].as_str().unwrap().to_string())
        .collect();
    for (i, id) in ids.iter().enumerate() {
        mention(&app, id, &format!("Batch Entity {i:02}")).await;
        mention(&app, id, &format!("BE{i:02}")).await;
        relate(&app, id, &ids[(i + 1) % ids.len()], "next").await;
    }
    let query = "{ entities(first: 50) { edges { node { entityID canonical mentions { mentionID surface } \
        relations(first: 10) { edges { node { relationID direction other { entityID canonical } } } } } } } }";
    let graph = &app.app().state.graph;
    let before = graph.queries_run();
    let got = data(&app, query, json!({})).await;
    let used = graph.queries_run() - before;
    let edges = got["entities"]["edges"].as_array().unwrap();
    assert_eq!(edges.len(), 50);
    for edge in edges {
        assert_eq!(edge["node"]["mentions"].as_array().unwrap().len(), 2, "{edge}");
        assert!(!edge["node"]["relations"]["edges"].as_array().unwrap().is_empty());
    }
    println!("graph queries for 50 entities with mentions, relations and far ends: {used}");
    // Page + details, mentions, outbound and inbound relations, far-end details: 6 when each
    // level's keys meet in one batch window. Under CPU contention a level splits into a few
    // batches (the loaders batch by a 1 ms window: 11 and 22 were seen on a loaded 2-core
    // machine), which is timing, not a defect; one level loaded per entity costs 50 alone.
    assert!(used < 50, "{used} graph queries: something loads per entity");

    // Neighbourhoods of the whole page (one statement per hop, then the node records) and
    // merge histories (one).
    let before = graph.queries_run();
    let got = data(
        &app,
        "{ entities(first: 50) { edges { node { merges { mergeID } neighbors(depth: 2) { id depth } } } } }",
        json!({}),
    )
    .await;
    let used = graph.queries_run() - before;
    for edge in got["entities"]["edges"].as_array().unwrap() {
        let depths: Vec<i64> = edge["node"]["neighbors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["depth"].as_i64().unwrap())
            .collect();
        assert_eq!(depths, vec![1, 1, 2, 2], "a ring: two neighbours at each distance");
    }
    println!("graph queries for the merge histories and neighbourhoods (depth 2) of 50 entities: {used}");
    // 6 when the page's keys meet in one batch window; more when a slow (debug) build on a
    // loaded machine splits windows (14 seen with a release build running beside the tests);
    // merges or one hop loaded per entity cost 50 alone.
    assert!(used < 50, "{used} graph queries: something loads per entity");
}

#[tokio::test]
async fn depth_and_complexity_limits_answer_with_a_clear_error() {
    let app = spawn_app().await;
    let mut nested = String::from("entityID");
    for _ in 0..7 {
        nested = format!("relations(first: 1) {{ edges {{ node {{ other {{ {nested} }} }} }} }}");
    }
    let body =
        gql(&app, &format!("{{ entities(first: 1) {{ edges {{ node {{ {nested} }} }} }} }}"), json!({}))
            .await;
    assert_eq!(error_code(&body), 400, "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("nested too deep"), "{body}");

    // Over the cost budget: refused before it runs, with HTTP 400 (see bounded_work.rs).
    let query = "{ entities(first: 200) { edges { node { relations(first: 200) { edges { node { relationID } } } } } } }";
    let response = app.post("/graphql", json!({ "query": query })).await;
    assert_eq!(response.status(), 400);
    let body = json(response).await;
    assert_eq!(error_code(&body), 400, "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("too complex"), "{body}");

    let body = gql(&app, "{ entity(id: \"x\") { noSuchField } }", json!({})).await;
    assert_eq!(error_code(&body), 400);
}

#[tokio::test]
async fn the_rate_limit_refuses_graphql_with_rests_429() {
    let app = crate::helpers::spawn_app_with(canon::jobs::Handlers::default(), |config| {
        config.rate_limit_per_second = 0.001;
        config.rate_limit_burst = 1;
    })
    .await;
    let query = json!({ "query": "{ buckets { name } }" });
    assert_eq!(app.post("/graphql", query.clone()).await.status(), 200);
    let response = app.post("/graphql", query).await;
    assert_eq!(response.status(), 429);
    assert!(response.headers().contains_key("retry-after"), "as REST sends it");
    assert_eq!(response.headers()["x-should-retry"], "true");
    let body = json(response).await;
    assert_eq!(error_code(&body), 429);
}

#[tokio::test]
async fn a_types_children_show_the_first_200_by_id_and_the_rest_list_pages_them_all() {
    // Each parent's children are cut to 200 before their schemas are read; the key's burst is
    // raised for the 202 types made one after another.
    let app = spawn_app_with(Handlers::default(), |config| config.rate_limit_burst = 1_000).await;
    let parent = app.create_type("Organisation", None).await;
    let mut children: Vec<String> = Vec::new();
    for n in 0..201 {
        children.push(app.create_type(&format!("Kind {n}"), Some(&parent)).await);
    }
    children.sort();
    let query = "query($id: ID!) { entityType(id: $id) { children { typeID } } }";
    let shown = data(&app, query, json!({ "id": parent })).await;
    let ids: Vec<&str> = shown["entityType"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["typeID"].as_str().unwrap())
        .collect();
    assert_eq!(ids, children[..200].iter().map(String::as_str).collect::<Vec<_>>());
    let last = json(
        app.get(&format!("/v3/entity-types?parentTypeID={parent}&startingAfter={}", children[199])).await,
    )
    .await;
    assert_eq!(last["entityTypes"][0]["typeID"], children[200].as_str(), "{last}");
}
