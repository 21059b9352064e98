//! `/mcp`, as an agent uses it: the official Python MCP client (installed by `make
//! provision` into vendor/mcp) lists the tools and calls each; credentials are REST's, and a
//! tool sees only its caller's tenant.

use crate::fs::{AGREEMENT, ORDER};
use crate::helpers::{json, spawn_app, TestApp};
use canon::store::records::keys::Environment;
use reqwest::RequestBuilder;
use serde_json::{json, Value};

impl TestApp {
    /// A JSON-RPC request to `/mcp`, as a streamable-HTTP client sends it.
    fn mcp(&self, method: &str, params: Value) -> RequestBuilder {
        self.client
            .post(format!("{}/mcp", self.address))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
    }

    /// Calls a tool with this API key; returns the tool's result.
    pub(crate) async fn call_tool(&self, key: &str, tool: &str, arguments: Value) -> Value {
        let response = self
            .mcp("tools/call", json!({"name": tool, "arguments": arguments}))
            .header("x-api-key", key)
            .send()
            .await
            .expect("request sent");
        assert_eq!(response.status(), 200, "{tool}");
        let answer = json(response).await;
        answer["result"].clone()
    }
}

#[tokio::test]
async fn the_official_mcp_client_lists_the_tools_and_calls_each_one() {
    let app = spawn_app().await;
    app.parse_pipeline().await;
    app.parse_text("agreement-1", AGREEMENT).await;
    app.parse_text("order-7", ORDER).await;

    let script = crate::helpers::source_dir().join("tests/sdk/mcp_client.py");
    let env = [("CANON_MCP_URL", format!("{}/mcp", app.address)), ("CANON_API_KEY", app.api_key.clone())];
    crate::sdk::run_python(script, "mcp", env, "mcp").await;
}

#[tokio::test]
async fn an_mcp_request_without_a_valid_key_is_refused_as_rest_refuses_it() {
    let app = spawn_app().await;
    for key in [None, Some("bem_not-a-key")] {
        let with_key = |request: RequestBuilder| match key {
            Some(key) => request.header("x-api-key", key),
            None => request,
        };
        let rest = with_key(app.client.post(format!("{}/v3/fs", app.address)).json(&json!({"op": "ls"})))
            .send()
            .await
            .unwrap();
        let mcp = with_key(app.mcp("tools/list", json!({}))).send().await.unwrap();
        assert_eq!((mcp.status().as_u16(), rest.status().as_u16()), (401, 401), "key {key:?}");
        assert_eq!(json(mcp).await, json(rest).await, "key {key:?}");
    }

    // A dashboard token is a credential too.
    let (_, token) = app.dashboard_token("operator").await;
    let listed = app.mcp("tools/list", json!({})).bearer_auth(token).send().await.unwrap();
    assert_eq!(listed.status(), 200);
    let tools = json(listed).await["result"]["tools"].clone();
    assert!(tools.as_array().is_some_and(|t| t.iter().any(|t| t["name"] == "merge_entities")), "{tools}");

    // Not REST, so not in the OpenAPI document.
    let spec = json(app.get("/openapi.json").await).await;
    assert!(spec["paths"].get("/mcp").is_none());
    assert!(spec["paths"].get("/v3/fs").is_some());
}

#[tokio::test]
async fn entity_synonyms_lists_what_rest_lists_and_nothing_of_another_tenant() {
    let app = spawn_app().await;
    let acme = app.entity("Acme Synonym Corp", "Company").await;
    let path = format!("/v3/entities/{acme}/synonyms");
    assert_eq!(app.post(&path, json!({ "text": "ASC" })).await.status(), 200);
    assert_eq!(app.post(&path, json!({ "text": "Acme S.", "source": "sme_approved" })).await.status(), 200);
    let listed = app.call_tool(&app.api_key, "entity_synonyms", json!({"entityID": acme})).await;
    assert_eq!(listed["isError"], false, "{listed}");
    assert_eq!(listed["structuredContent"], json(app.get(&path).await).await);
    assert_eq!(listed["structuredContent"]["synonyms"].as_array().map(Vec::len), Some(2), "{listed}");

    let other_key = app.new_key(Some(&crate::helpers::unique("other")), Environment::Sandbox).await;
    let theirs = app.call_tool(&other_key, "entity_synonyms", json!({"entityID": acme})).await;
    assert_eq!(theirs["structuredContent"]["code"], 404, "{theirs}");
}

