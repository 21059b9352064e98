//! PostgreSQL and Neo4j going away (stalled by SIGSTOP, or stopped and started again) are an
//! answer, not a hang: requests that need the backend answer 503 with Retry-After within 10 s,
//! requests that do not keep working, and canon recovers on its own, without a restart.
//! Each test runs a server of its own (the shared test servers cannot be stopped): a private
//! PostgreSQL cluster from Debian's binaries (scripts/postgres.sh installs them), a private
//! Neo4j from the launcher scripts/neo4j.sh builds. Without them the test says SKIPPED.

use crate::helpers::{json, spawn_app_with, unique, TestApp};
use canon::jobs::Handlers;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The bound for a 503 from a backend that went away.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

fn signal(pid: libc::pid_t, signal: libc::c_int) {
    assert!(pid > 0, "never kill(0): that is the test runner's own process group");
    // SAFETY: plain kill(2) on a server process this test started (checked positive above).
    unsafe { libc::kill(pid, signal) };
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The children of `parent` (a postmaster's backends and helpers), read from /proc.
fn children(parent: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|pid| {
            // `pid (comm) state ppid …`: comm may hold spaces, so read after its last `)`.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
            after.split_whitespace().nth(1).and_then(|ppid| ppid.parse().ok()) == Some(parent)
        })
        .collect()
}

/// Sends `request` until it answers 200, at most `within`, asserting 503 (never a 500 or a
/// hang) meanwhile; returns how long it took.
async fn answers_again(app: &TestApp, path: &str, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let response = app.request(reqwest::Method::GET, path).timeout(ANSWER_WITHIN).send().await;
        let status = response.expect("an answer within 10 s, never a hang").status();
        if status == 200 {
            return started.elapsed();
        }
        assert_eq!(status, 503, "{path} answers 503 meanwhile (Retry-After), never a 500");
        assert!(started.elapsed() < within, "{path} still answers {status} after {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Sends `path` once, expecting the backend's absence as a 503 with `Retry-After` within 10 s,
/// while `/healthz` and the OpenAPI document, which need no backend, answer meanwhile.
/// Returns how long the 503 took.
async fn unavailable_but_health_answers(app: &TestApp, path: &str, backend: &str) -> Duration {
    let started = Instant::now();
    let needs_backend = app.request(reqwest::Method::GET, path).timeout(Duration::from_secs(30)).send();
    let needs_nothing = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let health = app.client.get(format!("{}/healthz", app.address)).timeout(Duration::from_secs(5));
        let openapi = app.client.get(format!("{}/openapi.json", app.address)).timeout(Duration::from_secs(5));
        let health = health.send().await.expect("/healthz answers while the backend is away").status();
        let openapi = openapi.send().await.expect("/openapi.json answers").status();
        (health, openapi, started.elapsed())
    };
    let (response, (health, openapi, health_at)) = tokio::join!(needs_backend, needs_nothing);
    let waited = started.elapsed();
    let response = response.expect("an answer, not a hang");
    assert_eq!(response.status(), 503, "{path} while {backend} is away");
    assert!(waited < ANSWER_WITHIN, "the 503 came after {waited:?}");
    let retry_after = response.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_string);
    assert!(retry_after.as_deref().is_some_and(|v| v.parse::<u64>().is_ok()), "Retry-After: {retry_after:?}");
    let body = json(response).await;
    assert!(body["message"].as_str().is_some_and(|m| m.contains("retry")), "{body}");
    assert_eq!(health, 200, "/healthz needs no {backend}");
    assert_eq!(openapi, 200, "the OpenAPI document needs no {backend}");
    assert!(health_at < waited || waited < Duration::from_secs(1), "health ({health_at:?}) did not wait");
    waited
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/// A PostgreSQL cluster of the test's own, in a temporary folder, on a free loopback port.
struct Postgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    postmaster: Option<Child>,
}

impl Postgres {
    /// `None` (with SKIPPED printed) without Debian's server binaries.
    fn init() -> Option<Self> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(Result::ok)
            .map(|version| version.path().join("bin"))
            .filter(|bin| bin.join("postgres").exists() && bin.join("initdb").exists())
            .max();
        let Some(bin) = bin else {
            println!("SKIPPED: no PostgreSQL server under /usr/lib/postgresql (scripts/postgres.sh start installs it)");
            return None;
        };
        if !server_command(Path::new("true")).status().is_ok_and(|status| status.success()) {
            println!("SKIPPED: running as root without user namespaces, and PostgreSQL refuses root");
            return None;
        }
        let dir = tempfile::Builder::new().prefix("canon-pg-").tempdir().unwrap();
        let output = server_command(&bin.join("initdb"))
            .args(["--username=postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "-D"])
            .arg(dir.path().join("data"))
            .output()
            .expect("initdb runs");
        assert!(output.status.success(), "initdb: {}", String::from_utf8_lossy(&output.stderr));
        Some(Self { bin, dir, port: free_port(), postmaster: None })
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts the postmaster (again, on the same data) and waits until it accepts connections.
    fn start(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("server.log")).unwrap();
        let child = server_command(&self.bin.join("postgres"))
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-p", &self.port.to_string(), "-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", self.dir.path().display()))
            .args(["-c", "fsync=off", "-c", "max_connections=40", "-c", "shared_buffers=16MB"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("postgres starts");
        self.postmaster = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|status| status.success());
            if ready {
                return;
            }
            let log = std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
            assert!(Instant::now() < deadline, "PostgreSQL did not start:\n{log}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn pid(&self) -> libc::pid_t {
        self.postmaster.as_ref().expect("postgres runs").id() as libc::pid_t
    }

    /// The postmaster and every process it started (its connections' backends among them).
    fn processes(&self) -> Vec<libc::pid_t> {
        let pid = self.pid();
        let mut all = vec![pid];
        all.extend(children(pid));
        all
    }

    /// `pg_ctl stop -m immediate`'s signal (SIGQUIT): every process exits at once, no
    /// checkpoint, connections dropped; the next start recovers from the WAL.
    fn stop_immediately(&mut self) {
        signal(self.pid(), libc::SIGQUIT);
        let mut child = self.postmaster.take().unwrap();
        child.wait().expect("the postmaster exits");
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(mut child) = self.postmaster.take() {
            let pid = child.id() as libc::pid_t;
            let all: Vec<_> = std::iter::once(pid).chain(children(pid)).collect();
            for pid in &all {
                signal(*pid, libc::SIGCONT);
            }
            signal(pid, libc::SIGQUIT);
            let _ = child.wait();
        }
    }
}

/// PostgreSQL refuses to run as root: as root (CI) the server runs in a user namespace as
/// an unprivileged user, its files still the caller's (as scripts/postgres.sh does). `unshare`
/// without `--fork` execs the server, so the child's PID is the postmaster's.
fn server_command(program: &Path) -> Command {
    // SAFETY: getuid(2) cannot fail.
    if unsafe { libc::getuid() } == 0 {
        let mut command = Command::new("unshare");
        command.args(["--user", "--map-user=1000", "--map-group=1000"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// canon on a PostgreSQL of its own (the graph on its FalkorDB child whatever the pass, so
/// nothing but the records goes away), with one function stored.
async fn canon_on(postgres: &Postgres) -> TestApp {
    let url = postgres.url();
    let app = spawn_app_with(Handlers::default(), |config| {
        config.database_url = Some(url);
        config.neo4j_uri = None;
    })
    .await;
    let function = json!({"functionName": unique("before"), "type": "transform"});
    assert_eq!(app.post("/v3/functions", function).await.status(), 200);
    assert_eq!(app.get("/v3/functions").await.status(), 200);
    app
}

/// After an outage: a write and a read both work, the write's row read back.
async fn records_work(app: &TestApp) {
    let name = unique("after");
    let created = app.post("/v3/functions", json!({"functionName": name, "type": "transform"})).await;
    assert_eq!(created.status(), 200, "a write after the outage");
    let listed = json(app.get("/v3/functions").await).await;
    assert!(listed.to_string().contains(&name), "the new function is listed: {listed}");
}

#[tokio::test]
async fn a_stalled_postgresql_gets_record_requests_a_503_with_retry_after_within_10_s_and_sigcont_recovers() {
    let Some(mut postgres) = Postgres::init() else { return };
    postgres.start();
    let app = canon_on(&postgres).await;

    let stopped = postgres.processes();
    for pid in &stopped {
        signal(*pid, libc::SIGSTOP);
    }
    let waited = unavailable_but_health_answers(&app, "/v3/functions", "PostgreSQL").await;
    println!("503 {waited:?} after SIGSTOP of PostgreSQL ({} processes)", stopped.len());

    for pid in &stopped {
        signal(*pid, libc::SIGCONT);
    }
    let took = answers_again(&app, "/v3/functions", Duration::from_secs(10)).await;
    println!("records answered again {took:?} after SIGCONT");
    records_work(&app).await;
}

#[tokio::test]
async fn a_postgresql_stopped_immediately_gets_record_requests_a_503_and_canon_recovers_when_it_starts_again()
{
    let Some(mut postgres) = Postgres::init() else { return };
    postgres.start();
    let app = canon_on(&postgres).await;

    postgres.stop_immediately();
    let waited = unavailable_but_health_answers(&app, "/v3/functions", "PostgreSQL").await;
    println!("503 {waited:?} after PostgreSQL stopped (immediate)");
    // Still a 503, not a hang, for as long as it is away.
    let again = unavailable_but_health_answers(&app, "/v3/functions", "PostgreSQL").await;
    println!("503 {again:?} for a later request while it stays away");

    let started = Instant::now();
    postgres.start();
    let up = started.elapsed();
    let took = answers_again(&app, "/v3/functions", Duration::from_secs(10)).await;
    println!("PostgreSQL accepted connections {up:?} after its start; records answered {took:?} later");
    records_work(&app).await;
}

// ---------------------------------------------------------------------------------------------
// Neo4j

const NEO4J_PASSWORD: &str = "canon-away-password";

/// A Neo4j of the test's own: the launcher scripts/neo4j.sh built, started by that script on a
/// free port with its data, log and PID file in a temporary folder.
struct Neo4j {
    home: tempfile::TempDir,
    port: u16,
}

impl Neo4j {
    /// `None` (with SKIPPED printed) off the Neo4j pass, without Java, or when the launcher is
    /// not built (the test never builds it: that is Maven's minutes, `scripts/neo4j.sh build`).
    fn start_new() -> Option<Self> {
        if std::env::var("CANON_TEST_NEO4J_URI").is_err() {
            println!("SKIPPED: a Neo4j of the test's own runs only on the Neo4j pass (CANON_TEST_NEO4J_URI)");
            return None;
        }
        if !Command::new("java").arg("-version").output().is_ok_and(|out| out.status.success()) {
            println!("SKIPPED: no Java to run a Neo4j");
            return None;
        }
        let neo4j = Self {
            home: tempfile::Builder::new().prefix("canon-neo4j-").tempdir().unwrap(),
            port: free_port(),
        };
        neo4j.start().then_some(neo4j)
    }

    /// Starts the server on its folder (again, on the same data) and waits until Bolt answers;
    /// false (SKIPPED printed) when the launcher is not built.
    fn start(&self) -> bool {
        let script = crate::helpers::source_dir().join("scripts/neo4j.sh");
        let output = Command::new(script)
            .arg("start")
            .env("CANON_NEO4J_PORT", self.port.to_string())
            .env("CANON_NEO4J_HOME", self.home.path())
            .env("CANON_NEO4J_PASSWORD", NEO4J_PASSWORD)
            .env("CANON_NEO4J_BUILD", "0")
            .stdin(Stdio::null())
            .output()
            .expect("scripts/neo4j.sh runs");
        if output.status.code() == Some(3) {
            println!("SKIPPED: the Neo4j launcher is not built (scripts/neo4j.sh build)");
            return false;
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "scripts/neo4j.sh start: {stderr}");
        true
    }

    fn uri(&self) -> String {
        format!("bolt://127.0.0.1:{}", self.port)
    }

    /// The launcher's JVM (the script's PID file), checked to be alive.
    fn pid(&self) -> libc::pid_t {
        let text = std::fs::read_to_string(self.home.path().join("launcher.pid")).expect("PID file");
        let pid: libc::pid_t = text.trim().parse().expect("a PID");
        assert!(pid > 0 && Path::new(&format!("/proc/{pid}")).exists(), "Neo4j {pid} runs");
        pid
    }

    /// Kills the JVM as a crash or the OOM killer would, and waits until it is gone.
    fn kill(&self) {
        let pid = self.pid();
        signal(pid, libc::SIGKILL);
        let deadline = Instant::now() + Duration::from_secs(30);
        // The JVM is the script's grandchild, reaped by init: wait until /proc forgets it.
        while Path::new(&format!("/proc/{pid}/exe")).exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        // The next start must not take an unreaped JVM for a running server.
        std::fs::remove_file(self.home.path().join("launcher.pid")).unwrap();
    }
}

impl Drop for Neo4j {
    fn drop(&mut self) {
        // (No PID file: killed by the test and not started again.)
        if let Ok(text) = std::fs::read_to_string(self.home.path().join("launcher.pid")) {
            if let Ok(pid) = text.trim().parse::<libc::pid_t>() {
                if pid > 0 && Path::new(&format!("/proc/{pid}")).exists() {
                    signal(pid, libc::SIGCONT);
                    signal(pid, libc::SIGKILL);
                }
            }
        }
    }
}

impl TestApp {
    /// The status of a GET, whatever it is (an error for no answer within 30 s).
    async fn get_status(&self, path: &str) -> u16 {
        let response = self.request(reqwest::Method::GET, path).timeout(Duration::from_secs(30)).send().await;
        response.expect("an answer, not a hang").status().as_u16()
    }
}

/// A bucket read by ID is served from memory for a second: the next one asks the graph.
async fn past_bucket_memory() {
    tokio::time::sleep(Duration::from_millis(1100)).await;
}

/// One Neo4j start and one restart: SIGSTOP then SIGCONT, then kill -9 and a start on the same
/// data, canon (the same process throughout) answering 503 meanwhile and 200 after.
#[tokio::test]
async fn a_stalled_or_restarted_neo4j_gets_graph_requests_a_503_with_retry_after_within_10_s_and_canon_recovers(
) {
    let Some(neo4j) = Neo4j::start_new() else { return };
    let uri = neo4j.uri();
    let app = spawn_app_with(Handlers::default(), |config| {
        config.neo4j_uri = Some(uri);
        config.neo4j_user = "neo4j".into();
        config.neo4j_password = NEO4J_PASSWORD.into();
    })
    .await;
    let bucket = app.create_bucket("Away").await;
    let graph_path = format!("/v3/buckets/{bucket}");
    assert_eq!(app.get(&graph_path).await.status(), 200);
    let mut others = Vec::new();
    for i in 0..8 {
        others.push((app.create_bucket(&format!("Away {i}")).await, format!("Away {i}")));
    }

    // Stalled: the JVM stops (SIGSTOP); its sockets still accept, nothing answers.
    let pid = neo4j.pid();
    signal(pid, libc::SIGSTOP);
    past_bucket_memory().await;
    // Reads cut while they wait on the stopped server (several connections of the pool).
    let paths: Vec<String> = others.iter().map(|(id, _)| format!("/v3/buckets/{id}")).collect();
    let cut = futures::future::join_all(paths.iter().map(|path| app.get_status(path)));
    let (waited, cut) = tokio::join!(unavailable_but_health_answers(&app, &graph_path, "Neo4j"), cut);
    println!("503 {waited:?} after SIGSTOP of Neo4j");
    assert!(cut.iter().all(|status| *status == 503), "every read on the stopped server: {cut:?}");
    assert_eq!(app.get("/v3/functions").await.status(), 200, "listing functions needs no graph");
    let again = Instant::now();
    assert_eq!(app.get(&graph_path).await.status(), 503);
    println!("503 {:?} for a later graph request while it stays stopped", again.elapsed());
    signal(pid, libc::SIGCONT);
    let took = answers_again(&app, &graph_path, Duration::from_secs(15)).await;
    println!("graph answered again {took:?} after SIGCONT");
    assert_eq!(json(app.get(&graph_path).await).await["name"], "Away");
    // No connection a cut read left mid-reply serves another statement: each bucket reads back
    // as itself, twice round (a connection out of step would hand a statement an earlier reply).
    for _ in 0..2 {
        for (id, name) in &others {
            let response = app.get(&format!("/v3/buckets/{id}")).await;
            assert_eq!(response.status(), 200, "bucket {name} after SIGCONT");
            assert_eq!(json(response).await["name"], name.as_str());
        }
        past_bucket_memory().await;
    }

    // Gone and back: every pooled connection is broken by the kill.
    neo4j.kill();
    past_bucket_memory().await;
    let waited = unavailable_but_health_answers(&app, &graph_path, "Neo4j").await;
    println!("503 {waited:?} after kill -9 of Neo4j");
    let started = Instant::now();
    assert!(neo4j.start(), "the launcher was there a moment ago");
    let up = started.elapsed();
    let took = answers_again(&app, &graph_path, Duration::from_secs(30)).await;
    println!("Neo4j answered Bolt {up:?} after its start; graph requests answered {took:?} later");
    assert_eq!(json(app.get(&graph_path).await).await["name"], "Away", "the data survived the kill");
    let later = app.create_bucket("After the restart").await;
    assert_eq!(app.get(&format!("/v3/buckets/{later}")).await.status(), 200, "writes work again");
}
