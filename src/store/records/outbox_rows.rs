//! What the outbox's statements read and write on both stores: a claimed delivery, a
//! finished attempt, the log's rows, and the SQL the PostgreSQL and SQLite turns share.

use super::json_params::{json_rows, json_strings};
use super::{Dialect, RecordError};

/// A delivery a worker holds: where it goes and what it carries. A claim reads it as a JSON
/// array of its fields in this order.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Claimed {
    /// The row's rowid on SQLite, where the outbox finds its rows by it.
    pub row: Option<i64>,
    pub id: String,
    pub account_id: String,
    pub environment: String,
    pub subscription_id: String,
    pub destination: String,
    pub attempts: i64,
    pub event_id: String,
    /// The event exactly as the read endpoints return it. Not in the claim's JSON (see
    /// [`BODIES`]): escaping each body into it and parsing it back out cost more than the
    /// rest of the claim.
    #[serde(skip)]
    pub body: String,
    pub webhook_url: Option<String>,
    pub s3_bucket: Option<String>,
    pub s3_file_path: Option<String>,
    pub google_drive_folder_id: Option<String>,
}

/// One attempt's outcome, for the log.
#[derive(Clone, Debug, Default)]
pub struct Attempt {
    pub at: i64,
    pub status_code: Option<i64>,
    pub latency_ms: i64,
    pub response_excerpt: Option<String>,
    pub error: Option<String>,
    pub next_retry_at: Option<i64>,
}

/// A finished attempt of a delivery and the state it leaves the delivery in.
#[derive(Clone, Debug)]
pub struct Finished {
    pub delivery_id: String,
    /// [`Claimed::row`].
    pub row: Option<i64>,
    /// The attempt's number (1 for the first).
    pub number: i64,
    pub attempt: Attempt,
    pub status: &'static str,
}

/// A delivery with its attempts, for the log.
#[derive(Clone, Debug)]
pub struct DeliveryRecord {
    pub id: String,
    pub subscription_id: String,
    pub event_id: String,
    pub destination: String,
    pub status: String,
    pub next_attempt_at: i64,
    pub created_at: i64,
    pub attempts: Vec<Attempt>,
}

/// A first attempt that delivered (nearly all of them) is kept on its delivery's own row by
/// the settling UPDATE; every other attempt is also a row of `delivery_attempts` ([`log_sql`]).
pub(super) fn kept_on_row(done: &Finished) -> bool {
    done.status == "delivered" && done.number == 1 && done.attempt.next_retry_at.is_none()
}

/// All of a turn's attempts that are not kept on their delivery's row, in one INSERT (its
/// `WHERE TRUE` keeps SQLite from reading `ON CONFLICT` as a join's `ON`).
pub(super) fn log_sql(dialect: Dialect, n: usize) -> String {
    format!(
        "INSERT INTO delivery_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, \
             response_excerpt, error, next_retry_at) \
         SELECT e.value ->> 0, CAST(e.value ->> 1 AS BIGINT), CAST(e.value ->> 2 AS BIGINT), \
             CAST(e.value ->> 3 AS BIGINT), CAST(e.value ->> 4 AS BIGINT), e.value ->> 5, e.value ->> 6, \
             CAST(e.value ->> 7 AS BIGINT) \
         FROM {} WHERE TRUE ON CONFLICT (delivery_id, attempt) DO NOTHING",
        json_rows(dialect, n)
    )
}

/// What a claim reads of each leased delivery `d`, in [`Claimed`]'s field order after `row`
/// (its body apart, [`BODIES`]), and from where ([`CARRIED_FROM`] after the leased rows).
pub(super) const CARRIED: &str =
    "d.id, d.account_id, d.environment, d.subscription_id, d.destination, d.attempts, \
     d.event_id, s.webhook_url, s.s3_bucket, s.s3_file_path, s.google_drive_folder_id";
/// The claimed deliveries' event bodies, in the order of the claim's JSON array (the same
/// rows, aggregated side by side), each as `<bytes>:<body>`: a copy each, where a JSON string
/// was an escape on the store's side, a parse there and an unescape here.
pub(super) const BODIES: &str =
    "string_agg(CAST(octet_length(e.body) AS TEXT) || ':' || e.body, '') FILTER (WHERE e.id IS NOT NULL)";
/// A delivery whose event is gone has nothing to carry and is left out of the aggregate
/// (`FILTER (WHERE e.id IS NOT NULL)`) but leased all the same, so it does not stay at the
/// head of the due scan; one whose subscription is gone has no destination (its attempt says so).
pub(super) const CARRIED_FROM: &str =
    "LEFT JOIN events e ON e.id = d.event_id LEFT JOIN subscriptions s ON s.id = d.subscription_id";

/// The due scan: `key` of up to `$limit_at` due deliveries, oldest due first, passing over
/// the accounts listed at `$skip_at` (if any; the scan then walks past their due rows, which
/// is why the worker asks for it sparingly).
pub(super) fn due_sql(
    dialect: Dialect,
    key: &str,
    now_at: usize,
    limit_at: usize,
    skip_at: Option<usize>,
) -> String {
    let skipping =
        skip_at.map(|n| format!("AND account_id NOT IN ({}) ", json_strings(dialect, n))).unwrap_or_default();
    format!(
        "SELECT {key} FROM deliveries \
         WHERE status = 'pending' AND next_attempt_at <= ${now_at} AND lease_until <= ${now_at} {skipping}\
         ORDER BY next_attempt_at LIMIT ${limit_at}"
    )
}

/// Claimed deliveries from a claim's JSON array of arrays (each in [`Claimed`]'s field order)
/// and its [`BODIES`].
pub(super) fn claimed_from(
    claimed: Option<String>,
    bodies: Option<String>,
) -> Result<Vec<Claimed>, RecordError> {
    let Some(claimed) = claimed else { return Ok(Vec::new()) };
    let unreadable = |what: String| RecordError::Unavailable(format!("a claim read back: {what}"));
    let mut claimed: Vec<Claimed> =
        serde_json::from_str(&claimed).map_err(|err| unreadable(err.to_string()))?;
    let bodies = bodies.unwrap_or_default();
    let mut rest = bodies.as_str();
    for delivery in &mut claimed {
        let (length, after) = rest.split_once(':').ok_or_else(|| unreadable("a body is missing".into()))?;
        let length: usize = length.parse().map_err(|_| unreadable(format!("a body's length {length:?}")))?;
        let (body, next) = match (after.get(..length), after.get(length..)) {
            (Some(body), Some(next)) => (body, next),
            _ => return Err(unreadable("a body is cut short".into())),
        };
        delivery.body = body.to_string();
        rest = next;
    }
    if !rest.is_empty() {
        return Err(unreadable("more bodies than deliveries".into()));
    }
    Ok(claimed)
}
