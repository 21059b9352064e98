//! Bounded work per request: a GraphQL request is costed whole (every root field and alias
//! counts) and refused before it runs when over budget; lists have maxima; `fs cat` selects a
//! bounded number of bounded paths; a view reads a bounded window from a bounded offset.

use crate::helpers::{assert_error, json, spawn_app, spawn_app_with, TestApp};
use canon::jobs::Handlers;
use serde_json::{json, Value};

#[tokio::test]
async fn a_graphql_request_of_a_thousand_aliased_root_fields_is_refused_with_400_stating_cost_and_limit() {
    let app = spawn_app().await;
    let aliases: String =
        (0..1_000).map(|i| format!("e{i}: entity(id: \"ent_{i}\") {{ entityID canonical }} ")).collect();
    let response = app.post("/graphql", json!({ "query": format!("{{ {aliases} }}") })).await;
    assert_eq!(response.status(), 400);
    let body = json(response).await;
    assert!(body.get("data").is_none_or(Value::is_null), "nothing ran: {body}");
    let error = &body["errors"][0];
    let message = error["message"].as_str().unwrap();
    // 1,000 root fields at 100 each, plus each field at 1 (3 per alias).
    assert!(message.contains("costs 103000"), "{message}");
    assert!(message.contains("the limit is 10000"), "{message}");
    assert_eq!(error["extensions"]["cost"], 103_000);
    assert_eq!(error["extensions"]["limit"], 10_000);
    assert_eq!(error["extensions"]["code"], 400);

    // The same through fragments and for a mix of root fields.
    let fragment = format!(
        "query {{ ...Many }} fragment Many on QueryRoot {{ {} }}",
        (0..200).map(|i| format!("k{i}: knowledgeGraph(limit: 1) {{ nextCursor }} ")).collect::<String>()
    );
    let response = app.post("/graphql", json!({ "query": fragment })).await;
    assert_eq!(response.status(), 400);
    assert!(json(response).await["errors"][0]["message"].as_str().unwrap().contains("the limit is 10000"));

    // A handful of root fields is fine.
    let few: String = (0..5).map(|i| format!("e{i}: entity(id: \"ent_{i}\") {{ entityID }} ")).collect();
    let response = app.post("/graphql", json!({ "query": format!("{{ {few} }}") })).await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_type_tree_walked_down_and_up_again_stops_at_the_child_types_a_request_may_list() {
    let app = spawn_app().await;
    let created = app.post("/v3/entity-types", json!({ "name": "Organisation" })).await;
    let parent = json(created).await["typeID"].as_str().unwrap().to_string();
    for i in 0..120 {
        let child = json!({ "name": format!("Kind {i}"), "parentTypeID": parent });
        assert_eq!(app.post("/v3/entity-types", child).await.status(), 200);
    }
    let down = format!("{{ entityType(id: \"{parent}\") {{ children {{ name }} }} }}");
    let body = json(app.post("/graphql", json!({ "query": down })).await).await;
    assert_eq!(body["data"]["entityType"]["children"].as_array().unwrap().len(), 120, "{body}");
    // 120 children, each's parent listing the 120 again: 14,520 types, past the 10,000.
    let walk = "children { parent { children { name } } }";
    let query = format!("{{ entityType(id: \"{parent}\") {{ {walk} }} }}");
    let body = json(app.post("/graphql", json!({ "query": query })).await).await;
    let error = &body["errors"][0];
    assert_eq!(error["extensions"]["code"], 400, "{body}");
    assert!(error["message"].as_str().unwrap().contains("at most 10000 child types"), "{body}");
}

#[tokio::test]
async fn neighbors_and_other_lists_cost_their_size_and_refuse_sizes_past_their_maximum() {
    let app = spawn_app().await;
    // 200 entities, each asking 200 neighbours: 200 × 200 × 2 fields, far over the budget.
    let query = "{ entities(first: 200) { edges { node { neighbors(first: 200) { id canonical } } } } }";
    let response = app.post("/graphql", json!({ "query": query })).await;
    assert_eq!(response.status(), 400);
    let body = json(response).await;
    assert!(body["errors"][0]["extensions"]["cost"].as_u64().unwrap() > 10_000, "{body}");

    // `neighbors(first:)` has a maximum of 200, like every page.
    let a = app.entity("Acme Corp", "Company").await;
    let query = format!("{{ entity(id: \"{a}\") {{ neighbors(first: 201) {{ id }} }} }}");
    let body = json(app.post("/graphql", json!({ "query": query })).await).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], 400, "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("200"), "{body}");
    let query = format!("{{ entity(id: \"{a}\") {{ neighbors(first: 5) {{ id }} }} }}");
    let body = json(app.post("/graphql", json!({ "query": query })).await).await;
    assert_eq!(body["data"]["entity"]["neighbors"], json!([]), "{body}");
}

