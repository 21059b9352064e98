//! The REST transport's side of authentication: the extractors that turn a request's headers
//! into a [`Caller`] or [`DashboardUser`] ([`crate::access::caller`] decides), and the
//! answers for a refused one.

use crate::access::caller::{self, AccessError, Caller, Credentials, DashboardUser, API_KEY_HEADER};
use crate::access::error::ApiError;
use crate::access::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

impl From<AccessError> for ApiError {
    fn from(err: AccessError) -> Self {
        match err {
            AccessError::MalformedKey => ApiError::bad_request(
                "x-api-key: must be printable ASCII, the key exactly as canon printed it",
                Some(serde_json::json!({ "field": API_KEY_HEADER, "error": "not printable ASCII" })),
            ),
            AccessError::Unauthorized(message) => ApiError::unauthorized(message),
            AccessError::RateLimited(retry_after) => ApiError::rate_limited(retry_after),
            AccessError::Service(err) => ApiError::from(err),
        }
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let credentials = Credentials {
            api_key: parts.headers.get(API_KEY_HEADER).map(|v| v.as_bytes()),
            authorization: parts.headers.get(AUTHORIZATION).map(|v| v.as_bytes()),
        };
        Ok(caller::authenticate(credentials, state).await?)
    }
}

impl FromRequestParts<AppState> for DashboardUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let authorization = parts.headers.get(AUTHORIZATION).map(|v| v.as_bytes());
        Ok(caller::authenticate_dashboard(authorization, state).await?)
    }
}
