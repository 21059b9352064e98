//! The knowledge graph as a whole: entities, relations, resolution and curation (seeding,
//! review, reviewers, merge suggestions), the behaviour REST, GraphQL and MCP share. Each tenant's
//! data is told apart by `accountID` + `environment` on every node, and every query filters
//! by both.

pub mod audit;
pub mod buckets;
pub mod bulk;
pub mod columns;
pub mod duplicates;
pub mod entities;
pub mod entity_types;
pub mod events;
pub mod gazetteer;
pub mod generations;
pub mod id_blocks;
pub mod id_keys;
pub mod legal_forms;
pub mod merge_history;
pub mod merges;
pub mod migrations;
pub mod normalize;
pub mod orphan_keys;
pub mod queries;
pub mod relations;
pub mod resolution;
pub mod review;
pub mod reviewers;
pub mod search;
pub mod seed;
pub mod seeding;
pub mod suggestions;
pub mod tenant_size;
pub mod timeline;
pub mod undo;
pub mod window;

use crate::error::{ServiceError, ServiceResult};
use crate::store::graph::{CypherEngine, Params, Row};
use crate::store::records::keys::{Environment, Principal};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The account + environment a request acts for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tenant {
    pub account_id: String,
    pub environment: Environment,
}

impl From<&Principal> for Tenant {
    fn from(principal: &Principal) -> Self {
        Self { account_id: principal.account_id.clone(), environment: principal.environment }
    }
}

impl Tenant {
    /// The tenancy parameters every query takes.
    fn params(&self) -> Params {
        crate::params! {
            "accountID" => self.account_id,
            "environment" => self.environment.as_str(),
        }
    }

    /// The tenant as the record store scopes its rows.
    pub fn owner(&self) -> crate::store::records::Owner<'_> {
        crate::store::records::Owner { account_id: &self.account_id, environment: self.environment.as_str() }
    }

    /// A key unique to this tenant and `name`, for the engines' uniqueness constraints.
    fn scoped_key(&self, name: &str) -> String {
        format!("{}\u{1f}{}\u{1f}{name}", self.account_id, self.environment.as_str())
    }
}

/// Entry point of the graph services.
pub struct GraphService {
    engine: Arc<dyn CypherEngine>,
    /// Tenants whose default bucket this process has already ensured.
    ready_tenants: Mutex<HashSet<Tenant>>,
    /// Statements run so far (tests and benchmarks count round trips with it).
    queries_run: AtomicU64,
    /// Where entity lifecycle events go, once delivery is wired in.
    entity_events: std::sync::OnceLock<Arc<dyn events::EntityEvents>>,
    /// Where curation history goes, once wired in (see [`timeline`]).
    audit_log: std::sync::OnceLock<crate::store::records::Records>,
    /// Where each tenant's IDs of a kind begin (see [`window::DataStarts`]).
    window_memo: window::WindowMemo,
    /// Buckets read lately, by tenant and ID (see [`buckets::BUCKET_TRUST`]).
    recent_buckets: crate::memo::Memo<(Tenant, String), buckets::Bucket>,
    /// How often this process has written each tenant's graph (see [`generations`]).
    write_generations: generations::WriteGenerations,
    /// Review counters read lately (see [`review::COUNTS_TRUST`]).
    recent_counts: crate::memo::Memo<review::CountsKey, review::ReviewCounts>,
    /// Most entities a centred knowledge-graph read may reach (see
    /// [`relations::MAX_CENTERED_NODES`]).
    max_centered_nodes: usize,
    /// Most one bulk decision over a filter changes (see [`bulk::BULK_LIMIT`]).
    bulk_limit: usize,
    /// How much of a tenant one page reads before it ends short (see [`window::PAGE_SCAN`]).
    page_scan: window::PageScan,
    /// Mentions or entities one statement of a bucket's cascade delete removes (see
    /// [`buckets::DELETE_PAGE`]).
    delete_page: usize,
    /// Homonyms one name may have (see [`seed::HOMONYMS_PER_NAME`]).
    homonyms_per_name: usize,
    /// What one tenant may hold (see [`tenant_size`]).
    tenant_bounds: tenant_size::TenantBounds,
    /// Each tenant's counts as last read (see [`tenant_size`]).
    tenant_sizes: tenant_size::TenantSizes,
}

impl GraphService {
    pub fn new(engine: Arc<dyn CypherEngine>) -> Self {
        Self {
            engine,
            ready_tenants: Mutex::new(HashSet::new()),
            queries_run: AtomicU64::new(0),
            entity_events: std::sync::OnceLock::new(),
            audit_log: std::sync::OnceLock::new(),
            window_memo: window::WindowMemo::default(),
            recent_buckets: crate::memo::Memo::new(buckets::BUCKET_TRUST, buckets::BUCKETS_REMEMBERED),
            write_generations: generations::WriteGenerations::default(),
            recent_counts: crate::memo::Memo::new(review::COUNTS_TRUST, review::COUNTS_REMEMBERED),
            max_centered_nodes: relations::MAX_CENTERED_NODES,
            bulk_limit: bulk::BULK_LIMIT,
            page_scan: window::PAGE_SCAN,
            delete_page: buckets::DELETE_PAGE,
            homonyms_per_name: seed::HOMONYMS_PER_NAME,
            tenant_bounds: tenant_size::TenantBounds::default(),
            tenant_sizes: tenant_size::TenantSizes::default(),
        }
    }

