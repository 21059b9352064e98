//! What every benchmark needs: canon in process on a fresh data directory, a key, timing.

#![allow(dead_code)]

pub mod events;
#[path = "../../tests/support/postgres.rs"]
mod postgres;
use postgres::{create_database, drop_database};
pub mod receiver;
pub mod serve;

use canon::app::App;
use canon::config::Config;
use canon::graph::entities::resolution_key;
use canon::graph::normalize::normalize;
use canon::graph::{queries, Tenant};
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;

pub struct Bench {
    pub app: App,
    pub base: String,
    pub key: String,
    pub tenant: Tenant,
    pub client: reqwest::Client,
    pub config: Config,
    _data: tempfile::TempDir,
    /// The run's own PostgreSQL database, if any, dropped when the bench stops.
    pub database: Option<BenchDatabase>,
}

/// A database made for one run on the server `CANON_BENCH_DATABASE_URL` points at.
pub struct BenchDatabase {
    admin_url: String,
    pub url: String,
}

impl BenchDatabase {
    /// A fresh database `<prefix>_<ulid>` on the server `admin_url` points at.
    pub async fn create(admin_url: &str, prefix: &str) -> Result<Self, sqlx::Error> {
        let url = create_database(admin_url, prefix).await?;
        Ok(Self { admin_url: admin_url.to_string(), url })
    }

    /// Drops it, unless `CANON_BENCH_KEEP=1` keeps the run's data to look at.
    pub async fn remove(self) {
        if keep() {
            eprintln!("keeping the database {}", self.url);
        } else if let Err(err) = drop_database(&self.admin_url, &self.url).await {
            eprintln!("could not drop {}: {err}", self.url);
        }
    }
}

fn keep() -> bool {
    std::env::var("CANON_BENCH_KEEP").is_ok_and(|v| v == "1")
}

/// Where a bench's canon keeps its records.
pub enum RecordStore {
    /// A fresh database on `CANON_BENCH_DATABASE_URL`'s server when it is set, else SQLite.
    FromEnv,
    /// SQLite in the data directory, whatever the environment says.
    Sqlite,
    /// A database the bench made itself (and drops).
    Postgres(String),
}

/// Canon on its embedded defaults with no rate limit, and one sandbox key.
pub async fn start(configure: impl FnOnce(&mut Config)) -> anyhow::Result<Bench> {
    start_with(RecordStore::FromEnv, configure).await
}

/// [`start`] with its records where `records` says.
pub async fn start_with(records: RecordStore, configure: impl FnOnce(&mut Config)) -> anyhow::Result<Bench> {
    // `CANON_BENCH_KEEP=1` keeps the data directory and the database (to look at them after a run).
    let keep = keep();
    // `CANON_LOG` (as for `canon serve`) logs to stderr, e.g. `canon::graph::window=debug`.
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("CANON_LOG") {
        let subscriber = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
        let _ = subscriber.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).try_init();
    }
    let data = tempfile::Builder::new().prefix("canon-bench").disable_cleanup(keep).tempdir()?;
    if keep {
        eprintln!("keeping the data directory {}", data.path().display());
    }
    let vendor = canon::provision::source_dir().join("vendor");
    let mut config = Config::embedded(data.path(), &vendor);
    let (database, database_url) = match records {
        RecordStore::FromEnv => {
            let database = fresh_postgres_database().await?;
            let url = database.as_ref().map(|db| db.url.clone());
            (database, url)
        }
        RecordStore::Sqlite => (None, None),
        RecordStore::Postgres(url) => (None, Some(url)),
    };
    config.database_url = database_url;
    config.rate_limit_per_second = 1e9;
    config.rate_limit_burst = u32::MAX;
    // `CANON_JOBS_PER_TENANT` as for `canon serve` (e.g. the seed jobs one tenant runs at once).
    if let Some(n) = std::env::var("CANON_JOBS_PER_TENANT").ok().and_then(|v| v.parse().ok()) {
        config.jobs_per_tenant = n;
    }
    configure(&mut config);
    let app = App::spawn(&config, Handlers::default()).await?;
    let base = format!("http://{}", app.addr);
    let account = app.state.records.ensure_account("bench").await?;
    let (_, key) = app.state.records.create_key(&account.id, Environment::Sandbox, "bench").await?;
    let tenant = Tenant { account_id: account.id.clone(), environment: Environment::Sandbox };
    app.state.graph.ensure_tenant(&tenant).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let client = reqwest::Client::builder().pool_max_idle_per_host(64).build()?;
    Ok(Bench { app, base, key, tenant, client, config, _data: data, database })
}

