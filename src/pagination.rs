//! Cursor pagination shared by every list: `startingAfter` / `endingBefore` are IDs of
//! objects of the previous page (mutually exclusive), `limit` is bounded per endpoint.
//!
//! Decision: a cursor only has to be a well-formed ID of the listed kind; it need not still
//! exist, because pages are ordered by ID and a deleted object still marks a position.

use crate::error::ServiceError;
use crate::ids;
// The cursor is a storage type (lists seek by it); requests are parsed into it here.
pub use crate::store::records::filters::Cursor;

/// `sortOrder`: `asc` (the default) or `desc`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    #[default]
    Asc,
    Desc,
}

impl Order {
    pub fn parse(raw: Option<&str>) -> Result<Self, ServiceError> {
        match raw {
            None | Some("") | Some("asc") => Ok(Order::Asc),
            Some("desc") => Ok(Order::Desc),
            Some(other) => {
                Err(ServiceError::invalid_field("sortOrder", format!("must be asc or desc (got {other:?})")))
            }
        }
    }
}

/// A validated page request.
#[derive(Clone, Debug)]
pub struct PageRequest {
    pub limit: u32,
    pub cursor: Cursor,
}

/// An endpoint's page-size bounds.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub default: u32,
    pub max: u32,
}

impl PageRequest {
    /// Validates raw query values for IDs with `prefix`.
    pub fn parse(
        limit: Option<i64>,
        starting_after: Option<String>,
        ending_before: Option<String>,
        limits: Limits,
        prefix: &str,
    ) -> Result<Self, ServiceError> {
        let limit = match limit {
            None => limits.default,
            Some(n) if n >= 1 && n <= i64::from(limits.max) => n as u32,
            Some(n) => {
                return Err(ServiceError::invalid_field(
                    "limit",
                    format!("must be between 1 and {} (got {n})", limits.max),
                ))
            }
        };
        let cursor = match (starting_after, ending_before) {
            (Some(_), Some(_)) => {
                return Err(ServiceError::Invalid {
                    message: "startingAfter and endingBefore are mutually exclusive; send one".into(),
                    details: Some(serde_json::json!({
                        "fields": ["startingAfter", "endingBefore"],
                        "error": "mutually exclusive"
                    })),
                })
            }
            (Some(id), None) => Cursor::After(check_id("startingAfter", id, prefix)?),
            (None, Some(id)) => Cursor::Before(check_id("endingBefore", id, prefix)?),
            (None, None) => Cursor::First,
        };
        Ok(Self { limit, cursor })
    }

    pub fn starting_after(&self) -> Option<&str> {
        match &self.cursor {
            Cursor::After(id) => Some(id),
            _ => None,
        }
    }

    pub fn ending_before(&self) -> Option<&str> {
        match &self.cursor {
            Cursor::Before(id) => Some(id),
            _ => None,
        }
    }

    pub fn backwards(&self) -> bool {
        matches!(self.cursor, Cursor::Before(_))
    }
}

/// An empty `prefix` stands for event IDs, which are KSUIDs.
fn check_id(field: &str, id: String, prefix: &str) -> Result<String, ServiceError> {
    if prefix.is_empty() {
        return if ids::is_ksuid(&id) {
            Ok(id)
        } else {
            Err(ServiceError::invalid_field(field, "must be an event ID (a 27-character KSUID)"))
        };
    }
    if ids::has_prefix(&id, prefix) {
        Ok(id)
    } else {
        Err(ServiceError::invalid_field(field, format!("must be an ID starting with {prefix}_")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits { default: 50, max: 200 };

    #[test]
    fn limit_defaults_and_is_bounded() {
        assert_eq!(PageRequest::parse(None, None, None, LIMITS, "bkt").unwrap().limit, 50);
        assert!(PageRequest::parse(Some(0), None, None, LIMITS, "bkt").is_err());
        assert!(PageRequest::parse(Some(201), None, None, LIMITS, "bkt").is_err());
        assert_eq!(PageRequest::parse(Some(200), None, None, LIMITS, "bkt").unwrap().limit, 200);
    }

    #[test]
    fn both_cursors_at_once_are_refused() {
        let both = PageRequest::parse(None, Some("bkt_A".into()), Some("bkt_B".into()), LIMITS, "bkt");
        assert!(matches!(both, Err(ServiceError::Invalid { .. })));
    }

    #[test]
    fn a_cursor_of_another_kind_is_refused() {
        assert!(PageRequest::parse(None, Some("ety_A".into()), None, LIMITS, "bkt").is_err());
    }
}
