//! Merge suggestions: the duplicate detector's pairs scored between the suggestion
//! threshold and the auto-merge threshold wait for a person to accept or dismiss them; pairs
//! above the auto-merge threshold are merged at once (recorded and undoable like any merge),
//! except short names, acronyms and one-word spelling variants, which merge automatically
//! only when their attributes alone make the merge sure. A decided pair is
//! never suggested again. With an embedder (MiniLM in process, or the configured endpoint)
//! the cosine of the two names' embeddings joins the score.

use crate::embeddings::Embedder;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::audit::Actor;
use crate::graph::columns::{attributes_col, str_col, str_list_col};
use crate::graph::duplicates::{compared_forms, Candidate};
use crate::graph::entities::Entity;
use crate::graph::merges::MergeResult;
use crate::graph::resolution::model::{self, Model, Record};
use crate::graph::resolution::{comparisons, names};
use crate::graph::{audit, queries, GraphService, Tenant};
use crate::params;
use crate::store::records::suggestions::{NewSuggestion, OpenOrder, StoredSuggestion};
use crate::store::records::Records;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use utoipa::ToSchema;

pub mod gate;
mod refresh;

/// Entities a refresh reads per statement. One statement over a million entities ran past
/// the graph client's 60-second bound (a 503); a page stays well inside it on a busy engine.
pub const CANDIDATES_PAGE: usize = 50_000;

/// What the embedding step of a refresh did.
#[derive(Default)]
struct MeaningRun {
    /// Names embedded now.
    embedded: usize,
    /// Names whose vector an earlier refresh kept.
    kept: usize,
}

#[derive(Clone)]
pub struct SuggestionService {
    pub graph: Arc<GraphService>,
    pub records: Records,
    /// Pairs scoring at least this (short names only on their attributes) merge automatically.
    pub auto_merge_threshold: f64,
    /// Pairs scoring at least this are suggested.
    pub suggest_threshold: f64,
    /// Compares names by meaning too, when present.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Entities a refresh reads per statement ([`CANDIDATES_PAGE`] but in tests).
    pub candidates_page: usize,
    /// One refresh per tenant at a time, a few per process (see [`gate`]).
    pub refreshes: Arc<gate::RefreshGate>,
}

/// What one detection run did.
#[derive(Debug, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshResult {
    /// Candidate pairs that could reach the suggestion threshold (with an embedder, if the
    /// names' meanings agreed), scored in full.
    pub compared: usize,
    /// New open suggestions.
    pub suggested: usize,
    /// Pairs merged automatically.
    pub auto_merged: usize,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuggestedEntity {
    #[serde(rename = "entityID")]
    pub entity_id: String,
    pub canonical: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub mention_count: i64,
}

/// A candidate duplicate pair.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    #[serde(rename = "suggestionID")]
    pub suggestion_id: String,
    /// 0..1, higher is more likely one entity.
    pub score: f64,
    /// `nameSimilarity`, `sharedSurfaceForms`, (with an embedder) `embeddingSimilarity`,
    /// `type`, and `explanation`: `{probability, matchWeight, priorWeight, fields: [{field,
    /// kind, level, weight, m, u, termFrequency, comparedOnHeads, valueA, valueB}]}`, the
    /// per-field comparison levels (by name: `different` … `equal`), weights (bits), the
    /// rare-word adjustment, whether the name's level is that of the names' heads (the words
    /// before an address or legal form) and the two values compared (`valueA` of the first
    /// entity, `valueB` of the second) behind the score.
    #[schema(value_type = Object)]
    pub signals: Value,
    /// `open`, `accepted` or `dismissed`.
    pub status: String,
    /// The pair; accepting merges the second into the first.
    pub entities: Vec<SuggestedEntity>,
    #[serde(rename = "bucketID")]
    pub bucket_id: String,
    /// Who decided (a user or API key ID, `auto-merge`); absent while open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The decision was taken blind: with the scores and explanation hidden (the dashboard's
    /// blind mode). Always false while open.
    pub blind: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuggestionPage {
    pub suggestions: Vec<Suggestion>,
    pub has_more: bool,
    /// When `hasMore`: the `startingAfter` of the next page (the last suggestion this page
    /// listed, or examined when it ended early).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Pairs scoring at least this are suggested.
    pub suggest_threshold: f64,
    /// Pairs scoring at least this merge automatically.
    pub auto_merge_threshold: f64,
}

/// Open suggestions one page examines at most, and reads from the store at a time.
const MAX_EXAMINED: usize = 1_000;
const LIST_BATCH: u32 = 100;

/// The order of `GET /v3/merge-suggestions`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum SuggestionOrder {
    /// Likeliest duplicates first (the default).
    #[default]
    Score,
    /// Score closest to 0.5 first.
    Uncertain,
    /// Newest first.
    Recent,
}

