//! REST transport for golden datasets and their rows.

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{int_param, limit_param};
use crate::access::state::AppState;
use crate::datasets::model::{
    ColumnsInput, ColumnsResult, Dataset, DatasetInput, DatasetPage, DatasetRow, FromEventsInput, RowPage,
};
use crate::datasets::Written;
use crate::pagination::{Limits, PageRequest};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::IntoParams;

const LIMITS: Limits = Limits { default: 50, max: 100 };

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListDatasets {
    /// 1..100 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
    /// A datasetID: the page after it.
    pub starting_after: Option<String>,
    /// A datasetID: the page before it.
    pub ending_before: Option<String>,
    /// Case-insensitive substring of the name.
    pub name_substring: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListRows {
    /// 1..100 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
    /// A row key: the page after it (rows are in row-key order).
    pub starting_after: Option<String>,
}

/// Create a golden dataset (`gds_…`) with typed columns.
#[utoipa::path(post, path = "/v3/datasets", tag = "datasets", request_body = DatasetInput,
    responses((status = 200, body = Dataset), (status = 400, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<DatasetInput>,
) -> Result<Json<Dataset>, ApiError> {
    Ok(Json(state.datasets.create(&caller.tenant, body).await?))
}

/// Build a dataset from a function's output events in one call. The events chosen and their
/// calls' inputs may hold at most 64 MiB together: past it, 422 naming `datasetReadBytes` and
/// how many fit.
#[utoipa::path(post, path = "/v3/datasets/from-events", tag = "datasets", request_body = FromEventsInput,
    responses((status = 200, body = Dataset), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn from_events(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<FromEventsInput>,
) -> Result<Json<Dataset>, ApiError> {
    Ok(Json(state.datasets.from_events(&caller.tenant, body).await?))
}

/// Datasets in ID order: `{datasets}`.
#[utoipa::path(get, path = "/v3/datasets", tag = "datasets", params(ListDatasets),
    responses((status = 200, body = DatasetPage), (status = 400, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListDatasets>,
) -> Result<Json<DatasetPage>, ApiError> {
    let limit = int_param("limit", query.limit.as_deref())?;
    let page = PageRequest::parse(limit, query.starting_after, query.ending_before, LIMITS, "gds")?;
    let datasets = state.datasets.list(&caller.tenant, query.name_substring.as_deref(), &page).await?;
    Ok(Json(DatasetPage { datasets }))
}

/// One dataset.
#[utoipa::path(get, path = "/v3/datasets/{datasetID}", tag = "datasets", params(("datasetID" = String, Path)),
    responses((status = 200, body = Dataset), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Dataset>, ApiError> {
    Ok(Json(state.datasets.get(&caller.tenant, &id).await?))
}

/// Delete a dataset and its rows.
#[utoipa::path(delete, path = "/v3/datasets/{datasetID}", tag = "datasets", params(("datasetID" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.datasets.delete(&caller.tenant, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A page of rows in row-key order, with how many the dataset holds. A page reads at most
/// 16 MiB of values (one row at least), so it may hold fewer rows than `limit`: page on with
/// `startingAfter` until a page is empty.
#[utoipa::path(get, path = "/v3/datasets/{datasetID}/rows", tag = "datasets",
    params(("datasetID" = String, Path), ListRows),
    responses((status = 200, body = RowPage), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn rows(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ListRows>,
) -> Result<Json<RowPage>, ApiError> {
    let limit = limit_param(query.limit.as_deref(), LIMITS.default, LIMITS.max)?;
    Ok(Json(state.datasets.rows(&caller.tenant, &id, query.starting_after.as_deref(), limit).await?))
}

/// One row.
#[utoipa::path(get, path = "/v3/datasets/{datasetID}/rows/{row_key}", tag = "datasets",
    params(("datasetID" = String, Path), ("row_key" = String, Path)),
    responses((status = 200, body = DatasetRow), (status = 404, body = ErrorBody)))]
pub async fn get_row(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, row_key)): Path<(String, String)>,
) -> Result<Json<DatasetRow>, ApiError> {
    Ok(Json(state.datasets.get_row(&caller.tenant, &id, &row_key).await?))
}

/// Delete one row.
#[utoipa::path(delete, path = "/v3/datasets/{datasetID}/rows/{row_key}", tag = "datasets",
    params(("datasetID" = String, Path), ("row_key" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn delete_row(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, row_key)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    state.datasets.delete_row(&caller.tenant, &id, &row_key).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Write values of one row (creating it): 200 when every column is stored, 207 when some
/// are not (`error`, `failedColumns`), 400 when none is, 422 when the row is new and the
/// dataset holds its most rows (10,000; `details.limit` is `rowsPerDataset`).
#[utoipa::path(post, path = "/v3/datasets/{dataset_api_id}/rows/{row_key}/columns", tag = "datasets",
    params(("dataset_api_id" = String, Path), ("row_key" = String, Path)), request_body = ColumnsInput,
    responses((status = 200, body = ColumnsResult), (status = 207, body = ColumnsResult),
        (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn write_columns(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, row_key)): Path<(String, String)>,
    ApiJson(body): ApiJson<ColumnsInput>,
) -> Result<(StatusCode, Json<ColumnsResult>), ApiError> {
    Ok(match state.datasets.write_columns(&caller.tenant, &id, &row_key, body).await? {
        Written::All(result) => (StatusCode::OK, Json(result)),
        Written::Some(result) => (StatusCode::MULTI_STATUS, Json(result)),
    })
}
