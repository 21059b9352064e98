//! Subscriptions: which terminal events go to which destinations.
//!
//! Decisions where the spec and `bem-sdk` leave room:
//! - A subscription names one function (`functionName` or `functionID`; stored by ID, so a
//!   rename keeps it) or one collection (`collectionName` or `collectionID`), except the
//!   account-wide `entity_*` types, which name neither and deliver to `webhookURL` only.
//! - It delivers every terminal event of its function — outputs and errors — whatever its
//!   `type` says, except `type: "error"`, which delivers only error events. Intermediate
//!   nodes never fire. A collection subscription delivers its `collection_processing` events.
//! - Destinations: `webhookURL` (checked by the egress guard), `s3Bucket` + `s3FilePath`
//!   (folders of the tenant's object store), `googleDriveFolderID`; at least one.
//! - An environment holds at most 1,000 subscriptions, 50 of them on one source (a
//!   function, a collection, or the account's entity events): an event is queued for each of
//!   its source's subscriptions in the event's own write. Past either, 422 naming it; the
//!   count and the write are one transaction, so concurrent writes cannot pass it together.
//! - PATCH changes only the fields sent; `disabled: true` pauses (nothing is queued while
//!   paused, and nothing is caught up afterwards).
//! - The list is a bare JSON array in ID order, `functionNames` ANDed, both cursors.

use crate::egress::{objects, Egress};
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::pagination::PageRequest;
use crate::store::records::subscriptions::{SubscriptionBounds, SubscriptionRow, SubscriptionSaved};
use crate::store::records::Records;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;

/// Longest subscription name.
pub const NAME_MAX: usize = 200;
/// Subscriptions one environment holds.
pub const MAX_SUBSCRIPTIONS: i64 = 1_000;
/// Subscriptions watching one source (a function, a collection, the account's entity
/// events): each of its events is queued for each of them, in the event's own write.
pub const MAX_PER_SOURCE: i64 = 50;

/// `type` values: bem-sdk's, then canon's account-wide entity events.
pub const TYPES: &[&str] = &[
    "transform",
    "analyze",
    "route",
    "join",
    "split_collection",
    "split_item",
    "evaluation",
    "error",
    "payload_shaping",
    "enrich",
    "collection_processing",
    "entity_proposed",
    "entity_validated",
    "entity_rejected",
];

/// A subscription as the API shows it (bem-sdk's SubscriptionV3).
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    #[serde(rename = "subscriptionID")]
    pub subscription_id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub subscription_type: String,
    #[serde(rename = "functionID")]
    pub function_id: Option<String>,
    pub function_name: Option<String>,
    #[serde(rename = "collectionID")]
    pub collection_id: Option<String>,
    pub collection_name: Option<String>,
    pub disabled: bool,
    #[serde(rename = "webhookURL")]
    pub webhook_url: Option<String>,
    pub s3_bucket: Option<String>,
    pub s3_file_path: Option<String>,
    #[serde(rename = "googleDriveFolderID")]
    pub google_drive_folder_id: Option<String>,
}

/// Create and PATCH bodies (on PATCH every field is optional and only those sent change).
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionInput {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub subscription_type: Option<String>,
    #[serde(rename = "functionID")]
    pub function_id: Option<String>,
    pub function_name: Option<String>,
    #[serde(rename = "collectionID")]
    pub collection_id: Option<String>,
    pub collection_name: Option<String>,
    pub disabled: Option<bool>,
    #[serde(rename = "webhookURL")]
    pub webhook_url: Option<String>,
    pub s3_bucket: Option<String>,
    pub s3_file_path: Option<String>,
    #[serde(rename = "googleDriveFolderID")]
    pub google_drive_folder_id: Option<String>,
}

#[derive(Clone)]
pub struct SubscriptionsService {
    pub records: Records,
    pub egress: Arc<Egress>,
}

