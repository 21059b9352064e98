//! Reading the merges an entity took part in, a page at a time: an entity may have taken part
//! in any number (a survivor of every merge a refresh makes of a common name, or one merged
//! and unmerged again and again), and every read of them read them all.

use super::merges::{newest_first, MergeRecord};
use super::{decode, queries, GraphService, Tenant};
use crate::error::ServiceResult;
use crate::params;
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;

/// Merges one page of an entity's history shows by default, and at most.
pub const MERGES_PAGE: u32 = 100;
pub const MAX_MERGES_PAGE: u32 = 200;

/// A page of an entity's merges, newest first.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MergeHistory {
    pub merges: Vec<MergeRecord>,
    /// When more are older: pass as `cursor` for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl GraphService {
    /// The `limit` newest merges an entity took part in before merge `cursor` (a previous
    /// page's `nextCursor`; none: the newest).
    pub async fn merge_history(
        &self,
        tenant: &Tenant,
        entity_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> ServiceResult<MergeHistory> {
        super::id_keys::check_cursor(cursor, "mrg", "a merge ID")?;
        let params = params! { "id" => entity_id, "before" => cursor, "limit" => (limit + 1) as i64 };
        let mut merges = self.merge_rows(tenant, queries::ENTITY_MERGES, params).await?;
        let next_cursor = (merges.len() > limit).then(|| merges[limit - 1].merge_id.clone());
        merges.truncate(limit);
        Ok(MergeHistory { merges, next_cursor })
    }

    /// The merges whose merging or undoing the page of an entity's timeline before `before`
    /// (the page's cursor: milliseconds and item key; none: the newest) may show, `limit` of
    /// each kind at most, newest first.
    pub(super) async fn merges_for_timeline(
        &self,
        tenant: &Tenant,
        entity_id: &str,
        before: Option<&(i64, String)>,
        limit: usize,
    ) -> ServiceResult<Vec<MergeRecord>> {
        let (before_at, before_key) = match before {
            Some((at, key)) => (Some(crate::ids::millis_rfc3339(*at)), Some(key.clone())),
            None => (None, None),
        };
        let params = params! {
            "id" => entity_id, "beforeAt" => before_at, "beforeKey" => before_key, "limit" => limit as i64,
        };
        self.merge_rows(tenant, queries::ENTITY_MERGES_TIMELINE, params).await
    }

    /// Per entity ID, newest first: its `limit` newest merges and those of its `limit` latest
    /// undone (what the first page of its history or its timeline may show), in one statement.
    pub async fn merge_history_of_many(
        &self,
        tenant: &Tenant,
        ids: &[String],
        limit: usize,
    ) -> ServiceResult<HashMap<String, Vec<MergeRecord>>> {
        let mut found: HashMap<String, Vec<MergeRecord>> =
            ids.iter().map(|id| (id.clone(), Vec::new())).collect();
        if ids.is_empty() {
            return Ok(found);
        }
        let params = params! { "ids" => ids, "limit" => limit as i64 };
        // Dealt out newest first, so each entity's list stays newest first.
        for record in self.merge_rows(tenant, queries::ENTITY_MERGES_BATCH, params).await? {
            for id in [&record.survivor_id, &record.merged_id] {
                if let Some(list) = found.get_mut(id) {
                    list.push(record.clone());
                }
            }
        }
        Ok(found)
    }

    /// Merge records read by `cypher`, newest first, each once.
    async fn merge_rows(
        &self,
        tenant: &Tenant,
        cypher: &str,
        params: crate::store::graph::Params,
    ) -> ServiceResult<Vec<MergeRecord>> {
        let rows = self.run(tenant, cypher, params).await?;
        let mut records = rows.into_iter().map(decode).collect::<ServiceResult<Vec<MergeRecord>>>()?;
        newest_first(&mut records);
        records.dedup_by(|a, b| a.merge_id == b.merge_id);
        Ok(records)
    }
}