#[tokio::test]
async fn fs_cat_refuses_more_than_fifty_select_paths_or_a_path_past_256_characters() {
    let app = spawn_app().await;
    let many: Vec<String> = (0..51).map(|i| format!("sections.f{i}")).collect();
    let error =
        assert_error(app.post("/v3/fs", json!({"op": "cat", "path": "any", "select": many})).await, 400)
            .await;
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("select") && message.contains("at most 50 paths (got 51)"), "{error}");

    let long = "a".repeat(257);
    let error =
        assert_error(app.post("/v3/fs", json!({"op": "cat", "path": "any", "select": [long]})).await, 400)
            .await;
    assert!(error["message"].as_str().unwrap().contains("at most 256"), "{error}");

    // Within the bounds the select passes and the path decides (no such document: 404).
    let fine: Vec<String> = (0..50).map(|i| format!("sections.f{i}")).collect();
    assert_error(app.post("/v3/fs", json!({"op": "cat", "path": "any", "select": fine})).await, 404).await;
}

#[tokio::test]
async fn a_view_window_past_366_days_or_an_offset_past_100000_is_refused_with_400() {
    let app = spawn_app().await;
    let mut body = json!({
        "name": "v", "functions": [{"name": "invoices"}],
        "columns": [{"name": "number", "valueSchemaPath": ["invoiceNumber"], "displayOrderIndex": 0}],
        "filters": [], "aggregations": [],
        "timeWindow": {"start": "2020-01-01T00:00:00Z", "end": "2026-01-01T00:00:00Z"}
    });
    let error = assert_error(app.post("/v3/views/table-data", body.clone()).await, 400).await;
    assert!(error["message"].as_str().unwrap().contains("timeWindow: spans more than 366 days"), "{error}");
    let error = assert_error(app.post("/v3/views/aggregation-data", body.clone()).await, 400).await;
    assert!(error["message"].as_str().unwrap().contains("366 days"), "{error}");

    body["timeWindow"] = json!({"start": "2025-01-01T00:00:00Z", "end": "2025-06-01T00:00:00Z"});
    body["offset"] = json!(100_001);
    let error = assert_error(app.post("/v3/views/table-data", body).await, 400).await;
    assert!(error["message"].as_str().unwrap().contains("offset: must be 0..100000"), "{error}");
    // The served document states the same bound (it once said 10,000,000).
    let doc = json(app.get("/openapi.json").await).await;
    // TableDataInput flattens the view's fields: an allOf whose own part holds the page.
    let parts = doc["components"]["schemas"]["TableDataInput"]["allOf"].as_array().unwrap();
    let offset = parts.iter().map(|part| &part["properties"]["offset"]).find(|o| o.is_object()).unwrap();
    assert_eq!(offset["maximum"], 100_000, "{offset}");
}

