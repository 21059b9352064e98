//! REST transport for reading and feeding the graph: review queue, mentions, relations and
//! the knowledge-graph view.

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{int_param, limit_param, list_param, time_param};
use crate::access::state::AppState;
use crate::graph::bulk::BulkOutcome;
use crate::graph::entities::Mention;
use crate::graph::relations::{
    Direction, EntityRelations, GraphQuery, KnowledgeGraph, NewMention, Relation, RelationsQuery,
    MAX_RELATIONS_PAGE, RELATIONS_PAGE,
};
use crate::graph::review::{ReviewCounts, ReviewFilter, ReviewPage};
use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ReviewQuery {
    /// Repeatable (or comma-separated); default `extracted` and `proposed`.
    #[serde(default)]
    pub status: Vec<String>,
    /// Repeatable `ety_…`: the effective type (assigned, else inferred by name).
    #[serde(default, rename = "type")]
    pub types: Vec<String>,
    /// `me` or `usr_…`: entities whose effective type that user reviews (dashboard token).
    pub assigned_to: Option<String>,
    /// Created at or after (RFC 3339).
    pub since: Option<String>,
    /// A previous page's `nextCursor` (an entity ID, or where a short page's read stopped): the
    /// page after it.
    pub cursor: Option<String>,
    pub bucket: Option<String>,
    /// 1..200, default 50.
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
}

