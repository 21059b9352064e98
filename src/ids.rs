//! Prefixed, time-ordered identifiers (`bkt_01J…`): sorting by ID is sorting by creation,
//! which is what makes ID cursors stable.

/// A new ID with the given prefix (`"bkt"` gives `bkt_<ULID>`).
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::new())
}

/// Whether `id` has the shape of an ID with this prefix.
pub fn has_prefix(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('_'))
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Current time as RFC 3339 with millisecond precision, UTC.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Current time in epoch milliseconds.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
