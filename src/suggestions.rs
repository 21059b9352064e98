//! Merge suggestions: the duplicate detector's pairs scored between the suggestion
//! threshold and the auto-merge threshold wait for a person to accept or dismiss them; pairs
//! above the auto-merge threshold are merged at once (recorded and undoable like any merge),
//! except short names and acronyms, which only ever become suggestions. A decided pair is
//! never suggested again. With an embedder (MiniLM in process, or the configured endpoint)
//! the cosine of the two names' embeddings joins the score.

use crate::embeddings::Embedder;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::duplicates::{self, Candidate};
use crate::graph::entities::{str_col, Actor};
use crate::graph::merges::MergeResult;
use crate::graph::{queries, GraphService, Tenant};
use crate::params;
use crate::store::records::suggestions::{NewSuggestion, StoredSuggestion};
use crate::store::records::Records;
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::Arc;
use utoipa::ToSchema;

#[derive(Clone)]
pub struct SuggestionService {
    pub graph: Arc<GraphService>,
    pub records: Records,
    /// Pairs scoring at least this (and not short names) are merged automatically.
    pub auto_merge_threshold: f64,
    /// Pairs scoring at least this are suggested.
    pub suggest_threshold: f64,
    /// Compares names by meaning too, when present.
    pub embedder: Option<Arc<dyn Embedder>>,
}

/// Pairs whose name and surface-form signals alone score below this are not worth embedding.
const EMBED_PREFILTER: f64 = 0.6;

/// What one detection run did.
#[derive(Debug, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshResult {
    /// Candidate pairs close enough to be scored in full.
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
    /// `nameSimilarity`, `sharedSurfaceForms` and (with an embedder) `embeddingSimilarity`.
    #[schema(value_type = Object)]
    pub signals: Value,
    /// `open`, `accepted` or `dismissed`.
    pub status: String,
    /// The pair; accepting merges the second into the first.
    pub entities: Vec<SuggestedEntity>,
    #[serde(rename = "bucketID")]
    pub bucket_id: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuggestionPage {
    pub suggestions: Vec<Suggestion>,
    pub has_more: bool,
}

impl SuggestionService {
    /// Scores the tenant's candidate pairs (optionally one bucket's) and records the results.
    pub async fn refresh(
        &self,
        tenant: &Tenant,
        bucket: Option<&str>,
        actor: &Actor,
    ) -> ServiceResult<RefreshResult> {
        let rows = self
            .graph
            .run_query(tenant, queries::ENTITY_CANDIDATES, params! { "bucketID" => bucket })
            .await?;
        let candidates: Vec<Candidate> = rows
            .iter()
            .map(|row| Candidate {
                entity_id: str_col(row, "entityID"),
                bucket_id: str_col(row, "bucketID"),
                type_name: str_col(row, "type"),
                normalized: str_col(row, "normalized"),
                forms: row
                    .get("forms")
                    .and_then(Value::as_array)
                    .map(|forms| forms.iter().filter_map(Value::as_str).map(String::from).collect())
                    .unwrap_or_default(),
            })
            .collect();
        let mut result = RefreshResult::default();
        let pairs = duplicates::candidate_pairs(&candidates);
        let mut scored: Vec<(usize, usize, duplicates::Signals)> = pairs
            .into_iter()
            .map(|(i, j)| (i, j, duplicates::signals(&candidates[i], &candidates[j])))
            .filter(|(_, _, signals)| signals.score() >= EMBED_PREFILTER)
            .collect();
        result.compared = scored.len();
        self.add_embedding_similarity(&candidates, &mut scored).await?;
        for (i, j, signals) in scored {
            let (a, b) = (&candidates[i], &candidates[j]);
            let score = signals.score();
            if score < self.suggest_threshold {
                continue;
            }
            // The older entity (smaller, time-ordered ID) survives.
            let (first, second) = if a.entity_id < b.entity_id { (a, b) } else { (b, a) };
            let automatic = score >= self.auto_merge_threshold
                && !duplicates::is_short(&a.normalized)
                && !duplicates::is_short(&b.normalized);
            let signals_json = json!({
                "nameSimilarity": round(signals.name_similarity),
                "sharedSurfaceForms": round(signals.shared_surface_forms),
                "embeddingSimilarity": signals.embedding_similarity.map(round),
            });
            let new = NewSuggestion {
                account_id: &tenant.account_id,
                environment: tenant.environment.as_str(),
                bucket_id: &first.bucket_id,
                entity_a: &first.entity_id,
                entity_b: &second.entity_id,
                score: round(score),
                signals: &signals_json,
                status: if automatic { "accepted" } else { "open" },
            };
            if !self.records.insert_suggestion(new).await? {
                continue;
            }
            if !automatic {
                result.suggested += 1;
                continue;
            }
            let (survivor, _) = self.graph.resolve_entity(tenant, &first.entity_id, None).await?;
            let (merged, _) = self.graph.resolve_entity(tenant, &second.entity_id, None).await?;
            if survivor != merged {
                self.graph.merge_entities(tenant, &survivor, &[merged], actor).await?;
                result.auto_merged += 1;
            }
        }
        Ok(result)
    }

