//! `canon serve` as its own process on a bench's data directory: what a crash (`kill -9`)
//! needs. In process, an aborted canon keeps what it holds open (the vector store's lock
//! among them), so a start after it is no start after a crash.

use super::Bench;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

pub struct Serve {
    child: Child,
    pub base: String,
    pub key: String,
    pub client: reqwest::Client,
    port: u16,
    data: tempfile::TempDir,
    vendor: PathBuf,
    /// The bench's PostgreSQL records (`CANON_BENCH_DATABASE_URL`), else SQLite in `data`.
    database_url: Option<String>,
    /// That database, dropped when this canon stops.
    database: Option<super::BenchDatabase>,
}

/// Start times after a crash (see [`Serve::crash_restart`]).
pub struct CrashStart {
    /// FalkorDB alone answering PING on the crashed files, indexes built first (as canon
    /// launches it when queries are left to replay).
    pub engine: Duration,
    /// canon answering a graph read (a knowledge-graph page), or how long it ran before it
    /// exited and why (its last log lines).
    pub canon: Result<Duration, (Duration, String)>,
}

impl Serve {
    /// Stops the in-process canon cleanly and runs `canon serve` on its data directory,
    /// waiting until it answers a graph read and has built its indexes.
    pub async fn start(bench: Bench) -> anyhow::Result<Self> {
        let Bench { app, key, client, config, _data, database, .. } = bench;
        app.stop().await;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let child = spawn(port, _data.path(), &config.vendor_dir, config.database_url.as_deref())?;
        let mut serve = Serve {
            child,
            base: format!("http://127.0.0.1:{port}"),
            key,
            client,
            port,
            data: _data,
            vendor: config.vendor_dir,
            database_url: config.database_url,
            database,
        };
        serve
            .answers(Instant::now() + Duration::from_secs(600))
            .await
            .map_err(|(_, err)| anyhow::anyhow!(err))?;
        loop {
            let ready: serde_json::Value =
                serve.client.get(format!("{}/readyz", serve.base)).send().await?.json().await?;
            if ready["backends"]["graph"]["building"].is_null() {
                return Ok(serve);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn data_dir(&self) -> &Path {
        self.data.path()
    }

    /// `kill -9` of FalkorDB and of canon, then FalkorDB alone on the files left, then
    /// `canon serve` again, timed until a graph read answers.
    pub async fn crash_restart(mut self) -> anyhow::Result<(Self, CrashStart)> {
        let dir = self.data.path().join("falkordb");
        let falkordb: Option<i32> =
            std::fs::read_to_string(dir.join("redis.pid")).ok().and_then(|pid| pid.trim().parse().ok());
        if let Some(pid) = falkordb {
            // SAFETY: a plain kill(2) of the FalkorDB child canon started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        self.child.start_kill()?;
        self.child.wait().await?;
        let gone = Instant::now();
        while tokio::net::UnixStream::connect(dir.join("falkordb.sock")).await.is_ok() {
            anyhow::ensure!(gone.elapsed() < Duration::from_secs(30), "the killed FalkorDB still answers");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let engine = super::engine_start(&dir, &self.vendor, false).await?;
        let started = Instant::now();
        self.child = spawn(self.port, self.data.path(), &self.vendor, self.database_url.as_deref())?;
        let canon = self.answers(started + Duration::from_secs(600)).await.map(|()| started.elapsed());
        Ok((self, CrashStart { engine, canon }))
    }

    /// Waits until a knowledge-graph page answers 200; an exit or the deadline is an error
    /// with the time it took and canon's last log lines.
    async fn answers(&mut self, deadline: Instant) -> Result<(), (Duration, String)> {
        let started = Instant::now();
        loop {
            let page = self
                .client
                .get(format!("{}/v3/knowledge-graph?limit=50", self.base))
                .header("x-api-key", &self.key)
                .send()
                .await;
            if page.is_ok_and(|page| page.status() == 200) {
                return Ok(());
            }
            let exited = self.child.try_wait().ok().flatten();
            if exited.is_some() || Instant::now() > deadline {
                let log = std::fs::read_to_string(self.data.path().join("serve.log")).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(5).collect();
                let why = match exited {
                    Some(status) => format!("canon serve exited ({status})"),
                    None => "no graph read within 10 min".to_string(),
                };
                let lines = tail.into_iter().rev().collect::<Vec<_>>().join(" | ");
                return Err((started.elapsed(), format!("{why}; its log ends: {lines}")));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Clean stop (SIGTERM), as an operator would.
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            // SAFETY: a plain kill(2) of the canon this bench started.
            unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        }
        let _ = tokio::time::timeout(Duration::from_secs(120), self.child.wait()).await;
        if let Some(db) = self.database.take() {
            db.remove().await;
        }
    }
}

/// `canon serve` (the binary cargo built beside this bench) on `data`, logging to
/// `serve.log` there, with no rate limit and only the embedded backends (but the bench's
/// PostgreSQL records, when it has them).
fn spawn(port: u16, data: &Path, vendor: &Path, database_url: Option<&str>) -> anyhow::Result<Child> {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(data.join("serve.log"))?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_canon"));
    match database_url {
        Some(url) => command.env("CANON_DATABASE_URL", url),
        None => command.env_remove("CANON_DATABASE_URL"),
    };
    let child = command
        .arg("serve")
        .env("CANON_LISTEN", format!("127.0.0.1:{port}"))
        .env("CANON_DATA_DIR", data)
        .env("CANON_VENDOR_DIR", vendor)
        .env("CANON_RATE_LIMIT_PER_SECOND", "1000000000")
        .env("CANON_RATE_LIMIT_BURST", "4000000000")
        .env("CANON_LOG", "info")
        .env_remove("CANON_NEO4J_URI")
        .env_remove("CANON_FALKORDB_URL")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .kill_on_drop(true)
        .spawn()?;
    Ok(child)
}
