//! The benchmark's receiver, in a process of its own (the bench binary run again with
//! `CANON_BENCH_RECEIVER=1`): a real receiver never shares canon's runtime, and in one
//! process its handlers, canon's sends and the plain client all queued on the same two
//! worker threads. It counts arrivals and how late each event came after it was created;
//! `/_ctl/*` lets the benchmark hold and release requests and read the counts.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;

pub const ROLE: &str = "CANON_BENCH_RECEIVER";

#[derive(Clone)]
struct Receiver {
    /// Milliseconds from each arrived event's `createdAt` to its arrival.
    late: Arc<Mutex<Vec<f64>>>,
    gate: Arc<watch::Sender<bool>>,
}

/// Serves until stdin closes (the benchmark ended or died), printing its address first.
pub async fn serve() -> anyhow::Result<()> {
    let receiver = Receiver { late: Arc::default(), gate: Arc::new(watch::channel(true).0) };
    let router = axum::Router::new()
        .route(
            "/_ctl/count",
            get(|State(r): State<Receiver>| async move { r.late.lock().unwrap().len().to_string() }),
        )
        .route(
            "/_ctl/late",
            get(|State(r): State<Receiver>| async move { axum::Json(r.late.lock().unwrap().clone()) }),
        )
        .route("/_ctl/clear", post(|State(r): State<Receiver>| async move { r.late.lock().unwrap().clear() }))
        .route(
            "/_ctl/hold",
            post(|State(r): State<Receiver>| async move {
                r.gate.send_replace(false);
            }),
        )
        .route(
            "/_ctl/release",
            post(|State(r): State<Receiver>| async move {
                r.gate.send_replace(true);
            }),
        )
        .fallback(arrive)
        .with_state(receiver);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?);
    let stdin_closed = async {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(_)) = lines.next_line().await {}
    };
    axum::serve(listener, router).with_graceful_shutdown(stdin_closed).await?;
    Ok(())
}

async fn arrive(State(receiver): State<Receiver>, body: String) -> StatusCode {
    let _ = receiver.gate.subscribe().wait_for(|open| *open).await;
    let event: Value = serde_json::from_str(&body).unwrap_or_default();
    let created = event["createdAt"].as_str().and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
    let late = created
        .map(|c| (chrono::Utc::now() - c.with_timezone(&chrono::Utc)).to_std().unwrap_or_default())
        .unwrap_or_default();
    receiver.late.lock().unwrap().push(late.as_secs_f64() * 1000.0);
    StatusCode::OK
}

/// The receiver process, started from this benchmark's own binary.
pub struct Remote {
    child: tokio::process::Child,
    pub base: String,
    client: reqwest::Client,
}

impl Remote {
    pub async fn start() -> anyhow::Result<Self> {
        let mut child = tokio::process::Command::new(std::env::current_exe()?)
            .env(ROLE, "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?;
        let mut first = String::new();
        BufReader::new(stdout).read_line(&mut first).await?;
        let base = format!("http://{}", first.trim());
        Ok(Self { child, base, client: reqwest::Client::new() })
    }

    /// The receiver process's ID.
    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or_default()
    }

    async fn control(&self, what: &str) -> anyhow::Result<()> {
        let response = self.client.post(format!("{}/_ctl/{what}", self.base)).send().await?;
        anyhow::ensure!(response.status().is_success(), "receiver {what}: {}", response.status());
        Ok(())
    }

    pub async fn hold(&self) -> anyhow::Result<()> {
        self.control("hold").await
    }

    pub async fn release(&self) -> anyhow::Result<()> {
        self.control("release").await
    }

    pub async fn clear(&self) -> anyhow::Result<()> {
        self.control("clear").await
    }

    pub async fn count(&self) -> anyhow::Result<usize> {
        Ok(self.client.get(format!("{}/_ctl/count", self.base)).send().await?.text().await?.parse()?)
    }

    /// How late each arrival was.
    pub async fn late(&self) -> anyhow::Result<Vec<Duration>> {
        let ms: Vec<f64> = self.client.get(format!("{}/_ctl/late", self.base)).send().await?.json().await?;
        Ok(ms.into_iter().map(|m| Duration::from_secs_f64(m / 1000.0)).collect())
    }

    /// Waits until `count` requests arrived (five minutes at most).
    pub async fn wait_for(&self, count: usize) -> anyhow::Result<()> {
        let deadline = std::time::Instant::now() + Duration::from_secs(300);
        loop {
            let arrived = self.count().await?;
            if arrived >= count {
                return Ok(());
            }
            anyhow::ensure!(std::time::Instant::now() < deadline, "only {arrived} of {count} arrived");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    pub async fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
    }
}
