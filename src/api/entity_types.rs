//! REST transport for entity types.

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::int_param;
use crate::access::state::AppState;
use crate::graph::entity_types::{EntityType, EntityTypeChanges, EntityTypePage, NewEntityType};
use crate::pagination::{Limits, PageRequest};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

/// Decision (the spec does not say): default 50, at most 200, as for buckets.
const LIMITS: Limits = Limits { default: 50, max: 200 };

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateEntityType {
    /// Unique among the tenant's live types; cannot change later.
    pub name: String,
    pub description: Option<String>,
    /// Parent type (`ety_…`); must exist in the same account and environment.
    #[serde(rename = "parentTypeID")]
    pub parent_type_id: Option<String>,
    /// Per-type attribute metadata; must be an object.
    #[schema(value_type = Option<Object>)]
    pub attribute_schema: Option<Value>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateEntityType {
    pub description: Option<String>,
    /// New parent (`ety_…`), or an empty string (or null) to make the type top-level.
    #[serde(rename = "parentTypeID", default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub parent_type_id: Option<Option<String>>,
    #[schema(value_type = Option<Object>)]
    pub attribute_schema: Option<Value>,
    /// Not allowed: names are immutable (sending it is a 400).
    #[schema(value_type = Option<String>)]
    pub name: Option<Value>,
}

/// Tells "absent" (None) from "null" (Some(None)).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListEntityTypes {
    /// Page size, 1..200 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
    /// A typeID: the page after it.
    pub starting_after: Option<String>,
    /// A typeID: the page before it.
    pub ending_before: Option<String>,
    /// Only the direct children of this type.
    pub parent_type_id: Option<String>,
}

/// Create an entity type.
#[utoipa::path(post, path = "/v3/entity-types", tag = "entity types", request_body = CreateEntityType,
    responses((status = 200, body = EntityType), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, description = "unknown parent", body = ErrorBody), (status = 409, description = "name taken", body = ErrorBody),
        (status = 429, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<CreateEntityType>,
) -> Result<Json<EntityType>, ApiError> {
    let new = NewEntityType {
        name: body.name,
        description: body.description,
        parent_type_id: body.parent_type_id,
        attribute_schema: body.attribute_schema,
    };
    Ok(Json(state.graph.create_entity_type(&auth.tenant, new).await?))
}

/// Get one entity type.
#[utoipa::path(get, path = "/v3/entity-types/{typeID}", tag = "entity types", params(("typeID" = String, Path)),
    responses((status = 200, body = EntityType), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
) -> Result<Json<EntityType>, ApiError> {
    Ok(Json(state.graph.get_entity_type(&auth.tenant, &id).await?))
}

/// List live entity types in typeID order.
#[utoipa::path(get, path = "/v3/entity-types", tag = "entity types", params(ListEntityTypes),
    responses((status = 200, body = EntityTypePage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    auth: Caller,
    ApiQuery(query): ApiQuery<ListEntityTypes>,
) -> Result<Json<EntityTypePage>, ApiError> {
    let limit = int_param("limit", query.limit.as_deref())?;
    let page = PageRequest::parse(limit, query.starting_after, query.ending_before, LIMITS, "ety")?;
    let parent = query.parent_type_id.filter(|s| !s.is_empty());
    Ok(Json(state.graph.list_entity_types(&auth.tenant, &page, parent.as_deref()).await?))
}

/// Update any subset of description, parent and attribute schema (`name` is immutable).
#[utoipa::path(patch, path = "/v3/entity-types/{typeID}", tag = "entity types", params(("typeID" = String, Path)), request_body = UpdateEntityType,
    responses((status = 200, body = EntityType), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, description = "the new parent would make a cycle", body = ErrorBody),
        (status = 429, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<UpdateEntityType>,
) -> Result<Json<EntityType>, ApiError> {
    if body.name.is_some() {
        return Err(ApiError::bad_request(
            "name: entity type names are immutable; create a new type instead",
            Some(serde_json::json!({ "field": "name", "error": "immutable" })),
        ));
    }
    let changes = EntityTypeChanges {
        description: body.description,
        parent_type_id: body.parent_type_id,
        attribute_schema: body.attribute_schema,
    };
    Ok(Json(state.graph.update_entity_type(&auth.tenant, &id, changes).await?))
}

/// Soft-delete an entity type; 409 while a live child type exists.
#[utoipa::path(delete, path = "/v3/entity-types/{typeID}", tag = "entity types", params(("typeID" = String, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    auth: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.graph.delete_entity_type(&auth.tenant, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
