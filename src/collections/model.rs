//! What the collections service takes and answers: collections, items, searches and token
//! counts, as REST and the functions that enrich with a search see them.

use crate::ids;
use crate::store::records::collections::{CollectionRow, ItemRow};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// A collection (without its items).
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Collection {
    /// `col_…`
    #[serde(rename = "collectionID")]
    pub collection_id: String,
    /// The path, e.g. `customers.premium`.
    pub collection_name: String,
    /// Items in this collection itself (descendants not counted).
    pub item_count: i64,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339; changes when items are written or deleted.
    pub updated_at: String,
}

/// A page of collections.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollectionPage {
    pub collections: Vec<Collection>,
    /// 1-based.
    pub page: i64,
    pub limit: i64,
    pub total_pages: i64,
    pub total_count: i64,
}

/// One item.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// `itm_…`
    #[serde(rename = "collectionItemID")]
    pub collection_item_id: String,
    /// The collection holding the item (differs from the one asked for when descendants are
    /// folded in).
    pub collection_name: String,
    /// A string or a JSON object, as written.
    #[schema(value_type = Object)]
    pub data: Value,
    /// `pending` (being embedded), `embedded` (searchable) or `failed` (see `errorMessage`).
    pub status: String,
    /// Why embedding failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

/// A collection with a page of its items (and, when asked, its descendants' items).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollectionItems {
    #[serde(rename = "collectionID")]
    pub collection_id: String,
    pub collection_name: String,
    /// Items the listing covers in all (with descendants when they are folded in).
    pub item_count: i64,
    pub created_at: String,
    pub updated_at: String,
    pub items: Vec<Item>,
    pub page: i64,
    pub limit: i64,
    pub total_pages: i64,
}

/// The answer to an add or update: the work is queued.
#[derive(Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Acknowledgement {
    /// Always `pending`.
    pub status: String,
    pub message: String,
    /// Correlates with the `collection_processing` event recorded when embedding completes.
    #[serde(rename = "eventID")]
    pub event_id: String,
}

/// Token count of one text.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenCount {
    /// Position in the request's `texts`.
    pub index: usize,
    pub token_count: usize,
    pub char_count: usize,
    /// Whether `token_count` is over `max_token_limit`.
    pub exceeds_limit: bool,
}

/// Token counts under the configured embedder's tokenizer (snake_case, as the SDK reads it).
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenCounts {
    pub token_counts: Vec<TokenCount>,
    pub total_tokens: usize,
    pub max_token_limit: usize,
    pub texts_exceeding_limit: usize,
}

/// How a search ranks items.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Dense vectors: meaning, paraphrases. Scores are cosine similarities (−1..1).
    #[default]
    Semantic,
    /// BM25 over the words: exact terms, codes, names. Scores are BM25 scores.
    Exact,
    /// Both, fused by reciprocal rank. Scores are fused ranks (at most 2/61 ≈ 0.033).
    Hybrid,
}

/// A search within a collection.
#[derive(Clone, Debug)]
pub struct SearchRequest {
    pub collection_name: String,
    pub query: String,
    pub mode: SearchMode,
    pub include_subcollections: bool,
    pub limit: usize,
    pub score_threshold: Option<f32>,
    /// Field path in the item's data → a value it must equal, or a list of values it must
    /// equal one of.
    pub filter: Map<String, Value>,
}

/// An item found by a search.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    #[serde(flatten)]
    pub item: Item,
    /// Higher is better; its scale depends on the mode.
    pub score: f32,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResults {
    pub mode: SearchMode,
    /// Best first; each item once (the best of its chunks).
    pub results: Vec<SearchHit>,
}

pub(super) fn collection(row: CollectionRow) -> Collection {
    Collection {
        collection_id: row.id,
        collection_name: row.name,
        item_count: row.item_count,
        created_at: ids::millis_rfc3339(row.created_at),
        updated_at: ids::millis_rfc3339(row.updated_at),
    }
}

pub(super) fn item(row: ItemRow) -> Item {
    Item {
        collection_item_id: row.id,
        collection_name: row.collection_name,
        data: serde_json::from_str(&row.data).unwrap_or(Value::Null),
        status: row.status,
        error_message: row.error,
        created_at: ids::millis_rfc3339(row.created_at),
        updated_at: ids::millis_rfc3339(row.updated_at),
    }
}
