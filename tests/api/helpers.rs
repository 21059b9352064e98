//! `spawn_app()`: canon on port 0 with a fresh data directory (and, when
//! `CANON_TEST_DATABASE_URL` is set, a fresh PostgreSQL database) per test.
//! `CANON_TEST_NEO4J_URI` (+ `_USER`, `_PASSWORD`) runs the suite on Neo4j instead of FalkorDB.
//! Neo4j Community has one database, shared by every test: each test's tenant is a fresh
//! account (a new ID), and every node carries its account, so tests stay apart without a wipe.

use canon::app::App;
use canon::config::Config;
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use reqwest::{Client, Method, RequestBuilder, Response};
use serde_json::Value;
use std::io::BufRead;
use std::path::PathBuf;
use tempfile::TempDir;

#[path = "../support/postgres.rs"]
mod postgres;

pub struct TestApp {
    pub address: String,
    pub api_key: String,
    pub account_id: String,
    pub client: Client,
    pub config: Config,
    pub app: Option<App>,
    handlers: Handlers,
    _data_dir: TempDir,
}

impl TestApp {
    /// The record store's URL, for a second process (the CLI) opening it beside the server.
    pub fn database_url(&self) -> String {
        match &self.config.database_url {
            Some(url) => url.clone(),
            None => canon::data_dir::sqlite_url(&self.config.data_dir),
        }
    }
}

pub use canon::provision::source_dir;

pub fn vendor_dir() -> PathBuf {
    source_dir().join("vendor")
}

/// A fresh canon with one sandbox API key.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(Handlers::default(), |_| {}).await
}

/// A fresh canon on its embedded FalkorDB child whatever the pass (the Neo4j pass too), for
/// tests of the child itself or of FalkorDB's own persistence and index building.
pub async fn spawn_app_on_falkordb() -> TestApp {
    spawn_app_with(Handlers::default(), |config| config.neo4j_uri = None).await
}

/// A fresh canon running these job handlers, its configuration adjusted by `configure`.
pub async fn spawn_app_with(handlers: Handlers, configure: impl FnOnce(&mut Config)) -> TestApp {
    init_logging();
    let data_dir = tempfile::Builder::new().prefix("canon-test-").tempdir().expect("temp dir");
    let mut config = Config::embedded(data_dir.path(), &vendor_dir());
    config.database_url = fresh_postgres_database().await;
    if let Ok(uri) = std::env::var("CANON_TEST_NEO4J_URI") {
        config.neo4j_uri = Some(uri);
        config.neo4j_user = std::env::var("CANON_TEST_NEO4J_USER").unwrap_or_else(|_| "neo4j".into());
        config.neo4j_password = std::env::var("CANON_TEST_NEO4J_PASSWORD").unwrap_or_default();
    }
    configure(&mut config);
    let app = match App::spawn(&config, handlers.clone()).await {
        Ok(app) => app,
        Err(err) => {
            // The embedded engine's own log says why it did not answer.
            let log =
                std::fs::read_to_string(data_dir.path().join("falkordb/falkordb.log")).unwrap_or_default();
            panic!("canon starts: {err:#}\nFalkorDB's log:\n{log}");
        }
    };
    let address = format!("http://{}", app.addr);
    let account = app.state.records.ensure_account(&unique("acme")).await.expect("account");
    let (_, api_key) =
        app.state.records.create_key(&account.id, Environment::Sandbox, "test").await.expect("key");
    TestApp {
        address,
        api_key,
        account_id: account.id,
        client: Client::new(),
        config,
        app: Some(app),
        handlers,
        _data_dir: data_dir,
    }
}

/// Logs go to the test's captured output (`CANON_LOG=debug` for more).
fn init_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let filter = tracing_subscriber::EnvFilter::try_from_env("CANON_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
    });
}

/// The `canonical` names of a body's `entities` (a suggestion's pair, a review page), sorted.
pub fn sorted_canonicals(body: &Value) -> Vec<String> {
    let entities = body["entities"].as_array().expect("entities");
    let mut names: Vec<String> =
        entities.iter().map(|e| e["canonical"].as_str().unwrap().to_string()).collect();
    names.sort();
    names
}

/// A name no other test uses (tests may share a Neo4j or PostgreSQL server).
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", ulid::Ulid::new().to_string().to_lowercase())
}

