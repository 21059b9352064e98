//! REST transport for collections: parse, call the collections service, shape the response.

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{bool_param, int_param};
use crate::access::state::AppState;
use crate::collections::{
    page_bounds, Acknowledgement, Collection, CollectionItems, CollectionPage, SearchMode, SearchRequest,
    SearchResults, TokenCounts, MAX_SEARCH_LIMIT,
};
use crate::error::ServiceError;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

/// Page size bound of collection and item listings.
const MAX_PAGE: i64 = 100;
/// Results of a search when `limit` is not given.
const DEFAULT_SEARCH_LIMIT: usize = 10;

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateCollection {
    /// Path of letters, digits and underscores, segments joined by dots, each starting with
    /// a letter or an underscore (`customers.premium`). A parent need not exist.
    pub collection_name: String,
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListCollections {
    /// Only this collection and its descendants (`customers` lists `customers`,
    /// `customers.premium`, …).
    pub parent_collection_name: Option<String>,
    /// Case-insensitive substring of the name.
    pub collection_name_search: Option<String>,
    /// 1-based page number (default 1).
    #[param(value_type = Option<i32>)]
    pub page: Option<String>,
    /// Page size, 1..100 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct CollectionNameParam {
    /// The collection (required).
    #[param(required = true)]
    pub collection_name: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct NewItem {
    /// A string, or a JSON object (embedded as `key: value` lines); at most 256 KiB serialized.
    #[schema(value_type = Object)]
    pub data: Value,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddItems {
    pub collection_name: String,
    /// 1..100 items.
    pub items: Vec<NewItem>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemUpdate {
    #[serde(rename = "collectionItemID")]
    pub collection_item_id: String,
    /// As an added item's: a string or a JSON object, at most 256 KiB serialized.
    #[schema(value_type = Object)]
    pub data: Value,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateItems {
    pub collection_name: String,
    /// 1..100 items of the collection; all must exist, or nothing is written (404).
    pub items: Vec<ItemUpdate>,
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListItems {
    /// The collection (required).
    #[param(required = true)]
    pub collection_name: Option<String>,
    /// Fold in the items of every descendant collection.
    #[param(value_type = Option<bool>)]
    pub include_subcollections: Option<String>,
    /// 1-based page number (default 1).
    #[param(value_type = Option<i32>)]
    pub page: Option<String>,
    /// Page size, 1..100 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct DeleteItem {
    /// The collection holding the item (required).
    #[param(required = true)]
    pub collection_name: Option<String>,
    /// The item (required).
    #[serde(rename = "collectionItemID")]
    #[param(required = true)]
    pub collection_item_id: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct CountTokens {
    /// 1..100 texts.
    pub texts: Vec<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Search {
    pub collection_name: String,
    /// What to look for: at most 1,000 characters.
    pub query: String,
    /// `semantic` (default), `exact` or `hybrid`.
    pub mode: Option<SearchMode>,
    /// Search the collection's descendants too.
    pub include_subcollections: Option<bool>,
    /// Results, 1..100 (default 10).
    pub limit: Option<usize>,
    /// Leave out results scoring below (on the mode's scale).
    pub score_threshold: Option<f32>,
    /// Field path in the items' data (dots for nesting) → the value it must equal, or a list
    /// of values it must equal one of. Only object items can match.
    #[schema(value_type = Option<Object>)]
    pub filter: Option<Map<String, Value>>,
}

fn required(name: &str, value: Option<String>) -> Result<String, ApiError> {
    value.filter(|v| !v.is_empty()).ok_or_else(|| ServiceError::invalid_field(name, "is required").into())
}

/// Create a collection.
#[utoipa::path(post, path = "/v3/collections", tag = "collections", request_body = CreateCollection,
    responses((status = 200, body = Collection), (status = 400, description = "bad name (the message says why)", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 409, description = "name taken", body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<CreateCollection>,
) -> Result<Json<Collection>, ApiError> {
    Ok(Json(state.collections.create(&auth.tenant, &body.collection_name).await?))
}

/// List collections in name order, optionally under a path or matching a substring.
#[utoipa::path(get, path = "/v3/collections", tag = "collections", params(ListCollections),
    responses((status = 200, body = CollectionPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<ListCollections>,
) -> Result<Json<CollectionPage>, ApiError> {
    let (page, limit) = page_bounds(
        int_param("page", query.page.as_deref())?,
        int_param("limit", query.limit.as_deref())?,
        MAX_PAGE,
    )?;
    let parent = query.parent_collection_name.filter(|s| !s.is_empty());
    let search = query.collection_name_search.filter(|s| !s.is_empty());
    Ok(Json(state.collections.list(&auth.tenant, parent.as_deref(), search.as_deref(), page, limit).await?))
}

/// Delete a collection **and its whole subtree**: every descendant collection
/// (`name.*`), all their items and their vectors. Nothing is left orphaned.
#[utoipa::path(delete, path = "/v3/collections", tag = "collections", params(CollectionNameParam),
    responses((status = 204), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<CollectionNameParam>,
) -> Result<StatusCode, ApiError> {
    let name = required("collectionName", query.collection_name)?;
    state.collections.delete(&auth.tenant, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Add items (at most 100). Answers at once; each item is `pending` until a job has embedded
/// it (`embedded`) or could not (`failed`, with `errorMessage`); then the
/// `collection_processing` event with the returned `eventID` is recorded. 422 when the account
/// has its most writes waiting for their embeddings (10,000, `queuedEmbeddingWritesPerAccount`).
#[utoipa::path(post, path = "/v3/collections/items", tag = "collections", request_body = AddItems,
    responses((status = 202, body = Acknowledgement), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, description = "no such collection", body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody)))]
pub async fn add_items(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<AddItems>,
) -> Result<(StatusCode, Json<Acknowledgement>), ApiError> {
    let data = body.items.into_iter().map(|item| item.data).collect();
    let ack = state.collections.add_items(&auth.tenant, &body.collection_name, data).await?;
    Ok((StatusCode::ACCEPTED, Json(ack)))
}

/// Replace the data of existing items (at most 100); they are embedded again, as on add (422
/// as there when too many writes wait).
#[utoipa::path(put, path = "/v3/collections/items", tag = "collections", request_body = UpdateItems,
    responses((status = 202, body = Acknowledgement), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, description = "no such collection or item", body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody)))]
pub async fn update_items(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<UpdateItems>,
) -> Result<(StatusCode, Json<Acknowledgement>), ApiError> {
    let updates = body.items.into_iter().map(|item| (item.collection_item_id, item.data)).collect();
    let ack = state.collections.update_items(&auth.tenant, &body.collection_name, updates).await?;
    Ok((StatusCode::ACCEPTED, Json(ack)))
}

/// A collection with a page of its items in creation order (with every descendant's when
/// `includeSubcollections=true`).
#[utoipa::path(get, path = "/v3/collections/items", tag = "collections", params(ListItems),
    responses((status = 200, body = CollectionItems), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get_items(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<ListItems>,
) -> Result<Json<CollectionItems>, ApiError> {
    let name = required("collectionName", query.collection_name)?;
    let include =
        bool_param("includeSubcollections", query.include_subcollections.as_deref())?.unwrap_or(false);
    let (page, limit) = page_bounds(
        int_param("page", query.page.as_deref())?,
        int_param("limit", query.limit.as_deref())?,
        MAX_PAGE,
    )?;
    Ok(Json(state.collections.items(&auth.tenant, &name, include, page, limit).await?))
}

/// Delete one item and its vectors.
#[utoipa::path(delete, path = "/v3/collections/items", tag = "collections", params(DeleteItem),
    responses((status = 204), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn delete_item(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<DeleteItem>,
) -> Result<StatusCode, ApiError> {
    let name = required("collectionName", query.collection_name)?;
    let item = required("collectionItemID", query.collection_item_id)?;
    state.collections.delete_item(&auth.tenant, &name, &item).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Token count of each text under the configured embedder's tokenizer, and whether it fits
/// the 8,192-token limit per text. A text over the window of the model is chunked for
/// embedding; one over the limit makes its item fail.
#[utoipa::path(post, path = "/v3/collections/token-count", tag = "collections", request_body = CountTokens,
    responses((status = 200, body = TokenCounts), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn token_count(
    State(state): State<AppState>,
    _auth: Caller,
    ApiJson(body): ApiJson<CountTokens>,
) -> Result<Json<TokenCounts>, ApiError> {
    Ok(Json(state.collections.count_tokens(&body.texts).await?))
}

/// Search a collection (optionally with its descendants) for the items best matching a
/// text: `semantic` (dense vectors, cosine scores), `exact` (BM25 keywords) or `hybrid`
/// (both, fused by reciprocal rank with k = 60). Only embedded items are found. With
/// `includeSubcollections`, `collectionName` may be a parent path no collection has itself
/// (`parts` when only `parts.filters` exists).
#[utoipa::path(post, path = "/v3/collections/search", tag = "collections", request_body = Search,
    responses((status = 200, body = SearchResults), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn search(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<Search>,
) -> Result<Json<SearchResults>, ApiError> {
    let limit = body.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    if limit == 0 || limit > MAX_SEARCH_LIMIT {
        return Err(ServiceError::invalid_field(
            "limit",
            format!("must be between 1 and {MAX_SEARCH_LIMIT} (got {limit})"),
        )
        .into());
    }
    let request = SearchRequest {
        collection_name: body.collection_name,
        query: body.query,
        mode: body.mode.unwrap_or_default(),
        include_subcollections: body.include_subcollections.unwrap_or(false),
        limit,
        score_threshold: body.score_threshold,
        filter: body.filter.unwrap_or_default(),
    };
    Ok(Json(state.collections.search(&auth.tenant, request).await?))
}