fn given(value: &Option<String>) -> Option<String> {
    value.as_ref().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

impl SubscriptionsService {
    pub async fn create(&self, tenant: &Tenant, input: SubscriptionInput) -> ServiceResult<Subscription> {
        let now = ids::now_millis();
        let row = SubscriptionRow {
            id: ids::new_id("sub"),
            created_at: now,
            updated_at: now,
            ..Default::default()
        };
        let row = self.apply(tenant, row, input, true).await?;
        self.save(tenant, &row).await?;
        self.shown(tenant, row).await
    }

    pub async fn get(&self, tenant: &Tenant, id: &str) -> ServiceResult<Subscription> {
        let row = self.row(tenant, id).await?;
        self.shown(tenant, row).await
    }

    pub async fn update(
        &self,
        tenant: &Tenant,
        id: &str,
        input: SubscriptionInput,
    ) -> ServiceResult<Subscription> {
        let row = self.row(tenant, id).await?;
        let mut row = self.apply(tenant, row, input, false).await?;
        row.updated_at = ids::now_millis();
        self.save(tenant, &row).await?;
        self.shown(tenant, row).await
    }

    pub async fn delete(&self, tenant: &Tenant, id: &str) -> ServiceResult<()> {
        if self.records.delete_subscription(tenant.owner(), id).await? {
            Ok(())
        } else {
            Err(ServiceError::not_found("subscription", id))
        }
    }

    /// A page in ID order, only subscriptions of `function_names` when given.
    pub async fn list(
        &self,
        tenant: &Tenant,
        function_names: &[String],
        page: &PageRequest,
    ) -> ServiceResult<Vec<Subscription>> {
        let mut function_ids = Vec::new();
        for name in function_names {
            match self.records.find_function(tenant.owner(), name).await? {
                Some(function) => function_ids.push(function.head.id),
                // A name no function has matches nothing (but must not widen the filter).
                None => function_ids.push(format!("none:{name}")),
            }
        }
        let rows =
            self.records.list_subscriptions(tenant.owner(), &function_ids, &page.cursor, page.limit).await?;
        let mut shown = Vec::with_capacity(rows.len());
        for row in rows {
            shown.push(self.shown(tenant, row).await?);
        }
        Ok(shown)
    }

    /// Saves the row unless that passes [`MAX_SUBSCRIPTIONS`] or [`MAX_PER_SOURCE`] (422
    /// naming the bound).
    async fn save(&self, tenant: &Tenant, row: &SubscriptionRow) -> ServiceResult<()> {
        let bounds = SubscriptionBounds { per_environment: MAX_SUBSCRIPTIONS, per_source: MAX_PER_SOURCE };
        match self.records.save_subscription(tenant.owner(), row, bounds).await? {
            SubscriptionSaved::Saved => Ok(()),
            SubscriptionSaved::EnvironmentFull => Err(ServiceError::count_reached(
                format!("an environment holds at most {MAX_SUBSCRIPTIONS} subscriptions; delete one first"),
                "subscriptionsPerEnvironment",
                MAX_SUBSCRIPTIONS,
            )),
            SubscriptionSaved::SourceFull => Err(ServiceError::count_reached(
                format!(
                    "at most {MAX_PER_SOURCE} subscriptions watch one function, one collection or the \
                     account's entity events (each of its events is queued for every one of them); \
                     give one subscription several destinations, or delete one"
                ),
                "subscriptionsPerSource",
                MAX_PER_SOURCE,
            )),
        }
    }

    pub(crate) async fn row(&self, tenant: &Tenant, id: &str) -> ServiceResult<SubscriptionRow> {
        self.records
            .find_subscription(tenant.owner(), id)
            .await?
            .ok_or_else(|| ServiceError::not_found("subscription", id))
    }

    /// `input` over `row`, checked as a whole.
    async fn apply(
        &self,
        tenant: &Tenant,
        mut row: SubscriptionRow,
        input: SubscriptionInput,
        creating: bool,
    ) -> ServiceResult<SubscriptionRow> {
        if let Some(name) = &input.name {
            // The same rule as every other tenant text (tab and newline taken), which the
            // document states for it.
            let name = name.trim();
            crate::text::check_len("name", name, NAME_MAX, true)?;
            row.name = name.to_string();
        } else if creating {
            return Err(ServiceError::invalid_field("name", "is required"));
        }
        if let Some(kind) = &input.subscription_type {
            if !TYPES.contains(&kind.as_str()) {
                return Err(ServiceError::invalid_field(
                    "type",
                    format!("must be one of {} (got {kind:?})", TYPES.join(", ")),
                ));
            }
            row.subscription_type = kind.clone();
        } else if creating {
            return Err(ServiceError::invalid_field("type", "is required"));
        }
        if let Some(id) = given(&input.function_id) {
            self.records.find_function_by_id(tenant.owner(), &id).await?.ok_or_else(|| {
                ServiceError::invalid_field("functionID", format!("no function {id:?} in this environment"))
            })?;
            (row.function_id, row.collection_id, row.collection_name) = (Some(id), None, None);
        } else if let Some(name) = given(&input.function_name) {
            let function = self.records.find_function(tenant.owner(), &name).await?.ok_or_else(|| {
                ServiceError::invalid_field(
                    "functionName",
                    format!("no function {name:?} in this environment"),
                )
            })?;
            (row.function_id, row.collection_id, row.collection_name) = (Some(function.head.id), None, None);
        }
        if let Some(id) = given(&input.collection_id) {
            let name = self.records.collection_name_by_id(tenant.owner(), &id).await?.ok_or_else(|| {
                ServiceError::invalid_field(
                    "collectionID",
                    format!("no collection {id:?} in this environment"),
                )
            })?;
            (row.collection_id, row.collection_name, row.function_id) = (Some(id), Some(name), None);
        } else if let Some(name) = given(&input.collection_name) {
            let collection = self.records.find_collection(tenant.owner(), &name).await?.ok_or_else(|| {
                ServiceError::invalid_field(
                    "collectionName",
                    format!("no collection {name:?} in this environment"),
                )
            })?;
            (row.collection_id, row.collection_name, row.function_id) =
                (Some(collection.id), Some(name), None);
        }
        if let Some(disabled) = input.disabled {
            row.disabled = disabled;
        }
        if let Some(url) = &input.webhook_url {
            row.webhook_url = given(&Some(url.clone()));
            if let Some(url) = &row.webhook_url {
                self.egress
                    .check_url_resolving(url)
                    .await
                    .map_err(|reason| ServiceError::invalid_field("webhookURL", reason))?;
            }
        }
        for (field, value, target) in [
            ("s3Bucket", &input.s3_bucket, &mut row.s3_bucket),
            ("s3FilePath", &input.s3_file_path, &mut row.s3_file_path),
        ] {
            if let Some(value) = value {
                *target = given(&Some(value.clone()));
                if let Some(path) = target.as_deref() {
                    objects::relative_folder(path)
                        .map_err(|reason| ServiceError::invalid_field(field, reason))?;
                }
            }
        }
        if let Some(folder) = &input.google_drive_folder_id {
            row.google_drive_folder_id = given(&Some(folder.clone()));
            if let Some(folder) = &row.google_drive_folder_id {
                if !folder.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                    return Err(ServiceError::invalid_field(
                        "googleDriveFolderID",
                        "must be a Drive folder ID (letters, digits, - and _)",
                    ));
                }
            }
        }
        check_whole(&row)?;
        Ok(row)
    }

    async fn shown(&self, tenant: &Tenant, row: SubscriptionRow) -> ServiceResult<Subscription> {
        let function_name = match &row.function_id {
            Some(id) => self.records.find_function_by_id(tenant.owner(), id).await?.map(|f| f.name),
            None => None,
        };
        Ok(Subscription {
            subscription_id: row.id,
            name: row.name,
            subscription_type: row.subscription_type,
            function_id: row.function_id,
            function_name,
            collection_id: row.collection_id,
            collection_name: row.collection_name,
            disabled: row.disabled,
            webhook_url: row.webhook_url,
            s3_bucket: row.s3_bucket,
            s3_file_path: row.s3_file_path,
            google_drive_folder_id: row.google_drive_folder_id,
        })
    }
}