    /// Fills in the cosine of the two names' embeddings for each scored pair.
    async fn add_embedding_similarity(
        &self,
        candidates: &[Candidate],
        scored: &mut [(usize, usize, duplicates::Signals)],
    ) -> ServiceResult<()> {
        let Some(embedder) = &self.embedder else { return Ok(()) };
        let mut needed: Vec<usize> = scored.iter().flat_map(|(i, j, _)| [*i, *j]).collect();
        needed.sort();
        needed.dedup();
        let mut texts: Vec<String> = Vec::with_capacity(needed.len());
        for &i in &needed {
            let name = &candidates[i].normalized;
            // A name may run to 500 characters, over MiniLM's window: its first window stands
            // for it (a name of up to 200 characters fits any model's window as it is).
            if name.chars().count() <= 200 {
                texts.push(name.clone());
                continue;
            }
            let pieces = embedder
                .chunk(name)
                .await
                .map_err(|err| ServiceError::Internal(anyhow::anyhow!("chunking a name: {err}")))?;
            texts.push(pieces.into_iter().next().unwrap_or_default());
        }
        let mut vectors = std::collections::HashMap::new();
        for (batch_ids, batch_texts) in needed.chunks(256).zip(texts.chunks(256)) {
            let embedded = embedder
                .embed(batch_texts)
                .await
                .map_err(|err| ServiceError::Internal(anyhow::anyhow!("embedding names: {err}")))?;
            vectors.extend(batch_ids.iter().copied().zip(embedded));
        }
        for (i, j, signals) in scored.iter_mut() {
            if let (Some(a), Some(b)) = (vectors.get(i), vectors.get(j)) {
                // Unit vectors: the dot product is the cosine.
                signals.embedding_similarity = Some(a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum());
            }
        }
        Ok(())
    }

    /// Open suggestions, best first, whose entities are both still live.
    pub async fn list(
        &self,
        tenant: &Tenant,
        bucket: Option<&str>,
        starting_after: Option<&str>,
        limit: usize,
    ) -> ServiceResult<SuggestionPage> {
        let stored =
            self.records.open_suggestions(&tenant.account_id, tenant.environment.as_str(), bucket).await?;
        let start = match starting_after {
            Some(id) => stored.iter().position(|s| s.id == id).map(|p| p + 1).unwrap_or(stored.len()),
            None => 0,
        };
        let mut suggestions = Vec::new();
        let mut has_more = false;
        for suggestion in &stored[start..] {
            if suggestions.len() == limit {
                has_more = true;
                break;
            }
            if let Some(view) = self.view(tenant, suggestion).await? {
                suggestions.push(view);
            }
        }
        Ok(SuggestionPage { suggestions, has_more })
    }

    /// Merges the pair (the second into the first).
    pub async fn accept(&self, tenant: &Tenant, id: &str, actor: &Actor) -> ServiceResult<MergeResult> {
        let suggestion = self.open(tenant, id).await?;
        let (survivor, _) = self.graph.resolve_entity(tenant, &suggestion.entity_a, None).await?;
        let result = self
            .graph
            .merge_entities(tenant, &survivor, std::slice::from_ref(&suggestion.entity_b), actor)
            .await?;
        self.records.decide_suggestion(id, "accepted", &actor.label()).await?;
        Ok(result)
    }

    /// Marks the pair as not a duplicate; it will not be suggested again.
    pub async fn dismiss(&self, tenant: &Tenant, id: &str, actor: &Actor) -> ServiceResult<Suggestion> {
        let suggestion = self.open(tenant, id).await?;
        self.records.decide_suggestion(id, "dismissed", &actor.label()).await?;
        let decided = StoredSuggestion { status: "dismissed".into(), ..suggestion };
        self.view(tenant, &decided).await?.ok_or_else(|| ServiceError::not_found("merge suggestion", id))
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

    async fn view(&self, tenant: &Tenant, stored: &StoredSuggestion) -> ServiceResult<Option<Suggestion>> {
        let ids = [stored.entity_a.clone(), stored.entity_b.clone()];
        let entities = self.graph.entity_details(tenant, &ids).await?;
        if entities.len() != 2 || entities.iter().any(|e| e.status == "merged") {
            return Ok(None);
        }
        Ok(Some(Suggestion {
            suggestion_id: stored.id.clone(),
            score: stored.score,
            signals: stored.signals.clone(),
            status: stored.status.clone(),
            bucket_id: stored.bucket_id.clone(),
            entities: entities
                .into_iter()
                .map(|e| SuggestedEntity {
                    entity_id: e.entity_id,
                    canonical: e.canonical,
                    type_name: e.type_name,
                    mention_count: e.mention_count,
                })
                .collect(),
        }))
    }
}

fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}
