//! `x-should-retry` on every error: bem-sdk obeys it, and otherwise retries every 409.

use crate::helpers::{spawn_app, spawn_app_with};
use canon::jobs::Handlers;
use reqwest::{Method, Response};
use serde_json::json;

fn should_retry(response: &Response) -> &str {
    response.headers().get("x-should-retry").map(|v| v.to_str().unwrap()).unwrap_or("(absent)")
}

#[tokio::test]
async fn answers_a_retry_cannot_change_tell_the_sdk_not_to_retry() {
    let app = spawn_app().await;
    app.create_bucket("Taken").await;
    let (_, operator_token) = app.dashboard_token("operator").await;
    let (admin, _) = app.dashboard_token("admin").await;
    let root = app.create_type("Root", None).await;
    let answers = [
        (400, app.post("/v3/buckets", json!({ "name": 42 })).await),
        (401, app.client.get(format!("{}/v3/buckets", app.address)).send().await.unwrap()),
        (
            403,
            app.as_user(Method::GET, &format!("/v3/users/{admin}/reviewer-assignments"), &operator_token)
                .send()
                .await
                .unwrap(),
        ),
        (404, app.get("/v3/buckets/bkt_01NOSUCH000000000000000000").await),
        (404, app.get("/v3/no-such-route").await),
        (409, app.post("/v3/buckets", json!({ "name": "Taken" })).await),
        (422, app.patch(&format!("/v3/entity-types/{root}"), json!({ "parentTypeID": root })).await),
    ];
    for (status, response) in answers {
        assert_eq!(response.status(), status);
        assert_eq!(should_retry(&response), "false", "a {status} cannot change on retry");
    }
}

#[tokio::test]
async fn a_rate_limited_request_tells_the_sdk_to_retry() {
    let app = spawn_app_with(Handlers::default(), |config| {
        config.rate_limit_burst = 1;
        config.rate_limit_per_second = 0.001;
    })
    .await;
    assert_eq!(app.get("/v3/buckets").await.status(), 200);
    let limited = app.get("/v3/buckets").await;
    assert_eq!(limited.status(), 429);
    assert_eq!(should_retry(&limited), "true");
}
