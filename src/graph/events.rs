//! Entity lifecycle events: what the graph tells whoever listens (the delivery outbox) when
//! an entity is proposed, validated or rejected. The graph knows nothing of delivery; it
//! calls the sink it was given.

use super::{GraphService, Tenant};
use async_trait::async_trait;
use std::sync::Arc;

/// One status change of one entity.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusChange {
    pub entity_id: String,
    pub type_name: Option<String>,
    /// `None` for a new entity.
    pub prior_status: Option<String>,
    pub new_status: String,
    pub actor_user_id: Option<String>,
    pub reason: Option<String>,
}

impl StatusChange {
    /// `entity_proposed`, `entity_validated` or `entity_rejected`.
    pub fn event_type(&self) -> &'static str {
        match self.new_status.as_str() {
            "approved" => "entity_validated",
            "rejected" => "entity_rejected",
            _ => "entity_proposed",
        }
    }
}

#[async_trait]
pub trait EntityEvents: Send + Sync {
    /// Called after the graph wrote the changes. Failures are the sink's to log: the graph
    /// write stands.
    async fn status_changed(&self, tenant: &Tenant, changes: Vec<StatusChange>);
}

impl GraphService {
    /// Where entity lifecycle events go (set once at start).
    pub fn set_entity_events(&self, sink: Arc<dyn EntityEvents>) {
        let _ = self.entity_events.set(sink);
    }

    pub(crate) async fn emit(&self, tenant: &Tenant, changes: Vec<StatusChange>) {
        if let (Some(sink), false) = (self.entity_events.get(), changes.is_empty()) {
            sink.status_changed(tenant, changes).await;
        }
    }
}
