//! The review queue: entities awaiting curation, filtered and paged by entityID.

use super::columns::rfc3339_ms;
use super::columns::str_col;
use super::entities::{entity_of_row, Entity};
use super::window::{PageRows, WindowedPage};
use super::{queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::params;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// Filters of `GET /v3/review-queue`; they AND together.
#[derive(Clone, Debug, Default)]
pub struct ReviewFilter {
    /// Statuses (default: extracted and proposed).
    pub statuses: Vec<String>,
    /// Effective types (`ety_…`); None is any.
    pub type_ids: Option<Vec<String>>,
    /// Created at or after (RFC 3339, normalised to UTC milliseconds).
    pub since: Option<String>,
    pub cursor: Option<String>,
    pub bucket: Option<String>,
    pub limit: u32,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewPage {
    /// At most `limit` entities; fewer, none even, when the page's scan bound ended it short.
    pub entities: Vec<Entity>,
    /// Whether more may follow: a page ended short says so too.
    pub has_more: bool,
    /// Where the next page goes on: the last entity's ID, or where a short page's scan stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The queue's counters under its filters (status aside): what is left, what was decided
/// today, and entities per status, so every view shows the same numbers.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewCounts {
    /// Awaiting a decision: `extracted` plus `proposed`.
    pub left: i64,
    /// Approved or rejected since midnight UTC (an undone decision no longer counts).
    pub done_today: i64,
    /// Entities per status, every status listed (zero included).
    #[schema(value_type = Object)]
    pub by_status: BTreeMap<String, i64>,
}

/// How long counters read are served again before they are counted anew, unless this process
/// writes the tenant's graph first (see [`super::generations`]): counting a big tenant takes
/// the engine a while (its five statements ~200 ms at 1,000,000 entities on FalkorDB, README),
/// and every reviewer's dashboard asks for them with each page. Another instance's decisions
/// show in this one's counters within this time.
pub(super) const COUNTS_TRUST: std::time::Duration = std::time::Duration::from_secs(5);
/// Counters remembered at most (tenants × filters); past it the memory starts over.
pub(super) const COUNTS_REMEMBERED: usize = 1_024;

/// What counters are remembered by: the tenant, the filters, the day and the tenant's write
/// generation when they were read.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CountsKey {
    tenant: Tenant,
    bucket: Option<String>,
    since: Option<String>,
    type_ids: Option<Vec<String>>,
    today: String,
    generation: u64,
}

pub const STATUSES: &[&str] = &["extracted", "proposed", "approved", "rejected", "merged"];

impl GraphService {
    pub async fn review_queue(&self, tenant: &Tenant, filter: ReviewFilter) -> ServiceResult<ReviewPage> {
        let limit = filter.limit as usize;
        // Neo4j: the IDs and their records in one statement (one round trip less).
        let ordered = if self.engine.orders_by_index() {
            queries::REVIEW_QUEUE_PAGE_ORDERED
        } else {
            queries::REVIEW_QUEUE_ORDERED
        };
        let (rows, next_cursor) =
            self.queue_rows(tenant, filter, ordered).await?.into_page(limit, "entityID");
        let entities = if self.engine.orders_by_index() {
            rows.into_iter().map(entity_of_row).collect::<ServiceResult<_>>()?
        } else {
            let ids: Vec<String> = rows.iter().map(|row| str_col(row, "entityID")).collect();
            self.entity_details(tenant, &ids).await?
        };
        Ok(ReviewPage { entities, has_more: next_cursor.is_some(), next_cursor })
    }

    /// The queue's pages from `filter`'s cursor until one holds an entity or the queue ends,
    /// at most `reads` of them: for a reader whose cursor can only be an entity's ID (a Relay
    /// connection's `endCursor` is its last edge's), which a page ended short with none cannot
    /// give. Still empty with more to read after `reads` pages, it says so (`has_more`).
    pub async fn review_queue_until_found(
        &self,
        tenant: &Tenant,
        mut filter: ReviewFilter,
        reads: usize,
    ) -> ServiceResult<ReviewPage> {
        for _ in 1..reads {
            let page = self.review_queue(tenant, filter.clone()).await?;
            match (&page.next_cursor, page.entities.is_empty()) {
                (Some(cursor), true) => filter.cursor = Some(cursor.clone()),
                _ => return Ok(page),
            }
        }
        self.review_queue(tenant, filter).await
    }

    /// The IDs of the queue's entities under `filter`, in order: `filter.limit` of them and,
    /// when there are more, one or two past it. Pages whose scan stopped short are followed
    /// until then (a bulk decision needs the whole set), each statement still bounded.
    pub(super) async fn queue_ids(
        &self,
        tenant: &Tenant,
        mut filter: ReviewFilter,
    ) -> ServiceResult<Vec<String>> {
        let limit = filter.limit as usize;
        let mut ids = Vec::new();
        loop {
            filter.limit = (limit - ids.len().min(limit)) as u32;
            let page = self.queue_rows(tenant, filter.clone(), queries::REVIEW_QUEUE_ORDERED).await?;
            ids.extend(page.rows.iter().map(|row| str_col(row, "entityID")));
            match page.resume {
                Some(cursor) if ids.len() <= limit => filter.cursor = Some(cursor),
                _ => return Ok(ids),
            }
        }
    }

    /// The queue's rows under `filter`: on an engine that reads IDs in index order, `ordered`'s
    /// rows (`filter.limit` and one more); else the ID rows of creation-time windows.
    async fn queue_rows(
        &self,
        tenant: &Tenant,
        filter: ReviewFilter,
        ordered: &'static str,
    ) -> ServiceResult<PageRows> {
        for status in &filter.statuses {
            if !STATUSES.contains(&status.as_str()) {
                return Err(ServiceError::invalid_field(
                    "status",
                    format!("unknown status {status:?}; one of {STATUSES:?}"),
                ));
            }
        }
        super::id_keys::check_cursor(filter.cursor.as_deref(), "ent", "an entity ID")?;
        let statuses = if filter.statuses.is_empty() {
            vec!["extracted".into(), "proposed".into()]
        } else {
            filter.statuses
        };
        let type_names = match &filter.type_ids {
            Some(ids) => Some(self.type_names(tenant, ids).await?),
            None => None,
        };
        let limit = filter.limit as usize;
        let every_entity = params! {
            "statuses" => STATUSES, "bucketID" => None::<String>, "since" => None::<String>,
            "typeIDs" => None::<Vec<String>>, "typeNames" => None::<Vec<String>>,
        };
        self.windowed_rows(
            tenant,
            WindowedPage {
                prefix: "ent",
                query: queries::REVIEW_QUEUE,
                ordered,
                id_column: "entityID",
                unfiltered: every_entity,
                filters: params! {
                    "statuses" => statuses, "bucketID" => filter.bucket, "since" => filter.since,
                    "typeIDs" => filter.type_ids, "typeNames" => type_names,
                    "formsListed" => super::entities::SURFACE_FORMS_LISTED,
                },
                cursor: filter.cursor.as_deref(),
                since_ms: filter.since.as_deref().and_then(rfc3339_ms).unwrap_or(0),
                limit,
            },
        )
        .await
    }

    /// The counters of the queue under `filter`'s type, creation-time and bucket filters.
    /// Served again for [`COUNTS_TRUST`] while this process does not write the tenant's graph.
    pub async fn review_counts(&self, tenant: &Tenant, filter: &ReviewFilter) -> ServiceResult<ReviewCounts> {
        crate::text::check_opt("bucket", filter.bucket.as_deref())?;
        let today = chrono::Utc::now().format("%Y-%m-%dT00:00:00").to_string();
        let key = CountsKey {
            tenant: tenant.clone(),
            bucket: filter.bucket.clone(),
            since: filter.since.clone(),
            type_ids: filter.type_ids.clone(),
            today,
            generation: self.write_generations.of(tenant),
        };
        if let Some(counts) = self.recent_counts.get(&key) {
            return Ok(counts);
        }
        let counts = self.count_queue(tenant, filter, &key.today).await?;
        // Kept under the generation read before counting: a write that returned meanwhile
        // moved the tenant to another, so these are never served after it.
        self.recent_counts.put(key, counts.clone());
        Ok(counts)
    }

    async fn count_queue(
        &self,
        tenant: &Tenant,
        filter: &ReviewFilter,
        today: &str,
    ) -> ServiceResult<ReviewCounts> {
        let type_names = match &filter.type_ids {
            Some(ids) => Some(self.type_names(tenant, ids).await?),
            None => None,
        };
        let filters = || {
            params! {
                "bucketID" => filter.bucket.clone(), "since" => filter.since.clone(),
                "typeIDs" => filter.type_ids.clone(), "typeNames" => type_names.clone(),
            }
        };
        // One count per status, then today's decisions, each answered from an index: one
        // grouped count read every entity's status (see review_count_status.cypher). One after
        // the other, so a big count holds one of the engine's threads, not all of them.
        let count = |rows: Vec<serde_json::Map<String, Value>>, column: &str| {
            rows.first().and_then(|row| row.get(column)).and_then(Value::as_i64).unwrap_or(0)
        };
        let mut by_status = BTreeMap::new();
        for status in STATUSES {
            let mut params = filters();
            params.insert("status".into(), Value::from(*status));
            let rows = self.run(tenant, queries::REVIEW_COUNT_STATUS, params).await?;
            by_status.insert(status.to_string(), count(rows, "entities"));
        }
        let mut params = filters();
        params.insert("today".into(), Value::from(today));
        let done_today = count(self.run(tenant, queries::REVIEW_DONE_TODAY, params).await?, "decidedToday");
        let left = by_status["extracted"] + by_status["proposed"];
        Ok(ReviewCounts { left, done_today, by_status })
    }

    /// When the tenant began (its default bucket's creation): nothing of it is older.
    pub async fn tenant_start_ms(&self, tenant: &Tenant) -> ServiceResult<u64> {
        let rows = self
            .run(tenant, queries::BUCKET_DEFAULT, params! { "defaultKey" => tenant.scoped_key("") })
            .await?;
        let created = rows.first().map(|row| str_col(row, "createdAt")).unwrap_or_default();
        Ok(rfc3339_ms(&created).unwrap_or(0).saturating_sub(1_000))
    }

    /// The names of these type IDs (unknown IDs match nothing).
    pub async fn type_names(&self, tenant: &Tenant, ids: &[String]) -> ServiceResult<Vec<String>> {
        crate::text::check_each("type", ids)?;
        let rows = self.run(tenant, queries::ENTITY_TYPE_NAMES, params! { "ids" => ids }).await?;
        Ok(rows.iter().map(|row| str_col(row, "name")).collect())
    }
}
