//! Starting and stopping canon: backends, HTTP server, job workers, graceful shutdown.

use crate::access::metrics::Metrics;
use crate::access::rate_limit::RateLimiter;
use crate::access::state::{AppState, Services};
use crate::calls::executor::CallJob;
use crate::calls::{CallLimits, CallService, EngineParts, CALL_JOB};
use crate::collections::embed_job::EmbedJob;
use crate::collections::{CollectionsService, EMBED_JOB};
use crate::config::Config;
use crate::egress::Egress;
use crate::embeddings::minilm::MiniLm;
use crate::embeddings::openai::OpenAiEmbedder;
use crate::embeddings::{Embedder, TokenCounter};
use crate::graph::reviewers::ReviewerService;
use crate::graph::seeding::{SeedService, SEED_JOB_KIND};
use crate::graph::suggestions::SuggestionService;
use crate::graph::GraphService;
use crate::instances::{Registration, VectorStoreKind};
use crate::jobs::{self, Handlers};
use crate::secrets::cipher::Cipher;
use crate::secrets::SecretsService;
use crate::store::graph::embedded::{EmbeddedFalkor, EmbeddedSettings};
use crate::store::graph::falkordb::FalkorEngine;
use crate::store::graph::neo4j::Neo4jEngine;
use crate::store::graph::{CypherEngine, GraphError};
use crate::store::records::Records;
use crate::store::vectors::edge::EdgeStore;
use crate::store::vectors::qdrant::QdrantStore;
use crate::store::vectors::VectorStore;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Name of the one graph every tenant shares (tenancy is on each node).
pub const GRAPH_NAME: &str = "canon";

/// Connects to the graph engine and applies its schema, starting over with a fresh
/// connection while the engine is unreachable: a FalkorDB child that just answered PING can
/// still drop or stall the first connections of a loaded machine (seen when many tests start
/// canon at once), and a client whose first connection broke does not always recover on its
/// own. Gives up after [`GRAPH_START_LIMIT`], but only once it tried [`GRAPH_START_ATTEMPTS`]
/// times (one stalled attempt can use the whole limit).
async fn connect_graph<F, Fut>(connect: F) -> anyhow::Result<Arc<dyn CypherEngine>>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Arc<dyn CypherEngine>, GraphError>>,
{
    let started = std::time::Instant::now();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let result = match connect().await {
            Ok(engine) => engine.apply_schema().await.map(|()| engine),
            Err(err) => Err(err),
        };
        match result {
            Err(GraphError::Unavailable(reason) | GraphError::Stalled(reason))
                if attempts < GRAPH_START_ATTEMPTS || started.elapsed() < GRAPH_START_LIMIT =>
            {
                tracing::warn!(%reason, attempts, "graph engine not reachable yet; retrying");
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
            done => return Ok(done?),
        }
    }
}

/// Long enough for the embedded child's supervisor to restart a child that hung
/// (`CANON_FALKORDB_HUNG_SECONDS`, 30 s by default) and for the new one to answer.
const GRAPH_START_LIMIT: std::time::Duration = std::time::Duration::from_secs(90);
const GRAPH_START_ATTEMPTS: u32 = 4;

/// The connected backends, and the FalkorDB child when canon runs one.
pub struct Backends {
    pub records: Records,
    pub engine: Arc<dyn CypherEngine>,
    pub embedded_falkor: Option<EmbeddedFalkor>,
    pub vectors: Arc<dyn VectorStore>,
    pub embedder: Arc<dyn Embedder>,
    /// This process in the record store's list of instances.
    pub instance: Registration,
}

