//! Configuration: `CANON_*` environment variables, an optional `canon.toml`, and flags.
//!
//! Precedence: command-line flag > environment variable > `canon.toml` > built-in default.
//! `canon.toml` keys are the variable names without the `CANON_` prefix, in lower case
//! (`listen = "0.0.0.0:8080"`, `data_dir = "/var/lib/canon"`).

use crate::provision;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// `text` as a number that `accepts` holds for, else an error saying it is not `what`.
fn number(text: &str, accepts: impl Fn(f64) -> bool, what: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(number) if accepts(number) => Ok(number),
        _ => Err(format!("{text:?} is not {what}")),
    }
}

/// A number of hours or seconds, or a scale of them: finite, at least 0 and at most 10^9 (a
/// larger one is a typo, and would overflow the durations made from it).
fn span_number(text: &str) -> Result<f64, String> {
    number(text, |n| n.is_finite() && (0.0..=1e9).contains(&n), "a number from 0 to 1000000000")
}

/// A score threshold: a number from 0 to 1 (NaN would silently match nothing).
fn fraction(text: &str) -> Result<f64, String> {
    number(text, |n| (0.0..=1.0).contains(&n), "a number from 0 to 1")
}

/// A sustained request rate: a finite number above 0 (0 or NaN would refuse every request).
fn rate(text: &str) -> Result<f64, String> {
    number(text, |n| n.is_finite() && n > 0.0, "a number of requests per second above 0")
}