impl SuggestionOrder {
    /// The names `order` takes.
    pub const NAMES: [&'static str; 3] = ["score", "uncertain", "recent"];

    pub fn parse(text: &str) -> ServiceResult<Self> {
        match text {
            "score" => Ok(Self::Score),
            "uncertain" => Ok(Self::Uncertain),
            "recent" => Ok(Self::Recent),
            other => Err(ServiceError::invalid_field(
                "order",
                format!("unknown order {other:?}; one of score, uncertain, recent"),
            )),
        }
    }
}

impl SuggestionService {
    /// A manual merge (`POST /v3/entities/{id}/merge`) that also teaches resolution: each
    /// merged entity and the survivor, compared before the merge, become an accepted label.
    pub async fn merge(
        &self,
        tenant: &Tenant,
        survivor: &str,
        merged: &[String],
        actor: &Actor,
    ) -> ServiceResult<MergeResult> {
        if merged.is_empty() || merged.len() > crate::graph::merges::MERGE_MAX {
            // Refused by the merge itself, before anything is read.
            return self.graph.merge_entities(tenant, survivor, merged, actor).await;
        }
        let mut ids = vec![survivor.to_string()];
        ids.extend(merged.iter().cloned());
        let (records, schemas) = self.records_of(tenant, ids).await?;
        let result = self.graph.merge_entities(tenant, survivor, merged, actor).await?;
        if let Some(first) = records.iter().find(|r| r.candidate.entity_id == survivor) {
            for other in records.iter().filter(|r| r.candidate.entity_id != survivor) {
                self.label(tenant, first, other, &schemas, "accepted", actor).await?;
            }
        }
        Ok(result)
    }

    /// An unmerge (`POST /v3/merges/{id}/undo`) that also teaches resolution: the pair
    /// becomes a dismissed label, and is never suggested again.
    pub async fn unmerge(&self, tenant: &Tenant, merge_id: &str, actor: &Actor) -> ServiceResult<Entity> {
        let restored = self.graph.unmerge(tenant, merge_id, actor).await?;
        let found =
            self.graph.run_query(tenant, queries::MERGE_GET, params! { "mergeID" => merge_id }).await?;
        if let Some(row) = found.first() {
            let ids = vec![str_col(row, "survivorID"), restored.entity_id.clone()];
            let (records, schemas) = self.records_of(tenant, ids).await?;
            if let [a, b] = &records[..] {
                self.label(tenant, a, b, &schemas, "dismissed", actor).await?;
            }
        }
        Ok(restored)
    }

    /// The candidate records of the entities `ids` (a decision's pair), each read by its ID.
    async fn records_of(
        &self,
        tenant: &Tenant,
        ids: Vec<String>,
    ) -> ServiceResult<(Vec<Record>, BTreeMap<String, Value>)> {
        let rows =
            self.graph.run_query(tenant, queries::ENTITY_CANDIDATES_BY_ID, params! { "ids" => ids }).await?;
        Ok(resolution_records(&rows))
    }

    /// Stores a person's decision on a pair with the comparison it was made on.
    async fn label(
        &self,
        tenant: &Tenant,
        a: &Record,
        b: &Record,
        schemas: &BTreeMap<String, Value>,
        status: &str,
        actor: &Actor,
    ) -> ServiceResult<()> {
        let fields = comparisons::fields_of(schemas.get(&a.candidate.type_name.to_lowercase()));
        let comparison = model::compare(a, b, &fields);
        let explanation = Model::with_defaults(&fields).score(&comparison);
        let (first, second) = if a.candidate.entity_id < b.candidate.entity_id { (a, b) } else { (b, a) };
        let signals = json!({
            "nameSimilarity": round(comparison.signals.name_similarity),
            "sharedSurfaceForms": round(comparison.signals.shared_surface_forms),
            "embeddingSimilarity": null,
            "type": a.candidate.type_name,
            "explanation": with_values(&explanation, first, second),
        });
        let new = NewSuggestion {
            account_id: &tenant.account_id,
            environment: tenant.environment.as_str(),
            bucket_id: &first.candidate.bucket_id,
            entity_a: &first.candidate.entity_id,
            entity_b: &second.candidate.entity_id,
            score: round(explanation.probability),
            signals: &signals,
            status,
        };
        Ok(self.records.record_decision(new, &actor.label()).await?)
    }