impl Backends {
    /// Connects (or starts) every backend the configuration names, and applies schemas.
    pub async fn start(config: &Config) -> anyhow::Result<Self> {
        config.check_provisioned()?;
        crate::data_dir::create(&config.data_dir)?;
        let url = match &config.database_url {
            Some(url) => url.clone(),
            None => crate::data_dir::prepare_sqlite(&config.data_dir)?,
        };
        let records = Records::connect(&url).await?;
        records.migrate().await?;
        let vector_store = match &config.qdrant_url {
            Some(url) => VectorStoreKind::Server(url.clone()),
            None => VectorStoreKind::Embedded(config.data_dir.join("vectors")),
        };
        let instance =
            Registration::start(&records, &vector_store, config.unshared_vectors_beside_others).await?;
        let mut embedded_falkor = None;
        let engine = if let Some(uri) = &config.neo4j_uri {
            let (user, password) = (&config.neo4j_user, &config.neo4j_password);
            connect_graph(|| async move {
                Ok(Arc::new(Neo4jEngine::connect(uri, user, password).await?) as Arc<dyn CypherEngine>)
            })
            .await?
        } else {
            // An external server has no supervisor of canon's to tell about writes.
            let (url, writes) = match &config.falkordb_url {
                Some(url) => (url.clone(), Arc::default()),
                None => {
                    let child = EmbeddedFalkor::start(&EmbeddedSettings {
                        data_dir: config.data_dir.clone(),
                        vendor_dir: config.vendor_dir.clone(),
                        hung_seconds: config.falkordb_hung_seconds,
                    })
                    .await?;
                    let found = (child.url(), child.writes());
                    embedded_falkor = Some(child);
                    found
                }
            };
            let (url, writes, limit) = (&url, &writes, config.graph_read_time_limit);
            connect_graph(|| async move {
                let engine = FalkorEngine::connect(url, GRAPH_NAME, writes.clone(), limit).await?;
                Ok(Arc::new(engine) as Arc<dyn CypherEngine>)
            })
            .await?
        };
        let embedder = start_embedder(config).await?;
        let vectors: Arc<dyn VectorStore> = match &config.qdrant_url {
            Some(url) => Arc::new(QdrantStore::connect(url, config.qdrant_api_key.as_deref())?),
            None => Arc::new(EdgeStore::open(&config.data_dir.join("vectors"))?),
        };
        vectors.ensure_space(&embedder.space()).await?;
        Ok(Self { records, engine, embedded_falkor, vectors, embedder, instance })
    }

    /// Stops what canon started, saving the graph's data.
    pub async fn stop(self) {
        if let Some(falkor) = &self.embedded_falkor {
            falkor.stop().await;
        }
        self.vectors.close().await;
        self.instance.stop().await;
        self.records.close().await;
    }
}

/// The configured embedder: an OpenAI-compatible endpoint, else MiniLM in process.
async fn start_embedder(config: &Config) -> anyhow::Result<Arc<dyn Embedder>> {
    Ok(match &config.embeddings_url {
        Some(url) => {
            let counter = match &config.embeddings_tokenizer {
                Some(path) => TokenCounter::from_file(path)?,
                None => TokenCounter::Estimate,
            };
            Arc::new(
                OpenAiEmbedder::connect(
                    url,
                    config.embeddings_api_key.clone(),
                    &config.embeddings_model,
                    counter,
                )
                .await?,
            )
        }
        None => MiniLm::shared(&config.vendor_dir.join("minilm"))?,
    })
}

/// How long a stop waits for the waited calls this process runs itself; a call still
/// running then is resumed by a worker after the restart (its lease runs out).
const INLINE_CALLS_STOP_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A running canon: HTTP server and job workers.
pub struct App {
    pub addr: SocketAddr,
    pub state: AppState,
    stop_tx: watch::Sender<bool>,
    server: JoinHandle<std::io::Result<()>>,
    workers: Vec<JoinHandle<()>>,
    backends: Backends,
}

