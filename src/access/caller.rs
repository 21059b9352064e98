//! Who is calling. Every /v3 endpoint takes an API key in `x-api-key` (the key gives the
//! account and environment) or a dashboard token in `Authorization: Bearer` (an HS256 JWT
//! naming user, role, account and environment). The reviewer endpoints are dashboard-only.
//! When a request carries both, the API key decides and the token is not read (so
//! `assignedTo=me`, which names the token's user, is refused as with a key alone): one
//! credential, one caller, whichever client library added the other header.
//! A missing, malformed, unknown, revoked or expired credential is refused; the rate limit
//! is per key (or per user). The transports turn [`AccessError`] into their own answers.

use super::state::AppState;
use crate::error::ServiceError;
use crate::graph::audit::Actor;
use crate::graph::reviewers::DashboardIdentity;
use crate::graph::Tenant;
use crate::store::records::keys::Environment;
use crate::tokens;

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

/// Why a caller was refused.
#[derive(Debug)]
pub enum AccessError {
    /// The API key header is not printable ASCII.
    MalformedKey,
    /// No credential, or one that is unknown, revoked, expired or malformed.
    Unauthorized(String),
    /// Over the rate limit: retry after this many seconds.
    RateLimited(u64),
    Service(ServiceError),
}

impl From<ServiceError> for AccessError {
    fn from(err: ServiceError) -> Self {
        Self::Service(err)
    }
}

/// The credentials a request presented.
pub struct Credentials<'a> {
    pub api_key: Option<&'a [u8]>,
    pub authorization: Option<&'a [u8]>,
}

/// The caller behind `credentials`, rate-limited, with its tenant's graph ready.
pub async fn authenticate(credentials: Credentials<'_>, state: &AppState) -> Result<Caller, AccessError> {
    let caller = if let Some(key) = credentials.api_key {
        let presented = std::str::from_utf8(key)
            .ok()
            .filter(|key| key.bytes().all(|b| (0x20..0x7f).contains(&b)))
            .ok_or(AccessError::MalformedKey)?;
        let principal = state
            .keys
            .authenticate(presented.trim())
            .await
            .map_err(ServiceError::from)?
            .ok_or_else(|| AccessError::Unauthorized("invalid or revoked API key".into()))?;
        state.limiter.check(&principal.key_id).map_err(AccessError::RateLimited)?;
        Caller {
            tenant: Tenant::from(&principal),
            key_id: Some(principal.key_id),
            key_name: Some(principal.key_name),
            user: None,
        }
    } else if let Some(authorization) = credentials.authorization {
        let identity = dashboard_identity(authorization, state).await?;
        state.limiter.check(&identity.user_id).map_err(AccessError::RateLimited)?;
        Caller { tenant: identity.tenant.clone(), key_id: None, key_name: None, user: Some(identity) }
    } else {
        return Err(AccessError::Unauthorized(
            "missing x-api-key header; send your API key in it (or a dashboard token as Authorization: Bearer)"
                .into(),
        ));
    };
    state.graph.ensure_tenant(&caller.tenant).await?;
    Ok(caller)
}

/// The dashboard user behind an `Authorization` header (API keys are not accepted).
pub async fn authenticate_dashboard(
    authorization: Option<&[u8]>,
    state: &AppState,
) -> Result<DashboardUser, AccessError> {
    let Some(authorization) = authorization else {
        return Err(AccessError::Unauthorized(
            "this endpoint is dashboard-only: send a dashboard token as Authorization: Bearer (API keys are not accepted)"
                .into(),
        ));
    };
    let identity = dashboard_identity(authorization, state).await?;
    state.limiter.check(&identity.user_id).map_err(AccessError::RateLimited)?;
    state.graph.ensure_tenant(&identity.tenant).await?;
    Ok(DashboardUser(identity))
}

/// The token's user, as the record store knows it now: a signature alone is not enough, the
/// user must still exist in the account and environment the token names (its role is read
/// from the store, so a demoted or deleted user loses access at once).
async fn dashboard_identity(header: &[u8], state: &AppState) -> Result<DashboardIdentity, AccessError> {
    let refused = |why: String| AccessError::Unauthorized(why);
    let header = std::str::from_utf8(header).unwrap_or_default();
    let token = header
        .strip_prefix("Bearer ")
        .ok_or_else(|| refused("Authorization must be `Bearer <dashboard token>`".into()))?;
    let claims = tokens::verify(token.trim(), &state.jwt_secret, chrono::Utc::now().timestamp())
        .map_err(|err| refused(format!("dashboard token refused: {err}")))?;
    let environment = Environment::parse(&claims.environment)
        .ok_or_else(|| refused("dashboard token refused: unknown environment".into()))?;
    let role = state
        .records
        .dashboard_role(&claims.sub, &claims.account, environment)
        .await
        .map_err(ServiceError::from)?
        .ok_or_else(|| refused("dashboard token refused: no such user in that account".into()))?;
    if !matches!(role.as_str(), "admin" | "operator") {
        return Err(refused("dashboard token refused: unknown role".into()));
    }
    Ok(DashboardIdentity {
        user_id: claims.sub,
        role,
        tenant: Tenant { account_id: claims.account, environment },
    })
}
