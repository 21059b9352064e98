//! The vector store: points (a dense vector, a BM25 sparse vector and a payload) in one
//! shared space per embedding model, behind a narrow trait with two adapters: Qdrant Edge in
//! process (the embedded default, files under the data directory) and a Qdrant server
//! (`CANON_QDRANT_URL`).
//!
//! Decision: every user collection of every tenant shares the space of its embedding model.
//! Tenancy (`account`, `environment`) and the collection path are indexed payload fields, and
//! every query filters by them; a space is never created per user collection.

pub mod edge;
pub mod qdrant;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

/// Name of the dense vector in every space.
pub const DENSE: &str = "dense";
/// Name of the BM25 sparse vector in every space (IDF applied by the store at query time).
pub const SPARSE: &str = "bm25";

/// Indexed payload fields every point carries.
pub mod fields {
    /// Account of the tenant (indexed; the tenant key of the Qdrant server's payload index).
    pub const ACCOUNT: &str = "account";
    /// `production` or `sandbox`.
    pub const ENVIRONMENT: &str = "environment";
    /// The item's own collection path (`customers.premium`).
    pub const COLLECTION: &str = "collection";
    /// Every prefix of the collection path (`customers`, `customers.premium`): what a subtree
    /// query matches.
    pub const SCOPE: &str = "scope";
    /// The collection item the point embeds (a long item has one point per chunk).
    pub const ITEM: &str = "itemID";
    /// The write (event ID) whose data the point embeds: older revisions are stale.
    pub const REVISION: &str = "revision";
    /// The item's data, for payload filters (`data.<field>`).
    pub const DATA: &str = "data";
}

/// Keyword fields indexed in every space.
pub const KEYWORD_INDEXES: [&str; 6] =
    [fields::ACCOUNT, fields::ENVIRONMENT, fields::COLLECTION, fields::SCOPE, fields::ITEM, fields::REVISION];

#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("vector store unavailable: {0}")]
    Unavailable(String),
    #[error("vector store operation failed: {0}")]
    Operation(String),
}

pub type VectorResult<T> = Result<T, VectorError>;

/// One shared space: the points of one embedding model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Space {
    /// Letters, digits, `-` and `_` (used as a directory and collection name).
    pub name: String,
    pub dimension: usize,
}

/// A BM25 sparse vector: term ids and weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sparse {
    pub indices: Vec<u32>,
    pub values: Vec<f32>,
}

/// A point to store.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// A UUID (hyphenated).
    pub id: String,
    pub dense: Vec<f32>,
    pub sparse: Sparse,
    pub payload: Map<String, Value>,
}

/// One condition on a payload field.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// The field (or one of its array values) equals this text.
    Keyword { key: String, value: String },
    /// The field equals one of these texts.
    AnyKeyword { key: String, values: Vec<String> },
    /// The field equals this integer.
    Integer { key: String, value: i64 },
    /// The field equals this boolean.
    Bool { key: String, value: bool },
    /// The field equals one of these integers.
    AnyInteger { key: String, values: Vec<i64> },
}

impl Condition {
    pub fn keyword(key: &str, value: impl Into<String>) -> Self {
        Condition::Keyword { key: key.into(), value: value.into() }
    }

    pub fn any_keyword(key: &str, values: Vec<String>) -> Self {
        Condition::AnyKeyword { key: key.into(), values }
    }

    /// The condition as Qdrant's JSON filter language (shared by both adapters).
    pub fn to_json(&self) -> Value {
        match self {
            Condition::Keyword { key, value } => json!({ "key": key, "match": { "value": value } }),
            Condition::AnyKeyword { key, values } => {
                json!({ "key": key, "match": { "any": values } })
            }
            Condition::Integer { key, value } => json!({ "key": key, "match": { "value": value } }),
            Condition::Bool { key, value } => json!({ "key": key, "match": { "value": value } }),
            Condition::AnyInteger { key, values } => {
                json!({ "key": key, "match": { "any": values } })
            }
        }
    }
}

