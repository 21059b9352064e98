//! REST transport for functions: parse, call the functions service, wrap the answer in the
//! `{function}` / `{functions, totalCount}` / `{versions, totalCount}` envelopes of `bem-sdk`.

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{array_param, bool_param, int_param};
use crate::access::state::AppState;
use crate::functions::listing::{id_page, version_page, version_refs};
use crate::functions::schema::{FunctionEnvelope, FunctionPage, FunctionVersionPage};
use crate::functions::service::{FunctionFilter, FunctionInput};
use crate::functions::Author;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use utoipa::IntoParams;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IncludeExtra {
    /// Show each function's `extraConfig` (absent unless true).
    #[serde(rename = "includeExtraSettings")]
    #[param(value_type = Option<bool>)]
    pub include_extra_settings: Option<String>,
}

/// Filters of `GET /v3/functions`. Array parameters take repeated keys (`tags=a&tags=b`,
/// also `tags[]=a`) or comma-separated values (`tags=a,b`).
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListFunctions {
    #[serde(default, rename = "functionIDs", alias = "functionIDs[]")]
    pub function_ids: Vec<String>,
    #[serde(default, rename = "functionNames", alias = "functionNames[]")]
    pub function_names: Vec<String>,
    /// Case-insensitive substring of the display name.
    #[serde(rename = "displayName")]
    pub display_name: Option<String>,
    /// Functions with any of these tags.
    #[serde(default, alias = "tags[]")]
    pub tags: Vec<String>,
    #[serde(default, alias = "types[]")]
    pub types: Vec<String>,
    /// Functions the current version of these workflows runs.
    #[serde(default, rename = "workflowIDs", alias = "workflowIDs[]")]
    pub workflow_ids: Vec<String>,
    #[serde(default, rename = "workflowNames", alias = "workflowNames[]")]
    pub workflow_names: Vec<String>,
    /// `<workflowID>.<versionNum>` entries: functions that workflow version runs.
    #[serde(default, rename = "workflowIDVersionNums", alias = "workflowIDVersionNums[]")]
    pub workflow_id_version_nums: Vec<String>,
    /// `<workflowName>.<versionNum>` entries.
    #[serde(default, rename = "workflowNameVersionNums", alias = "workflowNameVersionNums[]")]
    pub workflow_name_version_nums: Vec<String>,
    /// `asc` (default) or `desc`, by function ID (creation order).
    #[serde(rename = "sortOrder")]
    pub sort_order: Option<String>,
    /// A function ID: the page after it.
    #[serde(rename = "startingAfter")]
    pub starting_after: Option<String>,
    /// A function ID: the page before it.
    #[serde(rename = "endingBefore")]
    pub ending_before: Option<String>,
    /// 1..100, default 50.
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
    #[serde(rename = "includeExtraSettings")]
    #[param(value_type = Option<bool>)]
    pub include_extra_settings: Option<String>,
}

/// Paging of a version history: cursors are version numbers.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListVersions {
    /// `asc` (default) or `desc`, by version number.
    #[serde(rename = "sortOrder")]
    pub sort_order: Option<String>,
    #[serde(rename = "startingAfter")]
    #[param(value_type = Option<i64>)]
    pub starting_after: Option<String>,
    #[serde(rename = "endingBefore")]
    #[param(value_type = Option<i64>)]
    pub ending_before: Option<String>,
    /// 1..100, default 50.
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
}

/// The author of a change, for audit records.
pub(super) async fn author(state: &AppState, caller: &Caller) -> Result<Author, ApiError> {
    let user = caller.user.as_ref().map(|u| u.user_id.clone());
    Ok(state.functions.author(caller.key_name.clone(), user).await?)
}

fn include_extra(raw: Option<&str>) -> Result<bool, ApiError> {
    Ok(bool_param("includeExtraSettings", raw)?.unwrap_or(false))
}

/// Parses the version-history paging parameters.
pub(super) fn versions_page(query: &ListVersions) -> Result<crate::functions::listing::Page<i64>, ApiError> {
    Ok(version_page(
        int_param("limit", query.limit.as_deref())?,
        query.sort_order.as_deref(),
        int_param("startingAfter", query.starting_after.as_deref())?,
        int_param("endingBefore", query.ending_before.as_deref())?,
    )?)
}