impl App {
    /// Starts backends, the server on `config.listen` and the workers running the built-in
    /// job handlers plus `extra` (tests add their own kinds).
    pub async fn spawn(config: &Config, extra: Handlers) -> anyhow::Result<Self> {
        let backends = Backends::start(config).await?;
        // Jobs left running are another live instance's work unless this one is alone; their
        // leases bring them back if that instance died.
        let released =
            if backends.instance.alone { backends.records.release_orphaned_jobs().await? } else { 0 };
        if released > 0 {
            tracing::warn!(released, "re-queued jobs a previous run left unfinished");
        }
        let collections = Arc::new(
            CollectionsService::new(
                backends.records.clone(),
                backends.vectors.clone(),
                backends.embedder.clone(),
            )?
            .with_queued_most(config.queue_bounds.embeddings),
        );
        let requeued = collections.requeue_orphaned().await?;
        if requeued > 0 {
            tracing::warn!(requeued, "queued embedding again for pending items whose job had given up");
        }
        let graph = Arc::new(
            GraphService::new(backends.engine.clone())
                .with_max_centered_nodes(config.max_centered_nodes)
                .with_bulk_limit(config.bulk_limit)
                .with_page_scan(config.page_scan)
                .with_delete_page(config.bucket_delete_page)
                .with_homonyms_per_name(config.homonyms_per_name)
                .with_tenant_bounds(crate::graph::tenant_size::TenantBounds {
                    entities: config.max_entities_per_tenant,
                    mentions: config.max_mentions_per_tenant,
                    relations: config.max_relations_per_tenant,
                }),
        );
        graph.migrate().await?;
        let records = backends.records.clone();
        graph.set_entity_events(Arc::new(crate::delivery::entity_events::RecordedEntityEvents {
            records: records.clone(),
        }));
        graph.set_audit_log(records.clone());
        let egress = Egress::new(config.egress_policy())?;
        let cipher = Cipher::load(config.secrets_key.as_deref(), &config.data_dir)?;
        let rotation_window = std::time::Duration::from_secs_f64(config.webhook_rotation_hours * 3600.0);
        let secrets = SecretsService::new(records.clone(), Arc::new(cipher), rotation_window);
        let calls = CallService::new(
            backends.records.clone(),
            graph.clone(),
            EngineParts {
                embedder: backends.embedder.clone(),
                collections: collections.clone(),
                egress: egress.clone(),
                secrets: secrets.clone(),
            },
            std::time::Duration::from_secs(config.call_wait_seconds),
        )
        .with_limits(CallLimits {
            runs: config.max_runs_per_call,
            output_bytes: config.max_output_bytes_per_call,
            trace_bytes: config.max_trace_bytes,
            linked: config.max_linked_per_run,
            queued: config.max_queued_calls,
        });
        // A process without job workers runs no call itself, waited or not.
        let calls = if config.workers > 0 { calls.running_waited_calls() } else { calls };
        let accuracy = crate::accuracy::AccuracyService {
            records: records.clone(),
            calls: calls.clone(),
            corrections_per_request: config.max_regression_corrections,
            queued_evaluations: config.queue_bounds.evaluations,
        };
        let fs = crate::fs::FsService::new(records.clone(), graph.clone())
            .with_scan_limit(config.fs_scan_limit)
            .with_match_budget(config.fs_match_budget)
            .with_batch_bytes(config.fs_batch_bytes);
        let state = AppState::new(Services {
            accuracy,
            calls,
            seeding: SeedService::new(graph.clone(), records.clone())
                .with_queued_most(config.queue_bounds.seeds),
            reviewers: ReviewerService { graph: graph.clone(), records: records.clone() },
            suggestions: SuggestionService {
                graph: graph.clone(),
                records: records.clone(),
                auto_merge_threshold: config.auto_merge_threshold,
                suggest_threshold: config.suggest_threshold,
                embedder: Some(backends.embedder.clone()),
                candidates_page: config.refresh_page.max(1),
                refreshes: Default::default(),
            },
            functions: crate::functions::FunctionsService::new(
                records.clone(),
                egress.clone(),
                secrets.clone(),
            ),
            delivery: crate::delivery::DeliveryService {
                records: records.clone(),
                subscriptions: crate::delivery::subscriptions::SubscriptionsService {
                    records: records.clone(),
                    egress: egress.clone(),
                },
                gauges: Default::default(),
            },
            views: crate::views::ViewsService { records: records.clone(), scan_time: config.view_scan_time },
            datasets: crate::datasets::DatasetsService {
                records: records.clone(),
                max_rows: config.max_dataset_rows,
            },
            connectors: crate::connectors::ConnectorService {
                records: records.clone(),
                secrets: secrets.clone(),
            },
            secrets,
            jwt_secret: Arc::new(crate::tokens::secret(config.jwt_secret.as_deref(), &config.data_dir)?),
            graph,
            collections,
            keys: Arc::new(crate::keys::KeyAuthenticator::new(records.clone())),
            records,
            limiter: Arc::new(RateLimiter::new(config.rate_limit_per_second, config.rate_limit_burst)),
            metrics: Arc::new(Metrics::new()),
            vendor_dir: Arc::new(config.vendor_dir.clone()),
            schema_model: config.schema_model(),
            fs,
        });
        crate::data_dir::warn_loose_modes(&config.data_dir);
        let listener = tokio::net::TcpListener::bind(config.listen).await?;
        let addr = listener.local_addr()?;
        let (stop_tx, stop_rx) = watch::channel(false);
        let router = crate::api::router(state.clone());
        let mut server_stop = stop_rx.clone();
        let server = tokio::spawn(async move {
            axum::serve(crate::api::listener::EnvelopeListener(listener), router)
                .with_graceful_shutdown(async move {
                    let _ = server_stop.wait_for(|stop| *stop).await;
                })
                .await
        });
        let mut handlers = builtin_handlers(&state);
        handlers.extend(extra);
        let sharing = jobs::Sharing { workers: config.workers, per_account: config.jobs_per_tenant };
        let mut workers = jobs::spawn_workers(backends.records.clone(), handlers, sharing, stop_rx.clone());
        let deliverer = crate::delivery::worker::DeliveryWorker {
            records: backends.records.clone(),
            secrets: state.secrets.clone(),
            egress: egress.clone(),
            schedule: crate::delivery::schedule::Schedule { scale: config.delivery_retry_scale },
            drive_api_url: config.google_drive_api_url.clone(),
            gauges: state.delivery.gauges.clone(),
        };
        workers.push(deliverer.spawn(stop_rx.clone()));
        let box_poller = crate::connectors::BoxPoller::new(
            state.connectors.clone(),
            state.calls.clone(),
            crate::connectors::boxapi::BoxApi::new(&config.box_api_url)?,
            std::time::Duration::from_secs_f64(config.box_poll_seconds.max(0.05)),
            Default::default(),
        );
        workers.push(box_poller.spawn(stop_rx));
        tracing::info!(%addr, graph = backends.engine.name(), records = backends.records.backend_name(), "canon is listening");
        Ok(Self { addr, state, stop_tx, server, workers, backends })
    }

