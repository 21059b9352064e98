//! The GraphiQL explorer at /graphql (served, in a real browser) and the committed SDL.

use super::error_code;
use crate::helpers::{json, spawn_app};
use reqwest::Method;
use serde_json::json;

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
