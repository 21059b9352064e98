//! `x-api-key` authentication: the key gives the account and environment; a missing,
//! malformed, unknown or revoked key is 401. The rate limit is per key.

use super::error::ApiError;
use crate::app::AppState;
use crate::graph::Tenant;
use crate::store::records::keys::Principal;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;

pub const API_KEY_HEADER: &str = "x-api-key";

/// An authenticated API-key caller.
pub struct ApiKey {
    pub principal: Principal,
    pub tenant: Tenant,
}

impl FromRequestParts<AppState> for ApiKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let presented = parts
            .headers
            .get(API_KEY_HEADER)
            .ok_or_else(|| {
                ApiError::unauthorized("missing x-api-key header; send your API key in it")
            })?
            .to_str()
            .map_err(|_| ApiError::unauthorized("malformed API key"))?;
        let principal = state
            .records
            .authenticate(presented.trim())
            .await
            .map_err(|err| ApiError::from(crate::error::ServiceError::from(err)))?
            .ok_or_else(|| ApiError::unauthorized("invalid or revoked API key"))?;
        state
            .limiter
            .check(&principal.key_id)
            .map_err(ApiError::rate_limited)?;
        let tenant = Tenant::from(&principal);
        state.graph.ensure_tenant(&tenant).await?;
        Ok(ApiKey { principal, tenant })
    }
}