    /// This service with another cap on centred reads (tests reach it with a small one).
    pub fn with_max_centered_nodes(mut self, max: usize) -> Self {
        self.max_centered_nodes = max.max(1);
        self
    }

    /// This service with another bound on bulk decisions (tests reach it with a small one).
    pub fn with_bulk_limit(mut self, limit: usize) -> Self {
        self.bulk_limit = limit.max(1);
        self
    }

    /// This service with other page scan bounds (tests end pages short with small ones).
    pub fn with_page_scan(mut self, scan: window::PageScan) -> Self {
        self.page_scan = scan;
        self
    }

    /// This service with another page for cascade deletes (tests cross pages with a small one).
    pub fn with_delete_page(mut self, page: usize) -> Self {
        self.delete_page = page.max(1);
        self
    }

    /// This service with another bound on a name's homonyms (tests reach it with a small one).
    pub fn with_homonyms_per_name(mut self, bound: usize) -> Self {
        self.homonyms_per_name = bound;
        self
    }

    /// This service with other bounds on what a tenant holds (`CANON_MAX_ENTITIES_PER_TENANT`,
    /// `CANON_MAX_MENTIONS_PER_TENANT`, `CANON_MAX_RELATIONS_PER_TENANT`).
    pub fn with_tenant_bounds(mut self, bounds: tenant_size::TenantBounds) -> Self {
        self.tenant_bounds = bounds;
        self
    }

    pub fn engine(&self) -> &Arc<dyn CypherEngine> {
        &self.engine
    }

    /// How many statements this service has sent to the graph engine since it started.
    pub fn queries_run(&self) -> u64 {
        self.queries_run.load(Ordering::Relaxed)
    }

    /// Runs one of `queries` for a tenant (for services beside the graph's own).
    pub async fn run_query(
        &self,
        tenant: &Tenant,
        cypher: &'static str,
        params: Params,
    ) -> ServiceResult<Vec<Row>> {
        self.run(tenant, cypher, params).await
    }

    /// Runs `cypher` with the tenant's parameters merged into `params`.
    async fn run(&self, tenant: &Tenant, cypher: &str, params: Params) -> ServiceResult<Vec<Row>> {
        let mut all = tenant.params();
        all.extend(params);
        self.queries_run.fetch_add(1, Ordering::Relaxed);
        let outcome = self.engine.run(cypher, &all).await;
        if crate::store::graph::index_build::writes(cypher) {
            self.write_generations.wrote(tenant);
        }
        Ok(outcome?)
    }

    /// Makes sure the tenant's default bucket exists; cheap after the first call.
    pub async fn ensure_tenant(&self, tenant: &Tenant) -> ServiceResult<()> {
        if self.ready_tenants.lock().map_err(poisoned)?.contains(tenant) {
            return Ok(());
        }
        buckets::ensure_default(self, tenant).await?;
        self.id_blocks_since(tenant).await?;
        self.ready_tenants.lock().map_err(poisoned)?.insert(tenant.clone());
        Ok(())
    }
}

fn poisoned<T>(_: T) -> ServiceError {
    ServiceError::Internal(anyhow::anyhow!("tenant cache lock poisoned"))
}

/// Decodes a row whose column aliases are the struct's JSON field names.
fn decode<T: DeserializeOwned>(row: Row) -> ServiceResult<T> {
    serde_json::from_value(Value::Object(row))
        .map_err(|err| ServiceError::Internal(anyhow::anyhow!("cannot decode a graph row: {err}")))
}

/// What a refused delete counts of what blocks it, at most (past it: "more than").
const BLOCKERS_COUNTED: i64 = 10_000;

impl GraphService {
    /// Why the delete of `id` was refused: `query` (a `*_delete_blockers` statement) counts its
    /// blockers up to one past [`BLOCKERS_COUNTED`], not a bucket or type of millions whole.
    async fn delete_blockers(&self, tenant: &Tenant, query: &str, id: &str) -> ServiceResult<Vec<Row>> {
        self.run(tenant, query, crate::params! { "id" => id, "countUpTo" => BLOCKERS_COUNTED + 1 }).await
    }
}

/// A count of blockers as a refusal shows it.
fn counted(n: i64) -> String {
    if n > BLOCKERS_COUNTED {
        format!("more than {BLOCKERS_COUNTED}")
    } else {
        n.to_string()
    }
}

/// Reads an integer column (counts).
fn int_column(rows: &[Row], column: &str) -> i64 {
    rows.first().and_then(|row| row.get(column)).and_then(Value::as_i64).unwrap_or(0)
}
