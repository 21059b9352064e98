//! Who is calling. Every /v3 endpoint takes an API key in `x-api-key` (the key gives the
//! account and environment) or a dashboard token in `Authorization: Bearer` (an HS256 JWT
//! naming user, role, account and environment). The reviewer endpoints are dashboard-only.
//! A missing, malformed, unknown, revoked or expired credential is 401; the rate limit is
//! per key (or per user).

use super::error::ApiError;
use crate::app::AppState;
use crate::graph::entities::Actor;
use crate::graph::Tenant;
use crate::reviewers::DashboardIdentity;
use crate::store::records::keys::Environment;
use crate::tokens;
use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

pub const API_KEY_HEADER: &str = "x-api-key";

/// An authenticated caller of the API (cloned into a request's extensions for `/mcp`).
#[derive(Clone)]
pub struct Caller {
    pub tenant: Tenant,
    pub key_id: Option<String>,
    /// The name the key was given (audit records show it).
    pub key_name: Option<String>,
    pub user: Option<DashboardIdentity>,
}

impl Caller {
    pub fn actor(&self) -> Actor {
        Actor { user_id: self.user.as_ref().map(|u| u.user_id.clone()), key_id: self.key_id.clone() }
    }
}

/// A caller with a dashboard token (the reviewer endpoints).
pub struct DashboardUser(pub DashboardIdentity);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = if let Some(key) = parts.headers.get(API_KEY_HEADER) {
            let presented = key.to_str().map_err(|_| {
                ApiError::bad_request(
                    "x-api-key: must be printable ASCII, the key exactly as canon printed it",
                    Some(serde_json::json!({ "field": API_KEY_HEADER, "error": "not printable ASCII" })),
                )
            })?;
            let principal = state
                .keys
                .authenticate(presented.trim())
                .await
                .map_err(|err| ApiError::from(crate::error::ServiceError::from(err)))?
                .ok_or_else(|| ApiError::unauthorized("invalid or revoked API key"))?;
            state.limiter.check(&principal.key_id).map_err(ApiError::rate_limited)?;
            Caller {
                tenant: Tenant::from(&principal),
                key_id: Some(principal.key_id),
                key_name: Some(principal.key_name),
                user: None,
            }
        } else if parts.headers.contains_key(AUTHORIZATION) {
            let identity = dashboard_identity(parts, state).await?;
            state.limiter.check(&identity.user_id).map_err(ApiError::rate_limited)?;
            Caller { tenant: identity.tenant.clone(), key_id: None, key_name: None, user: Some(identity) }
        } else {
            return Err(ApiError::unauthorized(
                "missing x-api-key header; send your API key in it (or a dashboard token as Authorization: Bearer)",
            ));
        };
        state.graph.ensure_tenant(&caller.tenant).await?;
        Ok(caller)
    }
}

impl FromRequestParts<AppState> for DashboardUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        if !parts.headers.contains_key(AUTHORIZATION) {
            return Err(ApiError::unauthorized(
                "this endpoint is dashboard-only: send a dashboard token as Authorization: Bearer (API keys are not accepted)",
            ));
        }
        let identity = dashboard_identity(parts, state).await?;
        state.limiter.check(&identity.user_id).map_err(ApiError::rate_limited)?;
        state.graph.ensure_tenant(&identity.tenant).await?;
        Ok(DashboardUser(identity))
    }
}

/// The token's user, as the record store knows it now: a signature alone is not enough, the
/// user must still exist in the account and environment the token names (its role is read
/// from the store, so a demoted or deleted user loses access at once).
async fn dashboard_identity(parts: &Parts, state: &AppState) -> Result<DashboardIdentity, ApiError> {
    let header = parts.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let token = header
        .strip_prefix("Bearer ")
        .ok_or_else(|| ApiError::unauthorized("Authorization must be `Bearer <dashboard token>`"))?;
    let claims = tokens::verify(token.trim(), &state.jwt_secret, chrono::Utc::now().timestamp())
        .map_err(|err| ApiError::unauthorized(format!("dashboard token refused: {err}")))?;
    let environment = Environment::parse(&claims.environment)
        .ok_or_else(|| ApiError::unauthorized("dashboard token refused: unknown environment"))?;
    let role = state
        .records
        .dashboard_role(&claims.sub, &claims.account, environment)
        .await
        .map_err(|err| ApiError::from(crate::error::ServiceError::from(err)))?
        .ok_or_else(|| ApiError::unauthorized("dashboard token refused: no such user in that account"))?;
    if !matches!(role.as_str(), "admin" | "operator") {
        return Err(ApiError::unauthorized("dashboard token refused: unknown role"));
    }
    Ok(DashboardIdentity {
        user_id: claims.sub,
        role,
        tenant: Tenant { account_id: claims.account, environment },
    })
}
