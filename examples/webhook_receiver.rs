//! A reference webhook receiver: verifies `svc-signature` the way the spec asks and prints
//! each event it accepts.
//!
//! ```sh
//! WEBHOOK_SECRETS=whsec_new,whsec_old cargo run --example webhook_receiver -- 127.0.0.1:9000
//! ```
//!
//! It reads the raw body (never re-serialised JSON), accepts any `v1` matching any secret it
//! holds (old and new during a rotation), refuses a timestamp more than five minutes off its
//! clock either way, and answers 2xx at once; receivers dedupe by `eventID`, since the same
//! event may arrive more than once.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use canon::signature;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let address = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:9000".into());
    let secrets: Vec<String> = std::env::var("WEBHOOK_SECRETS")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let app = axum::Router::new().fallback(move |headers: HeaderMap, body: Bytes| {
        let secrets = secrets.clone();
        async move {
            let header = headers.get(signature::HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
            let held: Vec<&str> = secrets.iter().map(String::as_str).collect();
            match signature::verify(header, &body, &held, chrono::Utc::now().timestamp()) {
                Ok(()) => {
                    println!("{}", String::from_utf8_lossy(&body));
                    StatusCode::NO_CONTENT
                }
                Err(err) => {
                    eprintln!("refused: {err}");
                    StatusCode::UNAUTHORIZED
                }
            }
        }
    });
    let listener = tokio::net::TcpListener::bind(&address).await?;
    eprintln!("listening on {address}");
    axum::serve(listener, app).await?;
    Ok(())
}
