//! REST transport for views and their table and aggregation data.

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{array_param, int_param};
use crate::access::state::AppState;
use crate::pagination::{Limits, Order, PageRequest};
use crate::views::model::{
    AggregationData, AggregationDataInput, TableData, TableDataInput, View, ViewInput, ViewPage,
};
use crate::views::ListQuery;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::IntoParams;

const LIMITS: Limits = Limits { default: 50, max: 100 };

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListViews {
    /// 1..100 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
    /// A viewID: the page after it.
    pub starting_after: Option<String>,
    /// A viewID: the page before it.
    pub ending_before: Option<String>,
    /// `asc` (default) or `desc`, over view IDs.
    pub sort_order: Option<String>,
    /// Only these views (comma-joined or repeated).
    #[serde(default, rename = "viewIDs")]
    #[param(value_type = Option<Vec<String>>, rename = "viewIDs")]
    pub view_ids: Vec<String>,
    /// Only views reading at least one of these functions.
    #[serde(default, rename = "functionIDs")]
    #[param(value_type = Option<Vec<String>>, rename = "functionIDs")]
    pub function_ids: Vec<String>,
    /// Only views reading at least one of these functions.
    #[serde(default)]
    #[param(value_type = Option<Vec<String>>)]
    pub function_names: Vec<String>,
    /// Case-insensitive substring of the name.
    pub view_name_substring: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct GetView {
    /// A version other than the current one.
    #[param(value_type = Option<i64>)]
    pub version_num: Option<String>,
}

/// Create a view (version 1).
#[utoipa::path(post, path = "/v3/views", tag = "views", request_body = ViewInput,
    responses((status = 200, body = View), (status = 400, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<ViewInput>,
) -> Result<Json<View>, ApiError> {
    Ok(Json(state.views.create(&caller.tenant, body).await?))
}

/// Views at their current versions, in ID order: `{views}`.
#[utoipa::path(get, path = "/v3/views", tag = "views", params(ListViews),
    responses((status = 200, body = ViewPage), (status = 400, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListViews>,
) -> Result<Json<ViewPage>, ApiError> {
    let limit = int_param("limit", query.limit.as_deref())?;
    let page = PageRequest::parse(limit, query.starting_after, query.ending_before, LIMITS, "vw")?;
    let list = ListQuery {
        view_ids: array_param("viewIDs", &query.view_ids)?,
        function_ids: array_param("functionIDs", &query.function_ids)?,
        function_names: array_param("functionNames", &query.function_names)?,
        name_substring: query.view_name_substring,
        order: Order::parse(query.sort_order.as_deref())?,
    };
    Ok(Json(ViewPage { views: state.views.list(&caller.tenant, list, &page).await? }))
}

/// A view at its current version, or at `versionNum`.
#[utoipa::path(get, path = "/v3/views/{viewID}", tag = "views", params(("viewID" = String, Path), GetView),
    responses((status = 200, body = View), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<GetView>,
) -> Result<Json<View>, ApiError> {
    let version = int_param("versionNum", query.version_num.as_deref())?;
    Ok(Json(state.views.get(&caller.tenant, &id, version).await?))
}

/// Replace the whole view: a new immutable version (earlier ones stay readable).
#[utoipa::path(put, path = "/v3/views/{viewID}", tag = "views", params(("viewID" = String, Path)),
    request_body = ViewInput,
    responses((status = 200, body = View), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ViewInput>,
) -> Result<Json<View>, ApiError> {
    Ok(Json(state.views.update(&caller.tenant, &id, body).await?))
}

/// Delete a view and every version of it.
#[utoipa::path(delete, path = "/v3/views/{viewID}", tag = "views", params(("viewID" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.views.delete(&caller.tenant, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A page of a view's rows (given inline) over the output events in `timeWindow`, oldest
/// first (by creation time, then event ID). A statement that reads for more than 15 s (the
/// count or the page) is stopped: 422 saying what to narrow.
#[utoipa::path(post, path = "/v3/views/table-data", tag = "views", request_body = TableDataInput,
    responses((status = 200, body = TableData), (status = 400, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn table_data(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<TableDataInput>,
) -> Result<Json<TableData>, ApiError> {
    Ok(Json(state.views.table_data(&caller.tenant, body).await?))
}

/// Every aggregation of a view (given inline) over the output events in `timeWindow`. An
/// aggregation that reads for more than 15 s is stopped: 422 saying what to narrow.
#[utoipa::path(post, path = "/v3/views/aggregation-data", tag = "views", request_body = AggregationDataInput,
    responses((status = 200, body = AggregationData), (status = 400, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn aggregation_data(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<AggregationDataInput>,
) -> Result<Json<AggregationData>, ApiError> {
    Ok(Json(state.views.aggregation_data(&caller.tenant, body).await?))
}