/// Creates a database of its own on the server `CANON_TEST_DATABASE_URL` points at.
pub async fn fresh_postgres_database() -> Option<String> {
    let admin_url = std::env::var("CANON_TEST_DATABASE_URL").ok()?;
    let created = postgres::create_database(&admin_url, "canon_test").await;
    Some(created.expect("a database of its own on CANON_TEST_DATABASE_URL"))
}

/// A record store of its own (PostgreSQL when `CANON_TEST_DATABASE_URL` is set, else SQLite in
/// `dir`) migrated only through `version`, and its URL: an upgrade test writes what an older
/// canon wrote, then migrates the rest of the way.
pub async fn records_through(
    dir: &std::path::Path,
    version: i64,
) -> (canon::store::records::Records, String) {
    let url = match fresh_postgres_database().await {
        Some(url) => url,
        None => canon::data_dir::sqlite_url(dir),
    };
    let records = canon::store::records::Records::connect(&url).await.expect("connect");
    records.migrate_through(version).await.expect("older schema");
    (records, url)
}

impl TestApp {
    pub fn app(&self) -> &App {
        self.app.as_ref().expect("app is running")
    }

    /// A request with this app's API key.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, format!("{}{path}", self.address)).header("x-api-key", &self.api_key)
    }

    pub async fn get(&self, path: &str) -> Response {
        self.request(Method::GET, path).send().await.expect("request sent")
    }

    pub async fn post(&self, path: &str, body: Value) -> Response {
        self.request(Method::POST, path).json(&body).send().await.expect("request sent")
    }

    pub async fn patch(&self, path: &str, body: Value) -> Response {
        self.request(Method::PATCH, path).json(&body).send().await.expect("request sent")
    }

    pub async fn delete(&self, path: &str) -> Response {
        self.request(Method::DELETE, path).send().await.expect("request sent")
    }

    /// A key for another environment or account of this app.
    /// A key of a new account: a tenant that shares nothing with this app's.
    pub async fn another_tenant(&self) -> String {
        self.new_key(Some(&unique("other")), Environment::Sandbox).await
    }

    pub async fn new_key(&self, account_name: Option<&str>, environment: Environment) -> String {
        let records = &self.app().state.records;
        let account_id = match account_name {
            Some(name) => records.ensure_account(name).await.expect("account").id,
            None => self.account_id.clone(),
        };
        records.create_key(&account_id, environment, "other").await.expect("key").1
    }

    /// A second canon on this one's record store and graph (its FalkorDB child, or the same
    /// Neo4j), with its own data folder and the same keys, serving the same tenant: several
    /// instances on one database. No Qdrant server runs here, so it keeps vectors of its own
    /// (tests of it use no collection).
    pub async fn second_instance(&self, configure: impl FnOnce(&mut Config)) -> TestApp {
        let data_dir = tempfile::Builder::new().prefix("canon-test-").tempdir().expect("temp dir");
        let mut config = Config::embedded(data_dir.path(), &vendor_dir());
        config.database_url = Some(self.database_url());
        config.falkordb_url = self.app().falkordb_url();
        config.neo4j_uri = self.config.neo4j_uri.clone();
        config.neo4j_user = self.config.neo4j_user.clone();
        config.neo4j_password = self.config.neo4j_password.clone();
        let first_key = |file: &str| std::fs::read_to_string(self.config.data_dir.join(file)).ok();
        config.secrets_key = self.config.secrets_key.clone().or_else(|| first_key("secrets.key"));
        config.jwt_secret = self.config.jwt_secret.clone().or_else(|| first_key("jwt.secret"));
        config.allow_private_network = self.config.allow_private_network;
        config.delivery_retry_scale = self.config.delivery_retry_scale;
        config.unshared_vectors_beside_others = true;
        configure(&mut config);
        let app = App::spawn(&config, self.handlers.clone()).await.expect("a second canon starts");
        TestApp {
            address: format!("http://{}", app.addr),
            api_key: self.api_key.clone(),
            account_id: self.account_id.clone(),
            client: Client::new(),
            config,
            app: Some(app),
            handlers: self.handlers.clone(),
            _data_dir: data_dir,
        }
    }

    /// Stops canon gracefully and starts it again on the same data.
    pub async fn restart(&mut self) {
        self.stop().await;
        self.start().await;
    }

    pub async fn stop(&mut self) {
        if let Some(app) = self.app.take() {
            app.stop().await;
        }
    }

    pub async fn start(&mut self) {
        let app = App::spawn(&self.config, self.handlers.clone()).await.expect("canon restarts");
        self.address = format!("http://{}", app.addr);
        self.app = Some(app);
    }

    /// Creates a bucket and returns its ID.
    pub async fn create_bucket(&self, name: &str) -> String {
        let response = self.post("/v3/buckets", serde_json::json!({ "name": name })).await;
        assert_eq!(response.status(), 200, "creating bucket {name}");
        json(response).await["bucketID"].as_str().expect("bucketID").to_string()
    }

    /// Creates an entity type and returns its ID.
    pub async fn create_type(&self, name: &str, parent: Option<&str>) -> String {
        let response =
            self.post("/v3/entity-types", serde_json::json!({ "name": name, "parentTypeID": parent })).await;
        assert_eq!(response.status(), 200, "creating type {name}");
        json(response).await["typeID"].as_str().expect("typeID").to_string()
    }

    /// Runs Cypher straight on the graph engine (to plant data no endpoint writes yet).
    pub async fn cypher(&self, query: &str, params: Value) -> Vec<serde_json::Map<String, Value>> {
        let Value::Object(params) = params else { panic!("params must be an object") };
        self.app().state.graph.engine().run(query, &params).await.expect("cypher runs")
    }
}

