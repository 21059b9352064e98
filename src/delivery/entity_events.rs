//! Entity lifecycle events into the outbox: each status change becomes an event
//! (`entity_proposed`, `entity_validated`, `entity_rejected`) delivered to the environment's
//! account-wide subscriptions of that type, body `{eventID, eventType, entityID, typeName,
//! priorStatus, newStatus, actorUserID?, reason?, timestamp}`.
//!
//! The event ID is derived from the entity and its new status (an entity is proposed once and
//! validated or rejected once), so a replayed seed or a retried request records nothing
//! twice. One call's changes (a seed chunk's new entities) are written together, a thousand
//! per transaction. The graph write and this record are two stores: canon dying between
//! them loses the event (the status change itself stands); this is logged, not retried.

use crate::graph::events::{EntityEvents, StatusChange};
use crate::graph::Tenant;
use crate::ids;
use crate::store::records::account_events::AccountEvent;
use crate::store::records::Records;
use async_trait::async_trait;
use serde_json::{json, Map, Value};

pub struct RecordedEntityEvents {
    pub records: Records,
}

#[async_trait]
impl EntityEvents for RecordedEntityEvents {
    async fn status_changed(&self, tenant: &Tenant, changes: Vec<StatusChange>) {
        // One call's changes happened together: they share one timestamp, formatted once.
        let timestamp = json!(ids::now_rfc3339());
        let events: Vec<AccountEvent> = changes.iter().map(|change| event(change, &timestamp)).collect();
        if let Err(err) = self.records.record_account_events(tenant.owner(), &events, ids::now_millis()).await
        {
            let first = changes.first().map(|c| c.entity_id.as_str()).unwrap_or_default();
            tracing::error!(error = %err, count = changes.len(), first, "recording entity events failed");
        }
    }
}

/// The event of one status change.
fn event(change: &StatusChange, timestamp: &Value) -> AccountEvent {
    let event_type = change.event_type();
    let id = format!("evt_{}_{}", change.new_status, change.entity_id);
    let mut body = Map::with_capacity(9);
    body.insert("eventID".into(), json!(id));
    body.insert("eventType".into(), json!(event_type));
    body.insert("entityID".into(), json!(change.entity_id));
    body.insert("typeName".into(), json!(change.type_name));
    body.insert("priorStatus".into(), json!(change.prior_status));
    body.insert("newStatus".into(), json!(change.new_status));
    if let Some(user) = &change.actor_user_id {
        body.insert("actorUserID".into(), json!(user));
    }
    if let Some(reason) = &change.reason {
        body.insert("reason".into(), json!(reason));
    }
    body.insert("timestamp".into(), timestamp.clone());
    AccountEvent { id, event_type, body: Value::Object(body) }
}