/// Everything `canon serve` can be told. Unset server URLs mean "use the embedded default".
#[derive(clap::Args, Debug, Clone)]
pub struct Config {
    /// Address the HTTP server listens on.
    #[arg(long, env = "CANON_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Directory for the embedded backends' data (SQLite file, FalkorDB files, vectors).
    #[arg(long, env = "CANON_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Directory holding the provisioned binaries and weights (`make provision`).
    #[arg(long, env = "CANON_VENDOR_DIR", default_value = "./vendor")]
    pub vendor_dir: PathBuf,
    /// PostgreSQL URL (postgres://…) for records; unset means a SQLite file in the data directory.
    #[arg(long, env = "CANON_DATABASE_URL")]
    pub database_url: Option<String>,
    /// Neo4j Bolt URI for the graph; unset means FalkorDB.
    #[arg(long, env = "CANON_NEO4J_URI")]
    pub neo4j_uri: Option<String>,
    /// Neo4j user name.
    #[arg(long, env = "CANON_NEO4J_USER", default_value = "neo4j")]
    pub neo4j_user: String,
    /// Neo4j password.
    #[arg(long, env = "CANON_NEO4J_PASSWORD", default_value = "", hide_default_value = true)]
    pub neo4j_password: String,
    /// An external FalkorDB (redis://host:port); unset means a FalkorDB child process.
    #[arg(long, env = "CANON_FALKORDB_URL")]
    pub falkordb_url: Option<String>,
    /// Qdrant server URL for collections; unset means Qdrant Edge in process.
    #[arg(long, env = "CANON_QDRANT_URL")]
    pub qdrant_url: Option<String>,
    /// API key of the Qdrant server, if it wants one.
    #[arg(long, env = "CANON_QDRANT_API_KEY", hide_env_values = true)]
    pub qdrant_api_key: Option<String>,
    /// OpenAI-compatible embeddings endpoint; unset means all-MiniLM-L6-v2 in process.
    #[arg(long, env = "CANON_EMBEDDINGS_URL")]
    pub embeddings_url: Option<String>,
    /// Secret signing dashboard tokens (HS256); unset means one generated into the data directory.
    #[arg(long, env = "CANON_JWT_SECRET", hide_env_values = true)]
    pub jwt_secret: Option<String>,
    /// Duplicate pairs scoring at least this are merged automatically (0..1).
    #[arg(long, env = "CANON_AUTO_MERGE_THRESHOLD", value_parser = fraction, default_value_t = 0.95)]
    pub auto_merge_threshold: f64,
    /// Duplicate pairs scoring at least this are suggested for review (0..1).
    #[arg(long, env = "CANON_SUGGEST_THRESHOLD", value_parser = fraction, default_value_t = 0.80)]
    pub suggest_threshold: f64,
    /// Model asked of the embeddings endpoint.
    #[arg(long, env = "CANON_EMBEDDINGS_MODEL", default_value = "text-embedding-3-small")]
    pub embeddings_model: String,
    /// Bearer key for the embeddings endpoint.
    #[arg(long, env = "CANON_EMBEDDINGS_API_KEY", hide_env_values = true)]
    pub embeddings_api_key: Option<String>,
    /// A `tokenizer.json` matching the endpoint's model, for token counts and chunking;
    /// unset means an estimate of four bytes per token.
    #[arg(long, env = "CANON_EMBEDDINGS_TOKENIZER")]
    pub embeddings_tokenizer: Option<PathBuf>,
    /// Requests per second allowed per API key (sustained).
    #[arg(long, env = "CANON_RATE_LIMIT_PER_SECOND", value_parser = rate, default_value_t = 100.0)]
    pub rate_limit_per_second: f64,
    /// Requests an API key may burst above the sustained rate.
    #[arg(long, env = "CANON_RATE_LIMIT_BURST", default_value_t = 200)]
    pub rate_limit_burst: u32,
    /// Number of job-queue workers in this process. Enough that tenants at their cap of
    /// [`Self::jobs_per_tenant`] leave workers free for the others.
    #[arg(long, env = "CANON_WORKERS", default_value_t = 8)]
    pub workers: usize,
    /// Jobs one account runs at once, of every kind (workflow calls, waited ones included,
    /// seed jobs, embedding writes, evaluations); its other jobs wait, so one tenant's backlog
    /// or hung model cannot hold every worker.
    #[arg(long, env = "CANON_JOBS_PER_TENANT", default_value_t = 2)]
    pub jobs_per_tenant: usize,
    /// Entities one account may hold in one environment (merged ones included); past it a
    /// seed's rows are rejected, saying so. The graph engine holds every tenant's graph, so
    /// one tenant seeding without end would fill what all share.
    #[arg(long, env = "CANON_MAX_ENTITIES_PER_TENANT", default_value_t = crate::graph::tenant_size::MAX_ENTITIES_PER_TENANT)]
    pub max_entities_per_tenant: u64,
    /// Mentions one account may hold in one environment; past it a mention (and linking's) is
    /// refused with a `422` saying so.
    #[arg(long, env = "CANON_MAX_MENTIONS_PER_TENANT", default_value_t = crate::graph::tenant_size::MAX_MENTIONS_PER_TENANT)]
    pub max_mentions_per_tenant: u64,
    /// Relations one account may hold in one environment; past it a relation (and linking's)
    /// is refused with a `422` saying so.
    #[arg(long, env = "CANON_MAX_RELATIONS_PER_TENANT", default_value_t = crate::graph::tenant_size::MAX_RELATIONS_PER_TENANT)]
    pub max_relations_per_tenant: u64,
    /// How long a `wait=true` workflow call blocks before answering 202 with the running call.
    #[arg(long, env = "CANON_CALL_WAIT_SECONDS", default_value_t = 30)]
    pub call_wait_seconds: u64,
    /// Let tenants' outbound requests (webhooks, S3 endpoints, language models) reach
    /// loopback, private and link-local addresses, and plain HTTP. Off in production.
    #[arg(long, env = "CANON_ALLOW_PRIVATE_NETWORK", default_value_t = false, action = clap::ArgAction::Set)]
    pub allow_private_network: bool,
    /// Server environment variables a tenant's configuration may name (`apiKeyEnv`, …),
    /// comma-separated; empty by default. `CANON_*` variables are never readable.
    #[arg(long, env = "CANON_TENANT_ENV_ALLOWLIST", value_delimiter = ',', default_value = "")]
    pub tenant_env_allowlist: Vec<String>,
    /// Root of local object-store sends (each tenant writes under `<root>/<account>/<environment>/`);
    /// unset means `<data dir>/objects`.
    #[arg(long, env = "CANON_OBJECT_STORE_DIR")]
    pub object_store_dir: Option<PathBuf>,
    /// A PEM file of root certificates trusted beside the public web's for every outbound
    /// HTTPS request (webhooks, S3 endpoints, language models, Google Drive): an operator's
    /// private CA. Unreadable or holding no certificate, canon does not start.
    #[arg(long, env = "CANON_EXTRA_CA_FILE")]
    pub extra_ca_file: Option<PathBuf>,
    /// Key encrypting tenant secrets at rest (64 hex characters); unset means one generated
    /// into the data directory.
    #[arg(long, env = "CANON_SECRETS_KEY", hide_env_values = true)]
    pub secrets_key: Option<String>,
    /// How long a rotated-out webhook signing secret still signs deliveries beside the new one.
    #[arg(long, env = "CANON_WEBHOOK_ROTATION_HOURS", value_parser = span_number, default_value_t = 24.0)]
    pub webhook_rotation_hours: f64,
    /// Multiplies the delivery retry schedule (1 = the published one, about a day; tests use less).
    #[arg(long, env = "CANON_DELIVERY_RETRY_SCALE", value_parser = span_number, default_value_t = 1.0)]
    pub delivery_retry_scale: f64,
    /// Google Drive API base URL for subscription deliveries to `googleDriveFolderID`.
    #[arg(long, env = "CANON_GOOGLE_DRIVE_API_URL", default_value = "https://www.googleapis.com")]
    pub google_drive_api_url: String,
    /// Box API base URL for `box` connectors.
    #[arg(long, env = "CANON_BOX_API_URL", default_value = "https://api.box.com")]
    pub box_api_url: String,
    /// How often `box` connectors look for new files in their folders.
    #[arg(long, env = "CANON_BOX_POLL_SECONDS", value_parser = span_number, default_value_t = 60.0)]
    pub box_poll_seconds: f64,
    /// OpenAI-compatible chat-completions base URL of a model that refines `POST
    /// /v3/infer-schema`'s inferred schema (unset: no refinement). Requests go through the
    /// egress guard like tenants' models.
    #[arg(long, env = "CANON_INFER_SCHEMA_LLM_URL")]
    pub infer_schema_llm_url: Option<String>,
    /// The model name sent to that endpoint.
    #[arg(long, env = "CANON_INFER_SCHEMA_LLM_MODEL", default_value = "gpt-4o-mini")]
    pub infer_schema_llm_model: String,
    /// Its key (`Authorization: Bearer`), if it needs one.
    #[arg(long, env = "CANON_INFER_SCHEMA_LLM_API_KEY", hide_env_values = true)]
    pub infer_schema_llm_api_key: Option<String>,
    /// How long a refinement may take before the inferred schema is answered as is.
    #[arg(long, env = "CANON_INFER_SCHEMA_LLM_TIMEOUT_SECONDS", default_value_t = 60)]
    pub infer_schema_llm_timeout_seconds: u64,
    /// How long the embedded FalkorDB may give no answer at all (not even "loading") while
    /// canon runs before it counts as hung and is restarted from its files; and while it
    /// starts, how long it may answer nothing while spending no CPU (a child building its
    /// indexes is waited for however long that takes).
    #[arg(long, env = "CANON_FALKORDB_HUNG_SECONDS", value_parser = span_number, default_value_t = 30.0)]
    pub falkordb_hung_seconds: f64,
    /// Log format: `json` (structured, one object per line) or `text`.
    #[arg(long, env = "CANON_LOG_FORMAT", default_value = "json")]
    pub log_format: String,
    /// Lets an instance with the embedded vector store start beside live instances, each
    /// then searching vectors of its own. Not a setting (no flag, no variable): tests of
    /// several instances that use no collection set it, since no Qdrant server runs there.
    #[arg(skip)]
    pub unshared_vectors_beside_others: bool,
    /// Most entities a centred knowledge-graph read (`nodeID` + `maxDepth`) may reach, the
    /// centre included; past it the read is refused (400 naming `maxDepth`). Not a setting
    /// (no flag, no variable): always the production value but in tests, which lower it to
    /// reach it without creating 10,000 relations.
    #[arg(skip = crate::graph::relations::MAX_CENTERED_NODES)]
    pub max_centered_nodes: usize,
    /// Candidates one `fs grep` request (a page or a `countOnly` count) reads at most before
    /// answering with a cursor. Not a setting: the production value but in tests, which lower
    /// it to reach it without parsing 20,000 sections.
    #[arg(skip = crate::fs::SCAN_LIMIT)]
    pub fs_scan_limit: usize,
    /// Time one `fs grep` request spends matching before answering with a cursor. Not a
    /// setting: the production value but in tests, which lower it to reach it.
    #[arg(skip = crate::fs::grep::MATCH_BUDGET)]
    pub fs_match_budget: std::time::Duration,
    /// Text one query of `fs grep` candidates reads at most (one candidate at least). Not a
    /// setting: the production value but in tests, which lower it to cut every batch.
    #[arg(skip = crate::fs::grep::BATCH_BYTES)]
    pub fs_batch_bytes: usize,
    /// Node runs one workflow call makes at most. Not a setting: the production value but in
    /// tests, which lower it to reach it without 50,000 runs.
    #[arg(skip = crate::calls::MAX_RUNS)]
    pub max_runs_per_call: usize,
    /// What one workflow call's runs output at most together. Not a setting: the production
    /// value but in tests, which lower it to reach it without 128 MiB of outputs.
    #[arg(skip = crate::calls::MAX_OUTPUT_BYTES)]
    pub max_output_bytes_per_call: usize,
    /// Bytes of values one call's trace reads together. Not a setting: the production value
    /// but in tests, which lower it to reach it without 32 MiB of outputs.
    #[arg(skip = crate::calls::trace::TRACE_BYTES)]
    pub max_trace_bytes: usize,
    /// Longest a view's statement runs before it is stopped. Not a setting: the production
    /// value but in tests, which lower it to reach it without gigabytes of outputs.
    #[arg(skip = crate::views::SCAN_TIME)]
    pub view_scan_time: std::time::Duration,
    /// Regression outputs one apply-corrections request examines. Not a setting: the
    /// production value but in tests, which lower it to reach it without 10,000 outputs.
    #[arg(skip = crate::accuracy::CORRECTIONS_PER_REQUEST)]
    pub max_regression_corrections: usize,
    /// Most entities or suggestions one bulk decision over a filter changes. Not a setting:
    /// the production value but in tests, which lower it to reach it without 10,000 entities.
    #[arg(skip = crate::graph::bulk::BULK_LIMIT)]
    pub bulk_limit: usize,
    /// Mentions or entities one statement of a bucket's cascade delete removes. Not a
    /// setting: the production value but in tests, which cross pages with a small one.
    #[arg(skip = crate::graph::buckets::DELETE_PAGE)]
    pub bucket_delete_page: usize,
    /// Mentions one run links at most. Not a setting: tests lower it to reach it without
    /// thousands of mentions.
    #[arg(skip = crate::calls::MAX_LINKED_PER_RUN)]
    pub max_linked_per_run: usize,
    /// Seed jobs, embedding writes and evaluations an account may have waiting. Not a
    /// setting: tests lower them to reach them without thousands of jobs.
    #[arg(skip = crate::jobs::QUEUE_BOUNDS)]
    pub queue_bounds: crate::jobs::QueueBounds,
    /// How much of a tenant one graph page reads before it ends short. Not a setting: tests
    /// end pages short without millions of entities.
    #[arg(skip = crate::graph::window::PAGE_SCAN)]
    pub page_scan: crate::graph::window::PageScan,
    /// Rows a dataset may hold. Not a setting: tests lower it to reach it without thousands of
    /// rows.
    #[arg(skip = crate::datasets::MAX_ROWS_PER_DATASET)]
    pub max_dataset_rows: i64,
    /// How long FalkorDB may run a read before stopping it. Not a setting: tests lower it to
    /// reach it without a slow statement.
    #[arg(skip = crate::store::graph::READ_TIME_LIMIT)]
    pub graph_read_time_limit: std::time::Duration,
    /// Calls one account may have waiting for a worker. Not a setting: tests lower it to reach
    /// it without thousands of calls.
    #[arg(skip = crate::calls::MAX_QUEUED_CALLS)]
    pub max_queued_calls: usize,
    /// Homonyms one name may have under one type and bucket. Not a setting: tests lower it
    /// to reach it without hundreds of rows.
    #[arg(skip = crate::graph::seed::HOMONYMS_PER_NAME)]
    pub homonyms_per_name: usize,
    /// Entities a merge-suggestion refresh reads per statement. Not a setting: tests lower it
    /// to cross pages without 50,000 entities.
    #[arg(skip = crate::graph::suggestions::CANDIDATES_PAGE)]
    pub refresh_page: usize,
}