#[tokio::test]
async fn a_search_deletes_names_whose_entity_is_gone_and_answers_the_live_ones() {
    let app = spawn_app().await;
    let alpha = app.entity("Initech Alpha", "Company").await;
    let beta = app.entity("Initech Beta", "Company").await;
    // Keys a bucket's cascade delete left behind before it deleted them too: their entities
    // are gone, and their IDs sort before every live one.
    for i in 0..3 {
        let gone = format!("ent_0000000000000000000000000{i}");
        app.cypher(
            "CREATE (:Key {key: $key, id: $id, entityID: $gone, accountID: $a, environment: 'sandbox',
               bucketID: 'bkt_gone', text: $text, forms: [$text], source: 'canonical'})",
            json!({ "key": format!("{} orphan {i}", app.account_id), "id": format!("esn_orphan{i}"), "gone": gone,
                "a": app.account_id, "text": format!("Initech Gone {i}") }),
        )
        .await;
    }
    let found = app.call_tool(&app.api_key, "search_entities", json!({"text": "initech", "limit": 2})).await;
    let ids: Vec<&Value> =
        found["structuredContent"]["entities"].as_array().unwrap().iter().map(|e| &e["entityID"]).collect();
    assert_eq!(ids, [&json!(alpha), &json!(beta)], "{found}");
    let left = app
        .cypher(
            "MATCH (k:Key {accountID: $a}) WHERE k.entityID STARTS WITH 'ent_000' RETURN count(k) AS n",
            json!({ "a": app.account_id }),
        )
        .await;
    assert_eq!(left[0]["n"], 0, "the names of entities that are gone are gone too");
    let again = app.call_tool(&app.api_key, "search_entities", json!({"text": "initech", "limit": 1})).await;
    assert_eq!(again["structuredContent"]["entities"][0]["entityID"], alpha, "{again}");
}

#[tokio::test]
async fn a_tool_call_cannot_see_another_tenants_entity() {
    let app = spawn_app().await;
    let globex = app.entity("Globex Corporation", "Company").await;
    let other_key = app.new_key(Some(&crate::helpers::unique("other")), Environment::Sandbox).await;
    let own = app.call_tool(&app.api_key, "entity_relations", json!({"entityID": globex})).await;
    assert_eq!(own["isError"], false, "{own}");
    // A tool's integer takes a whole float, as a REST body's does.
    let mine = app.call_tool(&app.api_key, "search_entities", json!({"text": "globex", "limit": 1.0})).await;
    assert_eq!(mine["structuredContent"]["entities"][0]["entityID"], globex, "{mine}");

    let relations = app.call_tool(&other_key, "entity_relations", json!({"entityID": globex})).await;
    assert_eq!(relations["isError"], true, "{relations}");
    assert_eq!(relations["structuredContent"]["code"], 404);
    assert_eq!(relations["structuredContent"]["message"], format!("entity {globex} not found"));
    let stat = app.call_tool(&other_key, "fs_stat", json!({"path": globex})).await;
    assert_eq!(stat["structuredContent"]["code"], 404, "{stat}");
    let found = app.call_tool(&other_key, "search_entities", json!({"text": "globex"})).await;
    assert_eq!(found["structuredContent"]["entities"], json!([]), "{found}");

    // Nor change it: the review actions skip it, a merge into the other tenant's own entity
    // does not find it.
    let before = json(app.get(&format!("/v3/entities/{globex}")).await).await;
    let rejected = app.call_tool(&other_key, "reject_entities", json!({"entityIDs": [globex]})).await;
    assert_eq!(rejected["structuredContent"]["results"][0]["outcome"], "skipped", "{rejected}");
    let seeded = app
        .client
        .post(format!("{}/v3/entities/bulk", app.address))
        .header("x-api-key", &other_key)
        .json(&json!({"entities": [{"canonical": "Globex", "type": "Company"}]}))
        .send()
        .await
        .unwrap();
    let theirs = json(seeded).await["results"][0]["entityID"].as_str().unwrap().to_string();
    let merged =
        app.call_tool(&other_key, "merge_entities", json!({"entityID": theirs, "entityIDs": [globex]})).await;
    assert_eq!(merged["structuredContent"]["code"], 404, "{merged}");
    assert_eq!(merged["structuredContent"]["message"], format!("entity {globex} not found"));
    assert_eq!(json(app.get(&format!("/v3/entities/{globex}")).await).await, before);
}
