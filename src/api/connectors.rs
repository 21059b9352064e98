//! REST transport of connectors (see [`crate::connectors`]).

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::state::AppState;
use crate::connectors::{Connector, ConnectorInput};
use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListConnectors {
    /// Only the connectors of this workflow ID.
    #[serde(rename = "workflowID")]
    pub workflow_id: Option<String>,
    /// Only the connectors of this workflow name.
    #[serde(rename = "workflowName")]
    pub workflow_name: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct ConnectorList {
    pub connectors: Vec<Connector>,
}

/// Create a connector. `box` watches `boxFolderID` and submits each new file as a call of
/// the workflow (once); `paragon` is refused with 422 (canon does not run Paragon).
#[utoipa::path(post, path = "/v3/connectors", tag = "connectors", request_body = ConnectorInput,
    responses((status = 200, body = Connector), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, description = "no such workflow", body = ErrorBody),
        (status = 422, description = "paragon, or past 100 connectors an environment", body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(input): ApiJson<ConnectorInput>,
) -> Result<Json<Connector>, ApiError> {
    Ok(Json(state.connectors.create(&caller.tenant, input).await?))
}

/// The environment's connectors (`{connectors: [...]}`, not paged).
#[utoipa::path(get, path = "/v3/connectors", tag = "connectors", params(ListConnectors),
    responses((status = 200, body = ConnectorList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 429, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListConnectors>,
) -> Result<Json<ConnectorList>, ApiError> {
    let connectors = state
        .connectors
        .list(&caller.tenant, query.workflow_id.as_deref(), query.workflow_name.as_deref())
        .await?;
    Ok(Json(ConnectorList { connectors }))
}

/// Delete a connector: its folder is no longer watched. Answers a plain-text confirmation
/// (bem-sdk reads it as text).
#[utoipa::path(delete, path = "/v3/connectors/{connectorID}", tag = "connectors", params(("connectorID" = String, Path)),
    responses((status = 200, description = "deleted", body = String, content_type = "text/plain"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<String, ApiError> {
    state.connectors.delete(&caller.tenant, &id).await?;
    Ok(format!("connector {id} deleted"))
}
