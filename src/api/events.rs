//! REST transport for events: `/v3/outputs` (non-error terminal events), `/v3/errors`
//! (error events) and the legacy `/v1-alpha/events` (both). Event IDs are KSUIDs; cursors
//! are event IDs; array filters take repeated keys, `key[]` keys or comma-separated lists.

use super::extract::ApiQuery;
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{array_param, bool_param, int_param};
use crate::access::state::AppState;
use crate::pagination::{Limits, Order, PageRequest};
use crate::store::records::events::EventFilter;
use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use utoipa::IntoParams;

const LIMITS: Limits = Limits { default: 50, max: 100 };

/// Every filter of the three lists (each list documents the ones it reads).
#[derive(Deserialize, IntoParams, Default)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListEvents {
    /// Page size, 1..100 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
    #[serde(rename = "eventIDs", alias = "eventIDs[]", default)]
    pub event_ids: Vec<String>,
    #[serde(rename = "callIDs", alias = "callIDs[]", default)]
    pub call_ids: Vec<String>,
    #[serde(rename = "eventTypes", alias = "eventTypes[]", default)]
    pub event_types: Vec<String>,
    #[serde(rename = "workflowIDs", alias = "workflowIDs[]", default)]
    pub workflow_ids: Vec<String>,
    #[serde(rename = "workflowNames", alias = "workflowNames[]", default)]
    pub workflow_names: Vec<String>,
    #[serde(rename = "functionIDs", alias = "functionIDs[]", default)]
    pub function_ids: Vec<String>,
    #[serde(rename = "functionNames", alias = "functionNames[]", default)]
    pub function_names: Vec<String>,
    #[serde(rename = "functionVersionNums", alias = "functionVersionNums[]", default)]
    pub function_version_nums: Vec<String>,
    #[serde(rename = "referenceIDs", alias = "referenceIDs[]", default)]
    pub reference_ids: Vec<String>,
    /// Case-insensitive substring of `referenceID`.
    #[serde(rename = "referenceIDSubstring")]
    pub reference_id_substring: Option<String>,
    /// Only events with (true) or without (false) a correction.
    #[param(value_type = Option<bool>)]
    pub is_labelled: Option<String>,
    /// Only outputs of regression runs (true) or none of them (false); default both.
    #[param(value_type = Option<bool>)]
    pub is_regression: Option<String>,
    /// Also events of nodes that fed other nodes (outputs only; default false).
    #[param(value_type = Option<bool>)]
    pub include_intermediate: Option<String>,
    /// `asc` (default) or `desc`; paging works both ways.
    pub sort_order: Option<String>,
    /// An eventID: the page after it.
    pub starting_after: Option<String>,
    /// An eventID: the page before it.
    pub ending_before: Option<String>,
}

/// Which events a list may return.
#[derive(Clone, Copy)]
enum Surface {
    Outputs,
    Errors,
    Events,
}

async fn list(
    state: &AppState,
    caller: &Caller,
    query: ListEvents,
    surface: Surface,
) -> Result<(Vec<Value>, i64), ApiError> {
    let page = PageRequest::parse(
        int_param("limit", query.limit.as_deref())?,
        query.starting_after,
        query.ending_before,
        LIMITS,
        "",
    )?;
    let function_version_nums = array_param("functionVersionNums", &query.function_version_nums)?
        .iter()
        .map(|n| int_param("functionVersionNums", Some(n)).map(Option::unwrap_or_default))
        .collect::<Result<Vec<i64>, ApiError>>()?;
    let filter = EventFilter {
        event_ids: array_param("eventIDs", &query.event_ids)?,
        call_ids: array_param("callIDs", &query.call_ids)?,
        event_types: array_param("eventTypes", &query.event_types)?,
        workflow_ids: array_param("workflowIDs", &query.workflow_ids)?,
        workflow_names: array_param("workflowNames", &query.workflow_names)?,
        function_ids: array_param("functionIDs", &query.function_ids)?,
        function_names: array_param("functionNames", &query.function_names)?,
        function_version_nums,
        reference_ids: array_param("referenceIDs", &query.reference_ids)?,
        reference_id_substring: query.reference_id_substring.filter(|s| !s.is_empty()),
        is_labelled: bool_param("isLabelled", query.is_labelled.as_deref())?,
        is_regression: bool_param("isRegression", query.is_regression.as_deref())?,
        errors: match surface {
            Surface::Outputs => Some(false),
            Surface::Errors => Some(true),
            Surface::Events => None,
        },
        include_intermediate: bool_param("includeIntermediate", query.include_intermediate.as_deref())?
            .unwrap_or(false),
    };
    let ascending = Order::parse(query.sort_order.as_deref())? == Order::Asc;
    Ok(state.calls.events(&caller.tenant, &filter, &page, ascending).await?)
}

/// Terminal non-error output events: `{outputs, totalCount}`.
#[utoipa::path(get, path = "/v3/outputs", tag = "events", params(ListEvents),
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list_outputs(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListEvents>,
) -> Result<Json<Value>, ApiError> {
    let (outputs, total) = list(&state, &caller, query, Surface::Outputs).await?;
    Ok(Json(json!({ "outputs": outputs, "totalCount": total })))
}

/// One output event.
#[utoipa::path(get, path = "/v3/outputs/{eventID}", tag = "events", params(("eventID" = String, Path)),
    responses((status = 200, body = Object), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get_output(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!({ "output": state.calls.event(&caller.tenant, &id, Some(false)).await? })))
}

/// Error events only: `{errors, totalCount}`.
#[utoipa::path(get, path = "/v3/errors", tag = "events", params(ListEvents),
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list_errors(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListEvents>,
) -> Result<Json<Value>, ApiError> {
    let (errors, total) = list(&state, &caller, query, Surface::Errors).await?;
    Ok(Json(json!({ "errors": errors, "totalCount": total })))
}

/// One error event.
#[utoipa::path(get, path = "/v3/errors/{eventID}", tag = "events", params(("eventID" = String, Path)),
    responses((status = 200, body = Object), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get_error(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!({ "error": state.calls.event(&caller.tenant, &id, Some(true)).await? })))
}

/// Legacy surface: every terminal event, `{events, totalCount}`.
#[utoipa::path(get, path = "/v1-alpha/events", tag = "events", params(ListEvents),
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list_legacy(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListEvents>,
) -> Result<Json<Value>, ApiError> {
    let (events, total) = list(&state, &caller, query, Surface::Events).await?;
    Ok(Json(json!({ "events": events, "totalCount": total })))
}

/// Legacy surface: one event, the event itself.
#[utoipa::path(get, path = "/v1-alpha/events/{eventID}", tag = "events", params(("eventID" = String, Path)),
    responses((status = 200, body = Object), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get_legacy(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(state.calls.event(&caller.tenant, &id, None).await?))
}
