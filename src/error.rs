//! Errors of the service layer, shared by REST and (later) GraphQL. The transports map each
//! variant to a status; the wording here is what clients read, so it says what to change.

use crate::store::graph::GraphError;
use crate::store::records::RecordError;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The request is malformed or violates the schema (400).
    #[error("{message}")]
    Invalid { message: String, details: Option<Value> },
    /// No such resource for this tenant (404).
    #[error("{resource} {id} not found")]
    NotFound { resource: &'static str, id: String },
    /// The caller's role does not allow this (403).
    #[error("{0}")]
    Forbidden(String),
    /// The request conflicts with the current state; sending it again changes nothing (409).
    #[error("{0}")]
    Conflict(String),
    /// The request lost a race with a concurrent change; sent again it may succeed (409).
    #[error("{0}")]
    ConcurrentChange(String),
    /// Well-formed, but semantically impossible (422).
    #[error("{message}")]
    Unprocessable { message: String, details: Option<Value> },
    /// Anything the client cannot fix; logged, never shown (500).
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl ServiceError {
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        ServiceError::Invalid {
            details: Some(serde_json::json!({ "field": field, "error": message })),
            message: format!("{field}: {message}"),
        }
    }

    pub fn not_found(resource: &'static str, id: impl Into<String>) -> Self {
        ServiceError::NotFound { resource, id: id.into() }
    }
}

impl From<GraphError> for ServiceError {
    fn from(err: GraphError) -> Self {
        match err {
            // Input no service checked: still the caller's to fix, never a crash or a 500.
            GraphError::Unsendable { parameter, found, position } => {
                ServiceError::invalid_field(&parameter, crate::text::forbidden_message(found, position))
            }
            GraphError::ConstraintViolation(_)
            | GraphError::Unavailable(_)
            | GraphError::Query(_)
            | GraphError::Conversion(_) => ServiceError::Internal(err.into()),
        }
    }
}

impl From<RecordError> for ServiceError {
    fn from(err: RecordError) -> Self {
        // PostgreSQL cannot hold NUL in text (SQLSTATE 22021): the caller's input, not a 500.
        if let RecordError::Query(sqlx::Error::Database(db)) = &err {
            if db.code().as_deref() == Some("22021") {
                return ServiceError::Invalid {
                    message: "a text value of the request holds a NUL byte (U+0000), which cannot be stored"
                        .into(),
                    details: None,
                };
            }
        }
        ServiceError::Internal(err.into())
    }
}

pub type ServiceResult<T> = Result<T, ServiceError>;