impl Config {
    /// The provisioned files this configuration needs (none for a backend served elsewhere).
    pub fn required_files(&self) -> Vec<PathBuf> {
        let vendor = &self.vendor_dir;
        let mut files = Vec::new();
        if self.neo4j_uri.is_none() && self.falkordb_url.is_none() {
            files.push(provision::falkordb_server(vendor));
            files.push(provision::falkordb_module(vendor));
        }
        if self.embeddings_url.is_none() {
            for name in ["config.json", "tokenizer.json", "model.safetensors"] {
                files.push(vendor.join("minilm").join(name));
            }
        }
        files
    }

    /// Fails, naming every missing provisioned file and the command that provides them.
    pub fn check_provisioned(&self) -> anyhow::Result<()> {
        let missing: Vec<String> = self
            .required_files()
            .into_iter()
            .filter(|path| !path.is_file())
            .map(|path| path.display().to_string())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        anyhow::bail!(
            "missing provisioned file(s): {}. Run `make provision` (it fetches them from PyPI into {}), \
             or point CANON_VENDOR_DIR at a folder that has them.",
            missing.join(", "),
            self.vendor_dir.display()
        )
    }

    /// A configuration with every default and the given data directory (tests, benchmarks).
    pub fn embedded(data_dir: &Path, vendor_dir: &Path) -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            data_dir: data_dir.to_path_buf(),
            vendor_dir: vendor_dir.to_path_buf(),
            database_url: None,
            neo4j_uri: None,
            neo4j_user: "neo4j".into(),
            neo4j_password: String::new(),
            falkordb_url: None,
            qdrant_url: None,
            qdrant_api_key: None,
            embeddings_url: None,
            jwt_secret: None,
            auto_merge_threshold: 0.95,
            suggest_threshold: 0.80,
            embeddings_model: "text-embedding-3-small".into(),
            embeddings_api_key: None,
            embeddings_tokenizer: None,
            rate_limit_per_second: 100.0,
            rate_limit_burst: 200,
            workers: 8,
            jobs_per_tenant: 2,
            max_entities_per_tenant: crate::graph::tenant_size::MAX_ENTITIES_PER_TENANT,
            max_mentions_per_tenant: crate::graph::tenant_size::MAX_MENTIONS_PER_TENANT,
            max_relations_per_tenant: crate::graph::tenant_size::MAX_RELATIONS_PER_TENANT,
            call_wait_seconds: 30,
            allow_private_network: false,
            tenant_env_allowlist: Vec::new(),
            object_store_dir: None,
            extra_ca_file: None,
            secrets_key: None,
            webhook_rotation_hours: 24.0,
            delivery_retry_scale: 1.0,
            google_drive_api_url: "https://www.googleapis.com".into(),
            box_api_url: "https://api.box.com".into(),
            box_poll_seconds: 60.0,
            infer_schema_llm_url: None,
            infer_schema_llm_model: "gpt-4o-mini".into(),
            infer_schema_llm_api_key: None,
            infer_schema_llm_timeout_seconds: 60,
            falkordb_hung_seconds: 30.0,
            log_format: "text".into(),
            unshared_vectors_beside_others: false,
            max_centered_nodes: crate::graph::relations::MAX_CENTERED_NODES,
            fs_scan_limit: crate::fs::SCAN_LIMIT,
            fs_match_budget: crate::fs::grep::MATCH_BUDGET,
            fs_batch_bytes: crate::fs::grep::BATCH_BYTES,
            max_runs_per_call: crate::calls::MAX_RUNS,
            max_output_bytes_per_call: crate::calls::MAX_OUTPUT_BYTES,
            max_trace_bytes: crate::calls::trace::TRACE_BYTES,
            view_scan_time: crate::views::SCAN_TIME,
            max_regression_corrections: crate::accuracy::CORRECTIONS_PER_REQUEST,
            bulk_limit: crate::graph::bulk::BULK_LIMIT,
            bucket_delete_page: crate::graph::buckets::DELETE_PAGE,
            max_linked_per_run: crate::calls::MAX_LINKED_PER_RUN,
            max_queued_calls: crate::calls::MAX_QUEUED_CALLS,
            graph_read_time_limit: crate::store::graph::READ_TIME_LIMIT,
            max_dataset_rows: crate::datasets::MAX_ROWS_PER_DATASET,
            page_scan: crate::graph::window::PAGE_SCAN,
            queue_bounds: crate::jobs::QUEUE_BOUNDS,
            homonyms_per_name: crate::graph::seed::HOMONYMS_PER_NAME,
            refresh_page: crate::graph::suggestions::CANDIDATES_PAGE,
        }
    }

    /// The model refining inferred schemas, when one is configured.
    pub fn schema_model(&self) -> Option<crate::engines::llm::LlmConfig> {
        let url = self.infer_schema_llm_url.as_deref().map(str::trim).filter(|u| !u.is_empty())?;
        Some(crate::engines::llm::LlmConfig {
            base_url: url.trim_end_matches('/').to_string(),
            model: self.infer_schema_llm_model.clone(),
            settings: serde_json::json!({ "apiKey": self.infer_schema_llm_api_key }),
            mode: crate::engines::llm::Mode::Text,
            timeout: std::time::Duration::from_secs(self.infer_schema_llm_timeout_seconds),
        })
    }

    /// What tenants may reach outside canon.
    pub fn egress_policy(&self) -> crate::egress::EgressPolicy {
        crate::egress::EgressPolicy {
            allow_private_network: self.allow_private_network,
            env_allowlist: self
                .tenant_env_allowlist
                .iter()
                .map(|name| name.trim().to_string())
                .filter(|name| !name.is_empty())
                .collect(),
            object_store_dir: self.object_store_dir.clone().unwrap_or_else(|| self.data_dir.join("objects")),
            extra_ca_file: self.extra_ca_file.clone(),
        }
    }

    /// The records URL: the configured server, else the SQLite file in the data directory.
    pub fn records_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => crate::data_dir::sqlite_url(&self.data_dir),
        }
    }
}