/// The `field` of every object in a JSON array (IDs of a page, say).
pub fn strings(list: &Value, field: &str) -> Vec<String> {
    list.as_array().expect("an array").iter().map(|e| e[field].as_str().expect(field).to_string()).collect()
}

pub async fn json(response: Response) -> Value {
    response.json().await.expect("JSON body")
}

/// Asserts an error response: status, `{message, code}` shape, code mirroring the status.
pub async fn assert_error(response: Response, status: u16) -> Value {
    assert_eq!(response.status(), status);
    let body = json(response).await;
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "message in {body}");
    assert_eq!(body["code"], status, "code mirrors the status in {body}");
    body
}

/// [`assert_error`], and the message starts with `start` (the field it names, then why).
pub async fn assert_error_saying(response: Response, status: u16, start: &str) -> Value {
    let body = assert_error(response, status).await;
    assert!(body["message"].as_str().unwrap_or_default().starts_with(start), "{start:?} in {body}");
    body
}

impl TestApp {
    /// Seeds rows synchronously (fewer than 100) and returns the response body.
    pub async fn seed(&self, rows: Value) -> Value {
        let response = self
            .post("/v3/entities/bulk", serde_json::json!({ "entities": rows, "onConflict": "merge" }))
            .await;
        assert_eq!(response.status(), 200, "seeding");
        json(response).await
    }

