//! Every reply from outside is read under a cap: a receiver answering a send with an endless
//! body costs canon the cap (1 MiB kept, flagged as truncated), a model answering with more
//! than 4 MiB fails the call naming the cap, and a tenant cannot set a timeout past its bound.

use crate::helpers::{assert_error, cli_key, json, serve_process_with, spawn_app_with, unique};
use axum::http::StatusCode;
use canon::jobs::Handlers;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the receiver declares it will send: far more than canon may hold.
const HUGE_BODY: u64 = 1024 * 1024 * 1024;
/// The bound stated in the README: how much canon's peak memory may grow while it reads a
/// reply of [`HUGE_BODY`] bytes (the cap is 1 MiB; the rest is the call's own work).
const RSS_GROWTH_LIMIT_MIB: u64 = 64;

/// A `/proc/<pid>/status` figure (`VmRSS`, `VmHWM`) in KiB.
fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).expect("the field in /proc status");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A loopback receiver that reads each request, then answers `status` with a
/// `HUGE_BODY`-byte body generated as it goes (nothing stored), until the client hangs up.
/// Returns its URL and how many body bytes it managed to send.
pub(crate) async fn endless_receiver(status: &'static str) -> (String, Arc<AtomicU64>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let sent = Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            let counter = counter.clone();
            tokio::spawn(async move {
                read_request(&mut socket).await;
                let head = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {HUGE_BODY}\r\n\r\n"
                );
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'x'; 64 * 1024];
                let mut left = HUGE_BODY;
                while left > 0 {
                    let n = left.min(chunk.len() as u64) as usize;
                    if socket.write_all(&chunk[..n]).await.is_err() {
                        return; // canon stopped reading and hung up
                    }
                    counter.fetch_add(n as u64, Ordering::Relaxed);
                    left -= n as u64;
                }
            });
        }
    });
    (url, sent)
}

/// Reads one HTTP request: its head, then `content-length` bytes of body.
async fn read_request(socket: &mut tokio::net::TcpStream) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let Ok(n) = socket.read(&mut chunk).await else { return };
        if n == 0 {
            return;
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buffer.len() >= end + 4 + length {
                return;
            }
        }
    }
}

/// The first value of `key` anywhere in `value`.
fn find<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(key).or_else(|| map.values().find_map(|v| find(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find(v, key)),
        _ => None,
    }
}

#[tokio::test]
async fn a_send_answered_with_a_gibibyte_keeps_one_mebibyte_flags_it_truncated_and_canon_stays_flat() {
    let (hook, sent) = endless_receiver("200 OK").await;
    let data = tempfile::tempdir().unwrap();
    let key = cli_key(data.path(), "replies-co");
    let (canon, address) = serve_process_with(data.path(), &[("CANON_ALLOW_PRIVATE_NETWORK", "true")]);
    let canon = KilledOnDrop(canon);
    let client = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        client.post(format!("{address}{path}")).header("x-api-key", &key).json(&body).send()
    };
    let function =
        json!({"functionName": "notify", "type": "send", "destinationType": "webhook", "webhookUrl": hook});
    assert_eq!(post("/v3/functions", function).await.unwrap().status(), 200);
    let workflow = json!({"name": "notify", "mainNodeName": "notify",
        "nodes": [{"name": "notify", "function": {"name": "notify"}}], "edges": []});
    assert_eq!(post("/v3/workflows", workflow).await.unwrap().status(), 200);
    let call = |reference: &str| {
        json!({"callReferenceID": reference,
            "input": {"singleFile": {"inputContent": "aGVsbG8=", "inputType": "text"}}})
    };
    // One call first, so what start-up work a first call does is in the baseline.
    let warm = post("/v3/workflows/notify/call?wait=true", call("warm-up")).await.unwrap();
    assert_eq!(warm.status(), 200);
    let (rss_before, peak_before) = (memory_kib(canon.0.id(), "VmRSS:"), memory_kib(canon.0.id(), "VmHWM:"));
    sent.store(0, Ordering::Relaxed);

    let answered = tokio::time::timeout(
        Duration::from_secs(60),
        post("/v3/workflows/notify/call?wait=true", call("huge-reply")),
    )
    .await
    .expect("the call completes within 60 s")
    .unwrap();
    assert_eq!(answered.status(), 200);
    let body = json(answered).await;
    let (rss_after, peak_after) = (memory_kib(canon.0.id(), "VmRSS:"), memory_kib(canon.0.id(), "VmHWM:"));
    drop(canon);

    assert_eq!(body["call"]["status"], "completed", "{}", truncated(&body));
    let output =
        find(&body, "webhookOutput").unwrap_or_else(|| panic!("a send output in {}", truncated(&body)));
    assert_eq!(output["httpStatusCode"], 200);
    assert_eq!(output["httpResponseBodyTruncated"], true);
    assert_eq!(output["httpResponseBody"].as_str().unwrap().len(), 1024 * 1024, "exactly the 1 MiB kept");
    let streamed = sent.load(Ordering::Relaxed);
    assert!(streamed < 64 * 1024 * 1024, "canon stopped reading after the cap ({streamed} bytes sent)");
    let rss_growth = rss_after.saturating_sub(rss_before) / 1024;
    let peak_growth = peak_after.saturating_sub(peak_before) / 1024;
    println!(
        "FIGURES: receiver offered {HUGE_BODY} bytes, sent {streamed} before canon hung up; \
         canon VmRSS {rss_before} -> {rss_after} KiB (+{rss_growth} MiB), VmHWM {peak_before} -> \
         {peak_after} KiB (+{peak_growth} MiB)"
    );
    assert!(peak_growth < RSS_GROWTH_LIMIT_MIB, "peak memory grew {peak_growth} MiB");
    assert!(rss_growth < RSS_GROWTH_LIMIT_MIB, "resident memory grew {rss_growth} MiB");
}

