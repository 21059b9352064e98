//! The API reference at `/docs`: Swagger UI from `vendor/swagger-ui/`, so it works offline.

use crate::helpers::{chromium_dom, provisioned, spawn_app};

const SWAGGER_UI: &str = "swagger-ui/swagger-ui-bundle.js";

#[tokio::test]
async fn the_docs_page_loads_its_scripts_from_canon_not_a_cdn() {
    if !provisioned(SWAGGER_UI) {
        return;
    }
    let app = spawn_app().await;
    let page = app.client.get(format!("{}/docs", app.address)).send().await.unwrap().text().await.unwrap();
    assert!(!page.contains("https://"), "no CDN once provisioned: {page}");
    for (file, content_type, _) in canon::api::openapi::SWAGGER_UI.files {
        assert!(page.contains(&format!("/docs/assets/{file}")), "{file} in {page}");
        let response = app.client.get(format!("{}/docs/assets/{file}", app.address)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{file}");
        assert_eq!(response.headers()["content-type"], *content_type);
    }
    for path in ["/docs/assets/..%2F..%2FCargo.toml", "/docs/assets/index.html"] {
        let response = app.client.get(format!("{}{path}", app.address)).send().await.unwrap();
        assert_eq!(response.status(), 404, "{path}");
    }
}

/// The page in a real browser lists the operations of `/openapi.json`. Skipped (and said so)
/// without Debian's `chromium`.
#[tokio::test]
async fn the_docs_page_lists_the_operations_in_headless_chromium() {
    if !provisioned(SWAGGER_UI) {
        return;
    }
    let app = spawn_app().await;
    let Some(dom) = chromium_dom(&format!("{}/docs", app.address)).await else { return };
    let operations = dom.matches("opblock-summary-path").count();
    assert!(operations >= 60, "Swagger UI lists every operation ({operations} found): {dom}");
    for path in ["/v3/buckets", "/v3/entities/{id}/synonyms", "/v3/workflows", "/readyz"] {
        assert!(dom.contains(&format!("data-path=\"{path}\"")), "{path} listed");
    }
}
