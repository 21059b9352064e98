//! Bulk decisions on everything a filter matches ("all matching this filter"), safely: a
//! dry run counts what would change and names that set with a `selection` (a digest of its
//! IDs); the change itself is applied only when the filter still matches exactly that set,
//! so what changes is exactly what the reviewer was shown the count of. At most
//! [`BULK_LIMIT`] at once: more is refused naming the limit.

use super::audit::Actor;
use super::entities::ValidateSummary;
use super::review::ReviewFilter;
use super::suggestions::SuggestionService;
use super::{GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::store::records::suggestions::{OpenOrder, StoredSuggestion};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use utoipa::ToSchema;

/// Most entities (or suggestions) one bulk decision changes.
pub const BULK_LIMIT: usize = 10_000;

/// Rows per statement (the per-ID bulk endpoint's own bound).
const CHUNK: usize = 1_000;

/// What a bulk decision over a filter matched, and, unless a dry run, what it did.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkOutcome {
    /// How many the filter matches now (that the decision can change).
    pub matching: usize,
    /// Names exactly that set; send it back to apply the decision.
    pub selection: String,
    /// The most one bulk decision changes.
    pub limit: usize,
    /// False for a dry run.
    pub applied: bool,
    /// What the decision did to the matched entities (absent for a dry run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<ValidateSummary>,
    /// Suggestions dismissed (bulk dismiss only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dismissed: Option<usize>,
}

impl BulkOutcome {
    /// The count of what a filter matched, `ids` (`what` they are), not applied yet; 422
    /// naming the limit when there are more than `limit`.
    fn counted(ids: &[String], limit: usize, what: &str) -> ServiceResult<Self> {
        if ids.len() > limit {
            return Err(over_limit(what, limit));
        }
        Ok(BulkOutcome {
            matching: ids.len(),
            selection: selection_of(ids),
            limit,
            applied: false,
            summary: None,
            dismissed: None,
        })
    }

    /// Whether to apply the decision: not for a dry run; otherwise only with the reviewer's
    /// `selection` of this very set ([`check_selection`]).
    fn go_ahead(&self, dry_run: bool, selection: Option<&str>) -> ServiceResult<bool> {
        if dry_run {
            return Ok(false);
        }
        check_selection(selection, &self.selection, self.matching)?;
        Ok(true)
    }
}

/// A digest naming a set of IDs, whatever their order.
pub fn selection_of(ids: &[String]) -> String {
    let mut sorted: Vec<&String> = ids.iter().collect();
    sorted.sort();
    sorted.dedup();
    let mut hash = Sha256::new();
    for id in sorted {
        hash.update(id.as_bytes());
        hash.update(b"\n");
    }
    format!("sel_{}", hex::encode(&hash.finalize()[..16]))
}

/// 422 naming the limit.
pub fn over_limit(what: &str, limit: usize) -> ServiceError {
    ServiceError::Unprocessable {
        message: format!(
            "the filter matches more than {limit} {what}; a bulk decision changes at most {limit}: narrow the filter"
        ),
        details: Some(serde_json::json!({ "field": "filter", "error": "over limit", "limit": limit })),
    }
}

/// Checks the reviewer's `selection` against the set matched now: 400 without one, 409 when
/// the set changed since it was counted.
pub fn check_selection(selection: Option<&str>, matched: &str, matching: usize) -> ServiceResult<()> {
    let Some(selection) = selection else {
        return Err(ServiceError::invalid_field(
            "selection",
            "count first: send dryRun: true, show the count, and send back its selection",
        ));
    };
    if selection != matched {
        return Err(ServiceError::Conflict(format!(
            "what the filter matches changed since it was counted (it matches {matching} now); count again"
        )));
    }
    Ok(())
}

