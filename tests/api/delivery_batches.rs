//! The outbox claims, signs and records deliveries by the batch: many deliveries taken and
//! settled in the same turns still each go out once, signed, with their own attempts.

use crate::delivery::{now, settled_log, spawn_delivering_app};
use crate::helpers::{json, unique, TestApp};
use axum::http::{HeaderMap, StatusCode};
use canon::signature;
use canon::store::records::Owner;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

// The benchmark's events (benches and tests are crates of their own).
#[path = "../../benches/common/events.rs"]
mod events;

/// Events recorded at once: more than one turn of the outbox takes at its smallest.
const EVENTS: usize = 40;

/// What a receiver got, in arrival order: the `svc-signature` header and the raw body.
type Arrivals = Arc<Mutex<Vec<(String, String)>>>;

/// A loopback receiver that refuses each event's first request (500) when `flaky`, and
/// accepts every other.
async fn receiver(flaky: bool) -> (String, Arrivals) {
    let arrivals: Arrivals = Arc::default();
    let refused: Arc<Mutex<HashSet<String>>> = Arc::default();
    let log = arrivals.clone();
    let router = axum::Router::new().fallback(move |headers: HeaderMap, body: String| {
        let (log, refused) = (log.clone(), refused.clone());
        async move {
            let signed = headers.get(signature::HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
            log.lock().unwrap().push((signed.to_string(), body.clone()));
            let event = serde_json::from_str::<Value>(&body).unwrap_or_default()["eventID"].to_string();
            if flaky && refused.lock().unwrap().insert(event) {
                StatusCode::INTERNAL_SERVER_ERROR
            } else {
                StatusCode::OK
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}/hook"), arrivals)
}

/// Records `EVENTS` terminal events of `function_id` back to back; returns their bodies by ID.
async fn record_events(app: &TestApp, function_id: &str) -> BTreeMap<String, String> {
    let owner = Owner { account_id: &app.account_id, environment: "sandbox" };
    let records = &app.app().state.records;
    let recorded = events::record_terminal_events(records, owner, function_id, "batch", EVENTS).await;
    recorded.expect("events recorded").into_iter().collect()
}

/// Waits until `arrivals` holds `count` requests, then a little longer for any extra one.
async fn arrived(arrivals: &Arrivals, count: usize) -> Vec<(String, String)> {
    for _ in 0..600 {
        if arrivals.lock().unwrap().len() >= count {
            tokio::time::sleep(Duration::from_millis(300)).await;
            return arrivals.lock().unwrap().clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("expected {count} requests, got {}", arrivals.lock().unwrap().len());
}

#[tokio::test]
async fn deliveries_claimed_and_recorded_together_each_go_out_signed_with_their_own_attempts() {
    let app = spawn_delivering_app(|_| {}).await;
    let (flaky_url, flaky) = receiver(true).await;
    let (steady_url, steady) = receiver(false).await;
    let created = app.create_function(json!({"functionName": "shaper", "type": "transform"})).await;
    let function_id = created["functionID"].as_str().unwrap().to_string();
    let mut subscriptions = Vec::new();
    for url in [&flaky_url, &steady_url] {
        let body =
            json!({"name": unique("sub"), "type": "transform", "functionName": "shaper", "webhookURL": url});
        let response = app.post("/v3/subscriptions", body).await;
        assert_eq!(response.status(), 200);
        subscriptions.push(json(response).await["subscriptionID"].as_str().unwrap().to_string());
    }
    let secret = app.generate_secret().await;

    let bodies = record_events(&app, &function_id).await;

    // The steady receiver gets each event once; the flaky one each twice (refused, then taken).
    for (arrivals, times) in [(&steady, 1), (&flaky, 2)] {
        let got = arrived(arrivals, EVENTS * times).await;
        assert_eq!(got.len(), EVENTS * times, "nothing more than that");
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (header, body) in &got {
            let id = serde_json::from_str::<Value>(body).unwrap()["eventID"].as_str().unwrap().to_string();
            assert_eq!(bodies.get(&id), Some(body), "the recorded body, byte for byte");
            assert_eq!(signature::verify(header, body.as_bytes(), &[&secret], now()), Ok(()), "{header}");
            *seen.entry(id).or_default() += 1;
        }
        assert_eq!(seen.len(), EVENTS, "every event");
        assert!(seen.values().all(|n| *n == times), "{seen:?}");
    }

    // Each delivery's log holds its own attempts.
    for (subscription, codes) in
        [(&subscriptions[0], vec![json!(500), json!(200)]), (&subscriptions[1], vec![json!(200)])]
    {
        let log = settled_log(&app, &format!("/v3/subscriptions/{subscription}/deliveries")).await;
        let deliveries = log["deliveries"].as_array().unwrap();
        assert_eq!(deliveries.len(), EVENTS, "{log}");
        for delivery in deliveries {
            assert_eq!(delivery["status"], "delivered", "{delivery}");
            let got: Vec<Value> =
                delivery["attempts"].as_array().unwrap().iter().map(|a| a["statusCode"].clone()).collect();
            assert_eq!(got, codes, "{delivery}");
            let first = &delivery["attempts"][0];
            assert_eq!(first["nextRetryAt"].is_string(), codes.len() > 1, "{delivery}");
        }
    }
}