/// What must hold of a subscription as a whole.
fn check_whole(row: &SubscriptionRow) -> ServiceResult<()> {
    let account_wide = row.subscription_type.starts_with("entity_");
    if account_wide {
        if row.function_id.is_some() || row.collection_id.is_some() {
            return Err(ServiceError::invalid_field(
                "type",
                "entity_* subscriptions are account-wide: name no function or collection",
            ));
        }
        if row.webhook_url.is_none() || row.s3_bucket.is_some() || row.google_drive_folder_id.is_some() {
            return Err(ServiceError::invalid_field(
                "webhookURL",
                "entity_* subscriptions deliver to a webhookURL only",
            ));
        }
        return Ok(());
    }
    if row.function_id.is_none() && row.collection_id.is_none() {
        return Err(ServiceError::invalid_field(
            "functionName",
            "a subscription names a function (functionName or functionID) or a collection (collectionName or collectionID)",
        ));
    }
    if row.subscription_type == "collection_processing" && row.collection_id.is_none() {
        return Err(ServiceError::invalid_field(
            "collectionName",
            "collection_processing subscriptions name a collection",
        ));
    }
    if row.webhook_url.is_none() && row.s3_bucket.is_none() && row.google_drive_folder_id.is_none() {
        return Err(ServiceError::invalid_field(
            "webhookURL",
            "give a destination: webhookURL, s3Bucket or googleDriveFolderID",
        ));
    }
    if row.s3_file_path.is_some() && row.s3_bucket.is_none() {
        return Err(ServiceError::invalid_field("s3Bucket", "s3FilePath needs an s3Bucket"));
    }
    Ok(())
}
