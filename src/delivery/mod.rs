//! Events delivery: subscriptions, the signed webhook wire format, the durable outbox and
//! its workers, and the delivery log.
//!
//! Every terminal event of a subscribed function (and every `collection_processing` event of
//! a subscribed collection) is written to the outbox in the same transaction as the event
//! itself ([`crate::store::records::outbox`]); [`worker`] sends it, at least once, signed
//! ([`crate::signature`]), retried on the published [`schedule`]. Each attempt is kept: the log is
//! read per subscription or per event, and a delivery can be queued again by hand.

pub mod entity_events;
pub mod gauges;
pub mod schedule;
pub mod shares;
pub mod subscriptions;
pub mod worker;

use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::store::records::outbox::DeliveryRecord;
use crate::store::records::Records;
use serde::Serialize;
use utoipa::ToSchema;

/// Most deliveries one log read returns.
pub const LOG_LIMIT: i64 = 200;

/// A delivery with its attempts, as the log shows it.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    #[serde(rename = "deliveryID")]
    pub delivery_id: String,
    #[serde(rename = "subscriptionID")]
    pub subscription_id: String,
    #[serde(rename = "eventID")]
    pub event_id: String,
    /// `webhook`, `s3` or `google_drive`.
    pub destination_type: String,
    /// `pending`, `delivered`, `failed` (the schedule ran out) or `disabled`.
    pub status: String,
    /// When the next attempt is due, while pending. While an attempt is in flight, when the
    /// delivery is tried again should that attempt never finish (its lease, a minute).
    pub next_attempt_at: Option<String>,
    pub created_at: String,
    pub attempts: Vec<DeliveryAttempt>,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttempt {
    pub attempted_at: String,
    /// The destination's HTTP status, when it answered.
    pub status_code: Option<i64>,
    pub latency_ms: i64,
    /// The first 500 characters of the answer.
    pub response_excerpt: Option<String>,
    pub error: Option<String>,
    pub next_retry_at: Option<String>,
}

impl From<DeliveryRecord> for Delivery {
    fn from(record: DeliveryRecord) -> Self {
        Self {
            delivery_id: record.id,
            subscription_id: record.subscription_id,
            event_id: record.event_id,
            destination_type: record.destination,
            next_attempt_at: (record.status == "pending")
                .then(|| ids::millis_rfc3339(record.next_attempt_at)),
            status: record.status,
            created_at: ids::millis_rfc3339(record.created_at),
            attempts: record
                .attempts
                .into_iter()
                .map(|a| DeliveryAttempt {
                    attempted_at: ids::millis_rfc3339(a.at),
                    status_code: a.status_code,
                    latency_ms: a.latency_ms,
                    response_excerpt: a.response_excerpt,
                    error: a.error,
                    next_retry_at: a.next_retry_at.map(ids::millis_rfc3339),
                })
                .collect(),
        }
    }
}

/// The delivery log and redelivery.
#[derive(Clone)]
pub struct DeliveryService {
    pub records: Records,
    pub subscriptions: subscriptions::SubscriptionsService,
    /// The pace of this process's delivery worker.
    pub gauges: std::sync::Arc<gauges::Gauges>,
}

impl DeliveryService {
    pub async fn of_subscription(
        &self,
        tenant: &Tenant,
        subscription_id: &str,
    ) -> ServiceResult<Vec<Delivery>> {
        self.subscriptions.row(tenant, subscription_id).await?;
        let records =
            self.records.deliveries_of(tenant.owner(), Some(subscription_id), None, LOG_LIMIT).await?;
        Ok(records.into_iter().map(Delivery::from).collect())
    }

    pub async fn of_event(&self, tenant: &Tenant, event_id: &str) -> ServiceResult<Vec<Delivery>> {
        if self.records.event(tenant.owner(), event_id).await?.is_none() {
            return Err(ServiceError::not_found("event", event_id));
        }
        let records = self.records.deliveries_of(tenant.owner(), None, Some(event_id), LOG_LIMIT).await?;
        Ok(records.into_iter().map(Delivery::from).collect())
    }

    /// Queues a delivery again now (also a delivered, failed or disabled one).
    pub async fn redeliver(&self, tenant: &Tenant, delivery_id: &str) -> ServiceResult<()> {
        if self.records.redeliver(tenant.owner(), delivery_id, ids::now_millis()).await? {
            Ok(())
        } else {
            Err(ServiceError::not_found("delivery", delivery_id))
        }
    }
}
