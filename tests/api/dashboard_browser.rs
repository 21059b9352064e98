//! The review dashboard in Debian's chromium driven by playwright-core
//! (`tests/browser/pages.mjs`): a reviewer signs in and opens the queue, a merge suggestion
//! and an entity card, on a graph seeded through REST (`tests/browser/seed.mjs`). Checked:
//! axe-core finds no serious or critical accessibility violation on any page, and no request
//! leaves canon (every other origin is refused and recorded). Skipped, and said so, without
//! chromium or the vendored playwright-core and axe-core (`make provision`, needs npm).

use crate::helpers::{browser_script, spawn_app, TestApp};
use serde_json::Value;

/// `pages.mjs MODE` against this app; None (SKIPPED printed) without a browser to run.
async fn pages(app: &TestApp, mode: &str) -> Option<Value> {
    browser_script("pages.mjs", &[mode, &app.address, &app.api_key]).await
}

#[tokio::test]
async fn axe_core_finds_no_serious_or_critical_violation_on_any_dashboard_page() {
    let app = spawn_app().await;
    let Some(seen) = pages(&app, "axe").await else { return };
    let checked = seen["pages"].as_object().expect("violations per page");
    let names: Vec<&str> = checked.keys().map(String::as_str).collect();
    assert_eq!(names.len(), 4, "sign-in, queue, suggestions and entity were checked: {names:?}");
    let mut blocking = Vec::new();
    for (page, violations) in checked {
        for violation in violations.as_array().unwrap() {
            // The lesser ones are reported, not failed on (the bar is serious and up).
            println!("axe-core {} on {page}: {violation}", seen["axe"]);
            if matches!(violation["impact"].as_str(), Some("serious" | "critical")) {
                blocking.push(format!("{page}: {violation}"));
            }
        }
    }
    assert!(blocking.is_empty(), "serious or critical accessibility violations:\n{}", blocking.join("\n"));
}

#[tokio::test]
async fn a_reviewer_working_the_dashboard_sends_no_request_beyond_canon() {
    let app = spawn_app().await;
    let Some(seen) = pages(&app, "offline").await else { return };
    assert_eq!(seen["pages"], serde_json::json!(["sign-in", "queue", "suggestions", "entity"]), "{seen}");
    for list in ["outside", "violations", "failed", "errors"] {
        assert_eq!(seen[list], serde_json::json!([]), "{list}: {seen}");
    }
}
