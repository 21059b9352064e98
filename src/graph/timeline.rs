//! Each entity's audit timeline: status changes, merges and unmerges, synonym and name edits
//! and decisions on merge suggestions, each with who and when, newest first.
//!
//! Two sources, read together: merges and unmerges are the graph's own merge records (who
//! merged, who undid, when); everything else is appended to the record store's
//! `entity_audit` as it happens (see [`GraphService::audit`]). A page is cut from both by
//! one cursor, `(time, entry key)`, so the two interleave by time.

use super::columns::rfc3339_ms;
use super::merges::MergeRecord;
use super::{GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::ids;
use crate::store::records::audit::{AuditEntry, NewAuditEntry};
use crate::store::records::Records;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use utoipa::ToSchema;

/// A timeline page's default and largest sizes (REST's `limit`, GraphQL's, MCP's).
pub const TIMELINE_PAGE: u32 = 50;
pub const MAX_TIMELINE_PAGE: u32 = 200;

/// One thing that happened to an entity.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineItem {
    /// `status_changed`, `merged`, `unmerged`, `synonym_added`, `synonym_removed`,
    /// `canonical_changed`, `type_changed`, `suggestion_accepted`, `suggestion_dismissed`
    /// or `suggestion_reopened`.
    pub kind: String,
    /// When (RFC 3339, milliseconds, UTC).
    pub at: String,
    /// Who: the reviewer's user ID (`usr_…`, a dashboard token) or the API key's ID
    /// (`key_…`); `system` or `auto-merge` for canon itself.
    pub actor: String,
    /// What, by kind: `{from, to, reason?}` for a status change; `{mergeID, survivorID,
    /// mergedID, …}` for a merge or unmerge; `{synonymID, text}` for a synonym edit;
    /// `{suggestionID, otherEntityID, score, blind}` for a suggestion decision.
    #[schema(value_type = Object)]
    pub details: Value,
    #[serde(skip)]
    key: (i64, String),
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelinePage {
    /// Newest first.
    pub items: Vec<TimelineItem>,
    pub has_more: bool,
    /// Pass as `cursor` for the next (older) page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl GraphService {
    /// Where curation history is appended (set once at start; without it nothing is).
    pub fn set_audit_log(&self, records: Records) {
        let _ = self.audit_log.set(records);
    }

    /// Appends to the entities' timelines. The graph write it follows stands whatever
    /// happens here, so a failure is logged (like entity events), not returned.
    pub(crate) async fn audit(&self, tenant: &Tenant, entries: Vec<NewAuditEntry>) {
        let Some(records) = self.audit_log.get() else { return };
        if let Err(err) =
            records.append_audit(&tenant.account_id, tenant.environment.as_str(), &entries).await
        {
            let first = entries.first().map(|e| e.entity_id.as_str()).unwrap_or_default();
            tracing::error!(error = %err, count = entries.len(), first, "recording curation history failed");
        }
    }

    /// A page of the entity's timeline (the ID as named: a merged-away entity's own history
    /// ends with its merge), newest first; `cursor` is a previous page's `nextCursor`.
    pub async fn timeline(
        &self,
        tenant: &Tenant,
        entity_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> ServiceResult<TimelinePage> {
        let before = cursor.map(parse_cursor).transpose()?;
        self.resolve_entity(tenant, entity_id, None).await?;
        let mut items: Vec<TimelineItem> = Vec::new();
        if let Some(records) = self.audit_log.get() {
            let stored = records
                .audit_of_entity(
                    &tenant.account_id,
                    tenant.environment.as_str(),
                    entity_id,
                    before.as_ref().map(|(at, key)| (*at, key.as_str())),
                    limit + 1,
                )
                .await?;
            items.extend(stored.into_iter().map(stored_item));
        }
        for merge in self.merges_for_timeline(tenant, entity_id, before.as_ref(), limit + 1).await? {
            items.extend(merge_items(&merge));
        }
        Ok(cut_page(items, before.as_ref(), limit))
    }

    /// The first page of each live entity's timeline, as [`Self::timeline`] gives it without
    /// a cursor: the record store's entries in one statement per 200 entities, the merges in
    /// one (GraphQL asks for a page of entities' timelines at once).
    pub async fn timelines_of_many(
        &self,
        tenant: &Tenant,
        ids: &[String],
        limit: usize,
    ) -> ServiceResult<HashMap<String, TimelinePage>> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let mut items: HashMap<String, Vec<TimelineItem>> =
            ids.iter().map(|id| (id.clone(), Vec::new())).collect();
        if let Some(records) = self.audit_log.get() {
            let stored = records
                .audit_of_entities(&tenant.account_id, tenant.environment.as_str(), ids, limit + 1)
                .await?;
            for entry in stored {
                if let Some(list) = items.get_mut(&entry.entity_id) {
                    list.push(stored_item(entry));
                }
            }
        }
        for (entity_id, merges) in self.merge_history_of_many(tenant, ids, limit + 1).await? {
            if let Some(list) = items.get_mut(&entity_id) {
                list.extend(merges.iter().flat_map(merge_items));
            }
        }
        Ok(items.into_iter().map(|(id, list)| (id, cut_page(list, None, limit))).collect())
    }
}

/// A page of `items`, newest first: those before the cursor's `before`, at most `limit`.
fn cut_page(mut items: Vec<TimelineItem>, before: Option<&(i64, String)>, limit: usize) -> TimelinePage {
    if let Some(before) = before {
        items.retain(|i| i.key < *before);
    }
    items.sort_by(|a, b| b.key.cmp(&a.key));
    let has_more = items.len() > limit;
    items.truncate(limit);
    let next_cursor = if has_more { items.last().map(|i| format!("{}.{}", i.key.0, i.key.1)) } else { None };
    TimelinePage { items, has_more, next_cursor }
}

/// An entry of the record store's `entity_audit` as a timeline item.
fn stored_item(entry: AuditEntry) -> TimelineItem {
    item(entry.kind, entry.at, entry.actor, entry.details, entry.id)
}

fn item(kind: String, at: i64, actor: String, details: Value, key: String) -> TimelineItem {
    TimelineItem { kind, at: ids::millis_rfc3339(at), actor, details, key: (at, key) }
}

/// A merge record as the timeline's `merged` item and, once undone, its `unmerged` item.
fn merge_items(merge: &MergeRecord) -> Vec<TimelineItem> {
    let ms = |text: &str| rfc3339_ms(text).map(|ms| ms as i64).unwrap_or(0);
    let details = json!({
        "mergeID": merge.merge_id, "survivorID": merge.survivor_id, "mergedID": merge.merged_id,
        "keysMoved": merge.keys_moved, "mentionsMoved": merge.mentions_moved,
        "relationsMoved": merge.relations_moved,
    });
    let mut items = vec![item(
        "merged".into(),
        ms(&merge.merged_at),
        merge.merged_by.clone(),
        details.clone(),
        merge.merge_id.clone(),
    )];
    if let (Some(at), Some(by)) = (&merge.undone_at, &merge.undone_by) {
        items.push(item("unmerged".into(), ms(at), by.clone(), details, format!("{}.undo", merge.merge_id)));
    }
    items
}

/// `<milliseconds>.<entry key>`, as [`TimelinePage::next_cursor`] writes it.
fn parse_cursor(cursor: &str) -> ServiceResult<(i64, String)> {
    let refused =
        || ServiceError::invalid_field("cursor", "must be the nextCursor of a previous timeline page");
    let (at, key) = cursor.split_once('.').ok_or_else(refused)?;
    let at: i64 = at.parse().map_err(|_| refused())?;
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
        return Err(refused());
    }
    Ok((at, key.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_the_key_it_was_written_from_and_junk_is_refused() {
        assert_eq!(
            parse_cursor("1700000000123.mrg_01ABC.undo").unwrap(),
            (1_700_000_000_123, "mrg_01ABC.undo".into())
        );
        for junk in ["", "12", "x.aud_1", "12.", "12.a'b"] {
            assert!(parse_cursor(junk).is_err(), "{junk}");
        }
    }
}
