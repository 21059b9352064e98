//! The error every transport answers with: REST sends it as `{message, code, details?}` with
//! its status, GraphQL as the error's `message` and `extensions.code`, MCP as a tool result.

use crate::error::ServiceError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// Body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong and what to change; always present.
    pub message: String,
    /// Mirrors the HTTP status.
    pub code: u16,
    /// Field-level context for 400 and 422.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub details: Option<Value>,
}

#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    details: Option<Value>,
    retry_after_secs: Option<u64>,
    /// Whether the same request, sent again, may succeed (`x-should-retry`).
    retry_helps: bool,
}

/// Tells bem-sdk whether to retry: without it the SDK retries every 409 (and 408, 429, 5xx)
/// twice, ~1.25 s lost on a name collision a retry cannot change.
pub const SHOULD_RETRY: &str = "x-should-retry";

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        let retry_helps = matches!(status, StatusCode::REQUEST_TIMEOUT | StatusCode::TOO_MANY_REQUESTS)
            || status.is_server_error();
        Self { status, message: message.into(), details: None, retry_after_secs: None, retry_helps }
    }

    pub fn bad_request(message: impl Into<String>, details: Option<Value>) -> Self {
        Self { details, ..Self::new(StatusCode::BAD_REQUEST, message) }
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
    }

    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self {
            retry_after_secs: Some(retry_after_secs),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("rate limit exceeded for this API key; retry after {retry_after_secs} s"),
            )
        }
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// What the client reads (GraphQL puts it in the error's `message`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Field-level context, when any.
    pub fn details(&self) -> Option<&Value> {
        self.details.as_ref()
    }
}

/// The one mapping of service errors to statuses (and client-facing messages), shared by
/// REST bodies and GraphQL `extensions.code`. No wildcard arm: a new variant must be mapped.
impl From<ServiceError> for ApiError {
    fn from(err: ServiceError) -> Self {
        match err {
            ServiceError::Invalid { message, details } => Self::bad_request(message, details),
            ServiceError::NotFound { .. } => Self::new(StatusCode::NOT_FOUND, err.to_string()),
            ServiceError::Forbidden(message) => Self::new(StatusCode::FORBIDDEN, message),
            ServiceError::Conflict(message) => Self::new(StatusCode::CONFLICT, message),
            ServiceError::ConcurrentChange(message) => {
                Self { retry_helps: true, ..Self::new(StatusCode::CONFLICT, message) }
            }
            ServiceError::Unprocessable { message, details } => {
                Self { details, ..Self::new(StatusCode::UNPROCESSABLE_ENTITY, message) }
            }
            ServiceError::Overloaded(message) => {
                Self { retry_after_secs: Some(1), ..Self::new(StatusCode::SERVICE_UNAVAILABLE, message) }
            }
            ServiceError::Internal(cause) => {
                tracing::error!(error = ?cause, "internal error");
                Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error; retry with backoff")
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody { message: self.message, code: self.status.as_u16(), details: self.details };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after_secs {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        let retry = HeaderValue::from_static(if self.retry_helps { "true" } else { "false" });
        response.headers_mut().insert(SHOULD_RETRY, retry);
        response
    }
}

/// Gives the framework's own error responses (unknown route, wrong method, body too large…)
/// the same `{message, code}` body as ours.
pub async fn normalize_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let message = match status {
        StatusCode::NOT_FOUND => "no such route; see /openapi.json for the API".to_string(),
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed on this route; see /openapi.json".to_string(),
        other => other.canonical_reason().unwrap_or("error").to_lowercase(),
    };
    let mut normalized = ApiError::new(status, message).into_response();
    if let Some(allow) = response.headers().get(header::ALLOW) {
        normalized.headers_mut().insert(header::ALLOW, allow.clone());
    }
    normalized
}

#[cfg(test)]
mod tests {
    use super::*;

    fn should_retry(err: ServiceError) -> String {
        let response = ApiError::from(err).into_response();
        response.headers()[SHOULD_RETRY].to_str().unwrap().to_string()
    }

    #[test]
    fn a_lost_race_is_worth_a_retry_and_a_taken_name_is_not() {
        assert_eq!(should_retry(ServiceError::ConcurrentChange("changed meanwhile; retry".into())), "true");
        assert_eq!(should_retry(ServiceError::Conflict("name taken".into())), "false");
        assert_eq!(should_retry(ServiceError::Internal(anyhow::anyhow!("db down"))), "true");
    }
}
