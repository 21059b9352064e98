//! REST transport for workflows: parse, call the functions service, wrap the answer in the
//! `{workflow}` / `{workflows, totalCount}` / `{versions, totalCount}` envelopes of `bem-sdk`.

use super::extract::{ApiJson, ApiQuery};
use super::functions::{author, versions_page, ListVersions};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{array_param, int_param};
use crate::access::state::AppState;
use crate::functions::listing::{id_page, version_refs};
use crate::functions::schema::{
    WorkflowDeleted, WorkflowEnvelope, WorkflowPage, WorkflowUpdated, WorkflowVersionPage,
};
use crate::functions::workflows::{WorkflowFilter, WorkflowInput};
use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use utoipa::IntoParams;

/// Filters of `GET /v3/workflows`. Array parameters take `key[]=a&key[]=b`, repeated keys or
/// comma-separated values.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListWorkflows {
    #[serde(default, rename = "workflowIDs", alias = "workflowIDs[]")]
    pub workflow_ids: Vec<String>,
    /// Exact names.
    #[serde(default, rename = "workflowNames", alias = "workflowNames[]")]
    pub workflow_names: Vec<String>,
    /// Case-insensitive substring of the display name.
    #[serde(rename = "displayName")]
    pub display_name: Option<String>,
    /// Workflows with any of these tags.
    #[serde(default, alias = "tags[]")]
    pub tags: Vec<String>,
    /// Workflows whose current version has a node running one of these functions.
    #[serde(default, rename = "functionIDs", alias = "functionIDs[]")]
    pub function_ids: Vec<String>,
    #[serde(default, rename = "functionNames", alias = "functionNames[]")]
    pub function_names: Vec<String>,
    /// `<functionID>.<versionNum>`: a node of the current version pinned to that version.
    #[serde(default, rename = "functionIDVersionNums", alias = "functionIDVersionNums[]")]
    pub function_id_version_nums: Vec<String>,
    /// `<functionName>.<versionNum>`.
    #[serde(default, rename = "functionNameVersionNums", alias = "functionNameVersionNums[]")]
    pub function_name_version_nums: Vec<String>,
    /// `asc` (default) or `desc`, by workflow ID (creation order).
    #[serde(rename = "sortOrder")]
    pub sort_order: Option<String>,
    /// A workflow ID: the page after it.
    #[serde(rename = "startingAfter")]
    pub starting_after: Option<String>,
    /// A workflow ID: the page before it.
    #[serde(rename = "endingBefore")]
    pub ending_before: Option<String>,
    /// 1..100, default 50.
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
}

/// Create a workflow (version 1): a DAG of nodes, each running a function pinned to a version
/// (its current one unless `versionNum` is given), and edges. Nodes without a name take their
/// function's.
#[utoipa::path(post, path = "/v3/workflows", tag = "workflows", request_body = WorkflowInput,
    responses((status = 200, body = WorkflowEnvelope),
        (status = 400, description = "no nodes, bad name or field", body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 409, description = "workflow name already exists", body = ErrorBody),
        (status = 422, description = "unknown function or version, duplicate node, bad mainNodeName, unknown \
            edge node, cycle", body = ErrorBody),
        (status = 429, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(input): ApiJson<WorkflowInput>,
) -> Result<Json<Value>, ApiError> {
    let author = author(&state, &caller).await?;
    let workflow = state.functions.create_workflow(&caller.tenant, &author, input).await?;
    Ok(Json(json!({ "workflow": workflow })))
}

/// A workflow at its current version.
#[utoipa::path(get, path = "/v3/workflows/{workflowName}", tag = "workflows", params(("workflowName" = String, Path)),
    responses((status = 200, body = WorkflowEnvelope), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!({ "workflow": state.functions.workflow(&caller.tenant, &name).await? })))
}