#[tokio::test]
async fn a_hub_with_250_neighbours_answers_at_most_first_of_them_lowest_ids_first() {
    // 250 relations one after another: past the default burst of 200 requests a key when
    // they come faster than 100 a second (a 429 seen once in CI).
    let app = spawn_app_with(Handlers::default(), |config| config.rate_limit_burst = 1_000).await;
    let mut ids: Vec<String> = Vec::new();
    for batch in (0..251).collect::<Vec<_>>().chunks(90) {
        // Fewer than 100 rows a request: seeded synchronously.
        let rows: Vec<Value> =
            batch.iter().map(|i| json!({ "canonical": format!("node {i:03}"), "type": "Company" })).collect();
        let seeded = app.seed(json!(rows)).await;
        ids.extend(
            seeded["results"].as_array().unwrap().iter().map(|r| r["entityID"].as_str().unwrap().to_string()),
        );
    }
    assert_eq!(ids.len(), 251);
    let (hub, spokes) = ids.split_first().unwrap();
    for spoke in spokes {
        let body = json!({ "sourceEntityID": hub, "targetEntityID": spoke, "relationType": "knows" });
        assert_eq!(app.post("/v3/relations", body).await.status(), 200);
    }
    let query = format!("{{ entity(id: \"{hub}\") {{ neighbors(first: 200) {{ id depth }} }} }}");
    let body = json(app.post("/graphql", json!({ "query": query })).await).await;
    let found: Vec<&str> = body["data"]["entity"]["neighbors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    let mut lowest: Vec<&str> = spokes.iter().map(String::as_str).collect();
    lowest.sort();
    lowest.truncate(200);
    assert_eq!(found, lowest, "the 200 lowest IDs of the 250");
    // Two hops out, the walk stays within the same 200 (the spokes lead back only to the hub).
    let query = format!("{{ entity(id: \"{hub}\") {{ neighbors(depth: 2, first: 10) {{ id }} }} }}");
    let body = json(app.post("/graphql", json!({ "query": query })).await).await;
    assert_eq!(body["data"]["entity"]["neighbors"].as_array().unwrap().len(), 10, "{body}");
}

/// Sends `fs` requests from `body` on, following `nextCursor` to the end; returns each page.
async fn fs_pages(app: &TestApp, body: Value) -> Vec<Value> {
    let mut pages: Vec<Value> = Vec::new();
    let mut request = body;
    loop {
        let response = app.post("/v3/fs", request.clone()).await;
        assert_eq!(response.status(), 200, "{request}");
        let page = json(response).await;
        let next = page["nextCursor"].as_str().map(str::to_string);
        pages.push(page);
        match next {
            Some(cursor) => request["cursor"] = json!(cursor),
            None => return pages,
        }
        assert!(pages.len() < 10, "the cursor leads on forever: {pages:?}");
    }
}

#[tokio::test]
async fn fs_grep_reads_at_most_its_bound_of_candidates_a_request_and_its_cursor_leads_to_the_true_count() {
    // The bound is 20,000 candidates; lowered here so that 250 clauses reach it (a document of
    // 20,500 sections took 15 s to parse on SQLite, 21 s on PostgreSQL, over 30 s on Neo4j).
    const BOUND: usize = 100;
    const CLAUSES: usize = 250;
    let app = spawn_app_with(Handlers::default(), |config| {
        assert_eq!(config.fs_scan_limit, 20_000, "the production bound");
        config.fs_scan_limit = BOUND;
    })
    .await;
    app.parse_pipeline().await;
    let clauses: String = (0..CLAUSES).map(|i| format!("Clause {i} binds the vendor.\n\n")).collect();
    app.parse_text("long-1", &format!("SERVICE AGREEMENT\n\nVendor: Acme Corporation\n\n{clauses}")).await;
    // The index counts a plain substring itself, whatever the number of items.
    let body = json!({"op": "grep", "pattern": "binds the vendor", "countOnly": true});
    let whole = json(app.post("/v3/fs", body).await).await;
    assert_eq!((whole["count"].as_i64(), whole["hasMore"].as_bool()), (Some(CLAUSES as i64), Some(false)));

    // A regular expression is checked item by item: the bound's worth a request, then a
    // cursor; each cut page says so, and the counts add up to the true count.
    let body = json!({"op": "grep", "pattern": r"clause \d+ binds", "regex": true, "countOnly": true});
    let pages = fs_pages(&app, body).await;
    let counts: Vec<i64> = pages.iter().map(|p| p["count"].as_i64().unwrap()).collect();
    assert_eq!(counts, [100, 100, 50], "{pages:?}");
    for page in &pages[..2] {
        assert_eq!(page["hasMore"], true, "{page}");
        let hint = page["hint"].as_str().unwrap_or_default();
        assert!(
            hint.contains("first 100 candidates (at most 100, or 2 s of matching, per request)"),
            "{page}"
        );
    }
    assert_eq!((pages[2]["hasMore"].as_bool(), pages[2].get("hint")), (Some(false), None), "{}", pages[2]);

    // A page of hits stops reading at the bound too, empty-handed if it must: an expression
    // with no literal every match holds reads every item, and one clause matches.
    let body = json!({"op": "grep", "pattern": r"clause (?:249|none) binds", "regex": true, "limit": 10});
    let pages = fs_pages(&app, body).await;
    assert!(pages.len() >= 3, "{pages:?}");
    assert_eq!(pages[0]["data"], json!([]), "{}", pages[0]);
    assert!(pages[0]["hint"].as_str().unwrap().contains("read 100 candidates"), "{}", pages[0]);
    let hits: Vec<&Value> = pages.iter().flat_map(|p| p["data"].as_array().unwrap()).collect();
    assert_eq!(hits.len(), 1, "{pages:?}");
    assert_eq!(hits[0]["match"], "Clause 249 binds");
}

#[tokio::test]
async fn fs_grep_answers_with_a_cursor_once_its_matching_time_is_spent_and_the_counts_still_add_up() {
    // The budget is 2 s of matching a request (a pattern the DFA cannot hold runs microseconds
    // a byte); none here, so each request matches one candidate and hands back a cursor.
    let app = spawn_app_with(Handlers::default(), |config| {
        assert_eq!(config.fs_match_budget, std::time::Duration::from_secs(2), "the production bound");
        config.fs_match_budget = std::time::Duration::ZERO;
    })
    .await;
    app.parse_pipeline().await;
    let clauses: String = (0..5).map(|i| format!("Clause {i} binds the vendor.\n\n")).collect();
    app.parse_text("short-1", &format!("SERVICE AGREEMENT\n\nVendor: Acme Corporation\n\n{clauses}")).await;
    let mut request = json!({"op": "grep", "pattern": r"clause \d+ binds", "regex": true, "countOnly": true});
    let mut counts = Vec::new();
    loop {
        let page = json(app.post("/v3/fs", request.clone()).await).await;
        counts.push(page["count"].as_i64().unwrap());
        let Some(cursor) = page["nextCursor"].as_str() else { break };
        let hint = page["hint"].as_str().unwrap_or_default();
        assert!(
            hint.contains("first 1 candidates (at most 20000, or 0 s of matching, per request)"),
            "{page}"
        );
        request["cursor"] = json!(cursor);
        assert!(counts.len() < 100, "the cursor leads on forever");
    }
    assert!(
        counts.len() > 5 && counts.iter().all(|count| *count <= 1),
        "one candidate a request: {counts:?}"
    );
    assert_eq!(counts.iter().sum::<i64>(), 5, "{counts:?}");
}

#[tokio::test]
async fn fs_grep_stops_a_slow_pattern_inside_a_long_section_and_says_where() {
    // A pattern the DFA cannot hold runs ~10 µs a byte: over one 32 MiB section, minutes in a
    // single search. Sections are searched a window at a time, so the budget stops it there.
    let app = spawn_app_with(Handlers::default(), |config| {
        config.fs_match_budget = std::time::Duration::from_millis(100);
    })
    .await;
    app.parse_pipeline().await;
    let early = format!("{}Z", "ab ".repeat(1_000));
    app.parse_text("long-1", &format!("NOTES\n\n{}\n", "ab ".repeat(400_000))).await;
    let slow = r"[a-z ]{2000}Z";
    let page = app.fs(json!({"op": "grep", "pattern": slow, "regex": true})).await;
    assert_eq!(page["data"], json!([]), "{page}");
    let hint = page["hint"].as_str().unwrap();
    let (searched, length) = hint
        .split_once("ran out ")
        .and_then(|(_, rest)| rest.split_once(" bytes into the "))
        .and_then(|(searched, rest)| {
            Some((searched.parse::<usize>().ok()?, rest.split_once(" bytes of ")?.0.parse::<usize>().ok()?))
        })
        .unwrap_or_else(|| panic!("no stop in the hint: {hint}"));
    assert!(searched > 0 && searched < length && length > 1_199_000, "{hint}");
    assert!(page["nextCursor"].is_string(), "the cursor leads past it: {page}");
    // What the first windows hold is found whole, the rest of the section unread.
    app.parse_text("long-2", &format!("NOTES\n\n{early}{}\n", "ab ".repeat(400_000))).await;
    let page = app.fs(json!({"op": "grep", "pattern": slow, "regex": true, "path": "long-2"})).await;
    let hits = page["data"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{page}");
    assert_eq!(hits[0]["match"].as_str().unwrap().len(), 1_000, "shown cut at 1,000 bytes: {page}");
    assert_eq!(hits[0]["referenceID"], "long-2", "{page}");
}

/// Seeds entities named `names` (fewer than 100: in the request); returns their IDs.
async fn companies(app: &TestApp, names: &[String]) -> Vec<String> {
    let rows: Vec<Value> = names.iter().map(|n| json!({ "canonical": n, "type": "Company" })).collect();
    let seeded = app.seed(json!(rows)).await;
    seeded["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["entityID"].as_str().unwrap().to_string())
        .collect()
}

async fn relate(app: &TestApp, source: &str, target: &str) {
    let body = json!({ "sourceEntityID": source, "targetEntityID": target, "relationType": "knows" });
    assert_eq!(app.post("/v3/relations", body).await.status(), 200);
}

#[tokio::test]
async fn a_centred_knowledge_graph_read_reaching_past_its_cap_of_entities_is_refused_naming_max_depth() {
    // The cap is 10,000 entities; lowered here so that 22 entities reach it.
    const CAP: usize = 20;
    let app = spawn_app_with(Handlers::default(), |config| config.max_centered_nodes = CAP).await;
    let names: Vec<String> = (0..CAP + 3).map(|i| format!("node {i:02}")).collect();
    let ids = companies(&app, &names).await;
    // A hub and CAP - 1 spokes: CAP entities one hop out, the hub included; two more behind
    // the first spoke, two hops out.
    let (hub, rest) = ids.split_first().unwrap();
    let (spokes, far) = rest.split_at(CAP - 1);
    for spoke in spokes {
        relate(&app, hub, spoke).await;
    }
    for other in &far[..2] {
        relate(&app, &spokes[0], other).await;
    }
    let within_one =
        json(app.get(&format!("/v3/knowledge-graph?nodeID={hub}&maxDepth=1&limit=200")).await).await;
    let nodes = within_one["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), CAP, "the hub and its spokes: {within_one}");

    let error =
        assert_error(app.get(&format!("/v3/knowledge-graph?nodeID={hub}&maxDepth=2")).await, 400).await;
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("maxDepth") && message.contains(&format!("more than {CAP} entities")),
        "{error}"
    );
    // GraphQL reads through the same walk.
    let query = format!("{{ knowledgeGraph(nodeID: \"{hub}\", maxDepth: 2) {{ nodes {{ id }} }} }}");
    let body = json(app.post("/graphql", json!({ "query": query })).await).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], 400, "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("maxDepth"), "{body}");

    // One more spoke and a single hop reaches past the cap as well.
    relate(&app, hub, &far[2]).await;
    assert_error(app.get(&format!("/v3/knowledge-graph?nodeID={hub}&maxDepth=1")).await, 400).await;

    // So does a search whose matches are sent with each page's statement: every node's name
    // holds "node", "node 0" only ten of them.
    let error = assert_error(app.get("/v3/knowledge-graph?search=node").await, 400).await;
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&format!("more than {CAP} entities")), "{error}");
    assert_eq!(error["details"]["field"], "search", "{error}");
    let narrow = json(app.get("/v3/knowledge-graph?search=NODE%200&limit=200").await).await;
    let edges = narrow["edges"].as_array().unwrap();
    assert_eq!(edges.len(), 9, "the hub (node 00) to spokes node 01 to node 09: {narrow}");

    // The served API description states the cap and what a client sees past it.
    let doc = json(app.get("/openapi.json").await).await;
    let parameters = doc["paths"]["/v3/knowledge-graph"]["get"]["parameters"].as_array().unwrap();
    let max_depth = parameters.iter().find(|p| p["name"] == "maxDepth").unwrap();
    let described = max_depth["description"].as_str().unwrap_or_default();
    assert!(described.contains("10,000") && described.contains("400"), "{max_depth}");
}

