//! An entity's audit timeline in GraphQL, as `GET /v3/entities/{id}/timeline` pages it.

use crate::graph::timeline;
use async_graphql::{Json, SimpleObject};
use serde_json::Value;

/// One thing that happened to an entity.
#[derive(SimpleObject)]
pub struct TimelineItem {
    /// `status_changed`, `merged`, `unmerged`, `synonym_added`, `synonym_removed`,
    /// `canonical_changed`, `type_changed`, `suggestion_accepted`, `suggestion_dismissed` or
    /// `suggestion_reopened`.
    pub kind: String,
    /// When (RFC 3339, milliseconds, UTC).
    pub at: String,
    /// Who: a reviewer's user ID (`usr_…`) or an API key's ID (`key_…`); `system` or
    /// `auto-merge` for canon itself.
    pub actor: String,
    /// What, by kind (a JSON object; REST's `details`).
    pub details: Json<Value>,
}

/// A page of an entity's timeline, newest first.
#[derive(SimpleObject, Default)]
pub struct TimelinePage {
    pub items: Vec<TimelineItem>,
    pub has_more: bool,
    /// Pass as `cursor` for the next (older) page.
    pub next_cursor: Option<String>,
}

impl From<timeline::TimelinePage> for TimelinePage {
    fn from(page: timeline::TimelinePage) -> Self {
        let items = page
            .items
            .into_iter()
            .map(|item| TimelineItem {
                kind: item.kind,
                at: item.at,
                actor: item.actor,
                details: Json(item.details),
            })
            .collect();
        Self { items, has_more: page.has_more, next_cursor: page.next_cursor }
    }
}
