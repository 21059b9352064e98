//! REST transport for buckets: parse, call the graph service, shape the response.

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{bool_param, int_param};
use crate::access::state::AppState;
use crate::graph::buckets::{Bucket, BucketChanges, BucketPage, NewBucket};
use crate::pagination::{Limits, PageRequest};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

const LIMITS: Limits = Limits { default: 50, max: 200 };

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateBucket {
    /// Unique among the tenant's live buckets.
    pub name: String,
    pub description: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateBucket {
    pub name: Option<String>,
    pub description: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListBuckets {
    /// Page size, 1..200 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
    /// A bucketID: the page after it.
    pub starting_after: Option<String>,
    /// A bucketID: the page before it.
    pub ending_before: Option<String>,
    /// Case-insensitive substring of the name.
    pub name_substring: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeleteBucket {
    /// Also delete the bucket's entities, mentions and relations.
    #[param(value_type = Option<bool>)]
    pub cascade: Option<String>,
}

/// Create a (non-default) bucket.
#[utoipa::path(post, path = "/v3/buckets", tag = "buckets", request_body = CreateBucket,
    responses((status = 200, body = Bucket), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 409, description = "name taken", body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<CreateBucket>,
) -> Result<Json<Bucket>, ApiError> {
    let new = NewBucket { name: body.name, description: body.description };
    Ok(Json(state.graph.create_bucket(&auth.tenant, new).await?))
}

/// Get one bucket.
#[utoipa::path(get, path = "/v3/buckets/{bucketID}", tag = "buckets", params(("bucketID" = String, Path)),
    responses((status = 200, body = Bucket), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
) -> Result<Json<Bucket>, ApiError> {
    Ok(Json(state.graph.get_bucket(&auth.tenant, &id).await?))
}

/// List live buckets in bucketID order.
#[utoipa::path(get, path = "/v3/buckets", tag = "buckets", params(ListBuckets),
    responses((status = 200, body = BucketPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<ListBuckets>,
) -> Result<Json<BucketPage>, ApiError> {
    let limit = int_param("limit", query.limit.as_deref())?;
    let page = PageRequest::parse(limit, query.starting_after, query.ending_before, LIMITS, "bkt")?;
    let substring = query.name_substring.filter(|s| !s.is_empty());
    Ok(Json(state.graph.list_buckets(&auth.tenant, &page, substring.as_deref()).await?))
}

/// Rename and/or re-describe a bucket (an empty object changes nothing).
#[utoipa::path(patch, path = "/v3/buckets/{bucketID}", tag = "buckets", params(("bucketID" = String, Path)), request_body = UpdateBucket,
    responses((status = 200, body = Bucket), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<UpdateBucket>,
) -> Result<Json<Bucket>, ApiError> {
    let changes = BucketChanges { name: body.name, description: body.description };
    Ok(Json(state.graph.update_bucket(&auth.tenant, &id, changes).await?))
}

/// Soft-delete a bucket. 409 for the default bucket, or a non-empty one without `cascade=true`.
#[utoipa::path(delete, path = "/v3/buckets/{bucketID}", tag = "buckets", params(("bucketID" = String, Path), DeleteBucket),
    responses((status = 204), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<DeleteBucket>,
) -> Result<StatusCode, ApiError> {
    let cascade = bool_param("cascade", query.cascade.as_deref())?.unwrap_or(false);
    state.graph.delete_bucket(&auth.tenant, &id, cascade).await?;
    Ok(StatusCode::NO_CONTENT)
}