    /// Open suggestions, best first, whose entities are both still live. Read from the store
    /// a batch at a time in the page's order (each examined costs a graph read of its two
    /// entities), at most [`MAX_EXAMINED`] a page: past it the page ends early, and its
    /// `nextCursor` goes on after the last one examined.
    pub async fn list(
        &self,
        tenant: &Tenant,
        bucket: Option<&str>,
        starting_after: Option<&str>,
        order: SuggestionOrder,
        limit: usize,
    ) -> ServiceResult<SuggestionPage> {
        let order = match order {
            SuggestionOrder::Score => OpenOrder::Score,
            // Closest to even odds first: the labels that teach resolution most.
            SuggestionOrder::Uncertain => OpenOrder::Uncertain,
            // Suggestion IDs are time-ordered.
            SuggestionOrder::Recent => OpenOrder::Recent,
        };
        let (account, environment) = (&tenant.account_id, tenant.environment.as_str());
        let mut after = starting_after.map(str::to_string);
        let mut suggestions = Vec::new();
        let (mut has_more, mut examined) = (false, 0);
        'batches: loop {
            let batch = self
                .records
                .open_suggestions_after(account, environment, bucket, order, after.as_deref(), LIST_BATCH)
                .await?;
            let mut rest = &batch[..];
            while !rest.is_empty() {
                if suggestions.len() == limit || examined == MAX_EXAMINED {
                    has_more = true;
                    break 'batches;
                }
                // As many as the page still lacks, their entities read in one statement (it
                // was one a suggestion); more only for those found merged away meanwhile.
                let take = (limit - suggestions.len()).min(MAX_EXAMINED - examined).min(rest.len());
                let (chunk, later) = rest.split_at(take);
                rest = later;
                let entities = self.entities_of(tenant, chunk).await?;
                for suggestion in chunk {
                    examined += 1;
                    after = Some(suggestion.id.clone());
                    suggestions.extend(view_of(suggestion, &entities));
                }
            }
            if batch.len() < LIST_BATCH as usize {
                break;
            }
        }
        Ok(SuggestionPage {
            suggestions,
            has_more,
            next_cursor: if has_more { after } else { None },
            suggest_threshold: self.suggest_threshold,
            auto_merge_threshold: self.auto_merge_threshold,
        })
    }

    /// Merges the pair: the second into the first, or into `survivor` when it names the
    /// second (the reviewer chose which entity lives on). `blind`: decided with the scores
    /// hidden.
    pub async fn accept(
        &self,
        tenant: &Tenant,
        id: &str,
        survivor: Option<&str>,
        blind: bool,
        actor: &Actor,
    ) -> ServiceResult<MergeResult> {
        let suggestion = self.open(tenant, id).await?;
        let (kept, merged) = match survivor {
            None => (&suggestion.entity_a, &suggestion.entity_b),
            Some(s) if s == suggestion.entity_a => (&suggestion.entity_a, &suggestion.entity_b),
            Some(s) if s == suggestion.entity_b => (&suggestion.entity_b, &suggestion.entity_a),
            Some(s) => {
                return Err(ServiceError::invalid_field(
                    "survivor",
                    format!("{s} is not in suggestion {id}; name one of its two entities"),
                ))
            }
        };
        let (survivor, _) = self.graph.resolve_entity(tenant, kept, None).await?;
        let result =
            self.graph.merge_entities(tenant, &survivor, std::slice::from_ref(merged), actor).await?;
        self.records.decide_suggestion(id, "accepted", &actor.label(), blind).await?;
        self.record_decision(tenant, &suggestion, "suggestion_accepted", blind, actor).await;
        Ok(result)
    }

    /// Marks the pair as not a duplicate; it will not be suggested again. `blind`: decided
    /// with the scores hidden.
    pub async fn dismiss(
        &self,
        tenant: &Tenant,
        id: &str,
        blind: bool,
        actor: &Actor,
    ) -> ServiceResult<Suggestion> {
        let suggestion = self.open(tenant, id).await?;
        self.records.decide_suggestion(id, "dismissed", &actor.label(), blind).await?;
        self.record_decision(tenant, &suggestion, "suggestion_dismissed", blind, actor).await;
        let decided = StoredSuggestion {
            status: "dismissed".into(),
            decided_by: Some(actor.label()),
            blind,
            ..suggestion
        };
        self.view(tenant, &decided).await?.ok_or_else(|| ServiceError::not_found("merge suggestion", id))
    }

    /// A decision (or its undoing) on both entities' timelines.
    pub(super) async fn record_decision(
        &self,
        tenant: &Tenant,
        suggestion: &StoredSuggestion,
        kind: &'static str,
        blind: bool,
        actor: &Actor,
    ) {
        self.graph.audit(tenant, decision_entries(suggestion, kind, blind, actor)).await;
    }

    async fn open(&self, tenant: &Tenant, id: &str) -> ServiceResult<StoredSuggestion> {
        let suggestion = self
            .records
            .suggestion(id, &tenant.account_id, tenant.environment.as_str())
            .await?
            .ok_or_else(|| ServiceError::not_found("merge suggestion", id))?;
        if suggestion.status != "open" {
            return Err(ServiceError::Conflict(format!("suggestion {id} is already {}", suggestion.status)));
        }
        Ok(suggestion)
    }

