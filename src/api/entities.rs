//! REST transport for entities: bulk seed, curation, synonyms, merges.

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::limit_param;
use crate::access::state::AppState;
use crate::graph::entities::{Entity, EntityChanges, EntityUpdate, Synonym, ValidateResult};
use crate::graph::merge_history::{MergeHistory, MAX_MERGES_PAGE, MERGES_PAGE};
use crate::graph::merges::MergeResult;
use crate::graph::seed::SeedRow;
use crate::graph::seeding::{SeedAccepted, SeedResults, SeedStatus, Submitted};
use crate::graph::timeline::{TimelinePage, MAX_TIMELINE_PAGE, TIMELINE_PAGE};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkSeed {
    /// Rows to seed (1..10,000); an invalid row is rejected with its reason, the others apply.
    #[schema(value_type = Vec<SeedRow>)]
    pub entities: Vec<Value>,
    /// Only `merge` (the default).
    pub on_conflict: Option<String>,
    /// Bucket to seed into (`bkt_…`); the default bucket when omitted.
    pub bucket: Option<String>,
}

/// Seed entities. Fewer than 100 rows: 200 with per-row results. 100 or more: 202 with a
/// seed job whose progress `statusURL` reports; 422 when the account has its most seed jobs
/// waiting (100, `queuedSeedJobsPerAccount`).
#[utoipa::path(post, path = "/v3/entities/bulk", tag = "entities", request_body = BulkSeed,
    responses((status = 200, body = SeedResults), (status = 202, body = SeedAccepted), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, description = "unknown bucket", body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn bulk(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<BulkSeed>,
) -> Result<Response, ApiError> {
    let submitted = state
        .seeding
        .submit(&auth.tenant, body.bucket.as_deref(), body.on_conflict.as_deref(), body.entities)
        .await?;
    Ok(match submitted {
        Submitted::Done(results) => Json(results).into_response(),
        Submitted::Queued(accepted) => (StatusCode::ACCEPTED, Json(accepted)).into_response(),
    })
}

/// Progress of a seed job; per-row results once completed.
#[utoipa::path(get, path = "/v3/entities/seed/{id}", tag = "entities", params(("id" = String, Path)),
    responses((status = 200, body = SeedStatus), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn seed_status(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
) -> Result<Json<SeedStatus>, ApiError> {
    Ok(Json(state.seeding.status(&auth.tenant, &id).await?))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BucketScope {
    /// Only find the entity in this bucket (`bkt_…`); any bucket when omitted.
    pub bucket: Option<String>,
}

/// One entity; a merged-away ID returns its survivor.
#[utoipa::path(get, path = "/v3/entities/{id}", tag = "entities", params(("id" = String, Path), BucketScope),
    responses((status = 200, body = Entity), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiQuery(scope): ApiQuery<BucketScope>,
) -> Result<Json<Entity>, ApiError> {
    Ok(Json(state.graph.get_entity(&auth.tenant, &id, scope.bucket.as_deref()).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateEntity {
    /// `approved` or `rejected`, from `extracted` or `proposed` only (else 409).
    pub status: Option<String>,
    /// Type to assign (`ety_…`); the empty string clears the assignment.
    #[serde(rename = "assignedTypeID")]
    pub assigned_type_id: Option<String>,
    /// New canonical name (it also becomes a surface form).
    pub canonical: Option<String>,
    /// Surface forms to attach as `customer_defined` synonyms (at most 1,000 at once).
    #[serde(default)]
    pub add_synonyms: Vec<String>,
    /// `esn_…` synonyms to remove (`extracted` ones cannot be: 409; at most 1,000 at once).
    #[serde(default, rename = "removeSynonymIDs")]
    pub remove_synonym_ids: Vec<String>,
    /// BCP 47 tag stamped on added synonyms.
    pub locale: Option<String>,
    /// Only find the entity in this bucket.
    pub bucket: Option<String>,
}

/// Curate an entity: status, assigned type, canonical name, synonyms.
#[utoipa::path(patch, path = "/v3/entities/{id}", tag = "entities", params(("id" = String, Path)), request_body = UpdateEntity,
    responses((status = 200, description = "the entity; `synonymsNotAdded` lists asked-for synonyms that were not added and why", body = EntityUpdate), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, description = "illegal transition or a name owned by another entity", body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<UpdateEntity>,
) -> Result<Json<EntityUpdate>, ApiError> {
    let changes = EntityChanges {
        status: body.status,
        assigned_type_id: body.assigned_type_id,
        canonical: body.canonical,
        add_synonyms: body.add_synonyms,
        remove_synonym_ids: body.remove_synonym_ids,
        locale: body.locale,
    };
    Ok(Json(
        state.graph.update_entity(&auth.tenant, &id, body.bucket.as_deref(), changes, &auth.actor()).await?,
    ))
}

#[derive(Deserialize, ToSchema)]
pub struct ReopenEntity {
    /// `extracted` or `proposed`: the status the entity had before it was approved or rejected.
    pub status: String,
}

/// Undo an approval or rejection: the entity is back in the review queue with `status`.
#[utoipa::path(post, path = "/v3/entities/{id}/reopen", tag = "entities", params(("id" = String, Path)), request_body = ReopenEntity,
    responses((status = 200, body = Entity), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, description = "the entity is not approved or rejected", body = ErrorBody)))]
pub async fn reopen(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ReopenEntity>,
) -> Result<Json<Entity>, ApiError> {
    Ok(Json(state.graph.reopen_entity(&auth.tenant, &id, &body.status, &auth.actor()).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkValidate {
    #[serde(rename = "entityIDs")]
    pub entity_ids: Vec<String>,
    /// `approved` or `rejected`.
    pub status: String,
    pub bucket: Option<String>,
}

/// Approve or reject many entities; each row reports `validated`, `skipped` or `rejected-row`.
#[utoipa::path(post, path = "/v3/entities/bulk-validate", tag = "entities", request_body = BulkValidate,
    responses((status = 200, body = ValidateResult), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn bulk_validate(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<BulkValidate>,
) -> Result<Json<ValidateResult>, ApiError> {
    let result = state
        .graph
        .bulk_validate(&auth.tenant, &body.entity_ids, &body.status, body.bucket.as_deref(), &auth.actor())
        .await?;
    Ok(Json(result))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddSynonym {
    pub text: String,
    /// `customer_defined` (default), `sme_approved` or `extracted`.
    pub source: Option<String>,
    pub locale: Option<String>,
    pub bucket: Option<String>,
}

/// Attach a synonym; re-adding one the entity has returns it unchanged. A form of a canonical
/// name of the entity is no synonym: 409.
#[utoipa::path(post, path = "/v3/entities/{id}/synonyms", tag = "entities", params(("id" = String, Path)), request_body = AddSynonym,
    responses((status = 200, body = Synonym), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "the name belongs to another entity, or is a form of this entity's canonical name", body = ErrorBody)))]
pub async fn add_synonym(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<AddSynonym>,
) -> Result<Json<Synonym>, ApiError> {
    let (entity_id, _) = state.graph.resolve_entity(&auth.tenant, &id, body.bucket.as_deref()).await?;
    let source = body.source.as_deref().unwrap_or("customer_defined");
    Ok(Json(
        state
            .graph
            .add_synonym(&auth.tenant, &entity_id, &body.text, source, body.locale.as_deref(), &auth.actor())
            .await?,
    ))
}

#[derive(Serialize, ToSchema)]
pub struct SynonymList {
    /// Oldest first; at most the first 500 by creation.
    pub synonyms: Vec<Synonym>,
}

/// The entity's synonyms with their IDs and sources (`extracted`, `customer_defined`,
/// `sme_approved`), oldest first: the first 500 by creation at most. Canonical names are not
/// synonyms and are not listed. A merged-away ID lists the survivor's.
#[utoipa::path(get, path = "/v3/entities/{id}/synonyms", tag = "entities", params(("id" = String, Path)),
    responses((status = 200, body = SynonymList), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_synonyms(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
) -> Result<Json<SynonymList>, ApiError> {
    Ok(Json(SynonymList { synonyms: state.graph.list_synonyms(&auth.tenant, &id).await? }))
}

/// Remove a `customer_defined` or `sme_approved` synonym (`extracted` ones: 409).
#[utoipa::path(delete, path = "/v3/entities/{id}/synonyms/{synonymID}", tag = "entities",
    params(("id" = String, Path), ("synonymID" = String, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn remove_synonym(
    State(state): State<AppState>,
    auth: Caller,
    Path((id, synonym_id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    state.graph.remove_synonym(&auth.tenant, &id, &synonym_id, &auth.actor()).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MergeRequest {
    /// Entities to merge into the one in the path (1..100, same bucket).
    #[serde(rename = "entityIDs")]
    pub entity_ids: Vec<String>,
}

/// Merge entities into this one: their surface forms, mentions and relations move to it,
/// and their IDs resolve to it from then on. Every merge is recorded and can be undone.
#[utoipa::path(post, path = "/v3/entities/{id}/merge", tag = "entities", params(("id" = String, Path)), request_body = MergeRequest,
    responses((status = 200, body = MergeResult), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn merge(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<MergeRequest>,
) -> Result<Json<MergeResult>, ApiError> {
    Ok(Json(state.suggestions.merge(&auth.tenant, &id, &body.entity_ids, &auth.actor()).await?))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MergesQuery {
    /// A previous page's `nextCursor`: the page of older merges after it.
    pub cursor: Option<String>,
    /// 1..200, default 100.
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
}

/// The merges an entity took part in, newest first, a page at a time (`nextCursor` while
/// older ones remain).
#[utoipa::path(get, path = "/v3/entities/{id}/merges", tag = "entities", params(("id" = String, Path), MergesQuery),
    responses((status = 200, body = MergeHistory), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn merges(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<MergesQuery>,
) -> Result<Json<MergeHistory>, ApiError> {
    let limit = limit_param(query.limit.as_deref(), MERGES_PAGE, MAX_MERGES_PAGE)? as usize;
    state.graph.resolve_entity(&auth.tenant, &id, None).await?;
    Ok(Json(state.graph.merge_history(&auth.tenant, &id, query.cursor.as_deref(), limit).await?))
}

/// Undo a merge: the merged-away entity comes back with its own surface forms, mentions and
/// relations. 409 when already undone, or when the survivor was merged away since.
#[utoipa::path(post, path = "/v3/merges/{mergeID}/undo", tag = "entities", params(("mergeID" = String, Path)),
    responses((status = 200, description = "the restored entity", body = Entity), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn unmerge(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
) -> Result<Json<Entity>, ApiError> {
    Ok(Json(state.suggestions.unmerge(&auth.tenant, &id, &auth.actor()).await?))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TimelineQuery {
    /// A previous page's `nextCursor`: the page of older items after it.
    pub cursor: Option<String>,
    /// 1..200, default 50.
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
}

/// The entity's audit timeline, newest first: status changes, merges and unmerges, synonym
/// and name edits, type changes and merge-suggestion decisions, each with who (`actor`: a
/// reviewer's user ID or an API key's ID) and when. A merged-away ID lists its own history.
#[utoipa::path(get, path = "/v3/entities/{id}/timeline", tag = "entities", params(("id" = String, Path), TimelineQuery),
    responses((status = 200, body = TimelinePage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn timeline(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<TimelineQuery>,
) -> Result<Json<TimelinePage>, ApiError> {
    let limit = limit_param(query.limit.as_deref(), TIMELINE_PAGE, MAX_TIMELINE_PAGE)? as usize;
    Ok(Json(state.graph.timeline(&auth.tenant, &id, query.cursor.as_deref(), limit).await?))
}
