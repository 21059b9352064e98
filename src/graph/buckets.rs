//! Buckets: named partitions of a tenant's graph. Exactly one default bucket per tenant,
//! which can be renamed but never deleted; deletes are soft.
//!
//! A bucket read by ID is remembered for [`BUCKET_TRUST`] (dashboards and clients read the
//! same few buckets over and over, and the engine's round trip was most of such a read's
//! cost). Renames and deletes through this process forget it at once; another canon sharing
//! the same graph engine (Neo4j) sees them within [`BUCKET_TRUST`], the bound API-key
//! revocation has too.

use super::columns::str_col;
use super::{counted, decode, int_column, queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::ids;
use crate::pagination::PageRequest;
use crate::params;
use crate::text;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Name the default bucket is created with.
pub const DEFAULT_BUCKET_NAME: &str = "default";
/// Characters a bucket name may hold.
pub const NAME_MAX: usize = 100;
/// How long a bucket read by ID is served from memory.
pub(super) const BUCKET_TRUST: std::time::Duration = std::time::Duration::from_secs(1);
/// Buckets remembered at most, over all tenants.
pub(super) const BUCKETS_REMEMBERED: usize = 10_000;
const DESCRIPTION_MAX: usize = 2_000;
/// Mentions or entities one statement of a bucket's cascade delete removes: a few tens of
/// milliseconds of the engine's, between which other tenants' writes run.
pub const DELETE_PAGE: usize = 5_000;

/// A named partition of the knowledge graph within an account and environment.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Bucket {
    /// Stable identifier (`bkt_…`).
    #[serde(rename = "bucketID")]
    pub bucket_id: String,
    /// Unique among the tenant's live buckets.
    pub name: String,
    pub description: String,
    /// Whether this is the tenant's default bucket.
    pub is_default: bool,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

/// A page of buckets and how many match in all.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BucketPage {
    pub buckets: Vec<Bucket>,
    pub total_count: i64,
}

pub struct NewBucket {
    pub name: String,
    pub description: Option<String>,
}

pub struct BucketChanges {
    pub name: Option<String>,
    pub description: Option<String>,
}

pub(super) async fn ensure_default(graph: &GraphService, tenant: &Tenant) -> ServiceResult<()> {
    graph
        .run(
            tenant,
            queries::BUCKET_ENSURE_DEFAULT,
            params! {
                "defaultKey" => tenant.scoped_key(""),
                "id" => ids::new_id("bkt"),
                "name" => DEFAULT_BUCKET_NAME,
                "liveNameKey" => tenant.scoped_key(DEFAULT_BUCKET_NAME),
                "now" => ids::now_rfc3339(),
            },
        )
        .await?;
    Ok(())
}

impl GraphService {
    pub async fn create_bucket(&self, tenant: &Tenant, new: NewBucket) -> ServiceResult<Bucket> {
        text::check_len("name", &new.name, NAME_MAX, true)?;
        let description = new.description.unwrap_or_default();
        text::check_len("description", &description, DESCRIPTION_MAX, false)?;
        let id = ids::new_id("bkt");
        let rows = self
            .run(
                tenant,
                queries::BUCKET_CREATE,
                params! {
                    "id" => id,
                    "name" => new.name,
                    "description" => description,
                    "liveNameKey" => tenant.scoped_key(&new.name),
                    "now" => ids::now_rfc3339(),
                },
            )
            .await?;
        let bucket: Bucket = decode(first(rows)?)?;
        if bucket.bucket_id != id {
            return Err(name_taken(&new.name));
        }
        Ok(bucket)
    }

    pub async fn get_bucket(&self, tenant: &Tenant, id: &str) -> ServiceResult<Bucket> {
        let key = (tenant.clone(), id.to_string());
        if let Some(bucket) = self.recent_buckets.get(&key) {
            return Ok(bucket);
        }
        let seen = self.recent_buckets.revision();
        let rows = self.run(tenant, queries::BUCKET_GET, params! { "id" => id }).await?;
        let bucket: Bucket = match rows.into_iter().next() {
            Some(row) => decode(row)?,
            None => return Err(ServiceError::not_found("bucket", id)),
        };
        self.recent_buckets.put_if_unchanged(seen, key, bucket.clone());
        Ok(bucket)
    }

    /// Forgets a remembered bucket before and after a write changes it, so no read that
    /// overlapped the write keeps the old state.
    fn forget_bucket(&self, tenant: &Tenant, id: &str) {
        self.recent_buckets.forget(&(tenant.clone(), id.to_string()));
    }

