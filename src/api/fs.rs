//! REST transport of `POST /v3/fs` (see [`crate::fs`]).

use super::extract::ApiJson;
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::state::AppState;
use crate::fs::request::{self, FsRequest};
use crate::fs::FsResponse;
use axum::extract::State;
use axum::Json;
use serde_json::Value;

/// Navigate parsed documents (`ls`, `cat`, `grep`, `head`, `stat`) and the entity memory
/// (`find`, `open`, `xref`) with shell verbs. The envelope is the same for every op; a
/// field of another op is a 400 naming it.
#[utoipa::path(post, path = "/v3/fs", tag = "fs", request_body = FsRequest,
    responses((status = 200, body = FsResponse), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn navigate(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<FsResponse>, ApiError> {
    let request = request::parse(body)?;
    Ok(Json(state.fs.run(&caller.tenant, request).await?))
}
