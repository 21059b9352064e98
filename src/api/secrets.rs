//! REST transport for tenant secrets (`/v3/secrets`): values go in, never come out.
//!
//! canon's own surface (the spec has no secret store): `POST` creates (201, 409 when the
//! name exists), `GET` lists names and times, `PUT /{name}` rotates the value, `DELETE
//! /{name}` removes it (204). Functions name secrets in `apiKeySecret`,
//! `s3AccessKeyIdSecret` and `s3SecretAccessKeySecret`.

use super::extract::ApiJson;
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::state::AppState;
use crate::secrets::SecretInfo;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Deserialize, ToSchema)]
pub struct CreateSecret {
    /// 1..128 letters, digits, `_`, `-` or `.`, starting with a letter or digit.
    #[schema(min_length = 1, max_length = 128, pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    pub name: String,
    /// The secret itself (at most 16 KiB); never shown again.
    #[schema(min_length = 1, max_length = 16384)]
    pub value: String,
}

#[derive(Deserialize, ToSchema)]
pub struct RotateSecret {
    /// The new value (at most 16 KiB); never shown again.
    #[schema(min_length = 1, max_length = 16384)]
    pub value: String,
}

#[derive(Serialize, ToSchema)]
pub struct SecretList {
    /// By name.
    pub secrets: Vec<SecretInfo>,
}

/// Store a secret of this environment.
#[utoipa::path(post, path = "/v3/secrets", tag = "secrets", request_body = CreateSecret,
    responses((status = 201, body = SecretInfo), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 409, description = "name taken: rotate it instead", body = ErrorBody),
        (status = 422, description = "past 1,000 secrets an environment", body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    auth: Caller,
    ApiJson(body): ApiJson<CreateSecret>,
) -> Result<(StatusCode, Json<SecretInfo>), ApiError> {
    let created = state.secrets.create(&auth.tenant, &body.name, &body.value).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// The environment's secrets: names and times, never values.
#[utoipa::path(get, path = "/v3/secrets", tag = "secrets",
    responses((status = 200, body = SecretList), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list(State(state): State<AppState>, auth: Caller) -> Result<Json<SecretList>, ApiError> {
    Ok(Json(SecretList { secrets: state.secrets.list(&auth.tenant).await? }))
}

/// Replace a secret's value (functions naming it use the new one from their next run).
#[utoipa::path(put, path = "/v3/secrets/{name}", tag = "secrets", request_body = RotateSecret,
    params(("name" = String, Path)),
    responses((status = 200, body = SecretInfo), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn rotate(
    State(state): State<AppState>,
    auth: Caller,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<RotateSecret>,
) -> Result<Json<SecretInfo>, ApiError> {
    Ok(Json(state.secrets.rotate(&auth.tenant, &name, &body.value).await?))
}

/// Delete a secret.
#[utoipa::path(delete, path = "/v3/secrets/{name}", tag = "secrets", params(("name" = String, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    auth: Caller,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.secrets.delete(&auth.tenant, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}
