//! The review dashboard at /review over real HTTP: its pages render offline with a strict
//! Content-Security-Policy, its sign-in refuses a bad key, and the REST calls its keys make
//! (validate, reject, accept, dismiss and their undo) change the queue and restore it.

use crate::helpers::{assert_error, browser_script, chromium_dom, json, spawn_app, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

async fn page(app: &TestApp, path: &str) -> (reqwest::header::HeaderMap, String) {
    let response = app.client.get(format!("{}{path}", app.address)).send().await.expect("page");
    assert_eq!(response.status(), 200, "{path}");
    let headers = response.headers().clone();
    (headers, response.text().await.expect("html"))
}

async fn counts(app: &TestApp) -> Value {
    let response = app.get("/v3/review-queue/counts").await;
    assert_eq!(response.status(), 200);
    json(response).await
}

async fn queue_ids(app: &TestApp) -> Vec<String> {
    let page = json(app.get("/v3/review-queue").await).await;
    page["entities"].as_array().unwrap().iter().map(|e| e["entityID"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn the_three_pages_render_with_navigation_and_sign_in_and_load_nothing_from_elsewhere() {
    let app = spawn_app().await;
    for path in ["/review", "/review/suggestions", "/review/entities/ent_01ABC"] {
        let (headers, html) = page(&app, path).await;
        assert!(headers["content-type"].to_str().unwrap().starts_with("text/html"));
        let policy = headers["content-security-policy"].to_str().unwrap();
        assert!(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"), "{policy}");
        assert!(policy.contains("connect-src 'self'"), "{policy}");
        assert!(html.contains(">Queue</a>") && html.contains(">Merge suggestions</a>"), "{path}: {html}");
        assert!(html.contains(">API key or token</label>") && html.contains(">Sign in</button>"));
        assert!(!html.contains("http://") && !html.contains("https://"), "{path} names another host");
        assert!(!html.contains("<script>"), "{path} carries an inline script");
    }
    let (_, queue) = page(&app, "/review").await;
    for button in ["Validate", "Reject", "Skip", "Undo"] {
        assert!(queue.contains(&format!(">{button}</button>")), "queue lacks {button}");
    }
    let (_, suggestions) = page(&app, "/review/suggestions").await;
    for button in ["Accept merge", "Dismiss", "Skip", "Undo"] {
        assert!(suggestions.contains(&format!(">{button}</button>")), "suggestions lack {button}");
    }

    let script = app.client.get(format!("{}/review/assets/dashboard.js", app.address)).send().await.unwrap();
    assert_eq!(script.status(), 200);
    assert!(script.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    let script = script.text().await.unwrap();
    assert!(script.contains("sessionStorage") && !script.contains("innerHTML"), "text only, tab only");
    assert!(!script.contains("document.cookie"), "the credential never goes in a cookie");
    let missing =
        app.client.get(format!("{}/review/assets/../Cargo.toml", app.address)).send().await.unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn a_hostile_entity_id_in_the_path_is_shown_escaped() {
    let app = spawn_app().await;
    let (_, html) = page(&app, "/review/entities/%3Cimg%20src=x%20onerror=alert(1)%3E%22").await;
    assert!(!html.contains("<img src=x"), "{html}");
    assert!(html.contains("&#60;img src=x onerror=alert(1)&#62;&#34;") || html.contains("&lt;img"), "{html}");
}

#[tokio::test]
async fn sign_in_refuses_a_bad_key_and_accepts_a_key_or_a_reviewer_token() {
    let app = spawn_app().await;
    // The sign-in form checks the credential with the queue call every page makes.
    let refused = app
        .client
        .get(format!("{}/v3/review-queue?limit=1", app.address))
        .header("x-api-key", "not-a-real-key")
        .send()
        .await
        .unwrap();
    let body = assert_error(refused, 401).await;
    assert!(body["message"].as_str().unwrap().contains("API key"), "{body}");
    assert_eq!(app.get("/v3/review-queue?limit=1").await.status(), 200);
    let (_, token) = app.dashboard_token("operator").await;
    let signed_in = app.as_user(Method::GET, "/v3/review-queue?limit=1", &token).send().await.unwrap();
    assert_eq!(signed_in.status(), 200);
}

#[tokio::test]
async fn decisions_change_the_queue_and_its_counts_and_undo_puts_the_entity_back() {
    let app = spawn_app().await;
    let acme = app.entity("Acme Anvils", "Company").await;
    let globex = app.entity("Globex Corporation", "Company").await;
    app.entity("Initech", "Company").await;
    let before = counts(&app).await;
    assert_eq!((before["left"].as_i64(), before["doneToday"].as_i64()), (Some(3), Some(0)), "{before}");
    assert_eq!(before["byStatus"]["proposed"].as_i64(), Some(3), "{before}");

    // `v` on Acme (as a reviewer, so attributed) and `r` on Globex.
    let (user, token) = app.dashboard_token("operator").await;
    let validated = app
        .as_user(Method::PATCH, &format!("/v3/entities/{acme}"), &token)
        .json(&json!({ "status": "approved" }))
        .send()
        .await
        .unwrap();
    assert_eq!(validated.status(), 200);
    assert_eq!(json(validated).await["validatedByUserID"], user.as_str());
    assert_eq!(
        app.patch(&format!("/v3/entities/{globex}"), json!({ "status": "rejected" })).await.status(),
        200
    );
    let ids = queue_ids(&app).await;
    assert!(!ids.contains(&acme) && !ids.contains(&globex) && ids.len() == 1, "{ids:?}");
    let after = counts(&app).await;
    assert_eq!((after["left"].as_i64(), after["doneToday"].as_i64()), (Some(1), Some(2)), "{after}");
    assert_eq!(
        (after["byStatus"]["approved"].as_i64(), after["byStatus"]["rejected"].as_i64()),
        (Some(1), Some(1))
    );

    // `z`: the page sends each back with the status it had.
    let previous = "proposed"; // seeded entities are proposed; the page remembers the row's status
    let reopened = app.post(&format!("/v3/entities/{globex}/reopen"), json!({ "status": previous })).await;
    assert_eq!(reopened.status(), 200);
    let reopened = json(reopened).await;
    assert_eq!(reopened["status"], previous);
    assert!(reopened["validatedAt"].is_null(), "{reopened}");
    assert!(queue_ids(&app).await.contains(&globex));
    let undone = counts(&app).await;
    assert_eq!((undone["left"].as_i64(), undone["doneToday"].as_i64()), (Some(2), Some(1)), "{undone}");

    let again = assert_error(
        app.post(&format!("/v3/entities/{globex}/reopen"), json!({ "status": "extracted" })).await,
        409,
    )
    .await;
    assert!(again["message"].as_str().unwrap().contains("only an approved or rejected entity"), "{again}");
    assert_error(
        app.post(&format!("/v3/entities/{acme}/reopen"), json!({ "status": "approved" })).await,
        400,
    )
    .await;
    assert_error(
        app.post("/v3/entities/ent_01NOSUCH00000000000000000/reopen", json!({ "status": "extracted" })).await,
        404,
    )
    .await;
}

#[tokio::test]
async fn an_accepted_suggestion_is_unmerged_by_undo_and_seen_again_and_a_dismissed_one_returns() {
    let app = spawn_app().await;
    let software = app.entity("Initech Software", "Company").await;
    let group = app.entity("Initech Software Group", "Company").await;
    let refreshed = json(app.post("/v3/merge-suggestions/refresh", json!({})).await).await;
    assert_eq!(refreshed["suggested"], 1, "{refreshed}");

    let page = json(app.get("/v3/merge-suggestions?order=uncertain").await).await;
    let (suggest, auto) =
        (page["suggestThreshold"].as_f64().unwrap(), page["autoMergeThreshold"].as_f64().unwrap());
    assert!(suggest < auto, "{page}");
    let id = page["suggestions"][0]["suggestionID"].as_str().unwrap().to_string();
    assert_error(app.get("/v3/merge-suggestions?order=sideways").await, 400).await;
    // The card's field-by-field why: the name's two values, first entity's first.
    let name = &page["suggestions"][0]["signals"]["explanation"]["fields"][0];
    assert_eq!(name["field"], "name", "{name}");
    let first_name = page["suggestions"][0]["entities"][0]["canonical"].as_str().unwrap().to_lowercase();
    assert_eq!(name["valueA"], first_name.as_str(), "{name}");
    assert!(name["valueB"].as_str().unwrap().starts_with("initech software"), "{name}");

    // Swap sides: the second of the pair survives.
    let other = assert_error(
        app.post(
            &format!("/v3/merge-suggestions/{id}/accept?survivor=ent_01NOTINPAIR000000000000000"),
            json!({}),
        )
        .await,
        400,
    )
    .await;
    assert!(other["message"].as_str().unwrap().contains("not in suggestion"), "{other}");
    let second = page["suggestions"][0]["entities"][1]["entityID"].as_str().unwrap().to_string();
    let first = page["suggestions"][0]["entities"][0]["entityID"].as_str().unwrap().to_string();
    let merged =
        json(app.post(&format!("/v3/merge-suggestions/{id}/accept?survivor={second}"), json!({})).await)
            .await;
    assert_eq!(merged["entity"]["entityID"], second.as_str(), "{merged}");
    assert_eq!(json(app.get(&format!("/v3/entities/{first}")).await).await["entityID"], second.as_str());
    assert!(json(app.get("/v3/merge-suggestions").await).await["suggestions"].as_array().unwrap().is_empty());

    // Undo: unmerged, and the pair is seen again.
    let reopened = app.post(&format!("/v3/merge-suggestions/{id}/reopen"), json!({})).await;
    assert_eq!(reopened.status(), 200);
    assert_eq!(json(reopened).await["status"], "open");
    for id in [&software, &group] {
        assert_eq!(json(app.get(&format!("/v3/entities/{id}")).await).await["entityID"], id.as_str());
    }
    let open = json(app.get("/v3/merge-suggestions").await).await;
    assert_eq!(open["suggestions"][0]["suggestionID"], id.as_str(), "{open}");
    assert_error(app.post(&format!("/v3/merge-suggestions/{id}/reopen"), json!({})).await, 409).await;

    // Dismiss, then undo it.
    assert_eq!(app.post(&format!("/v3/merge-suggestions/{id}/dismiss"), json!({})).await.status(), 200);
    assert!(json(app.get("/v3/merge-suggestions").await).await["suggestions"].as_array().unwrap().is_empty());
    assert_eq!(app.post(&format!("/v3/merge-suggestions/{id}/reopen"), json!({})).await.status(), 200);
    assert_eq!(
        json(app.get("/v3/merge-suggestions").await).await["suggestions"].as_array().unwrap().len(),
        1
    );
}

#[tokio::test]
async fn in_a_browser_the_queue_page_runs_its_script_and_asks_for_a_key_first() {
    let app = spawn_app().await;
    let Some(dom) = chromium_dom(&format!("{}/review", app.address)).await else { return };
    // The script ran (under the page's CSP) and showed the sign-in form, the page still hidden.
    assert!(dom.contains("<form id=\"sign-in\">"), "{dom}");
    assert!(dom.contains("<div id=\"page\" hidden"), "{dom}");
}

/// `review_keys.mjs` with this app's key (MODE "", "undo" or "suggestion"); None without a browser.
async fn review_keys(app: &TestApp, mode: &str) -> Option<Value> {
    browser_script("review_keys.mjs", &[&app.address, &app.api_key, mode]).await
}

#[tokio::test]
async fn in_a_browser_a_reviewer_signs_in_validates_by_pressing_v_and_undoes_by_pressing_z() {
    let app = spawn_app().await;
    app.entity("Acme Anvils", "Company").await;
    app.entity("Globex Corporation", "Company").await;
    let Some(seen) = review_keys(&app, "").await else { return };
    assert_eq!((seen["before"].as_str(), seen["after"].as_str()), (Some("2"), Some("1")), "{seen}");
    // Checked through REST: the row the key acted on is approved and gone from the queue.
    let validated = seen["validated"].as_str().unwrap();
    assert_eq!(json(app.get(&format!("/v3/entities/{validated}")).await).await["status"], "approved");
    assert!(!queue_ids(&app).await.contains(&validated.to_string()));

    // Again with `z` after `v`: the next row is validated, then put back as it was.
    let seen = review_keys(&app, "undo").await.unwrap();
    assert_eq!((seen["after"].as_str(), seen["last"].as_str()), (Some("0"), Some("1")), "{seen}");
    let undone = seen["validated"].as_str().unwrap();
    assert_eq!(json(app.get(&format!("/v3/entities/{undone}")).await).await["status"], "proposed");
    assert!(queue_ids(&app).await.contains(&undone.to_string()));
}

#[tokio::test]
async fn in_a_browser_a_suggestion_card_draws_its_why_and_a_merges_into_the_named_survivor() {
    let app = spawn_app().await;
    let software = app.entity("Initech Software", "Company").await;
    let group = app.entity("Initech Software Group", "Company").await;
    assert_eq!(json(app.post("/v3/merge-suggestions/refresh", json!({})).await).await["suggested"], 1);
    let Some(seen) = review_keys(&app, "suggestion").await else { return };
    let name_row = seen["fields"][0].as_str().unwrap();
    assert!(name_row.starts_with("name") && name_row.contains("initech software group"), "{seen}");
    let survivor = seen["survivor"].as_str().unwrap();
    for id in [&software, &group] {
        assert_eq!(json(app.get(&format!("/v3/entities/{id}")).await).await["entityID"], survivor, "{id}");
    }
}