    /// Where the FalkorDB child canon runs answers, if it runs one (a second instance's
    /// `CANON_FALKORDB_URL`).
    pub fn falkordb_url(&self) -> Option<String> {
        self.backends.embedded_falkor.as_ref().map(|falkor| falkor.url())
    }

    /// The process ID of the FalkorDB child canon runs, if it runs one.
    pub async fn falkordb_pid(&self) -> Option<u32> {
        match &self.backends.embedded_falkor {
            Some(falkor) => falkor.pid().await,
            None => None,
        }
    }

    /// Ends this instance as a crash would (tests of several instances): the server and the
    /// workers are cancelled mid-work, the jobs they hold keep their leases until those run
    /// out, nothing is released or saved. A FalkorDB child it runs is killed with it.
    pub fn abort(self) {
        self.server.abort();
        for worker in &self.workers {
            worker.abort();
        }
    }

    /// Graceful stop: in-flight requests finish, workers finish their current job, then the
    /// backends close (the FalkorDB child saves its data).
    pub async fn stop(self) {
        let _ = self.stop_tx.send(true);
        if let Ok(Err(err)) = self.server.await {
            tracing::error!(error = %err, "server error while stopping");
        }
        for worker in self.workers {
            let _ = worker.await;
        }
        self.state.calls.finish_running_calls(INLINE_CALLS_STOP_LIMIT).await;
        self.backends.stop().await;
    }
}

/// The job kinds canon itself runs, each bound to the services it needs.
fn builtin_handlers(state: &AppState) -> Handlers {
    let mut handlers = Handlers::default();
    handlers.register(SEED_JOB_KIND, Arc::new(state.seeding.clone()));
    handlers.register(EMBED_JOB, Arc::new(EmbedJob { service: state.collections.clone() }));
    handlers.register(CALL_JOB, Arc::new(CallJob { service: state.calls.clone() }));
    handlers.register(
        crate::accuracy::evaluations::EVAL_JOB,
        Arc::new(crate::accuracy::evaluations::EvalJob { service: state.accuracy.clone() }),
    );
    handlers
}

/// Resolves when SIGINT or SIGTERM arrives.
pub async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
