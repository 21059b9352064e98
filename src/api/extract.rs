//! Extractors whose rejections are our `{message, code, details}` errors, with the field
//! that failed.

use crate::access::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::json;

mod objects;

/// A JSON body. Malformed JSON and wrong types are 400 naming the field.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let content_type = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        if let Some(content_type) = content_type {
            if !content_type.starts_with("application/json") {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!("send the body as JSON with Content-Type: application/json (got {content_type})"),
                ));
            }
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|rejection| ApiError::new(rejection.status(), rejection.body_text()))?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// Deserializes a JSON body, reporting the path of the field that failed; a struct must be a
/// JSON object (see [`objects`]). A body that parses is read once, plainly; only a failed one
/// is read again to find the failing field's path (tracking it cost a bulk seed of 10,000
/// rows an allocation per row's key, on the way to the job's first statement).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    if let Ok(parsed) = T::deserialize(objects::ObjectsOnly(&mut deserializer)).and_then(|parsed| {
        deserializer.end()?;
        Ok(parsed)
    }) {
        return Ok(parsed);
    }
    let deserializer = &mut serde_json::Deserializer::from_slice(bytes);
    let parsed =
        serde_path_to_error::deserialize(objects::ObjectsOnly(&mut *deserializer)).map_err(|err| {
            let path = err.path().to_string();
            let inner = err.into_inner();
            if inner.is_syntax() || inner.is_eof() {
                malformed(inner)
            } else if path == "." {
                ApiError::bad_request(
                    format!("invalid body: {inner}"),
                    Some(json!({ "error": inner.to_string() })),
                )
            } else {
                ApiError::bad_request(
                    format!("{path}: {inner}"),
                    Some(json!({ "field": path, "error": inner.to_string() })),
                )
            }
        })?;
    // What follows the body's value (the first read failed on it).
    deserializer.end().map_err(malformed)?;
    Ok(parsed)
}

fn malformed(inner: serde_json::Error) -> ApiError {
    ApiError::bad_request(
        format!("malformed JSON body: {inner}"),
        Some(json!({ "line": inner.line(), "column": inner.column() })),
    )
}

/// Query parameters. Fields are kept as text and parsed by the handler, so a bad value is
/// reported with its parameter name.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or_default();
        // Every filter of every endpoint, whichever store it reaches, refuses control characters.
        let pairs: Vec<(String, String)> = serde_html_form::from_str(query).unwrap_or_default();
        for (name, value) in &pairs {
            crate::text::check(name, name).and_then(|()| crate::text::check(name, value))?;
        }
        serde_html_form::from_str(query)
            .map(ApiQuery)
            .map_err(|err| ApiError::bad_request(format!("invalid query string: {err}"), None))
    }
}
