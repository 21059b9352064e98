//! The state every transport's handlers reach: one handle on the services.

use crate::access::metrics::Metrics;
use crate::access::rate_limit::RateLimiter;
use crate::calls::CallService;
use crate::collections::CollectionsService;
use crate::graph::reviewers::ReviewerService;
use crate::graph::seeding::SeedService;
use crate::graph::suggestions::SuggestionService;
use crate::graph::GraphService;
use crate::secrets::SecretsService;
use crate::store::records::Records;
use std::sync::Arc;

/// What every handler can reach: a handle, cloned by every extractor and middleware of every
/// request (copying the services themselves cost ~5 % of a cheap request's CPU).
#[derive(Clone)]
pub struct AppState(Arc<Services>);

impl AppState {
    pub fn new(services: Services) -> Self {
        Self(Arc::new(services))
    }
}

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0
    }
}

/// The services behind [`AppState`].
pub struct Services {
    pub graph: Arc<GraphService>,
    pub collections: Arc<CollectionsService>,
    pub records: Records,
    pub seeding: SeedService,
    pub reviewers: ReviewerService,
    pub suggestions: SuggestionService,
    pub calls: CallService,
    /// Functions and workflows.
    pub functions: crate::functions::FunctionsService,
    /// Tenant secrets (values never returned) and the webhook signing secret.
    pub secrets: SecretsService,
    /// Subscriptions and the delivery log.
    pub delivery: crate::delivery::DeliveryService,
    pub accuracy: crate::accuracy::AccuracyService,
    /// Views over output events.
    pub views: crate::views::ViewsService,
    /// Golden datasets.
    pub datasets: crate::datasets::DatasetsService,
    /// Connectors (Box folder watches).
    pub connectors: crate::connectors::ConnectorService,
    /// Verifies dashboard tokens.
    pub jwt_secret: Arc<Vec<u8>>,
    pub limiter: Arc<RateLimiter>,
    /// API keys that authenticated, trusted for a second ([`crate::keys`]).
    pub keys: Arc<crate::keys::KeyAuthenticator>,
    pub metrics: Arc<Metrics>,
    /// Provisioned files (the GraphQL explorer's assets among them).
    pub vendor_dir: Arc<std::path::PathBuf>,
    /// The model refining `POST /v3/infer-schema` answers, when configured.
    pub schema_model: Option<crate::engines::llm::LlmConfig>,
    /// `POST /v3/fs` (REST and MCP).
    pub fs: crate::fs::FsService,
}