/// `CANON_BENCH_DATABASE_URL` (a PostgreSQL server's URL, e.g. the last line of
/// `scripts/postgres.sh start`) puts the records in a database of their own on it
/// (`canon_bench_<ulid>`), created for the run and dropped when it stops; unset, SQLite in the
/// data directory. Production pairs Neo4j with PostgreSQL: the bench can measure that pair.
async fn fresh_postgres_database() -> anyhow::Result<Option<BenchDatabase>> {
    let Some(admin_url) = std::env::var("CANON_BENCH_DATABASE_URL").ok().filter(|url| !url.is_empty()) else {
        return Ok(None);
    };
    let database = BenchDatabase::create(&admin_url, "canon_bench").await?;
    eprintln!("records in PostgreSQL: {}", database.url);
    Ok(Some(database))
}

impl Bench {
    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(format!("{}{path}", self.base)).header("x-api-key", &self.key)
    }

    pub fn post(&self, path: &str, body: &serde_json::Value) -> reqwest::RequestBuilder {
        self.client.post(format!("{}{path}", self.base)).header("x-api-key", &self.key).json(body)
    }

    /// The data directory (the SQLite record store is in it).
    pub fn data_dir(&self) -> &std::path::Path {
        self._data.path()
    }

    pub async fn stop(self) {
        self.app.stop().await;
        if let Some(db) = self.database {
            db.remove().await;
        }
    }

    /// Stops canon, times FalkorDB alone loading the files canon left (the limit), then
    /// times canon starting again on them.
    pub async fn restart(self) -> anyhow::Result<(Self, Starts)> {
        let Bench { app, key, tenant, client, config, _data, database, .. } = self;
        app.stop().await;
        let dir = config.data_dir.join("falkordb");
        let engine_indexing = engine_start(&dir, &config.vendor_dir, false).await?;
        let engine = engine_start(&dir, &config.vendor_dir, true).await?;
        let started = std::time::Instant::now();
        let app = App::spawn(&config, Handlers::default()).await?;
        let canon = started.elapsed();
        let base = format!("http://{}", app.addr);
        let bench = Bench { app, base, key, tenant, client, config, _data, database };
        // Index builds on a million entities take seconds; ten minutes means they are stuck.
        let deadline = started + Duration::from_secs(600);
        loop {
            let ready: Value =
                bench.client.get(format!("{}/readyz", bench.base)).send().await?.json().await?;
            if ready["backends"]["graph"]["building"].is_null() {
                break;
            }
            anyhow::ensure!(
                std::time::Instant::now() < deadline,
                "indexes still building after 10 min: {ready}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let canon_indexed = started.elapsed();
        Ok((bench, Starts { canon, canon_indexed, engine, engine_indexing }))
    }

    /// Another account with its own sandbox key, on the same canon (a tenant of its own).
    pub async fn other_tenant(&self, name: &str) -> anyhow::Result<(Tenant, String)> {
        let account = self.app.state.records.ensure_account(name).await?;
        let (_, key) = self.app.state.records.create_key(&account.id, Environment::Sandbox, name).await?;
        let tenant = Tenant { account_id: account.id, environment: Environment::Sandbox };
        self.app.state.graph.ensure_tenant(&tenant).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok((tenant, key))
    }
}

/// Start times on one set of files.
pub struct Starts {
    /// canon answering requests.
    pub canon: Duration,
    /// canon's graph indexes all built (writes no longer wait).
    pub canon_indexed: Duration,
    /// FalkorDB alone answering with canon's flags (indexes built after loading).
    pub engine: Duration,
    /// FalkorDB alone answering when it builds its indexes while loading (its default).
    pub engine_indexing: Duration,
}

/// The time a bare `redis-server --loadmodule falkordb.so` takes to answer PING on these
/// files (a copy of canon's launch flags that matter for loading; `delay_indexing` as canon
/// runs it, else FalkorDB's default of building indexes before it answers).
async fn engine_start(
    dir: &std::path::Path,
    vendor: &std::path::Path,
    delay_indexing: bool,
) -> anyhow::Result<Duration> {
    let socket = dir.join("bench.sock");
    let started = std::time::Instant::now();
    let mut child = tokio::process::Command::new(vendor.join("falkordb").join("redis-server"))
        .args(["--port", "0", "--unixsocket"])
        .arg(&socket)
        .arg("--dir")
        .arg(dir)
        .args(["--dbfilename", "graph.rdb", "--appendonly", "yes", "--save", "", "--loadmodule"])
        .arg(vendor.join("falkordb").join("falkordb.so"))
        .args(["DELAY_INDEXING", if delay_indexing { "yes" } else { "no" }])
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    loop {
        if let Ok(mut stream) = tokio::net::UnixStream::connect(&socket).await {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            stream.write_all(b"PING\r\n").await?;
            let mut buf = [0u8; 64];
            let n = stream.read(&mut buf).await?;
            if buf[..n].starts_with(b"+PONG") {
                let elapsed = started.elapsed();
                stream.write_all(b"SHUTDOWN NOSAVE\r\n").await?;
                child.wait().await?;
                return Ok(elapsed);
            }
        }
        anyhow::ensure!(started.elapsed() < Duration::from_secs(600), "FalkorDB alone never answered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until canon's FalkorDB has no append-only-file rewrite running or scheduled: a
/// setup's writes trigger one (a fork and a snapshot of the whole graph, ~2 s of a core at
/// 1M entities), which would otherwise land in the middle of whatever is measured next.
pub async fn engine_settled(data_dir: &std::path::Path) -> anyhow::Result<()> {
    let socket = data_dir.join("falkordb").join("falkordb.sock");
    canon::store::graph::embedded::rewrite_settled(&socket).await?;
    Ok(())
}

/// The median of `values` (the mean of the middle two when their number is even); `None`
/// when there are none. Every bench that reports the median of its rounds takes it here.
pub fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (n > 0).then(|| (values[(n - 1) / 2] + values[n / 2]) / 2.0)
}

pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

pub fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// A size from the environment (`CANON_BENCH_…`), else `default`.
pub fn size(var: &str, default: usize) -> usize {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Sends `entity_seed.cypher` for rows `range` of a tenant, 500 rows a statement, two at a
/// time (as two seed jobs would): companies named "Org 0000042".
pub async fn raw_seed(
    graph: &canon::graph::GraphService,
    tenant: &Tenant,
    range: std::ops::Range<usize>,
) -> anyhow::Result<()> {
    raw_seed_named(graph, tenant, range, "Company", &org_name).await.map(|_| ())
}

/// The canonical name [`raw_seed`] gives row `i`.
pub fn org_name(i: usize) -> String {
    format!("Org {i:07}")
}

/// [`raw_seed`] with the type and each row's canonical name chosen by the caller; the seeded
/// entity IDs, in row order.
pub async fn raw_seed_named(
    graph: &canon::graph::GraphService,
    tenant: &Tenant,
    range: std::ops::Range<usize>,
    type_name: &str,
    name_of: &(dyn Fn(usize) -> String + Sync),
) -> anyhow::Result<Vec<String>> {
    let bucket = graph.write_bucket(tenant, None).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let engine = graph.engine().clone();
    let type_id = type_id(graph, tenant, type_name).await?;
    let chunks: Vec<Vec<usize>> = range.collect::<Vec<_>>().chunks(500).map(|c| c.to_vec()).collect();
    // Rows tagged as a seed job's are (`esj_…:i`, kept on each new entity): "raw:i" made the
    // engine's statements ~27 bytes a row shorter than the API's.
    let job = &canon::ids::new_id("esj");
    let results: Vec<anyhow::Result<Vec<(usize, String)>>> = stream::iter(chunks)
        .map(|chunk| {
            let (engine, bucket, tenant, type_id) = (engine.clone(), bucket.clone(), tenant.clone(), type_id.clone());
            async move {
                let mut ids = Vec::with_capacity(chunk.len());
                let rows: Vec<Value> = chunk
                    .iter()
                    .map(|i| {
                        let canonical = name_of(*i);
                        let normalized = normalize(&canonical);
                        let id = canon::ids::new_id("ent");
                        ids.push((*i, id.clone()));
                        let key = resolution_key(&tenant, &bucket, type_name, &normalized);
                        // The keys the API's rows carry for a bare name, and only those: no
                        // `expected` (the write's own MERGE decides, as for the API's rows, which
                        // it looks up only when they have synonyms or compared attributes) and
                        // no `description`. A row of another shape takes other branches of the
                        // statement, and on Neo4j the warm-up below warmed only the engine's
                        // rows' branches: the API's first rounds ran on colder code.
                        json!({
                            "i": i, "targetID": id, "idKey": canon::graph::id_keys::id_key(&id), "keyID": canon::ids::new_id("esn"), "tag": format!("{job}:{i}"),
                            "canonical": canonical, "normalized": normalized, "forms": [canonical],
                            "key": key, "keys": [key],
                            "typeName": type_name, "typeID": type_id, "bucketID": bucket,
                            "attrKeys": [], "attrValues": [], "synonyms": [],
                        })
                    })
                    .collect();
                let mut params = serde_json::Map::new();
                params.insert("accountID".into(), json!(tenant.account_id));
                params.insert("environment".into(), json!(tenant.environment.as_str()));
                params.insert("rows".into(), Value::Array(rows));
                params.insert("now".into(), json!(canon::ids::now_rfc3339()));
                params.extend(canon::graph::id_blocks::seed_params(&tenant, ids.iter().map(|(_, id)| id.as_str())));
                let expected = chunk.len();
                let written = engine.run(queries::ENTITY_SEED, &params).await.map_err(|e| anyhow::anyhow!("{e}"))?;
                anyhow::ensure!(written.len() == expected, "the engine wrote {} of {expected} seed rows", written.len());
                Ok(ids)
            }
        })
        .buffer_unordered(2)
        .collect()
        .await;
    let mut seeded = Vec::new();
    for chunk in results {
        seeded.extend(chunk?);
    }
    seeded.sort();
    Ok(seeded.into_iter().map(|(_, id)| id).collect())
}

/// The ID of the tenant's type `name`, created as a seed through the API creates it: the
/// engine's rows carry it as the API's do (on Neo4j an entity with a type ID is one more index
/// entry to write, so rows without one made the engine's side lighter than the API's).
async fn type_id(graph: &canon::graph::GraphService, tenant: &Tenant, name: &str) -> anyhow::Result<String> {
    let params = json!({
        "accountID": tenant.account_id, "environment": tenant.environment.as_str(), "name": name,
    });
    let Value::Object(params) = params else { unreachable!() };
    let found = |rows: Vec<serde_json::Map<String, Value>>| {
        rows.first().and_then(|row| row.get("typeID")).and_then(Value::as_str).map(String::from)
    };
    if let Some(id) = found(graph.engine().run(queries::ENTITY_TYPE_BY_NAME, &params).await?) {
        return Ok(id);
    }
    let new = canon::graph::entity_types::NewEntityType {
        name: name.into(),
        description: None,
        parent_type_id: None,
        attribute_schema: None,
    };
    let created = graph.create_entity_type(tenant, new).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(created.type_id)
}

/// A made-up "given surname" of syllables from the first `syllables` (at most 40) of a fixed
/// list, unique for each `i` but every `copy_every`-th, which repeats the name before it with
/// two letters of the surname swapped (a planted near copy).
pub fn synthetic_name(i: usize, syllables: usize, copy_every: usize) -> String {
    const SYLLABLES: [&str; 40] = [
        "ka", "lo", "mi", "ra", "te", "su", "no", "vi", "da", "pe", "zo", "ha", "ri", "ba", "ne", "to", "gu",
        "sa", "le", "mo", "fi", "ku", "ja", "de", "po", "wi", "ce", "xu", "yo", "bi", "ta", "ge", "nu", "ma",
        "li", "ro", "ve", "si", "do", "qa",
    ];
    if i % copy_every == copy_every - 1 {
        let mut chars: Vec<char> = synthetic_name(i - 1, syllables, copy_every).chars().collect();
        let at = chars.len() - 3;
        chars.swap(at, at + 1);
        return chars.into_iter().collect();
    }
    // A fixed permutation of the index, so neighbours in ID order are not neighbours by name.
    let x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17);
    let pick = |shift: u32| SYLLABLES[((x >> shift) % syllables as u64) as usize];
    format!("{}{} {}{}{}{}", pick(0), pick(6), pick(12), pick(18), pick(24), pick(30))
}

/// CPU seconds (user and system) this process has used so far, from /proc (Linux; 0 elsewhere).
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Turns `perf record --control fifo:<path> -D -1` on or off around what a bench measures,
/// when `CANON_BENCH_PERF_CONTROL` names that FIFO: a profile of the measured part alone,
/// without the setup around it (which on the delivery bench took most of SQLite's CPU).
pub fn perf(enable: bool) {
    if let Some(path) = std::env::var_os("CANON_BENCH_PERF_CONTROL") {
        let command: &[u8] = if enable { b"enable\n" } else { b"disable\n" };
        if let Err(err) = std::fs::OpenOptions::new().write(true).open(path).and_then(|mut fifo| {
            use std::io::Write;
            fifo.write_all(command)
        }) {
            eprintln!("perf control: {err}");
        }
    }
}

/// Neo4j's process serving Bolt on `port` (the `canon.Launcher` java process of
/// `scripts/neo4j.sh`, which takes its port as an argument), to read its CPU beside canon's: the
/// test suite's Neo4j may run beside the bench's, on another port. `None` when not found or not
/// on Linux. (canon's own FalkorDB child: [`App::falkordb_pid`].)
pub fn neo4j_pid(port: u16) -> Option<u32> {
    let port = port.to_string();
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let launcher = args.iter().position(|arg| *arg == b"canon.Launcher")?;
        // canon.Launcher HOME PORT PASSWORD …
        (args.get(launcher + 2) == Some(&port.as_bytes())).then_some(pid)
    })
}

/// Samples how busy process `pid` is (its CPU per wall-clock time, in %) every 50 ms until
/// stopped: where a phase leaves the engine idle (its start, its end, pauses between).
pub struct BusySampler {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u32>>,
}

impl BusySampler {
    pub const EVERY: Duration = Duration::from_millis(50);

    pub fn start(pid: u32) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut busy = Vec::new();
            let mut last = (cpu_ns(pid).unwrap_or(0), std::time::Instant::now());
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Self::EVERY);
                let now = (cpu_ns(pid).unwrap_or(0), std::time::Instant::now());
                let share = now.0.saturating_sub(last.0) as f64 / (now.1 - last.1).as_nanos().max(1) as f64;
                busy.push((share * 100.0).round() as u32);
                last = now;
            }
            busy
        });
        Self { stop, thread }
    }

    /// The samples, as `busy % every 50 ms: 12 88 97 …`.
    pub fn stop(self) -> String {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let busy = self.thread.join().unwrap_or_default();
        let shown: Vec<String> = busy.iter().map(u32::to_string).collect();
        format!("busy % every {} ms: {}", Self::EVERY.as_millis(), shown.join(" "))
    }
}

/// Nanoseconds process `pid` (all its threads) has run on a CPU so far, from Linux's
/// `/proc/<pid>/task/*/schedstat`; `None` elsewhere. CPU per delivery moves far less with the
/// machine's load than a rate does.
pub fn cpu_ns(pid: u32) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0;
    for task in tasks.flatten() {
        let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        total += stat.split_whitespace().next().and_then(|ns| ns.parse::<u64>().ok()).unwrap_or(0);
    }
    Some(total)
}

/// Nanoseconds each named thread of process `pid` has run on a CPU so far (threads of one
/// name summed: the runtime's workers are one entry), from Linux's `/proc`; empty elsewhere.
pub fn cpu_ns_by_thread(pid: u32) -> std::collections::BTreeMap<String, u64> {
    let mut by_name = std::collections::BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return by_name };
    for task in tasks.flatten() {
        let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default().trim().to_string();
        let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        let ns = stat.split_whitespace().next().and_then(|ns| ns.parse::<u64>().ok()).unwrap_or(0);
        *by_name.entry(name).or_insert(0) += ns;
    }
    by_name
}
