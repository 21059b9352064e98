//! REST transport of `POST /v3/functions/copy` and `POST /v3/workflows/copy` (see
//! [`crate::functions::copy`]). Static routes, so they win over `/{functionName}` and
//! `/{workflowName}` (a function named `copy` stays readable by GET).

use super::extract::ApiJson;
use super::functions::author;
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::state::AppState;
use crate::functions::copy::{CopiedFunction, FunctionCopyInput, WorkflowCopyInput};
use axum::extract::State;
use axum::Json;
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

/// Documents the copy of a workflow.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowCopied {
    /// The new workflow at version 1, as `GET /v3/workflows/{workflowName}` shows it.
    #[schema(value_type = Object)]
    pub workflow: Value,
    /// The environment it was copied to.
    pub environment: String,
    /// Functions copied along (only to another environment).
    pub copied_functions: Vec<CopiedFunction>,
}

/// Copy a function's current version into a new function at version 1, in this environment
/// or `targetEnvironment`. The display name defaults to the source's plus " (Copy)".
#[utoipa::path(post, path = "/v3/functions/copy", tag = "functions", request_body = FunctionCopyInput,
    responses((status = 200, body = crate::functions::schema::FunctionEnvelope), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, description = "target name taken", body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn copy_function(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(input): ApiJson<FunctionCopyInput>,
) -> Result<Json<Value>, ApiError> {
    let author = author(&state, &caller).await?;
    let function = state.functions.copy_function(&caller.tenant, &author, input).await?;
    Ok(Json(json!({ "function": function })))
}

/// Copy a workflow version into a new workflow at version 1. Within one environment the
/// copy shares the source's functions; to another environment they are copied too.
#[utoipa::path(post, path = "/v3/workflows/copy", tag = "workflows", request_body = WorkflowCopyInput,
    responses((status = 200, body = WorkflowCopied), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, description = "target name taken", body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn copy_workflow(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(input): ApiJson<WorkflowCopyInput>,
) -> Result<Json<Value>, ApiError> {
    let author = author(&state, &caller).await?;
    Ok(Json(state.functions.copy_workflow(&caller.tenant, &author, input).await?))
}
