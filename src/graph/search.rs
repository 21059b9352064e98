//! Entities by name: what an agent asks before it has an ID.

use super::columns::str_col;
use super::entities::Entity;
use super::{queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::params;

/// Most entities one search answers.
pub const MAX_SEARCH_RESULTS: u32 = 200;

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
        // its names' keys to the survivor, so every ID found is live.
        let ids = self.entities_named_like(tenant, text.trim(), bucket, limit as usize).await?;
        self.entity_details(tenant, &ids).await
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