#[tokio::test]
async fn fs_grep_reads_candidates_in_bounded_bytes_finds_every_match_and_shows_a_long_match_cut() {
    // A query of candidates reads at most 16 MiB of their text (a section can be a whole CSV
    // or JSON document); lowered here to a byte, every query reads one candidate, and a
    // query cut short is not the end of them.
    let app = spawn_app_with(Handlers::default(), |config| {
        assert_eq!(config.fs_batch_bytes, 16 * 1024 * 1024, "the production bound");
        config.fs_batch_bytes = 1;
    })
    .await;
    app.parse_pipeline().await;
    let clauses: String = (0..12).map(|i| format!("Clause {i} binds the vendor.\n\n")).collect();
    let long_line = "a".repeat(5_000);
    app.parse_text("cut-1", &format!("SERVICE AGREEMENT\n\n{clauses}{long_line}\n")).await;
    let body = json!({"op": "grep", "pattern": r"clause \d+ binds", "regex": true, "limit": 50});
    let pages = fs_pages(&app, body).await;
    let hits: Vec<&Value> = pages.iter().flat_map(|p| p["data"].as_array().unwrap()).collect();
    let matched: Vec<&str> = hits.iter().map(|h| h["match"].as_str().unwrap()).collect();
    let expected: Vec<String> = (0..12).map(|i| format!("Clause {i} binds")).collect();
    assert_eq!(matched, expected, "{pages:?}");

    // A match is shown up to 1,000 bytes, its snippet marked as going on.
    let page =
        json(app.post("/v3/fs", json!({"op": "grep", "pattern": "a{200,}", "regex": true})).await).await;
    let hit = &page["data"][0];
    assert_eq!(hit["match"].as_str().map(str::len), Some(1_000), "{page}");
    assert!(hit["snippet"].as_str().unwrap().ends_with('…'), "{page}");
}

