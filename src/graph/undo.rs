//! Undo of curation decisions, so a reviewer's wrong key costs one more key and not a
//! support ticket: an approved or rejected entity goes back to the queue with the status it
//! had, and an accepted or dismissed merge suggestion is open again (an accepted one is
//! unmerged first). Merges themselves are undone by `POST /v3/merges/{id}/undo`.

use super::audit::Actor;
use super::columns::str_col;
use super::entities::Entity;
use super::events::StatusChange;
use super::suggestions::{Suggestion, SuggestionService};
use super::{queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::{ids, params};
use serde_json::Value;

/// The statuses an entity can be sent back to.
pub const REOPEN_STATUSES: &[&str] = &["extracted", "proposed"];

impl GraphService {
    /// Puts an approved or rejected entity back in the queue as `status` (`extracted` or
    /// `proposed`, the status it had before the decision). 409 for any other entity.
    pub async fn reopen_entity(
        &self,
        tenant: &Tenant,
        id: &str,
        status: &str,
        actor: &Actor,
    ) -> ServiceResult<Entity> {
        crate::text::check_each("id", &[id])?;
        if !REOPEN_STATUSES.contains(&status) {
            return Err(ServiceError::invalid_field(
                "status",
                format!("must be one of {REOPEN_STATUSES:?}: the status the entity had before the decision"),
            ));
        }
        let rows = self
            .run(
                tenant,
                queries::ENTITY_REOPEN,
                params! { "id" => id, "status" => status, "now" => ids::now_rfc3339() },
            )
            .await?;
        let row = rows.first().filter(|row| row.get("found").and_then(Value::as_bool) == Some(true));
        let row = row.ok_or_else(|| ServiceError::not_found("entity", id))?;
        if row.get("allowed").and_then(Value::as_bool) != Some(true) {
            return Err(ServiceError::Conflict(format!(
                "entity {id} is {}; only an approved or rejected entity can be reopened",
                str_col(row, "before")
            )));
        }
        let change = StatusChange {
            entity_id: id.to_string(),
            type_name: row.get("typeName").and_then(Value::as_str).map(String::from),
            prior_status: row.get("before").and_then(Value::as_str).map(String::from),
            new_status: status.to_string(),
            actor_user_id: actor.user_id.clone(),
            reason: Some("decision undone".into()),
        };
        self.audit(tenant, vec![super::entities::status_entry(&change, actor)]).await;
        self.emit(tenant, vec![change]).await;
        self.get_entity(tenant, id, None).await
    }
}

impl SuggestionService {
    /// Opens a decided suggestion again; an accepted one's merge is undone first (409 when
    /// that merge was already undone or its survivor merged away since).
    pub async fn reopen(&self, tenant: &Tenant, id: &str, actor: &Actor) -> ServiceResult<Suggestion> {
        let (account, environment) = (&tenant.account_id, tenant.environment.as_str());
        let stored = self
            .records
            .suggestion(id, account, environment)
            .await?
            .ok_or_else(|| ServiceError::not_found("merge suggestion", id))?;
        match stored.status.as_str() {
            "open" => {
                return Err(ServiceError::Conflict(format!(
                    "suggestion {id} is open; only an accepted or dismissed suggestion can be reopened"
                )))
            }
            "accepted" => {
                let mut live = Vec::new();
                for side in [&stored.entity_a, &stored.entity_b] {
                    // A live merge of `side` as merged is its newest: nothing merges into a
                    // merged-away entity, and it cannot be merged again until that is undone.
                    let history = self.graph.merge_history(tenant, side, None, 1).await?;
                    live.extend(
                        history.merges.into_iter().filter(|m| &m.merged_id == side && m.undone_at.is_none()),
                    );
                }
                let merge = live.into_iter().max_by(|a, b| a.merge_id.cmp(&b.merge_id)).ok_or_else(|| {
                    ServiceError::Conflict(format!(
                        "the merge suggestion {id} made was already undone; the pair is decided"
                    ))
                })?;
                self.graph.unmerge(tenant, &merge.merge_id, actor).await?;
            }
            _ => {}
        }
        self.records.reopen_suggestion(id, account, environment).await?;
        self.record_decision(tenant, &stored, "suggestion_reopened", false, actor).await;
        let reopened = super::suggestions::reopened(stored);
        self.view(tenant, &reopened).await?.ok_or_else(|| {
            ServiceError::Conflict(format!("an entity of suggestion {id} has been merged away since"))
        })
    }
}