/// Entities awaiting curation, ordered by entityID; filters AND together.
#[utoipa::path(get, path = "/v3/review-queue", tag = "review", params(ReviewQuery),
    responses((status = 200, body = ReviewPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn review_queue(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<ReviewQuery>,
) -> Result<Json<ReviewPage>, ApiError> {
    let limit = limit_param(query.limit.as_deref(), 50, 200)?;
    let fields = QueueFilter {
        status: query.status,
        types: query.types,
        assigned_to: query.assigned_to,
        since: query.since,
        bucket: query.bucket,
    };
    let filter =
        ReviewFilter { cursor: query.cursor, limit, ..queue_filter(&state, &auth, fields, "since").await? };
    Ok(Json(state.graph.review_queue(&auth.tenant, filter).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct CountsQuery {
    /// Repeatable `ety_…`: the effective type (assigned, else inferred by name).
    #[serde(default, rename = "type")]
    pub types: Vec<String>,
    /// `me` or `usr_…`: entities whose effective type that user reviews (dashboard token).
    pub assigned_to: Option<String>,
    /// Created at or after (RFC 3339).
    pub since: Option<String>,
    pub bucket: Option<String>,
}

/// The review queue's counters under its filters (status aside): `left` (extracted plus
/// proposed), `doneToday` (approved or rejected since midnight UTC) and `byStatus`.
#[utoipa::path(get, path = "/v3/review-queue/counts", tag = "review", params(CountsQuery),
    responses((status = 200, body = ReviewCounts), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn review_counts(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<CountsQuery>,
) -> Result<Json<ReviewCounts>, ApiError> {
    let fields = QueueFilter {
        types: query.types,
        assigned_to: query.assigned_to,
        since: query.since,
        bucket: query.bucket,
        ..QueueFilter::default()
    };
    let filter = queue_filter(&state, &auth, fields, "since").await?;
    Ok(Json(state.graph.review_counts(&auth.tenant, &filter).await?))
}

/// The review queue's filters, as a body.
#[derive(Deserialize, ToSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct QueueFilter {
    /// Statuses; default (and at most) `extracted` and `proposed`: others cannot change.
    #[serde(default)]
    pub status: Vec<String>,
    /// `ety_…`: the effective type (assigned, else inferred by name).
    #[serde(default, rename = "type")]
    pub types: Vec<String>,
    /// `me` or `usr_…`: entities whose effective type that user reviews.
    pub assigned_to: Option<String>,
    /// Created at or after (RFC 3339).
    pub since: Option<String>,
    pub bucket: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkValidateMatching {
    /// `approved` or `rejected`.
    pub status: String,
    /// The queue filter whose entities change, as on `GET /v3/review-queue`.
    #[serde(default)]
    pub filter: QueueFilter,
    /// Count only: how many would change, and the `selection` naming them.
    #[serde(default)]
    pub dry_run: bool,
    /// The dry run's `selection`: required to apply; 409 when the filter matches another set
    /// of entities than was counted.
    pub selection: Option<String>,
}

/// Approve or reject every entity the queue filter matches ("all matching this filter"), at
/// most 10,000 (more: 422 naming the limit). Count first with `dryRun: true`, show the count,
/// then send its `selection` back: exactly the counted entities change.
#[utoipa::path(post, path = "/v3/review-queue/bulk-validate", tag = "review", request_body = BulkValidateMatching,
    responses((status = 200, body = BulkOutcome), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 409, description = "the filter matches other entities than were counted", body = ErrorBody),
        (status = 422, description = "more than 10,000 match", body = ErrorBody)))]
pub async fn bulk_validate_matching(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<BulkValidateMatching>,
) -> Result<Json<BulkOutcome>, ApiError> {
    let queue = queue_filter(&state, &auth, body.filter, "filter.since").await?;
    let outcome = state
        .graph
        .validate_matching(
            &auth.tenant,
            queue,
            &body.status,
            body.dry_run,
            body.selection.as_deref(),
            &auth.actor(),
        )
        .await?;
    Ok(Json(outcome))
}

/// The `type` and `assignedTo` filters as the effective type IDs to match (None: any).
/// The service's queue filter from a request's filter fields (a query or a body alike);
/// `since_name` names the field in an error.
async fn queue_filter(
    state: &AppState,
    auth: &Caller,
    filter: QueueFilter,
    since_name: &str,
) -> Result<ReviewFilter, ApiError> {
    let me = auth.user.as_ref().map(|u| u.user_id.as_str());
    let type_ids = state
        .reviewers
        .queue_types(&auth.tenant, me, list_param(&filter.types), filter.assigned_to.as_deref())
        .await?;
    Ok(ReviewFilter {
        statuses: list_param(&filter.status),
        type_ids,
        since: time_param(since_name, filter.since.as_deref())?,
        bucket: filter.bucket,
        ..ReviewFilter::default()
    })
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RelationsParams {
    /// `inbound`, `outbound` or `both` (default).
    pub direction: Option<String>,
    /// Exact relation type.
    pub relation_type: Option<String>,
    /// A relationID: the page after it.
    pub cursor: Option<String>,
    pub bucket: Option<String>,
    /// 1..200, default 50.
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
}

/// An entity's edges, split by direction, paged by relation ID (a merged-away ID reads its
/// survivor's edges).
#[utoipa::path(get, path = "/v3/entities/{id}/relations", tag = "graph", params(("id" = String, Path), RelationsParams),
    responses((status = 200, body = EntityRelations), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn entity_relations(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<RelationsParams>,
) -> Result<Json<EntityRelations>, ApiError> {
    let direction = query.direction.as_deref().map(Direction::parse).transpose()?.unwrap_or(Direction::Both);
    let relations = RelationsQuery {
        direction,
        relation_type: query.relation_type,
        cursor: query.cursor,
        bucket: query.bucket,
        limit: limit_param(query.limit.as_deref(), RELATIONS_PAGE, MAX_RELATIONS_PAGE)?,
    };
    Ok(Json(state.graph.entity_relations(&auth.tenant, &id, relations).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct GraphParams {
    /// Effective types (`ety_…`), repeatable or comma-separated; both endpoints must match.
    #[serde(default, rename = "type")]
    pub types: Vec<String>,
    /// The same, bracket style.
    #[serde(default, rename = "type[]")]
    pub types_brackets: Vec<String>,
    /// Edges created at or after (RFC 3339).
    pub since: Option<String>,
    /// Case-insensitive substring of a canonical name or surface form; both endpoints must
    /// match. At most 10,000 entities may match: past that the read is refused (400 naming
    /// `search`), never cut short; search for more of the name, or add a bucket or types.
    pub search: Option<String>,
    /// Centre entity: only the subgraph within `maxDepth` hops.
    #[serde(rename = "nodeID")]
    pub node_id: Option<String>,
    #[serde(rename = "rootNodeID")]
    pub root_node_id: Option<String>,
    #[serde(rename = "focusNodeID")]
    pub focus_node_id: Option<String>,
    /// Hops from the centre, 0..5 (default 2). The entities within these hops, the centre
    /// included, may number at most 10,000: past that the read is refused (400 naming
    /// `maxDepth`), never cut short; ask for fewer hops or page the whole graph.
    #[param(value_type = Option<i32>)]
    pub max_depth: Option<String>,
    #[param(value_type = Option<i32>)]
    pub depth: Option<String>,
    pub bucket: Option<String>,
    /// A previous page's `nextCursor` (a relationID, or where a short page's read stopped):
    /// the page after it.
    pub cursor: Option<String>,
    /// Edges per page, 1..200 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
}

/// A page of the knowledge graph: edges in relation-ID order and their endpoint nodes.
#[utoipa::path(get, path = "/v3/knowledge-graph", tag = "graph", params(GraphParams),
    responses((status = 200, body = KnowledgeGraph), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn knowledge_graph(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<GraphParams>,
) -> Result<Json<KnowledgeGraph>, ApiError> {
    let mut types = list_param(&query.types);
    types.extend(list_param(&query.types_brackets));
    let depth_raw = query.max_depth.as_deref().or(query.depth.as_deref());
    let depth = int_param("maxDepth", depth_raw)?.unwrap_or(2);
    let graph = GraphQuery {
        type_ids: (!types.is_empty()).then_some(types),
        since: time_param("since", query.since.as_deref())?,
        search: query.search,
        center: query.node_id.or(query.root_node_id).or(query.focus_node_id),
        depth,
        bucket: query.bucket,
        cursor: query.cursor,
        limit: limit_param(query.limit.as_deref(), 50, 200)?,
    };
    Ok(Json(state.graph.knowledge_graph(&auth.tenant, graph).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateRelation {
    #[serde(rename = "sourceEntityID")]
    pub source_entity_id: String,
    #[serde(rename = "targetEntityID")]
    pub target_entity_id: String,
    /// Free-form label, e.g. `supplies`.
    pub relation_type: String,
}

/// Record a relation between two entities of one bucket; observing an existing relation
/// again counts one more mention of it.
#[utoipa::path(post, path = "/v3/relations", tag = "graph", request_body = CreateRelation,
    responses((status = 200, body = Relation), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 422, description = "endpoints in different buckets, or the account holds the most relations it may", body = ErrorBody)))]
pub async fn create_relation(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<CreateRelation>,
) -> Result<Json<Relation>, ApiError> {
    let relation = state
        .graph
        .create_relation(&auth.tenant, &body.source_entity_id, &body.target_entity_id, &body.relation_type)
        .await?;
    Ok(Json(relation))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateMention {
    #[serde(rename = "entityID")]
    pub entity_id: String,
    /// The text as it appears in the document; it becomes an `extracted` surface form.
    pub surface: String,
    #[serde(rename = "referenceID")]
    pub reference_id: Option<String>,
    #[serde(rename = "transformationID")]
    pub transformation_id: Option<String>,
    pub page: Option<i64>,
    pub section_label: Option<String>,
}

/// Record a mention of an entity in a document.
#[utoipa::path(post, path = "/v3/mentions", tag = "graph", request_body = CreateMention,
    responses((status = 200, body = Mention), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, description = "the account holds the most mentions it may", body = ErrorBody)))]
pub async fn create_mention(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<CreateMention>,
) -> Result<Json<Mention>, ApiError> {
    let new = NewMention {
        entity_id: body.entity_id,
        reference_id: body.reference_id,
        transformation_id: body.transformation_id,
        page: body.page,
        section_label: body.section_label,
        surface: body.surface,
    };
    Ok(Json(state.graph.create_mention(&auth.tenant, new).await?))
}