/// Knowledge-graph pages read a bounded part of the tenant's edges too (3 edges a page on
/// Neo4j): a search that matches only a later edge gets a short first page saying more may
/// follow, and the cursors reach that edge, once. On FalkorDB the bound is the page's time
/// (50 ms here, windows doubling across empty stretches): the review-queue test ends pages
/// short there (its entity walks skip quiet times); here the pages must stay exact.
#[tokio::test]
async fn a_knowledge_graph_page_ends_short_at_its_scan_bound_and_the_cursors_reach_every_edge_once() {
    let app = spawn_app_with(Handlers::default(), |config| {
        config.page_scan =
            canon::graph::window::PageScan { time: std::time::Duration::from_millis(50), rows: 3 };
    })
    .await;
    let names: Vec<String> =
        (0..8).map(|i| format!("plain {i}")).chain(["special a".into(), "special b".into()]).collect();
    let ids = companies(&app, &names).await;
    for pair in ids[..6].windows(2) {
        relate(&app, &pair[0], &pair[1]).await;
    }
    relate(&app, &ids[8], &ids[9]).await;
    relate(&app, &ids[6], &ids[7]).await;

    let (mut edges, mut short, mut pages) = (Vec::new(), 0, 0);
    let mut query = "/v3/knowledge-graph?search=special&limit=1".to_string();
    loop {
        pages += 1;
        assert!(pages <= 30, "the pages end");
        let page = json(app.get(&query).await).await;
        let found = page["edges"].as_array().unwrap().clone();
        edges.extend(found.iter().map(|e| (e["sourceId"].clone(), e["targetId"].clone())));
        let Some(cursor) = page["nextCursor"].as_str() else { break };
        short += usize::from(found.is_empty());
        query = format!("/v3/knowledge-graph?search=special&limit=1&cursor={cursor}");
    }
    assert_eq!(edges, [(json!(ids[8]), json!(ids[9]))], "the one matching edge, once");
    if app.app().state.graph.engine().orders_by_index() {
        assert!(short >= 1, "a page ended short at its scan bound and said more may follow");
    }
}
