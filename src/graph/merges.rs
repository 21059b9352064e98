//! Manual merges of entities into a survivor, and their undoing. Each merge is one Cypher
//! statement that moves the merged entity's surface forms, mentions and relation edges and
//! records exactly what moved and who did it; unmerge moves exactly those back.

use super::audit::Actor;
use super::columns::str_col;
use super::entities::Entity;
use super::{decode, queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::ids;
use crate::params;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Entities one manual merge folds into its survivor at most.
pub const MERGE_MAX: usize = 100;

/// Merges one statement of [`GraphService::merge_pairs`] makes at most: a refresh's merges
/// one statement each were most of its time (~8 ms each at a million entities).
pub const MERGES_PER_STATEMENT: usize = 250;

/// One recorded merge.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MergeRecord {
    #[serde(rename = "mergeID")]
    pub merge_id: String,
    #[serde(rename = "survivorID")]
    pub survivor_id: String,
    #[serde(rename = "mergedID")]
    pub merged_id: String,
    /// The user (`usr_…`) or API key (`key_…`) that merged.
    pub merged_by: String,
    pub merged_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undone_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undone_at: Option<String>,
    pub keys_moved: i64,
    pub mentions_moved: i64,
    pub relations_moved: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MergeResult {
    /// The survivor after the merge.
    pub entity: Entity,
    pub merges: Vec<MergeRecord>,
}

impl GraphService {
    /// Merges each of `merged` into `survivor` (IDs resolve through earlier merges).
    pub async fn merge_entities(
        &self,
        tenant: &Tenant,
        survivor: &str,
        merged: &[String],
        actor: &Actor,
    ) -> ServiceResult<MergeResult> {
        let (survivor_id, merges) = self.merge_into(tenant, survivor, merged, actor).await?;
        Ok(MergeResult { entity: self.get_entity(tenant, &survivor_id, None).await?, merges })
    }

    /// [`GraphService::merge_entities`] without reading the survivor back: the survivor's ID
    /// and the merge records. For a refresh's automatic merges, which nobody reads (a full
    /// read of a survivor of many merges took 0.7 s).
    pub async fn merge_into(
        &self,
        tenant: &Tenant,
        survivor: &str,
        merged: &[String],
        actor: &Actor,
    ) -> ServiceResult<(String, Vec<MergeRecord>)> {
        if merged.is_empty() || merged.len() > MERGE_MAX {
            return Err(ServiceError::invalid_field(
                "entityIDs",
                format!("must hold between 1 and {MERGE_MAX} IDs"),
            ));
        }
        let (survivor_id, survivor_bucket) = self.resolve_entity(tenant, survivor, None).await?;
        let mut targets = Vec::new();
        for id in merged {
            let (merged_id, bucket) = self.resolve_entity(tenant, id, None).await?;
            if merged_id == survivor_id {
                return Err(ServiceError::Unprocessable {
                    message: format!("{id} already is (or was merged into) {survivor_id}"),
                    details: Some(serde_json::json!({ "field": "entityIDs", "error": "same entity" })),
                });
            }
            if bucket != survivor_bucket {
                return Err(ServiceError::Unprocessable {
                    message: format!(
                        "{id} is in another bucket than {survivor_id}; merges stay inside one bucket"
                    ),
                    details: Some(serde_json::json!({ "field": "entityIDs", "error": "other bucket" })),
                });
            }
            targets.push(merged_id);
        }
        let mut merges = Vec::new();
        for merged_id in targets {
            let merge_id = ids::new_id("mrg");
            let rows = self
                .run(
                    tenant,
                    queries::ENTITY_MERGE,
                    params! {
                        "survivorID" => survivor_id, "mergedID" => merged_id, "mergeID" => merge_id,
                        "bucketID" => survivor_bucket,
                        "actor" => actor.label(), "now" => ids::now_rfc3339(),
                    },
                )
                .await?;
            if rows.is_empty() {
                return Err(ServiceError::ConcurrentChange(format!(
                    "{merged_id} changed while merging; retry"
                )));
            }
            let record = self.run(tenant, queries::MERGE_RECORD, params! { "mergeID" => merge_id }).await?;
            merges.extend(record.into_iter().map(decode).collect::<ServiceResult<Vec<_>>>()?);
        }
        Ok((survivor_id, merges))
    }

    /// Merges each `(survivor, merged, bucket)` of live entity IDs (not resolved: the caller
    /// knows them live, both in `bucket`), [`MERGES_PER_STATEMENT`] a statement: whether each
    /// was merged, in order. A pair that was not (either entity no longer live, or not in
    /// `bucket`) wrote nothing. No entity merged by one pair may appear in another pair; survivors may
    /// repeat (see cypher/entity_merge_batch.cypher).
    pub async fn merge_pairs(
        &self,
        tenant: &Tenant,
        pairs: &[(String, String, String)],
        actor: &Actor,
    ) -> ServiceResult<Vec<bool>> {
        let mut done = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(MERGES_PER_STATEMENT) {
            let merge_ids: Vec<String> = chunk.iter().map(|_| ids::new_id("mrg")).collect();
            let merges: Vec<serde_json::Value> = chunk
                .iter()
                .zip(&merge_ids)
                .map(|((survivor, merged, bucket), id)| {
                    serde_json::json!({
                        "survivorID": survivor, "mergedID": merged, "mergeID": id, "bucketID": bucket,
                    })
                })
                .collect();
            let rows = self
                .run(
                    tenant,
                    queries::ENTITY_MERGE_BATCH,
                    params! { "merges" => merges, "actor" => actor.label(), "now" => ids::now_rfc3339() },
                )
                .await?;
            let made: std::collections::HashSet<String> =
                rows.iter().map(|row| str_col(row, "mergeID")).collect();
            done.extend(merge_ids.iter().map(|id| made.contains(id)));
        }
        Ok(done)
    }

    /// Undoes a merge; 409 if already undone or its survivor has been merged away since.
    pub async fn unmerge(&self, tenant: &Tenant, merge_id: &str, actor: &Actor) -> ServiceResult<Entity> {
        let rows = self
            .run(
                tenant,
                queries::ENTITY_UNMERGE,
                params! { "mergeID" => merge_id, "actor" => actor.label(), "now" => ids::now_rfc3339() },
            )
            .await?;
        if let Some(row) = rows.first() {
            return self.get_entity(tenant, &str_col(row, "entityID"), None).await;
        }
        let found = self.run(tenant, queries::MERGE_GET, params! { "mergeID" => merge_id }).await?;
        let row = found.first().ok_or_else(|| ServiceError::not_found("merge", merge_id))?;
        if row.get("undoneAt").is_some_and(|v| !v.is_null()) {
            return Err(ServiceError::Conflict(format!("merge {merge_id} is already undone")));
        }
        Err(ServiceError::Conflict(format!(
            "the survivor {} has since been merged into {}; undo that merge first",
            str_col(row, "survivorID"),
            str_col(row, "survivorMergedInto")
        )))
    }
}

/// Merge IDs are time-ordered: the largest is the newest.
pub(super) fn newest_first(records: &mut [MergeRecord]) {
    records.sort_by(|a, b| b.merge_id.cmp(&a.merge_id));
}
