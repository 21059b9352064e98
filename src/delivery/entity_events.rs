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
//!
//! Only changes some live subscription listens to are stored. Nothing else reads an entity
//! event (the event endpoints do not list them), and a subscription receives the changes made
//! after it was created: a seed of a million entities with no `entity_proposed` subscription
//! built and stored a million bodies for nobody (`make bench-graph`: canon's CPU in a bulk
//! seed of 100,000 rows went from 2.6–2.9 s to 1.9–2.1 s without them). So a chunk replayed
//! after a crash may deliver again an event whose first recording found no subscriber: at
//! least once, as every delivery (receivers dedupe by `eventID`).

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
        let first = changes.first().map(|c| c.entity_id.as_str()).unwrap_or_default();
        let failed = |err| tracing::error!(error = %err, count = changes.len(), first, "recording entity events failed");
        let subscribed = match self.records.subscribed_account_event_types(tenant.owner()).await {
            Ok(types) => types,
            Err(err) => return failed(err),
        };
        // One call's changes happened together: they share one timestamp, formatted once.
        let timestamp = json!(ids::now_rfc3339());
        let events: Vec<AccountEvent> = changes
            .iter()
            .filter(|change| subscribed.iter().any(|kind| kind == change.event_type()))
            .map(|change| event(change, &timestamp))
            .collect();
        if events.is_empty() {
            return;
        }
        if let Err(err) = self.records.record_account_events(tenant.owner(), &events, ids::now_millis()).await
        {
            failed(err);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::keys::Environment;
    use crate::store::records::subscriptions::{SubscriptionBounds, SubscriptionRow};
    use sqlx::Row;

    fn change(entity_id: &str, prior: Option<&str>, new: &str) -> StatusChange {
        StatusChange {
            entity_id: entity_id.into(),
            type_name: Some("Company".into()),
            prior_status: prior.map(str::to_string),
            new_status: new.into(),
            actor_user_id: None,
            reason: None,
        }
    }

    /// The stored events' IDs and the deliveries' event IDs.
    async fn stored(records: &Records) -> (Vec<String>, Vec<String>) {
        let ids = |sql| async move {
            let rows = sqlx::query(sql).fetch_all(&records.pool).await.unwrap();
            rows.iter().map(|row| row.get::<String, _>(0)).collect::<Vec<_>>()
        };
        (
            ids("SELECT id FROM events ORDER BY id").await,
            ids("SELECT event_id FROM deliveries ORDER BY id").await,
        )
    }

    #[tokio::test]
    async fn entity_changes_are_stored_only_when_a_live_subscription_listens_to_their_type() {
        let (_dir, records) = Records::on_sqlite_for_tests().await;
        let sink = RecordedEntityEvents { records: records.clone() };
        let tenant = Tenant { account_id: "acc_a".into(), environment: Environment::Sandbox };
        let changes =
            || vec![change("ent_1", None, "proposed"), change("ent_2", Some("proposed"), "approved")];
        let subscribe = |id: &str, kind: &str, disabled: bool| SubscriptionRow {
            id: id.into(),
            subscription_type: kind.into(),
            webhook_url: Some(format!("https://h.example.com/{id}")),
            disabled,
            ..Default::default()
        };

        sink.status_changed(&tenant, changes()).await;
        assert_eq!(stored(&records).await, (vec![], vec![]), "nobody listens: nothing is stored");

        // A disabled subscription and another environment's listen to nothing here.
        let owner = tenant.owner();
        records
            .save_subscription(
                owner,
                &subscribe("sub_off", "entity_proposed", true),
                SubscriptionBounds::NONE,
            )
            .await
            .unwrap();
        let production = crate::store::records::Owner { account_id: "acc_a", environment: "production" };
        records
            .save_subscription(
                production,
                &subscribe("sub_prod", "entity_validated", false),
                SubscriptionBounds::NONE,
            )
            .await
            .unwrap();
        records
            .save_subscription(
                owner,
                &subscribe("sub_v", "entity_validated", false),
                SubscriptionBounds::NONE,
            )
            .await
            .unwrap();
        sink.status_changed(&tenant, changes()).await;
        sink.status_changed(&tenant, changes()).await; // a replay
        let validated = "evt_approved_ent_2".to_string();
        assert_eq!(
            stored(&records).await,
            (vec![validated.clone()], vec![validated]),
            "stored and delivered once"
        );
    }
}