/// The `canon serve` child, stopped however the test ends.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn truncated(body: &Value) -> String {
    body.to_string().chars().take(2_000).collect()
}

#[tokio::test]
async fn a_model_answering_more_than_four_mebibytes_fails_the_call_naming_the_cap() {
    // A chat-completions stub whose answer is 5 MiB of JSON.
    let router = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(|| async {
            let filler = "y".repeat(5 * 1024 * 1024);
            let content = json!({"invoiceNumber": "INV-1", "filler": filler}).to_string();
            let body = json!({"id": "c", "object": "chat.completion", "model": "stub",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]});
            (StatusCode::OK, axum::Json(body))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let app = spawn_app_with(Handlers::default(), |c| c.allow_private_network = true).await;
    app.create_function(json!({"functionName": "llm", "type": "extract", "outputSchemaName": "Out",
        "outputSchema": {"type": "object", "properties": {"invoiceNumber": {"type": "string"}}},
        "extraConfig": {"llm": {"baseUrl": base, "model": "stub-model"}}}))
        .await;
    app.pipeline("llm", &["llm"], &[]).await;
    let (status, body) = app.call_text("llm", "Invoice INV-1", json!({}), true).await;
    assert_eq!(status, 200, "{body}");
    let call = if body["call"]["status"] == "running" {
        app.finished_call(body["call"]["callID"].as_str().unwrap()).await
    } else {
        body["call"].clone()
    };
    assert_eq!(call["status"], "failed", "{}", truncated(&call));
    let text = call.to_string();
    assert!(text.contains("larger than 4 MiB"), "the error names the cap: {}", truncated(&call));
}

#[tokio::test]
async fn a_model_timeout_of_ten_million_seconds_is_refused_with_400_naming_the_field_and_bound() {
    let app = spawn_app_with(Handlers::default(), |c| c.allow_private_network = true).await;
    let function = |seconds: Value| {
        json!({"functionName": "llm", "type": "extract", "outputSchemaName": "Out",
            "outputSchema": {"type": "object"},
            "extraConfig": {"llm": {"baseUrl": "http://127.0.0.1:9/v1", "model": "m", "timeoutSeconds": seconds}}})
    };
    for refused in [json!(10_000_000), json!(0), json!(-5), json!(1.5), json!("60")] {
        let error = assert_error(app.post("/v3/functions", function(refused.clone())).await, 400).await;
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("extraConfig.llm.timeoutSeconds"), "{refused}: {error}");
        assert!(message.contains("from 1 to 600"), "{refused}: {error}");
    }
    assert_eq!(app.post("/v3/functions", function(json!(600))).await.status(), 200);
    // A whole float is that number of seconds, as every integer of a body.
    let function_30 = json!({"functionName": "llm2", "type": "extract", "outputSchemaName": "Out",
        "outputSchema": {"type": "object"},
        "extraConfig": {"llm": {"baseUrl": "http://127.0.0.1:9/v1", "model": "m", "timeoutSeconds": 30.0}}});
    assert_eq!(app.post("/v3/functions", function_30).await.status(), 200);
    // Raising it past the bound on a later version is refused the same way.
    let patch = json!({"extraConfig": {"llm": {"baseUrl": "http://127.0.0.1:9/v1", "model": "m", "timeoutSeconds": 601}}});
    let error = assert_error(app.patch("/v3/functions/llm", patch).await, 400).await;
    assert!(error["message"].as_str().unwrap().contains("extraConfig.llm.timeoutSeconds"), "{error}");
}