/// Loads `canon.toml` (path from `CANON_CONFIG`, else `./canon.toml`, optional) into the
/// environment for every key the environment does not already set. Runs before any thread
/// starts, which is what makes setting variables sound.
pub fn load_file_into_env() -> anyhow::Result<()> {
    let path = std::env::var("CANON_CONFIG").unwrap_or_else(|_| "canon.toml".into());
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => anyhow::bail!("cannot read {path}: {err}"),
    };
    let table: toml::Table =
        toml::from_str(&text).map_err(|err| anyhow::anyhow!("{path} is not valid TOML: {err}"))?;
    for (key, value) in table {
        let var = format!("CANON_{}", key.to_uppercase());
        if std::env::var_os(&var).is_some() {
            continue;
        }
        let value = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            other => {
                anyhow::bail!("{path}: {key} must be a string, number or boolean (got {other:?})")
            }
        };
        std::env::set_var(var, value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        config: Config,
    }

    #[test]
    fn spans_that_would_overflow_a_duration_are_refused_naming_the_setting() {
        for bad in ["inf", "NaN", "-1", "1e300", "soon"] {
            let flag = format!("--webhook-rotation-hours={bad}");
            let error = Flags::try_parse_from(["canon", flag.as_str()]).err().expect(bad);
            assert!(error.to_string().contains("--webhook-rotation-hours"), "{error}");
        }
        let flags =
            Flags::try_parse_from(["canon", "--box-poll-seconds", "0.5", "--delivery-retry-scale", "0"])
                .expect("in range");
        assert_eq!(flags.config.box_poll_seconds, 0.5);
        assert_eq!(flags.config.delivery_retry_scale, 0.0);
    }

    #[test]
    fn thresholds_outside_zero_to_one_and_rates_that_refuse_everything_are_refused() {
        for (flag, bad) in [
            ("--suggest-threshold", "1.5"),
            ("--auto-merge-threshold", "NaN"),
            ("--auto-merge-threshold", "-0.1"),
            ("--rate-limit-per-second", "0"),
            ("--rate-limit-per-second", "inf"),
        ] {
            let arg = format!("{flag}={bad}");
            let error = Flags::try_parse_from(["canon", arg.as_str()]).err().expect(bad);
            assert!(error.to_string().contains(flag), "{error}");
        }
        let flags =
            Flags::try_parse_from(["canon", "--suggest-threshold", "0.7", "--rate-limit-per-second", "0.5"])
                .expect("in range");
        assert_eq!(flags.config.suggest_threshold, 0.7);
        assert_eq!(flags.config.rate_limit_per_second, 0.5);
    }
}