/// Create a function (version 1). `type` is one of transform, extract, analyze, join,
/// classify (or its legacy name route), split, send, enrich, parse, payload_shaping, render.
/// `outputSchema` must be a JSON Schema object within 64 KiB, 10 levels of subschemas and
/// 500 properties (else 400 "model state limit exceeded").
#[utoipa::path(post, path = "/v3/functions", tag = "functions", request_body = FunctionInput,
    responses((status = 200, body = FunctionEnvelope),
        (status = 400, description = "bad name, type, schema or setting", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 409, description = "function name already exists", body = ErrorBody),
        (status = 429, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(input): ApiJson<FunctionInput>,
) -> Result<Json<Value>, ApiError> {
    let author = author(&state, &caller).await?;
    let function = state.functions.create_function(&caller.tenant, &author, input).await?;
    Ok(Json(json!({ "function": function })))
}

/// A function at its current version, with the workflows that use any of its versions.
#[utoipa::path(get, path = "/v3/functions/{functionName}", tag = "functions", params(("functionName" = String, Path), IncludeExtra),
    responses((status = 200, body = FunctionEnvelope), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    ApiQuery(query): ApiQuery<IncludeExtra>,
) -> Result<Json<Value>, ApiError> {
    let include = include_extra(query.include_extra_settings.as_deref())?;
    Ok(Json(json!({ "function": state.functions.function(&caller.tenant, &name, include).await? })))
}

/// Update a function: writes the next immutable version (what is sent replaces the previous
/// version's value; the rest is kept). `functionName` renames it.
#[utoipa::path(patch, path = "/v3/functions/{functionName}", tag = "functions", params(("functionName" = String, Path)),
    request_body = FunctionInput,
    responses((status = 200, description = "the function at its new version", body = FunctionEnvelope),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, description = "new name taken", body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    ApiJson(input): ApiJson<FunctionInput>,
) -> Result<Json<Value>, ApiError> {
    let author = author(&state, &caller).await?;
    let function = state.functions.update_function(&caller.tenant, &author, &name, input).await?;
    Ok(Json(json!({ "function": function })))
}

/// Delete a function and every version. Refused (409, naming them) while the current
/// version of a workflow runs it.
#[utoipa::path(delete, path = "/v3/functions/{functionName}", tag = "functions", params(("functionName" = String, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, description = "a workflow uses it", body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.functions.delete_function(&caller.tenant, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// List the environment's functions at their current version. Filters AND together.
#[utoipa::path(get, path = "/v3/functions", tag = "functions", params(ListFunctions),
    responses((status = 200, body = FunctionPage), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListFunctions>,
) -> Result<Json<Value>, ApiError> {
    let include = include_extra(query.include_extra_settings.as_deref())?;
    let filter = FunctionFilter {
        function_ids: array_param("functionIDs", &query.function_ids)?,
        function_names: array_param("functionNames", &query.function_names)?,
        display_name: query.display_name.filter(|s| !s.is_empty()),
        tags: array_param("tags", &query.tags)?,
        types: array_param("types", &query.types)?,
        workflow_ids: array_param("workflowIDs", &query.workflow_ids)?,
        workflow_names: array_param("workflowNames", &query.workflow_names)?,
        workflow_id_versions: version_refs(
            "workflowIDVersionNums",
            &array_param("workflowIDVersionNums", &query.workflow_id_version_nums)?,
        )?,
        workflow_name_versions: version_refs(
            "workflowNameVersionNums",
            &array_param("workflowNameVersionNums", &query.workflow_name_version_nums)?,
        )?,
    };
    let page = id_page(
        int_param("limit", query.limit.as_deref())?,
        query.sort_order.as_deref(),
        query.starting_after,
        query.ending_before,
        "fn",
    )?;
    let (functions, total) = state.functions.list_functions(&caller.tenant, &filter, &page, include).await?;
    Ok(Json(json!({ "functions": functions, "totalCount": total })))
}

/// Every version of a function (paged by version number), each with the workflow versions
/// that run it.
#[utoipa::path(get, path = "/v3/functions/{functionName}/versions", tag = "functions",
    params(("functionName" = String, Path), ListVersions),
    responses((status = 200, body = FunctionVersionPage), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn versions(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    ApiQuery(query): ApiQuery<ListVersions>,
) -> Result<Json<Value>, ApiError> {
    let page = versions_page(&query)?;
    let (versions, total) = state.functions.function_versions(&caller.tenant, &name, &page).await?;
    Ok(Json(json!({ "versions": versions, "totalCount": total })))
}

/// One immutable version of a function: the spec's "Function version" envelope, with
/// `usedInWorkflows` (the workflow versions running this version) and `extraConfig` only
/// with `includeExtraSettings=true`.
#[utoipa::path(get, path = "/v3/functions/{functionName}/versions/{versionNum}", tag = "functions",
    params(("functionName" = String, Path), ("versionNum" = i64, Path), IncludeExtra),
    responses((status = 200, body = FunctionEnvelope), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn version(
    State(state): State<AppState>,
    caller: Caller,
    Path((name, version)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<IncludeExtra>,
) -> Result<Json<Value>, ApiError> {
    let version = int_param("versionNum", Some(&version))?.unwrap_or_default();
    let include = include_extra(query.include_extra_settings.as_deref())?;
    let function = state.functions.function_version(&caller.tenant, &name, version, include).await?;
    Ok(Json(json!({ "function": function })))
}