#[tokio::test]
async fn a_send_refused_with_a_gibibyte_error_body_fails_quoting_only_an_excerpt() {
    let (hook, sent) = endless_receiver("500 Internal Server Error").await;
    let app = spawn_app_with(Handlers::default(), |c| c.allow_private_network = true).await;
    app.create_function(
        json!({"functionName": "notify", "type": "send", "destinationType": "webhook", "webhookUrl": hook}),
    )
    .await;
    app.pipeline("notify", &["notify"], &[]).await;
    let (status, body) =
        tokio::time::timeout(Duration::from_secs(60), app.call_text("notify", "hello", json!({}), true))
            .await
            .expect("the call ends within 60 s");
    assert_eq!(status, 200, "{}", truncated(&body));
    assert_eq!(body["call"]["status"], "failed", "{}", truncated(&body));
    let text = body.to_string();
    assert!(text.contains("answered 500"), "{}", truncated(&body));
    assert!(text.len() < 64 * 1024, "only an excerpt of the error body is kept ({} bytes)", text.len());
    let streamed = sent.load(Ordering::Relaxed);
    assert!(streamed < 64 * 1024 * 1024, "canon stopped reading the error body ({streamed} bytes sent)");
}

#[tokio::test]
async fn a_subscription_receiver_answering_a_gibibyte_is_delivered_without_canon_reading_it() {
    let (hook, sent) = endless_receiver("200 OK").await;
    let app = spawn_app_with(Handlers::default(), |c| c.allow_private_network = true).await;
    // As the delivery tests: extract, then a transform whose events the subscription takes.
    app.extract_function("reader", crate::calls::invoice_schema()).await;
    app.create_function(json!({"functionName": "shaper", "type": "transform", "outputSchemaName": "Row",
        "outputSchema": {"type": "object", "properties": {"invoiceNumber": {"type": "string"}}}}))
        .await;
    app.pipeline("shape", &["reader", "shaper"], &[("reader", "shaper")]).await;
    let subscription =
        json!({"name": unique("sub"), "type": "transform", "functionName": "shaper", "webhookURL": hook});
    let response = app.post("/v3/subscriptions", subscription).await;
    assert_eq!(response.status(), 200);
    let id = json(response).await["subscriptionID"].as_str().unwrap().to_string();
    let (status, body) = app.call_text("shape", crate::calls::INVOICE, json!({}), true).await;
    assert_eq!(status, 200, "{body}");
    let path = format!("/v3/subscriptions/{id}/deliveries");
    let mut delivered = Value::Null;
    for _ in 0..600 {
        let log = json(app.get(&path).await).await;
        if log["deliveries"][0]["status"] == "delivered" {
            delivered = log;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(delivered["deliveries"][0]["status"], "delivered", "the delivery settles within 30 s");
    assert!(delivered.to_string().len() < 64 * 1024, "the log keeps an excerpt at most");
    let streamed = sent.load(Ordering::Relaxed);
    assert!(streamed < 64 * 1024 * 1024, "the worker stopped reading ({streamed} bytes sent)");
}