impl GraphService {
    /// Approves or rejects every entity of the review queue `filter` matches (only awaiting
    /// statuses can change, so only `extracted` and `proposed` ones count).
    pub async fn validate_matching(
        &self,
        tenant: &Tenant,
        mut filter: ReviewFilter,
        status: &str,
        dry_run: bool,
        selection: Option<&str>,
        actor: &Actor,
    ) -> ServiceResult<BulkOutcome> {
        super::entities::check_terminal_status(status)?;
        let awaiting = ["extracted", "proposed"];
        let asked = std::mem::take(&mut filter.statuses);
        filter.statuses = if asked.is_empty() {
            awaiting.iter().map(|s| s.to_string()).collect()
        } else {
            for status in &asked {
                if !super::review::STATUSES.contains(&status.as_str()) {
                    return Err(ServiceError::invalid_field(
                        "filter.status",
                        format!("unknown status {status:?}"),
                    ));
                }
            }
            asked.into_iter().filter(|s| awaiting.contains(&s.as_str())).collect()
        };
        filter.cursor = None;
        let limit = self.bulk_limit;
        filter.limit = limit as u32;
        let ids = if filter.statuses.is_empty() {
            Vec::new()
        } else {
            self.queue_ids(tenant, filter.clone()).await?
        };
        let mut outcome = BulkOutcome::counted(&ids, limit, "entities")?;
        if !outcome.go_ahead(dry_run, selection)? {
            return Ok(outcome);
        }
        let mut summary = ValidateSummary::default();
        for chunk in ids.chunks(CHUNK) {
            let done = self.bulk_validate(tenant, chunk, status, filter.bucket.as_deref(), actor).await?;
            summary.validated += done.summary.validated;
            summary.skipped += done.summary.skipped;
            summary.rejected_row += done.summary.rejected_row;
        }
        outcome.applied = true;
        outcome.summary = Some(summary);
        Ok(outcome)
    }
}

/// Open suggestions a bulk dismissal reads at a time.
const DISMISS_BATCH: u32 = 1_000;

impl SuggestionService {
    /// The entities of these suggestions that are live (not merged away).
    async fn live_entities(
        &self,
        tenant: &Tenant,
        suggestions: &[StoredSuggestion],
    ) -> ServiceResult<HashSet<String>> {
        let mut entity_ids: Vec<String> =
            suggestions.iter().flat_map(|s| [s.entity_a.clone(), s.entity_b.clone()]).collect();
        entity_ids.sort();
        entity_ids.dedup();
        let mut live = HashSet::new();
        for chunk in entity_ids.chunks(CHUNK) {
            let found = self.graph.entity_details(tenant, chunk).await?;
            live.extend(found.into_iter().filter(|e| e.status != "merged").map(|e| e.entity_id));
        }
        Ok(live)
    }

    /// Dismisses every open merge suggestion (of `bucket`, or all) whose two entities are
    /// both live: those the suggestions page lists.
    pub async fn dismiss_matching(
        &self,
        tenant: &Tenant,
        bucket: Option<&str>,
        dry_run: bool,
        selection: Option<&str>,
        blind: bool,
        actor: &Actor,
    ) -> ServiceResult<BulkOutcome> {
        crate::text::check_opt("bucket", bucket)?;
        let (account, environment) = (&tenant.account_id, tenant.environment.as_str());
        // Read a batch at a time, best first, until past the limit (then it is refused):
        // never every open suggestion at once.
        let mut matched: Vec<StoredSuggestion> = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let batch = self
                .records
                .open_suggestions_after(
                    account,
                    environment,
                    bucket,
                    OpenOrder::Score,
                    after.as_deref(),
                    DISMISS_BATCH,
                )
                .await?;
            let Some(last) = batch.last() else { break };
            after = Some(last.id.clone());
            let full = batch.len() == DISMISS_BATCH as usize;
            let live = self.live_entities(tenant, &batch).await?;
            matched.extend(
                batch.into_iter().filter(|s| live.contains(&s.entity_a) && live.contains(&s.entity_b)),
            );
            if !full || matched.len() > self.graph.bulk_limit {
                break;
            }
        }
        let ids: Vec<String> = matched.iter().map(|s| s.id.clone()).collect();
        let mut outcome = BulkOutcome::counted(&ids, self.graph.bulk_limit, "open merge suggestions")?;
        if !outcome.go_ahead(dry_run, selection)? {
            return Ok(outcome);
        }
        let dismissed =
            self.records.dismiss_suggestions(&ids, account, environment, &actor.label(), blind).await?;
        let entries = matched
            .iter()
            .flat_map(|s| super::suggestions::decision_entries(s, "suggestion_dismissed", blind, actor))
            .collect();
        self.graph.audit(tenant, entries).await;
        outcome.applied = true;
        outcome.dismissed = Some(dismissed as usize);
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_names_a_set_whatever_its_order_and_differs_for_another_set() {
        let ab = selection_of(&["ent_a".into(), "ent_b".into()]);
        assert_eq!(ab, selection_of(&["ent_b".into(), "ent_a".into()]));
        assert_ne!(ab, selection_of(&["ent_a".into()]));
        assert_ne!(selection_of(&[]), selection_of(&["ent_a".into()]));
    }
}
