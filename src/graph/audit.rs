//! Who acts on the graph, and the audit entries their changes leave (read back by the
//! entity timeline).

use crate::store::records::audit::NewAuditEntry;
use serde_json::Value;

/// Who acts: a dashboard user, or an API key.
#[derive(Clone, Debug)]
pub struct Actor {
    pub user_id: Option<String>,
    pub key_id: Option<String>,
}

impl Actor {
    /// How the actor is written into merge records.
    pub fn label(&self) -> String {
        match (&self.user_id, &self.key_id) {
            (Some(user), _) => user.clone(),
            (None, Some(key)) => key.clone(),
            (None, None) => "system".into(),
        }
    }
}

/// An entry of `kind` about `entity_id` by `actor`.
pub fn entry(entity_id: &str, kind: &'static str, actor: &Actor, details: Value) -> NewAuditEntry {
    NewAuditEntry { entity_id: entity_id.to_string(), kind, actor: actor.label(), details }
}
