//! Authentication, tenancy isolation and rate limiting.

use crate::helpers::{assert_error, json, spawn_app, spawn_app_with, unique};
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use reqwest::Method;

#[tokio::test]
async fn a_request_without_a_key_is_401() {
    let app = spawn_app().await;
    let response = app.client.get(format!("{}/v3/buckets", app.address)).send().await.unwrap();
    assert_error(response, 401).await;
}

#[tokio::test]
async fn a_malformed_or_unknown_key_is_401() {
    let app = spawn_app().await;
    let unknown = format!("ck_{}_{}", ulid::Ulid::new(), "0".repeat(64));
    let wrong_secret = format!("{}{}", &app.api_key[..app.api_key.len() - 1], "x");
    for key in ["nonsense", "", unknown.as_str(), wrong_secret.as_str()] {
        let response = app
            .client
            .get(format!("{}/v3/buckets", app.address))
            .header("x-api-key", key)
            .send()
            .await
            .unwrap();
        assert_error(response, 401).await;
    }
}

#[tokio::test]
async fn a_key_revoked_by_another_process_is_401_within_a_second() {
    let app = spawn_app().await;
    assert_eq!(app.get("/v3/buckets").await.status(), 200, "the key is now trusted from memory");
    // `canon keys revoke` writes the record store from a process of its own, as here.
    let records = canon::store::records::Records::connect(&app.database_url()).await.unwrap();
    let keys = records.list_keys(&app.account_id).await.unwrap();
    assert!(records.revoke_key(&keys[0].id).await.unwrap());
    tokio::time::sleep(canon::keys::TRUST_FOR + std::time::Duration::from_millis(100)).await;
    assert_error(app.get("/v3/buckets").await, 401).await;
}

#[tokio::test]
async fn a_bucket_of_another_environment_is_404() {
    let app = spawn_app().await;
    let bucket = app.create_bucket("sandbox-only").await;
    let production = app.new_key(None, Environment::Production).await;
    let response = app
        .client
        .get(format!("{}/v3/buckets/{bucket}", app.address))
        .header("x-api-key", &production)
        .send()
        .await
        .unwrap();
    assert_error(response, 404).await;
    let listed = app
        .client
        .get(format!("{}/v3/buckets", app.address))
        .header("x-api-key", &production)
        .send()
        .await
        .unwrap();
    let names: Vec<String> = json(listed).await["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, vec!["default"], "production sees only its own default bucket");
}

#[tokio::test]
async fn resources_of_another_account_are_404_for_every_verb() {
    let app = spawn_app().await;
    let bucket = app.create_bucket("mine").await;
    let entity_type = app.create_type("Mine", None).await;
    let other = app.new_key(Some(&unique("other-co")), Environment::Sandbox).await;
    let call = |method: Method, path: String| {
        app.client.request(method, format!("{}{path}", app.address)).header("x-api-key", &other)
    };
    assert_error(call(Method::GET, format!("/v3/buckets/{bucket}")).send().await.unwrap(), 404).await;
    assert_error(
        call(Method::PATCH, format!("/v3/buckets/{bucket}"))
            .json(&serde_json::json!({"name": "x"}))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    assert_error(call(Method::DELETE, format!("/v3/buckets/{bucket}")).send().await.unwrap(), 404).await;
    assert_error(call(Method::GET, format!("/v3/entity-types/{entity_type}")).send().await.unwrap(), 404)
        .await;
    assert_error(call(Method::DELETE, format!("/v3/entity-types/{entity_type}")).send().await.unwrap(), 404)
        .await;
    // Still there for its owner.
    assert_eq!(app.get(&format!("/v3/buckets/{bucket}")).await.status(), 200);
    assert_eq!(app.get(&format!("/v3/entity-types/{entity_type}")).await.status(), 200);
}

#[tokio::test]
async fn a_key_over_its_rate_limit_gets_429_with_retry_after() {
    let app = spawn_app_with(Handlers::default(), |config| {
        config.rate_limit_burst = 3;
        config.rate_limit_per_second = 0.2;
    })
    .await;
    for _ in 0..3 {
        assert_eq!(app.get("/v3/buckets").await.status(), 200);
    }
    let limited = app.get("/v3/buckets").await;
    let retry_after: u64 = limited.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=5).contains(&retry_after), "Retry-After {retry_after}");
    assert_error(limited, 429).await;
    let other = app.new_key(None, Environment::Production).await;
    let response = app
        .client
        .get(format!("{}/v3/buckets", app.address))
        .header("x-api-key", other)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "the limit is per key");
}