    pub async fn list_buckets(
        &self,
        tenant: &Tenant,
        page: &PageRequest,
        name_substring: Option<&str>,
    ) -> ServiceResult<BucketPage> {
        text::check_opt("nameSubstring", name_substring)?;
        let query = if page.backwards() { queries::BUCKET_LIST_BEFORE } else { queries::BUCKET_LIST_AFTER };
        let rows = self
            .run(
                tenant,
                query,
                params! {
                    "nameSubstring" => name_substring,
                    "startingAfter" => page.starting_after(),
                    "endingBefore" => page.ending_before(),
                    "limit" => page.limit,
                },
            )
            .await?;
        let mut buckets = rows.into_iter().map(decode).collect::<ServiceResult<Vec<Bucket>>>()?;
        if page.backwards() {
            buckets.reverse();
        }
        let total =
            self.run(tenant, queries::BUCKET_COUNT, params! { "nameSubstring" => name_substring }).await?;
        Ok(BucketPage { buckets, total_count: int_column(&total, "total") })
    }

    pub async fn update_bucket(
        &self,
        tenant: &Tenant,
        id: &str,
        changes: BucketChanges,
    ) -> ServiceResult<Bucket> {
        if let Some(name) = &changes.name {
            text::check_len("name", name, NAME_MAX, true)?;
        }
        if let Some(description) = &changes.description {
            text::check_len("description", description, DESCRIPTION_MAX, false)?;
        }
        self.forget_bucket(tenant, id);
        let result = self
            .run(
                tenant,
                queries::BUCKET_UPDATE,
                params! {
                    "id" => id,
                    "name" => changes.name,
                    "liveNameKey" => changes.name.as_deref().map(|name| tenant.scoped_key(name)),
                    "description" => changes.description,
                    "now" => ids::now_rfc3339(),
                },
            )
            .await;
        let rows = match result {
            Err(ServiceError::Internal(err)) if is_constraint(&err) => {
                return Err(name_taken(changes.name.as_deref().unwrap_or_default()))
            }
            other => other?,
        };
        self.forget_bucket(tenant, id);
        match rows.into_iter().next() {
            Some(row) => decode(row),
            None => Err(ServiceError::not_found("bucket", id)),
        }
    }

    /// Soft-deletes a bucket; `cascade` also removes its entities (with the keys of their
    /// names), mentions and relations, [`DELETE_PAGE`] of them a statement.
    pub async fn delete_bucket(&self, tenant: &Tenant, id: &str, cascade: bool) -> ServiceResult<()> {
        self.forget_bucket(tenant, id);
        if cascade {
            self.empty_bucket(tenant, id).await?;
        }
        let rows = self
            .run(
                tenant,
                queries::BUCKET_DELETE,
                params! { "id" => id, "cascade" => cascade, "now" => ids::now_rfc3339() },
            )
            .await?;
        self.forget_bucket(tenant, id);
        if !rows.is_empty() {
            return Ok(());
        }
        let blockers = self.delete_blockers(tenant, queries::BUCKET_DELETE_BLOCKERS, id).await?;
        let Some(row) = blockers.first() else {
            return Err(ServiceError::not_found("bucket", id));
        };
        if row.get("isDefault").and_then(|v| v.as_bool()) == Some(true) {
            return Err(ServiceError::Conflict(
                "the default bucket cannot be deleted; rename it instead".into(),
            ));
        }
        Err(ServiceError::Conflict(format!(
            "bucket {id} still holds {} entities; delete with cascade=true to remove them too",
            counted(int_column(&blockers, "entities"))
        )))
    }

    /// Removes a live, non-default bucket's mentions, then its entities, a page a statement,
    /// each statement short enough that other writes interleave (FalkorDB runs writes one at a
    /// time). A default, deleted or missing bucket has no page: the delete then says why.
    async fn empty_bucket(&self, tenant: &Tenant, id: &str) -> ServiceResult<()> {
        let limit = self.delete_page as i64;
        for page in [queries::BUCKET_MENTIONS_PAGE, queries::BUCKET_ENTITIES_PAGE] {
            loop {
                let rows = self.run(tenant, page, params! { "id" => id, "limit" => limit }).await?;
                let ids: Vec<String> = rows.iter().map(|row| str_col(row, "id")).collect();
                if ids.is_empty() {
                    break;
                }
                let removed = self
                    .run(tenant, queries::BUCKET_MEMBERS_DELETE, params! { "id" => id, "ids" => ids })
                    .await?;
                // Nothing removed: the page's members moved meanwhile; the delete's last
                // statement removes what is left.
                if int_column(&removed, "removed") == 0 {
                    break;
                }
            }
        }
        Ok(())
    }
}

fn first(rows: Vec<crate::store::graph::Row>) -> ServiceResult<crate::store::graph::Row> {
    rows.into_iter().next().ok_or_else(|| ServiceError::Internal(anyhow::anyhow!("a write returned no row")))
}

fn name_taken(name: &str) -> ServiceError {
    ServiceError::Conflict(format!("a bucket named {name:?} already exists; choose another name"))
}

/// Whether an internal error is a uniqueness-constraint rejection by the engine.
pub(super) fn is_constraint(err: &anyhow::Error) -> bool {
    matches!(
        err.downcast_ref::<crate::store::graph::GraphError>(),
        Some(crate::store::graph::GraphError::ConstraintViolation(_))
    )
}
