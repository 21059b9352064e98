//! REST transport for merge suggestions.

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{bool_param, limit_param};
use crate::access::state::AppState;
use crate::graph::bulk::BulkOutcome;
use crate::graph::merges::MergeResult;
use crate::graph::suggestions::{RefreshResult, Suggestion, SuggestionOrder, SuggestionPage};
use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

#[derive(Deserialize, ToSchema, Default)]
pub struct RefreshRequest {
    /// Only this bucket (`bkt_…`); every bucket when omitted.
    pub bucket: Option<String>,
}

/// Run duplicate detection now: pairs above the auto-merge threshold are merged (short names
/// and acronyms excepted), pairs between the thresholds become suggestions.
#[utoipa::path(post, path = "/v3/merge-suggestions/refresh", tag = "entities", request_body = RefreshRequest,
    responses((status = 200, body = RefreshResult), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 409, description = "a refresh of this account is already running", body = ErrorBody)))]
pub async fn refresh(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<RefreshRequest>,
) -> Result<Json<RefreshResult>, ApiError> {
    Ok(Json(state.suggestions.refresh(&auth.tenant, body.bucket.as_deref(), &auth.actor()).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListSuggestions {
    pub bucket: Option<String>,
    /// A suggestionID: the page after it.
    pub starting_after: Option<String>,
    /// `score` (likeliest first, the default), `uncertain` (score closest to 0.5 first) or
    /// `recent` (newest first).
    pub order: Option<String>,
    /// 1..200, default 50.
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
}

/// Open merge suggestions, most likely duplicates first (or as `order` says), with the
/// suggest and auto-merge thresholds they sit between.
#[utoipa::path(get, path = "/v3/merge-suggestions", tag = "entities", params(ListSuggestions),
    responses((status = 200, body = SuggestionPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<ListSuggestions>,
) -> Result<Json<SuggestionPage>, ApiError> {
    let limit = limit_param(query.limit.as_deref(), 50, 200)? as usize;
    let order = query.order.as_deref().map(SuggestionOrder::parse).transpose()?.unwrap_or_default();
    let page = state
        .suggestions
        .list(&auth.tenant, query.bucket.as_deref(), query.starting_after.as_deref(), order, limit)
        .await?;
    Ok(Json(page))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AcceptQuery {
    /// The entity that lives on (`ent_…`, one of the pair); the first when omitted.
    pub survivor: Option<String>,
    /// `true`: decided blind, with the scores and explanation hidden (recorded with the
    /// decision and on both entities' timelines).
    #[param(value_type = Option<bool>)]
    pub blind: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DismissQuery {
    /// `true`: decided blind, with the scores and explanation hidden (recorded with the
    /// decision and on both entities' timelines).
    #[param(value_type = Option<bool>)]
    pub blind: Option<String>,
}

/// Accept a suggestion: the second entity is merged into the first (or into `survivor`).
#[utoipa::path(post, path = "/v3/merge-suggestions/{suggestionID}/accept", tag = "entities",
    params(("suggestionID" = String, Path), AcceptQuery),
    responses((status = 200, body = MergeResult), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn accept(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<AcceptQuery>,
) -> Result<Json<MergeResult>, ApiError> {
    let survivor = query.survivor.as_deref();
    let blind = bool_param("blind", query.blind.as_deref())?.unwrap_or(false);
    Ok(Json(state.suggestions.accept(&auth.tenant, &id, survivor, blind, &auth.actor()).await?))
}

/// Undo a decision on a suggestion: an accepted one is unmerged, and either is open again.
#[utoipa::path(post, path = "/v3/merge-suggestions/{suggestionID}/reopen", tag = "entities", params(("suggestionID" = String, Path)),
    responses((status = 200, description = "the suggestion, open", body = Suggestion), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, description = "open already, or its merge undone or built upon", body = ErrorBody)))]
pub async fn reopen(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
) -> Result<Json<Suggestion>, ApiError> {
    Ok(Json(state.suggestions.reopen(&auth.tenant, &id, &auth.actor()).await?))
}

/// Dismiss a suggestion: the pair is not a duplicate and is not suggested again.
#[utoipa::path(post, path = "/v3/merge-suggestions/{suggestionID}/dismiss", tag = "entities", params(("suggestionID" = String, Path), DismissQuery),
    responses((status = 200, body = Suggestion), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn dismiss(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<DismissQuery>,
) -> Result<Json<Suggestion>, ApiError> {
    let blind = bool_param("blind", query.blind.as_deref())?.unwrap_or(false);
    Ok(Json(state.suggestions.dismiss(&auth.tenant, &id, blind, &auth.actor()).await?))
}

#[derive(Deserialize, ToSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct BulkDismiss {
    /// Only this bucket's open suggestions (`bkt_…`); every bucket's when omitted.
    pub bucket: Option<String>,
    /// Count only: how many would be dismissed, and the `selection` naming them.
    #[serde(default)]
    pub dry_run: bool,
    /// The dry run's `selection`: required to dismiss; 409 when the open suggestions changed
    /// since it was counted.
    pub selection: Option<String>,
    /// Decided blind (recorded with each decision).
    #[serde(default)]
    pub blind: bool,
}

/// Dismiss every open merge suggestion the filter matches (those `GET /v3/merge-suggestions`
/// lists), at most 10,000 (more: 422 naming the limit): count first with `dryRun`, then send
/// its `selection` back; exactly the counted suggestions are dismissed.
#[utoipa::path(post, path = "/v3/merge-suggestions/bulk-dismiss", tag = "entities", request_body = BulkDismiss,
    responses((status = 200, body = BulkOutcome), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 409, description = "the matching suggestions changed since they were counted", body = ErrorBody),
        (status = 422, description = "more than 10,000 match", body = ErrorBody)))]
pub async fn bulk_dismiss(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<BulkDismiss>,
) -> Result<Json<BulkOutcome>, ApiError> {
    let outcome = state
        .suggestions
        .dismiss_matching(
            &auth.tenant,
            body.bucket.as_deref(),
            body.dry_run,
            body.selection.as_deref(),
            body.blind,
            &auth.actor(),
        )
        .await?;
    Ok(Json(outcome))
}
