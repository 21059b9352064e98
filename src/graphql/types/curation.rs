//! GraphQL output types of curation: merge suggestions, synonyms, merges, reviewers and
//! bulk validation.

use super::Entity;
use crate::graph::entities::Synonym as SynonymRecord;
use crate::graph::merges::{MergeRecord, MergeResult as MergeResultRecord};
use crate::graph::suggestions::{SuggestedEntity as SuggestedRecord, Suggestion as SuggestionRecord};
use async_graphql::{Json, SimpleObject, ID};
use serde_json::Value;

/// One entity of a suggested duplicate pair.
#[derive(SimpleObject)]
pub struct SuggestedEntity {
    #[graphql(name = "entityID")]
    pub entity_id: ID,
    pub canonical: String,
    #[graphql(name = "type")]
    pub type_name: String,
    pub mention_count: i64,
}

/// A candidate duplicate pair; accepting merges the second entity into the first.
#[derive(SimpleObject)]
pub struct MergeSuggestion {
    #[graphql(name = "suggestionID")]
    pub suggestion_id: ID,
    /// 0..1, higher is more likely one entity.
    pub score: f64,
    /// `nameSimilarity`, `sharedSurfaceForms` and (with an embedder) `embeddingSimilarity`.
    pub signals: Json<Value>,
    /// `open`, `accepted` or `dismissed`.
    pub status: String,
    pub entities: Vec<SuggestedEntity>,
    #[graphql(name = "bucketID")]
    pub bucket_id: ID,
    /// Who decided (a user or API key ID, `auto-merge`); null while open.
    pub decided_by: Option<String>,
    /// Decided blind, with the scores and explanation hidden; false while open.
    pub blind: bool,
}

impl From<SuggestionRecord> for MergeSuggestion {
    fn from(s: SuggestionRecord) -> Self {
        Self {
            suggestion_id: ID(s.suggestion_id),
            score: s.score,
            signals: Json(s.signals),
            status: s.status,
            entities: s
                .entities
                .into_iter()
                .map(|e: SuggestedRecord| SuggestedEntity {
                    entity_id: ID(e.entity_id),
                    canonical: e.canonical,
                    type_name: e.type_name,
                    mention_count: e.mention_count,
                })
                .collect(),
            bucket_id: ID(s.bucket_id),
            decided_by: s.decided_by,
            blind: s.blind,
        }
    }
}

/// A page of open merge suggestions, most likely duplicates first.
#[derive(SimpleObject)]
pub struct MergeSuggestionPage {
    pub suggestions: Vec<MergeSuggestion>,
    pub has_more: bool,
}

/// A surface form attached to an entity.
#[derive(SimpleObject)]
pub struct Synonym {
    #[graphql(name = "synonymID")]
    pub synonym_id: ID,
    pub text: String,
    pub normalized_text: String,
    /// `extracted`, `customer_defined`, `sme_approved` (or `canonical`).
    pub source: String,
    pub locale: Option<String>,
    pub created_at: String,
}

impl From<SynonymRecord> for Synonym {
    fn from(s: SynonymRecord) -> Self {
        Self {
            synonym_id: ID(s.synonym_id),
            text: s.text,
            normalized_text: s.normalized_text,
            source: s.source,
            locale: s.locale,
            created_at: s.created_at,
        }
    }
}

/// One recorded merge.
#[derive(SimpleObject)]
pub struct Merge {
    #[graphql(name = "mergeID")]
    pub merge_id: ID,
    #[graphql(name = "survivorID")]
    pub survivor_id: ID,
    #[graphql(name = "mergedID")]
    pub merged_id: ID,
    /// The user (`usr_…`) or API key (`key_…`) that merged.
    pub merged_by: String,
    pub merged_at: String,
    pub undone_by: Option<String>,
    pub undone_at: Option<String>,
    pub keys_moved: i64,
    pub mentions_moved: i64,
    pub relations_moved: i64,
}

impl From<MergeRecord> for Merge {
    fn from(m: MergeRecord) -> Self {
        Self {
            merge_id: ID(m.merge_id),
            survivor_id: ID(m.survivor_id),
            merged_id: ID(m.merged_id),
            merged_by: m.merged_by,
            merged_at: m.merged_at,
            undone_by: m.undone_by,
            undone_at: m.undone_at,
            keys_moved: m.keys_moved,
            mentions_moved: m.mentions_moved,
            relations_moved: m.relations_moved,
        }
    }
}

/// The survivor after a merge, and the merges recorded.
#[derive(SimpleObject)]
pub struct MergeResult {
    pub entity: Entity,
    pub merges: Vec<Merge>,
}

impl From<MergeResultRecord> for MergeResult {
    fn from(r: MergeResultRecord) -> Self {
        Self { entity: Entity(r.entity), merges: r.merges.into_iter().map(Merge::from).collect() }
    }
}

/// A user assigned to review an entity type.
#[derive(SimpleObject)]
pub struct Reviewer {
    #[graphql(name = "typeID")]
    pub type_id: ID,
    #[graphql(name = "userID")]
    pub user_id: ID,
    pub email: String,
    /// `admin` or `operator`.
    pub role: String,
    pub assigned_at: String,
}

impl From<crate::graph::reviewers::Reviewer> for Reviewer {
    fn from(r: crate::graph::reviewers::Reviewer) -> Self {
        Self {
            type_id: ID(r.type_id),
            user_id: ID(r.user_id),
            email: r.email,
            role: r.role,
            assigned_at: r.assigned_at,
        }
    }
}

/// What happened to one entity of a bulk validation.
#[derive(SimpleObject)]
pub struct ValidateRow {
    #[graphql(name = "entityID")]
    pub entity_id: ID,
    /// `validated`, `skipped` (not found) or `rejected-row` (illegal transition).
    pub outcome: String,
    pub reason: Option<String>,
}

/// Counts of a bulk validation's outcomes.
#[derive(SimpleObject)]
pub struct ValidateSummary {
    pub validated: usize,
    pub skipped: usize,
    pub rejected_row: usize,
}

/// The result of `bulkValidate`, row by row.
#[derive(SimpleObject)]
pub struct ValidateResult {
    pub results: Vec<ValidateRow>,
    pub summary: ValidateSummary,
}

impl From<crate::graph::entities::ValidateResult> for ValidateResult {
    fn from(r: crate::graph::entities::ValidateResult) -> Self {
        Self {
            results: r
                .results
                .into_iter()
                .map(|row| ValidateRow {
                    entity_id: ID(row.entity_id),
                    outcome: row.outcome.into(),
                    reason: row.reason,
                })
                .collect(),
            summary: ValidateSummary {
                validated: r.summary.validated,
                skipped: r.summary.skipped,
                rejected_row: r.summary.rejected_row,
            },
        }
    }
}
