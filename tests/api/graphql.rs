//! GraphQL at /graphql: every field answers what its REST endpoint answers for the same data,
//! the same auth, curation mutations, errors coded as REST's statuses, no N+1, and the
//! committed SDL in step with the code.

use crate::helpers::{json, spawn_app, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

const ENTITY_FIELDS: &str = "entityID canonical type typeID description mentionCount surfaceForms status \
    createdAt updatedAt validatedAt validatedByUserID bucketID attributes \
    previewMentions { mentionID entityID referenceID transformationID page sectionLabel surface createdAt }";

/// Runs a GraphQL request with the app's API key; asserts HTTP 200 and returns the body.
async fn gql(app: &TestApp, query: &str, variables: Value) -> Value {
    let response = app.post("/graphql", json!({ "query": query, "variables": variables })).await;
    assert_eq!(response.status(), 200);
    json(response).await
}

/// Runs a request expected to succeed and returns its `data`.
async fn data(app: &TestApp, query: &str, variables: Value) -> Value {
    let body = gql(app, query, variables).await;
    assert!(body.get("errors").is_none(), "no errors in {body}");
    body["data"].clone()
}

/// The first error's `extensions.code`.
fn error_code(body: &Value) -> Value {
    body["errors"][0]["extensions"]["code"].clone()
}

/// Asserts every field GraphQL returned equals REST's field of that name (REST omits absent
/// optional fields; GraphQL gives null).
fn assert_same(graphql: &Value, rest: &Value) {
    let fields = graphql.as_object().expect("an object");
    for (name, value) in fields {
        let expected = rest.get(name).cloned().unwrap_or(Value::Null);
        assert_eq!(value, &expected, "field {name}: GraphQL {graphql} vs REST {rest}");
    }
}

async fn relate(app: &TestApp, source: &str, target: &str, relation_type: &str) {
    let body = json!({ "sourceEntityID": source, "targetEntityID": target, "relationType": relation_type });
    assert_eq!(app.post("/v3/relations", body).await.status(), 200);
}

async fn mention(app: &TestApp, entity: &str, surface: &str) {
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
async fn the_explorer_page_and_its_assets_are_served() {
    let app = spawn_app().await;
    let response = app.client.get(format!("{}/graphql", app.address)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let page = response.text().await.unwrap();
    assert!(page.contains("GraphiQL") && page.contains("fetch(\"/graphql\""), "{page}");
    if crate::helpers::vendor_dir().join("graphiql/graphiql.min.js").is_file() {
        assert!(page.contains("/graphql/assets/graphiql.min.js"), "served locally once provisioned");
        for (file, content_type, _) in canon::graphql::GRAPHIQL.files {
            let response =
                app.client.get(format!("{}/graphql/assets/{file}", app.address)).send().await.unwrap();
            assert_eq!(response.status(), 200, "{file}");
            assert_eq!(response.headers()["content-type"], *content_type);
        }
    }
    let response =
        app.client.get(format!("{}/graphql/assets/..%2Fsecret", app.address)).send().await.unwrap();
    assert_eq!(response.status(), 404);
}

/// The explorer in a real browser: GraphiQL loads, runs a query with the key from its Headers
/// pane, and shows the answer. Skipped (and said so) without Debian's `chromium`.
#[tokio::test]
async fn the_explorer_runs_a_query_in_headless_chromium() {
    if !crate::helpers::provisioned("graphiql/graphiql.min.js") {
        return;
    }
    let app = spawn_app().await;
    let id = app.entity("Explorer Entity", "Thing").await;
    let query = format!("{{ entity(id: \"{id}\") {{ canonical status }} }}");
    let headers = json!({ "x-api-key": app.api_key }).to_string();
    let mut url = reqwest::Url::parse(&format!("{}/graphql", app.address)).unwrap();
    url.query_pairs_mut()
        .append_pair("query", &query)
        .append_pair("headers", &headers)
        .append_pair("run", "1");
    let Some(dom) = crate::helpers::chromium_dom(url.as_str()).await else { return };
    assert!(dom.contains("graphiql-container"), "GraphiQL rendered: {dom}");
    let result = dom.split("result-window").nth(1).unwrap_or_default();
    assert!(result.contains("Explorer Entity") && result.contains("proposed"), "the answer is shown: {dom}");
    assert!(!dom.contains("Error fetching schema"), "the schema loaded for the docs: {dom}");
}

#[tokio::test]
async fn graphiqls_deep_introspection_is_answered_and_reaches_no_data() {
    let app = spawn_app().await;
    let id = app.entity("Hidden From Introspection", "Thing").await;
    let type_ref = "ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } }";
    let deep = format!("{{ __schema {{ types {{ fields {{ args {{ type {{ {type_ref} }} }} }} }} }} }}");
    let post = |operation: &str, query: String| {
        app.request(Method::POST, "/graphql").json(&json!({ "query": format!("query {operation} {query}"),
            "operationName": operation }))
    };
    let body = json(post("IntrospectionQuery", deep.clone()).send().await.unwrap()).await;
    assert!(body.get("errors").is_none(), "{body}");
    assert!(!body["data"]["__schema"]["types"].as_array().unwrap().is_empty());
    let body = json(post("Deep", deep).send().await.unwrap()).await;
    assert_eq!(error_code(&body), 400, "the usual depth limit holds for every other request: {body}");
    let sneaky = format!("{{ entity(id: \"{id}\") {{ canonical }} __schema {{ queryType {{ name }} }} }}");
    let body = json(post("IntrospectionQuery", sneaky).send().await.unwrap()).await;
    assert!(!body.to_string().contains("Hidden From Introspection"), "no data under that name: {body}");
}

/// Opened without a key, the explorer asks for one: the Request Headers tab is open on
/// `{"x-api-key": "<your API key>"}`, an example query is in the editor, and nothing was sent
/// (GraphiQL used to introspect at once and open on "invalid or revoked API key").
#[tokio::test]
async fn the_explorer_opens_ready_for_a_key_without_an_error() {
    if !crate::helpers::provisioned("graphiql/graphiql.min.js") {
        return;
    }
    let app = spawn_app().await;
    let Some(dom) = crate::helpers::chromium_dom(&format!("{}/graphql", app.address)).await else { return };
    assert!(dom.contains("graphiql-container"), "GraphiQL rendered: {dom}");
    let headers_tab = dom.split(">Request Headers<").next().unwrap_or_default();
    let tab_tag = &headers_tab[headers_tab.rfind('<').unwrap_or(0)..];
    assert!(tab_tag.contains("active"), "the Request Headers tab is open: {tab_tag}");
    assert!(dom.contains("x-api-key") && dom.contains("&lt;your API key&gt;"), "a key is asked for: {dom}");
    assert!(dom.contains("Put your API key in Request Headers"), "the example query is shown: {dom}");
    assert!(!dom.contains("invalid or revoked") && !dom.contains("Error fetching schema"), "{dom}");
    let metrics = app.client.get(format!("{}/metrics", app.address)).send().await.unwrap();
    let metrics = metrics.text().await.unwrap();
    let posts = metrics.lines().filter(|l| l.contains("POST") && l.contains(r#"route="/graphql""#));
    assert_eq!(posts.count(), 0, "nothing was sent without a key:\n{metrics}");
}

#[test]
fn the_committed_sdl_is_the_one_the_code_generates() {
    let path = crate::helpers::source_dir().join("graphql/schema.graphql");
    let generated = canon::graphql::sdl();
    if std::env::var("CANON_UPDATE_GRAPHQL_SCHEMA").is_ok() {
        std::fs::write(&path, &generated).expect("write graphql/schema.graphql");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "graphql/schema.graphql is stale: run `canon graphql-schema > graphql/schema.graphql` \
         (or CANON_UPDATE_GRAPHQL_SCHEMA=1 cargo test --test api graphql) and commit it"
    );
}

/// Runs a request with a dashboard token; asserts HTTP 200.
async fn gql_as(app: &TestApp, token: &str, query: &str, variables: Value) -> Value {
    let response = app
        .as_user(Method::POST, "/graphql", token)
        .json(&json!({ "query": query, "variables": variables }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    json(response).await
}

#[tokio::test]
async fn reviewer_operations_need_a_dashboard_token_and_check_its_role() {
    let app = spawn_app().await;
    let type_id = app.create_type("Supplier", None).await;
    let (admin, admin_token) = app.dashboard_token("admin").await;
    let (operator, operator_token) = app.dashboard_token("operator").await;
    let assign =
        "mutation($t: ID!, $u: ID!) { assignReviewer(typeID: $t, userID: $u) { typeID userID role } }";
    let list = "query($t: ID!) { entityType(id: $t) { name reviewers { userID email role assignedAt } } }";

    let with_key = gql(&app, assign, json!({ "t": type_id, "u": operator })).await;
    assert_eq!(error_code(&with_key), 401, "an API key is refused, as REST refuses it");
    let as_operator = gql_as(&app, &operator_token, assign, json!({ "t": type_id, "u": operator })).await;
    assert_eq!(error_code(&as_operator), 403);
    let body = gql_as(&app, &admin_token, assign, json!({ "t": type_id, "u": operator })).await;
    assert_eq!(
        body["data"]["assignReviewer"],
        json!({ "typeID": type_id, "userID": operator, "role": "operator" })
    );
    let body = gql_as(&app, &admin_token, assign, json!({ "t": type_id, "u": admin })).await;
    assert!(body.get("errors").is_none(), "{body}");

    let got = gql_as(&app, &operator_token, list, json!({ "t": type_id })).await;
    let rest = json(
        app.as_user(Method::GET, &format!("/v3/entity-types/{type_id}/reviewers"), &operator_token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let (g, r) =
        (got["data"]["entityType"]["reviewers"].as_array().unwrap(), rest["reviewers"].as_array().unwrap());
    assert_eq!(g.len(), 2);
    for (g, r) in g.iter().zip(r) {
        assert_same(g, r);
    }
    assert_eq!(error_code(&gql(&app, list, json!({ "t": type_id })).await), 401);

    let remove = "mutation($t: ID!, $u: ID!) { removeReviewer(typeID: $t, userID: $u) }";
    assert_eq!(
        error_code(&gql_as(&app, &operator_token, remove, json!({ "t": type_id, "u": admin })).await),
        403
    );
    let body = gql_as(&app, &admin_token, remove, json!({ "t": type_id, "u": admin })).await;
    assert_eq!(body["data"]["removeReviewer"], true);
    assert_eq!(
        error_code(&gql_as(&app, &admin_token, remove, json!({ "t": type_id, "u": admin })).await),
        404
    );

    // assignedTo: me, as in the review queue.
    let mine = app.entity("Reviewed Supplier", "Supplier").await;
    app.entity("Unreviewed Thing", "Thing").await;
    let body = gql_as(
        &app,
        &operator_token,
        "{ entities(filter: {assignedTo: \"me\"}) { edges { node { entityID } } } }",
        json!({}),
    )
    .await;
    assert_eq!(body["data"]["entities"]["edges"], json!([{ "node": { "entityID": mine } }]));
}

#[tokio::test]
async fn bulk_validation_and_merge_history_match_rest() {
    let app = spawn_app().await;
    let a = app.entity("Bulk One", "Thing").await;
    let b = app.entity("Bulk Two", "Thing").await;
    let query = "mutation($ids: [ID!]!) { bulkValidate(entityIDs: $ids, status: \"approved\") { \
        results { entityID outcome reason } summary { validated skipped rejectedRow } } }";
    let got = data(&app, query, json!({ "ids": [a, "ent_01NOSUCH000000000000000000"] })).await;
    assert_eq!(got["bulkValidate"]["summary"], json!({ "validated": 1, "skipped": 1, "rejectedRow": 0 }));
    let rest = json(
        app.post("/v3/entities/bulk-validate", json!({ "entityIDs": [a, b], "status": "approved" })).await,
    )
    .await;
    assert_eq!(rest["summary"], json!({ "validated": 1, "skipped": 0, "rejectedRow": 1 }));
    let bad = gql(&app, query.replace("approved", "maybe").as_str(), json!({ "ids": [a] })).await;
    assert_eq!(error_code(&bad), 400);

    let c = app.entity("Bulk Three", "Thing").await;
    assert_eq!(app.post(&format!("/v3/entities/{a}/merge"), json!({ "entityIDs": [c] })).await.status(), 200);
    let got = data(
        &app,
        "query($id: ID!) { entity(id: $id) { merges { mergeID survivorID mergedID mergedBy mergedAt undoneBy \
           undoneAt keysMoved mentionsMoved relationsMoved } } }",
        json!({ "id": a }),
    )
    .await;
    let rest = json(app.get(&format!("/v3/entities/{a}/merges")).await).await;
    let (g, r) = (got["entity"]["merges"].as_array().unwrap(), rest["merges"].as_array().unwrap());
    assert_eq!(g.len(), 1);
    for (g, r) in g.iter().zip(r) {
        assert_same(g, r);
    }
}

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
