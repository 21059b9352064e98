//! The review queue: entities awaiting curation, filtered and paged by entityID.

use super::entities::{str_col, Entity};
use super::{queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::params;
use serde::Serialize;
use utoipa::ToSchema;

/// Filters of `GET /v3/review-queue`; they AND together.
#[derive(Debug, Default)]
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
    pub entities: Vec<Entity>,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

pub const STATUSES: &[&str] = &["extracted", "proposed", "approved", "rejected", "merged"];

impl GraphService {
    pub async fn review_queue(&self, tenant: &Tenant, filter: ReviewFilter) -> ServiceResult<ReviewPage> {
        for status in &filter.statuses {
            if !STATUSES.contains(&status.as_str()) {
                return Err(ServiceError::invalid_field(
                    "status",
                    format!("unknown status {status:?}; one of {STATUSES:?}"),
                ));
            }
        }
        let statuses = if filter.statuses.is_empty() {
            vec!["extracted".into(), "proposed".into()]
        } else {
            filter.statuses
        };
        let type_names = match &filter.type_ids {
            Some(ids) => Some(self.type_names(tenant, ids).await?),
            None => None,
        };
        let rows = self
            .run(
                tenant,
                queries::REVIEW_QUEUE,
                params! {
                    "statuses" => statuses, "bucketID" => filter.bucket, "since" => filter.since,
                    "cursor" => filter.cursor, "typeIDs" => filter.type_ids, "typeNames" => type_names,
                    "limit" => filter.limit + 1,
                },
            )
            .await?;
        let mut ids: Vec<String> = rows.iter().map(|row| str_col(row, "entityID")).collect();
        let has_more = ids.len() > filter.limit as usize;
        ids.truncate(filter.limit as usize);
        let entities = self.entity_details(tenant, &ids).await?;
        let next_cursor = if has_more { ids.last().cloned() } else { None };
        Ok(ReviewPage { entities, has_more, next_cursor })
    }

    /// The names of these type IDs (unknown IDs match nothing).
    pub async fn type_names(&self, tenant: &Tenant, ids: &[String]) -> ServiceResult<Vec<String>> {
        let rows = self.run(tenant, queries::ENTITY_TYPE_NAMES, params! { "ids" => ids }).await?;
        Ok(rows.iter().map(|row| str_col(row, "name")).collect())
    }
}