    /// The suggestion as shown, or None when an entity of its pair is gone or merged away.
    pub(super) async fn view(
        &self,
        tenant: &Tenant,
        stored: &StoredSuggestion,
    ) -> ServiceResult<Option<Suggestion>> {
        let entities = self.entities_of(tenant, std::slice::from_ref(stored)).await?;
        Ok(view_of(stored, &entities))
    }

    /// The entities of these suggestions' pairs that exist, by ID: one graph read.
    async fn entities_of(
        &self,
        tenant: &Tenant,
        stored: &[StoredSuggestion],
    ) -> ServiceResult<HashMap<String, Entity>> {
        let mut ids: Vec<String> =
            stored.iter().flat_map(|s| [s.entity_a.clone(), s.entity_b.clone()]).collect();
        ids.sort();
        ids.dedup();
        let entities = self.graph.entity_details(tenant, &ids).await?;
        Ok(entities.into_iter().map(|e| (e.entity_id.clone(), e)).collect())
    }
}

/// A stored suggestion as shown, from its pair's entities; None when one is gone or merged away.
fn view_of(stored: &StoredSuggestion, entities: &HashMap<String, Entity>) -> Option<Suggestion> {
    let pair = [entities.get(&stored.entity_a)?, entities.get(&stored.entity_b)?];
    if pair.iter().any(|e| e.status == "merged") {
        return None;
    }
    Some(Suggestion {
        suggestion_id: stored.id.clone(),
        score: stored.score,
        signals: stored.signals.clone(),
        status: stored.status.clone(),
        bucket_id: stored.bucket_id.clone(),
        decided_by: stored.decided_by.clone(),
        blind: stored.blind,
        entities: pair
            .into_iter()
            .map(|e| SuggestedEntity {
                entity_id: e.entity_id.clone(),
                canonical: e.canonical.clone(),
                type_name: e.type_name.clone(),
                mention_count: e.mention_count,
            })
            .collect(),
    })
}

/// The explanation with each field's two compared values, `valueA` from the suggestion's
/// first entity and `valueB` from its second (the normalised name for `name`), so a reviewer
/// sees what was compared without leaving the card.
fn with_values(explanation: &model::Explanation, first: &Record, second: &Record) -> Value {
    let mut value = json!(explanation);
    let side = |record: &Record, field: &str| -> Option<String> {
        if field == "name" {
            Some(record.candidate.normalized.clone())
        } else {
            record.attributes.get(field).cloned()
        }
    };
    if let Some(fields) = value.get_mut("fields").and_then(Value::as_array_mut) {
        for field in fields.iter_mut() {
            let name = field.get("field").and_then(Value::as_str).unwrap_or_default().to_string();
            field["valueA"] = json!(side(first, &name));
            field["valueB"] = json!(side(second, &name));
        }
    }
    value
}

/// A decision's timeline entries, one on each entity of the pair.
pub(super) fn decision_entries(
    suggestion: &StoredSuggestion,
    kind: &'static str,
    blind: bool,
    actor: &Actor,
) -> Vec<crate::store::records::audit::NewAuditEntry> {
    let pair = [(&suggestion.entity_a, &suggestion.entity_b), (&suggestion.entity_b, &suggestion.entity_a)];
    pair.into_iter()
        .map(|(entity, other)| {
            let details = json!({
                "suggestionID": suggestion.id, "otherEntityID": other, "score": suggestion.score, "blind": blind,
            });
            audit::entry(entity, kind, actor, details)
        })
        .collect()
}

/// A stored suggestion as it is once reopened.
pub(super) fn reopened(stored: StoredSuggestion) -> StoredSuggestion {
    StoredSuggestion { status: "open".into(), decided_by: None, blind: false, ..stored }
}

fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Records and type schemas from the candidates query's rows.
fn resolution_records(rows: &[crate::store::graph::Row]) -> (Vec<Record>, BTreeMap<String, Value>) {
    let mut schemas = BTreeMap::new();
    let records = rows
        .iter()
        .map(|row| {
            let type_name = str_col(row, "type");
            if let Some(schema) = row
                .get("attributeSchema")
                .and_then(Value::as_str)
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
            {
                schemas.insert(type_name.to_lowercase(), schema);
            }
            let attributes = attributes_col(row);
            let canonical = str_col(row, "canonical");
            let normalized = str_col(row, "normalized");
            let candidate = Candidate {
                entity_id: str_col(row, "entityID"),
                bucket_id: str_col(row, "bucketID"),
                type_name,
                forms: compared_forms(&normalized, str_list_col(row, "forms")),
                normalized,
            };
            let core =
                names::core_name(if canonical.is_empty() { &candidate.normalized } else { &canonical });
            Record { candidate, core, attributes }
        })
        .collect();
    (records, schemas)
}
