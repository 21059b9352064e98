//! Entities by name: what an agent asks before it has an ID, and the filtered walk of a
//! tenant's entities in creation order (`POST /v3/fs` op=find).

use super::columns::str_col;
use super::entities::Entity;
use super::window::WindowedPage;
use super::{queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::params;
use std::collections::HashSet;

/// Most entities one search answers.
pub const MAX_SEARCH_RESULTS: u32 = 200;
/// Searches one request runs at most while it meets keys of entities that no longer exist.
const ORPHAN_SWEEPS: usize = 4;

impl GraphService {
    /// Live entities whose canonical name or any surface form contains `text` (any case),
    /// optionally in one bucket, oldest first, at most `limit` (1..=[`MAX_SEARCH_RESULTS`]).
    pub async fn search_entities(
        &self,
        tenant: &Tenant,
        text: &str,
        bucket: Option<&str>,
        limit: u32,
    ) -> ServiceResult<Vec<Entity>> {
        crate::text::check("text", text)?;
        crate::text::check_opt("bucket", bucket)?;
        if text.trim().is_empty() {
            return Err(ServiceError::invalid_field("text", "required: part of a name to look for"));
        }
        if !(1..=MAX_SEARCH_RESULTS).contains(&limit) {
            return Err(ServiceError::invalid_field(
                "limit",
                format!("must be between 1 and {MAX_SEARCH_RESULTS}"),
            ));
        }
        // Entity IDs are ULIDs: in their order, entities are in creation order. A merge moves
        // its names' keys to the survivor, so every ID found is live, but for keys a bucket's
        // cascade delete left behind before it removed them too: those met are deleted and
        // the search run again, a few times at most (the next search goes on sweeping).
        for pass in 1.. {
            let ids = self.entities_named_like(tenant, text.trim(), bucket, limit as usize).await?;
            let entities = self.entity_details(tenant, &ids).await?;
            if entities.len() == ids.len() || pass == ORPHAN_SWEEPS {
                return Ok(entities);
            }
            let found: HashSet<&str> = entities.iter().map(|e| e.entity_id.as_str()).collect();
            let missing: Vec<&String> = ids.iter().filter(|id| !found.contains(id.as_str())).collect();
            if self.delete_orphan_keys(tenant, &missing).await? == 0 {
                return Ok(entities);
            }
        }
        unreachable!("the passes return")
    }

    /// The first `limit` entities (in ID order) with a name containing `text`, any case.
    pub(super) async fn entities_named_like(
        &self,
        tenant: &Tenant,
        text: &str,
        bucket: Option<&str>,
        limit: usize,
    ) -> ServiceResult<Vec<String>> {
        let rows = self
            .run(
                tenant,
                queries::ENTITY_SEARCH,
                params! { "search" => text, "bucketID" => bucket, "limit" => limit as i64 },
            )
            .await?;
        Ok(rows.iter().map(|row| str_col(row, "entityID")).collect())
    }
}

/// What a find filters a tenant's live entities by.
#[derive(Clone, Debug, Default)]
pub struct FindFilter {
    pub bucket: Option<String>,
    /// Created at or after this.
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    /// Part of the canonical name, any case.
    pub search: Option<String>,
    /// The effective type's name: the assigned type's, else the inferred one.
    pub type_name: Option<String>,
}

impl GraphService {
    /// Live entities under `filter` in ID (creation) order after `cursor` (an entity ID from
    /// the previous page): at most `limit` of them, and the next page's cursor when more may
    /// follow. Read in creation-time windows as the review queue is (one ordered statement on
    /// Neo4j), so a page costs what its rows do, not what the tenant's entities after the
    /// cursor do; within the page scan bound (fewer when it ends the page short).
    pub async fn find_entity_ids(
        &self,
        tenant: &Tenant,
        filter: FindFilter,
        cursor: Option<&str>,
        limit: usize,
    ) -> ServiceResult<(Vec<String>, Option<String>)> {
        super::id_keys::check_cursor(cursor, "ent", "an entity ID")?;
        let since_ms = filter.since.map_or(0, |t| t.timestamp_millis().max(0) as u64);
        let since = filter.since.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
        // Every entity, merged ones too: where the tenant's entities begin is kept for the
        // review queue's walks as well (a status filter there may ask for merged ones).
        let unfiltered = params! {
            "live" => false, "bucketID" => None::<String>, "since" => None::<String>,
            "search" => None::<String>, "type" => None::<String>,
        };
        let filters = params! {
            "live" => true, "bucketID" => filter.bucket, "since" => since,
            "search" => filter.search.map(|s| s.to_lowercase()), "type" => filter.type_name,
        };
        let page = WindowedPage {
            prefix: "ent",
            query: queries::ENTITY_FIND,
            ordered: queries::ENTITY_FIND_ORDERED,
            id_column: "entityID",
            unfiltered,
            filters,
            cursor,
            since_ms,
            limit,
        };
        let (rows, next) = self.windowed_rows(tenant, page).await?.into_page(limit, "entityID");
        Ok((rows.iter().map(|row| str_col(row, "entityID")).collect(), next))
    }
}