/// Update a workflow: writes the next immutable version. `mainNodeName` and `nodes` (with
/// `edges`) replace the graph together, or are left out to keep it; `connectors`, when sent,
/// replace the set (entries with `connectorID` update that connector).
#[utoipa::path(patch, path = "/v3/workflows/{workflowName}", tag = "workflows", params(("workflowName" = String, Path)),
    request_body = WorkflowInput,
    responses((status = 200, body = WorkflowUpdated), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    ApiJson(input): ApiJson<WorkflowInput>,
) -> Result<Json<Value>, ApiError> {
    let author = author(&state, &caller).await?;
    let workflow = state.functions.update_workflow(&caller.tenant, &author, &name, input).await?;
    Ok(Json(json!({ "workflow": workflow, "connectorErrors": [] })))
}

/// Delete a workflow with every version and its connectors. 200 with the workflow deleted
/// and per-connector teardown errors (`connectorErrors`).
#[utoipa::path(delete, path = "/v3/workflows/{workflowName}", tag = "workflows", params(("workflowName" = String, Path)),
    responses((status = 200, body = WorkflowDeleted),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let mut deleted = state.functions.delete_workflow(&caller.tenant, &name).await?;
    let workflow_id = deleted.pointer("/workflow/id").and_then(Value::as_str).unwrap_or_default().to_string();
    let errors = state.connectors.teardown_workflow(&caller.tenant, &workflow_id).await;
    deleted["connectorErrors"] = Value::Array(errors);
    Ok(Json(deleted))
}

/// List the environment's workflows at their current version. Filters AND together.
#[utoipa::path(get, path = "/v3/workflows", tag = "workflows", params(ListWorkflows),
    responses((status = 200, body = WorkflowPage), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListWorkflows>,
) -> Result<Json<Value>, ApiError> {
    let filter = WorkflowFilter {
        workflow_ids: array_param("workflowIDs", &query.workflow_ids)?,
        workflow_names: array_param("workflowNames", &query.workflow_names)?,
        display_name: query.display_name.filter(|s| !s.is_empty()),
        tags: array_param("tags", &query.tags)?,
        function_ids: array_param("functionIDs", &query.function_ids)?,
        function_names: array_param("functionNames", &query.function_names)?,
        function_id_versions: version_refs(
            "functionIDVersionNums",
            &array_param("functionIDVersionNums", &query.function_id_version_nums)?,
        )?,
        function_name_versions: version_refs(
            "functionNameVersionNums",
            &array_param("functionNameVersionNums", &query.function_name_version_nums)?,
        )?,
    };
    let page = id_page(
        int_param("limit", query.limit.as_deref())?,
        query.sort_order.as_deref(),
        query.starting_after,
        query.ending_before,
        "wf",
    )?;
    let (workflows, total) = state.functions.list_workflows(&caller.tenant, &filter, &page).await?;
    Ok(Json(json!({ "workflows": workflows, "totalCount": total })))
}

/// Every version of a workflow, paged by version number (connectors are current state and
/// not shown on versions).
#[utoipa::path(get, path = "/v3/workflows/{workflowName}/versions", tag = "workflows",
    params(("workflowName" = String, Path), ListVersions),
    responses((status = 200, body = WorkflowVersionPage), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn versions(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    ApiQuery(query): ApiQuery<ListVersions>,
) -> Result<Json<Value>, ApiError> {
    let page = versions_page(&query)?;
    let (versions, total) = state.functions.workflow_versions(&caller.tenant, &name, &page).await?;
    Ok(Json(json!({ "versions": versions, "totalCount": total })))
}

/// One immutable version of a workflow.
#[utoipa::path(get, path = "/v3/workflows/{workflowName}/versions/{versionNum}", tag = "workflows",
    params(("workflowName" = String, Path), ("versionNum" = i64, Path)),
    responses((status = 200, body = WorkflowEnvelope), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn version(
    State(state): State<AppState>,
    caller: Caller,
    Path((name, version)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let version = int_param("versionNum", Some(&version))?.unwrap_or_default();
    Ok(Json(json!({ "workflow": state.functions.workflow_version(&caller.tenant, &name, version).await? })))
}