    /// A seed job's status once it completed (a minute at most).
    pub async fn wait_for_seed(&self, id: &str) -> Value {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let status = json(self.get(&format!("/v3/entities/seed/{id}")).await).await;
            if status["status"] == "completed" {
                return status;
            }
            assert!(tokio::time::Instant::now() < deadline, "seed job still {status}");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    /// Seeds one entity and returns its ID.
    pub async fn entity(&self, canonical: &str, type_name: &str) -> String {
        let body = self.seed(serde_json::json!([{ "canonical": canonical, "type": type_name }])).await;
        body["results"][0]["entityID"].as_str().expect("entityID").to_string()
    }

    /// A dashboard token for a new user of this app's account (sandbox).
    pub async fn dashboard_token(&self, role: &str) -> (String, String) {
        let records = &self.app().state.records;
        let email = format!("{}@example.com", unique(role));
        let user =
            records.create_user(&self.account_id, Environment::Sandbox, &email, role).await.expect("user");
        let claims = canon::tokens::Claims {
            sub: user.id.clone(),
            email,
            role: role.into(),
            account: self.account_id.clone(),
            environment: "sandbox".into(),
            exp: chrono::Utc::now().timestamp() + 3600,
        };
        (user.id, canon::tokens::sign(&claims, &self.app().state.jwt_secret))
    }

    /// A request carrying a dashboard token instead of the API key.
    pub fn as_user(&self, method: Method, path: &str, token: &str) -> RequestBuilder {
        self.client.request(method, format!("{}{path}", self.address)).bearer_auth(token)
    }
}

/// Starts `canon serve` as a process on a free port; returns it and its address.
pub fn serve_process(data_dir: &std::path::Path) -> (std::process::Child, String) {
    serve_process_with(data_dir, &[])
}

/// A sandbox key of `account` made by `canon keys create` on the data directory a
/// [`serve_process`] canon serves (SQLite records).
pub fn cli_key(data_dir: &std::path::Path, account: &str) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_canon"))
        .args(["keys", "create", "--account", account, "--environment", "sandbox"])
        .env("CANON_DATA_DIR", data_dir)
        .env_remove("CANON_DATABASE_URL")
        .output()
        .unwrap();
    assert!(output.status.success(), "canon keys create: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// [`serve_process`] with more configuration in its environment.
pub fn serve_process_with(
    data_dir: &std::path::Path,
    settings: &[(&str, &str)],
) -> (std::process::Child, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_canon"))
        .arg("serve")
        .envs(settings.iter().copied())
        .env("CANON_DATA_DIR", data_dir)
        .env("CANON_VENDOR_DIR", vendor_dir())
        .env("CANON_LISTEN", "127.0.0.1:0")
        .env("CANON_LOG_FORMAT", "json")
        // SQLite records and its own FalkorDB child whatever the developer's environment says.
        .env_remove("CANON_DATABASE_URL")
        .env_remove("CANON_NEO4J_URI")
        .env_remove("CANON_FALKORDB_URL")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let address = loop {
        let line = lines.next().expect("canon logs that it listens").unwrap();
        let entry: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if entry["message"] == "canon is listening" {
            break format!("http://{}", entry["addr"].as_str().unwrap());
        }
    };
    // Keep draining the log so canon never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, address)
}

/// Whether `make provision` put this file under `vendor/` (SKIPPED is printed when not).
pub fn provisioned(file: &str) -> bool {
    let there = vendor_dir().join(file).is_file();
    if !there {
        println!("SKIPPED: vendor/{file} is not provisioned (make provision; needs npm)");
    }
    there
}

/// Runs `tests/browser/SCRIPT ARGS…` under node, driving Debian's chromium with the
/// playwright-core `make provision` vendored (CANON_BROWSER_MODULES names it), and returns
/// the JSON it printed; `None`, with SKIPPED printed, without chromium or playwright-core.
pub async fn browser_script(script: &str, args: &[&str]) -> Option<Value> {
    let modules = vendor_dir().join("browser");
    if !std::path::Path::new("/usr/bin/chromium").exists() {
        println!("SKIPPED: /usr/bin/chromium is missing (apt-get install -y chromium); no browser run");
        return None;
    }
    if !modules.join("node_modules/playwright-core/package.json").is_file() {
        println!("SKIPPED: vendor/browser has no playwright-core (make provision; needs npm)");
        return None;
    }
    let path = source_dir().join("tests/browser").join(script);
    let output = tokio::process::Command::new("node")
        .arg(path)
        .args(args)
        .env("CANON_BROWSER_MODULES", &modules)
        .output()
        .await
        .expect("node runs");
    assert!(output.status.success(), "{script} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    Some(serde_json::from_slice(&output.stdout).expect("the script's JSON"))
}

/// The DOM of `url` once headless Chromium has run its scripts (up to 20 s of virtual time);
/// `None`, with SKIPPED printed, without Debian's `/usr/bin/chromium`.
pub async fn chromium_dom(url: &str) -> Option<String> {
    let chromium = std::path::Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        println!("SKIPPED: /usr/bin/chromium is missing (apt-get install -y chromium); no browser run");
        return None;
    }
    let profile = tempfile::tempdir().expect("profile dir");
    let output = tokio::process::Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--virtual-time-budget=20000", "--dump-dom"])
        .arg(url)
        .output()
        .await
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&output.stdout).into_owned();
    if dom.is_empty() {
        println!("chromium printed no DOM: {}", String::from_utf8_lossy(&output.stderr));
    }
    Some(dom)
}

/// Every request a stub received, in order.
pub type Seen = std::sync::Arc<std::sync::Mutex<Vec<Value>>>;

/// A stub of an OpenAI-compatible chat model (the one paid outside API the tests stand in
/// for): each `POST /v1/chat/completions` is logged and answered with `answer(request)`'s
/// status and, as the assistant's message, its JSON. Returns the base URL and the log.
pub async fn chat_model(
    answer: impl Fn(&Value) -> (axum::http::StatusCode, Value) + Clone + Send + Sync + 'static,
) -> (String, Seen) {
    let seen = Seen::default();
    let log = seen.clone();
    let router = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(request): axum::Json<Value>| {
            let (answer, log) = (answer.clone(), log.clone());
            async move {
                let (status, content) = answer(&request);
                log.lock().unwrap().push(request);
                let body = serde_json::json!({"id": "c", "object": "chat.completion", "model": "stub",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content.to_string()}}]});
                (status, axum::Json(body))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}/v1"), seen)
}
