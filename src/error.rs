//! Errors of the service layer, shared by REST and (later) GraphQL. The transports map each
//! variant to a status; the wording here is what clients read, so it says what to change.

use crate::store::graph::GraphError;
use crate::store::records::{ErrorCode, RecordError};
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
    /// A store is too busy (lock or pool wait ran out) or unreachable right now: the same
    /// request may succeed in a moment (503 with `Retry-After`), so never a 500 for load.
    #[error("{0}")]
    Overloaded(String),
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

    /// A refused control character (see `text`), at its 1-based position in characters.
    pub fn forbidden_character(field: &str, found: char, position: usize) -> Self {
        let message = format!(
            "must not contain control characters (U+{:04X} at character {position}); tab and newline are the only ones allowed",
            u32::from(found)
        );
        ServiceError::invalid_field(field, message)
    }

    /// A count an environment may hold is reached (422): `limit` names it, `max` is its value.
    pub fn count_reached(message: String, limit: &str, max: i64) -> Self {
        ServiceError::Unprocessable {
            message,
            details: Some(serde_json::json!({ "limit": limit, "max": max })),
        }
    }

    /// A query of the request ran for its time bound `limit` and was stopped (422).
    pub fn query_stopped(limit: std::time::Duration) -> Self {
        ServiceError::Unprocessable {
            message: format!(
                "the request's query ran for {} s, its time bound, and was stopped: ask for less",
                limit.as_secs_f64()
            ),
            details: Some(serde_json::json!({ "timeLimitMillis": limit.as_millis() as u64 })),
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
                ServiceError::forbidden_character(&parameter, found, position)
            }
            GraphError::Unavailable(reason) => {
                tracing::warn!(%reason, "graph store unavailable");
                ServiceError::Overloaded("the graph store is unavailable right now; retry in a moment".into())
            }
            GraphError::Stalled(reason) => {
                tracing::warn!(%reason, "graph store not answering");
                ServiceError::Overloaded(
                    "the graph store is not answering right now; retry after Retry-After seconds".into(),
                )
            }
            GraphError::TimedOut(limit) => {
                tracing::warn!(?limit, "graph statement stopped at its time limit");
                ServiceError::query_stopped(limit)
            }
            GraphError::ConstraintViolation(_) | GraphError::Query(_) | GraphError::Conversion(_) => {
                ServiceError::Internal(err.into())
            }
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
        if let RecordError::TimedOut(limit) = &err {
            return ServiceError::query_stopped(*limit);
        }
        if is_overload(&err) {
            tracing::warn!(error = %err, "record store overloaded");
            return ServiceError::Overloaded(
                "the record store is busy or unreachable right now; retry in a moment".into(),
            );
        }
        ServiceError::Internal(err.into())
    }
}

/// Errors that say "not now" rather than "never": the pool or a lock could not be had in
/// time, or the connection is gone. SQLite reports busy/locked as primary codes 5 and 6
/// (extended codes keep them in the low byte); PostgreSQL as serialization failure,
/// deadlock, lock not available, too many connections, shutting down.
fn is_overload(err: &RecordError) -> bool {
    match err {
        RecordError::Unavailable(_) => true,
        RecordError::Query(sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_)) => true,
        RecordError::Query(err @ sqlx::Error::Database(_)) => match ErrorCode::of(err) {
            Some(ErrorCode::Sqlite(code)) => matches!(code & 0xff, 5 | 6),
            Some(ErrorCode::Postgres(code)) => {
                matches!(code.as_str(), "40001" | "40P01" | "55P03" | "53300" | "57P03")
            }
            None => false,
        },
        RecordError::Query(_) | RecordError::Migration(_) | RecordError::TimedOut(_) => false,
    }
}

pub type ServiceResult<T> = Result<T, ServiceError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_read_stopped_at_its_time_limit_tells_the_caller_to_ask_for_less() {
        let limit = std::time::Duration::from_secs(50);
        let ServiceError::Unprocessable { message, details } =
            ServiceError::from(GraphError::TimedOut(limit))
        else {
            panic!("a 422, not a 500 or a 503");
        };
        assert!(message.contains("50 s") && message.contains("ask for less"), "{message}");
        assert_eq!(details, Some(serde_json::json!({ "timeLimitMillis": 50_000 })));
    }
}