/// Conditions on the payload: all of `must`, none of `must_not`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub must: Vec<Condition>,
    pub must_not: Vec<Condition>,
}

impl Filter {
    pub fn must(mut self, condition: Condition) -> Self {
        self.must.push(condition);
        self
    }

    pub fn must_not(mut self, condition: Condition) -> Self {
        self.must_not.push(condition);
        self
    }

    /// The filter as Qdrant's JSON filter language.
    pub fn to_json(&self) -> Value {
        let mut filter = Map::new();
        if !self.must.is_empty() {
            filter.insert("must".into(), self.must.iter().map(Condition::to_json).collect());
        }
        if !self.must_not.is_empty() {
            filter.insert("must_not".into(), self.must_not.iter().map(Condition::to_json).collect());
        }
        Value::Object(filter)
    }
}

/// What a search scores points by.
#[derive(Clone, Debug, PartialEq)]
pub enum Ranking {
    /// Cosine similarity of the dense vectors.
    Dense(Vec<f32>),
    /// BM25 of the sparse vectors.
    Sparse(Sparse),
    /// Both, fused by reciprocal rank; each side contributes up to `candidates` points.
    Hybrid { dense: Vec<f32>, sparse: Sparse, candidates: usize },
}

/// A search.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub ranking: Ranking,
    pub filter: Filter,
    pub limit: usize,
    /// Points scoring below are left out (on the final, fused score for hybrid).
    pub score_threshold: Option<f32>,
}

/// A point found by a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub id: String,
    pub score: f32,
    pub payload: Map<String, Value>,
}

/// Reciprocal-rank-fusion constant used by hybrid search.
pub const RRF_K: usize = 60;

/// Storage of points: narrow on purpose, so each backend adapter stays a thin conversion.
#[async_trait]
pub trait VectorStore: Send + Sync + 'static {
    /// `qdrant-edge` or `qdrant`.
    fn name(&self) -> &'static str;
    /// Makes sure the space exists with its vectors and payload indexes (idempotent).
    async fn ensure_space(&self, space: &Space) -> VectorResult<()>;
    /// Inserts or replaces points, durably.
    async fn upsert(&self, space: &Space, points: Vec<Point>) -> VectorResult<()>;
    /// Deletes every point matching the filter.
    async fn delete(&self, space: &Space, filter: &Filter) -> VectorResult<()>;
    /// The best points for a query, best first.
    async fn search(&self, space: &Space, query: &Query) -> VectorResult<Vec<Hit>>;
    /// Returns once everything written so far is indexed for fast search (the embedded store
    /// indexes in the background; a Qdrant server does so by itself).
    async fn wait_indexed(&self, space: &Space) -> VectorResult<()>;
    /// How many points match the filter (exact).
    async fn count(&self, space: &Space, filter: &Filter) -> VectorResult<u64>;
    /// Cheap reachability check for `/readyz`.
    async fn ping(&self) -> VectorResult<()>;
    /// Flushes and releases what the store holds (the embedded store's files).
    async fn close(&self);
}

/// A point ID derived from the item and chunk, so writing the same chunk again replaces it.
pub fn point_id(item_id: &str, chunk: usize) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{item_id}#{chunk}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_random_bytes(bytes).into_uuid().hyphenated().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_ids_are_stable_uuids_per_item_and_chunk() {
        let a = point_id("itm_1", 0);
        assert_eq!(a, point_id("itm_1", 0));
        assert_ne!(a, point_id("itm_1", 1));
        assert_ne!(a, point_id("itm_2", 0));
        assert!(uuid::Uuid::parse_str(&a).is_ok());
    }

    #[test]
    fn filters_render_as_qdrant_json() {
        let filter = Filter::default()
            .must(Condition::keyword("account", "acc_1"))
            .must_not(Condition::any_keyword("revision", vec!["r1".into()]));
        assert_eq!(
            filter.to_json(),
            json!({
                "must": [{ "key": "account", "match": { "value": "acc_1" } }],
                "must_not": [{ "key": "revision", "match": { "any": ["r1"] } }],
            })
        );
    }
}
