//! The delivery outbox: rows written in the same transaction as the event they carry, claimed
//! by the delivery workers with a lease (a worker that dies lets its lease run out and the
//! row is claimed again), and every attempt kept for the delivery log.

use super::batch::Statement;
use super::collections::Owner;
use super::{Dialect, RecordError, Records};
use sqlx::any::AnyRow;
use sqlx::Row;

/// What an event is, for choosing the subscriptions it goes to.
pub enum EventSource<'a> {
    /// A terminal event of a workflow call's function.
    Function { function_id: &'a str, is_error: bool },
    /// A `collection_processing` event.
    Collection { collection_id: &'a str },
    /// An account-wide event (`entity_*`): subscriptions of that type with no function or
    /// collection.
    Account { event_type: &'a str },
}

/// Destinations a subscription may have, as the outbox names them.
pub const DESTINATIONS: [(&str, &str); 3] =
    [("webhook", "webhook_url"), ("s3", "s3_bucket"), ("google_drive", "google_drive_folder_id")];

/// Writes one pending delivery per destination of every live subscription `source` matches,
/// inside the transaction that records the event. The ID is derived from the event, the
/// subscription and the destination, so recording the same event again adds nothing.
pub(super) async fn enqueue(
    tx: &mut super::writer::WriteTx,
    owner: Owner<'_>,
    event_id: &str,
    source: EventSource<'_>,
    now: i64,
) -> Result<u64, RecordError> {
    Ok(enqueued(owner, event_id, source, now).execute(tx).await?)
}

/// The statement of [`enqueue`]. It writes nothing unless the event with that ID is
/// recorded: in a batch, the insert before it may have found the event's dedupe key taken.
pub(super) fn enqueued<'a>(
    owner: Owner<'a>,
    event_id: &'a str,
    source: EventSource<'a>,
    now: i64,
) -> Statement<'a> {
    let (matches, key, is_error) = match source {
        EventSource::Function { function_id, is_error } => ("s.function_id = $4", function_id, is_error),
        EventSource::Collection { collection_id } => ("s.collection_id = $4", collection_id, false),
        EventSource::Account { event_type } => {
            ("s.type = $4 AND s.function_id IS NULL AND s.collection_id IS NULL", event_type, false)
        }
    };
    // One statement for the three destinations (a terminal event of every call passes here):
    // each subscription crossed with the destination names, kept where it sets that one.
    let names = DESTINATIONS
        .iter()
        .map(|(name, _)| format!("SELECT '{name}' AS name"))
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    let target = DESTINATIONS
        .iter()
        .map(|(name, column)| format!("WHEN '{name}' THEN s.{column}"))
        .collect::<Vec<_>>()
        .join(" ");
    Statement::new(format!(
        "INSERT INTO deliveries (id, account_id, environment, subscription_id, event_id, destination, status, \
             attempts, next_attempt_at, created_at, updated_at) \
         SELECT 'dlv_' || s.id || '_' || $3 || '_' || d.name, s.account_id, s.environment, s.id, $3, \
             d.name, 'pending', 0, $5, $5, $5 \
         FROM subscriptions s CROSS JOIN ({names}) d \
         WHERE s.account_id = $1 AND s.environment = $2 AND {matches} AND s.disabled = 0 \
             AND (CASE d.name {target} END) <> '' AND (s.type <> 'error' OR $6 = 1) \
             AND EXISTS (SELECT 1 FROM events e WHERE e.id = $3) \
         ON CONFLICT (id) DO NOTHING"
    ))
    .arg(owner.account_id)
    .arg(owner.environment)
    .arg(event_id)
    .arg(key)
    .arg(now)
    .arg(i64::from(is_error))
}

/// A delivery a worker holds: where it goes and what it carries.
#[derive(Clone, Debug)]
pub struct Claimed {
    pub id: String,
    /// The row's rowid on SQLite, where the outbox finds its rows by it.
    pub row: Option<i64>,
    pub account_id: String,
    pub environment: String,
    pub subscription_id: String,
    pub destination: String,
    pub attempts: i64,
    pub event_id: String,
    /// The event exactly as the read endpoints return it.
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

/// A subquery yielding the strings of the JSON array bound at `$n`, one row each.
///
/// A turn's lists (delivered IDs, attempts) travel as one JSON parameter, so each statement
/// has a fixed text whatever the batch size: it is prepared once and kept in the statement
/// cache, and SQLite does not walk a long list of numbered parameters for every bind (a
/// 1,024-parameter INSERT had spent a tenth of a drain's time in `sqlite3_bind_parameter_name`).
fn json_strings(dialect: Dialect, n: usize) -> String {
    match dialect {
        Dialect::Sqlite => format!("SELECT value FROM json_each(${n})"),
        Dialect::Postgres => format!("SELECT jsonb_array_elements_text(CAST(${n} AS jsonb))"),
    }
}

/// A FROM item yielding the elements of the JSON array bound at `$n` as `e.value`, each read
/// with `e.value ->> i` (text) on both stores.
pub(super) fn json_rows(dialect: Dialect, n: usize) -> String {
    match dialect {
        Dialect::Sqlite => format!("json_each(${n}) AS e"),
        Dialect::Postgres => format!("jsonb_array_elements(CAST(${n} AS jsonb)) AS e(value)"),
    }
}

/// Writes finished attempts: one UPDATE sets every finished delivery's state, whatever its
/// outcome. A first attempt that delivered (nearly all of them) is kept on its delivery's own
/// row by that same UPDATE; every other attempt is also a row of `delivery_attempts`, all of a
/// turn's in one INSERT (its `WHERE TRUE` keeps SQLite from reading `ON CONFLICT` as a join's
/// `ON`). A turn is then two statements at most, however many deliveries it records.
async fn settle(
    tx: &mut super::writer::WriteTx,
    dialect: Dialect,
    finished: &[Finished],
) -> Result<(), RecordError> {
    if finished.is_empty() {
        return Ok(());
    }
    let kept_on_row = |done: &Finished| {
        done.status == "delivered" && done.number == 1 && done.attempt.next_retry_at.is_none()
    };
    // `"y"` at 5 marks an attempt kept on the row (a string reads the same with `->>` on
    // both stores; a JSON boolean does not).
    let sql = format!(
        "UPDATE deliveries SET status = e.value ->> 1, attempts = CAST(e.value ->> 2 AS BIGINT), \
             next_attempt_at = CAST(e.value ->> 3 AS BIGINT), lease_until = 0, \
             updated_at = CAST(e.value ->> 4 AS BIGINT), \
             first_attempted_at = CASE WHEN e.value ->> 5 = 'y' THEN CAST(e.value ->> 4 AS BIGINT) ELSE first_attempted_at END, \
             first_status_code = CASE WHEN e.value ->> 5 = 'y' THEN CAST(e.value ->> 6 AS BIGINT) ELSE first_status_code END, \
             first_latency_ms = CASE WHEN e.value ->> 5 = 'y' THEN CAST(e.value ->> 7 AS BIGINT) ELSE first_latency_ms END, \
             first_response_excerpt = CASE WHEN e.value ->> 5 = 'y' THEN e.value ->> 8 ELSE first_response_excerpt END \
         FROM {} WHERE {}",
        json_rows(dialect, 1),
        // SQLite finds its rows by rowid, without a walk down the ID's index; the ID must
        // match too, should the rowids have been renumbered since the claim (a VACUUM); its
        // unary `+` keeps SQLite from walking the ID's index instead.
        match dialect {
            Dialect::Sqlite => "deliveries.rowid = e.value ->> 9 AND +deliveries.id = e.value ->> 0",
            Dialect::Postgres => "deliveries.id = e.value ->> 0",
        }
    );
    let rows = finished
        .iter()
        .map(|done| {
            let attempt = &done.attempt;
            let kept = kept_on_row(done);
            serde_json::json!([
                done.delivery_id,
                done.status,
                done.number,
                attempt.next_retry_at.unwrap_or(attempt.at),
                attempt.at,
                kept.then_some("y"),
                attempt.status_code,
                attempt.latency_ms,
                attempt.response_excerpt,
                done.row
            ])
        })
        .collect();
    // The excerpt is whatever the destination answered: a NUL in it would fail the whole
    // turn on PostgreSQL (text cannot hold one), for every tenant's deliveries in it.
    let rows = super::events::without_nul(serde_json::Value::Array(rows));
    sqlx::query(&sql).bind(rows.to_string()).execute(&mut **tx).await?;
    let logged: Vec<serde_json::Value> = finished
        .iter()
        .filter(|done| !kept_on_row(done))
        .map(|done| {
            let attempt = &done.attempt;
            serde_json::json!([
                done.delivery_id,
                done.number,
                attempt.at,
                attempt.status_code,
                attempt.latency_ms,
                attempt.response_excerpt,
                attempt.error,
                attempt.next_retry_at
            ])
        })
        .collect();
    if logged.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO delivery_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, \
             response_excerpt, error, next_retry_at) \
         SELECT e.value ->> 0, CAST(e.value ->> 1 AS BIGINT), CAST(e.value ->> 2 AS BIGINT), \
             CAST(e.value ->> 3 AS BIGINT), CAST(e.value ->> 4 AS BIGINT), e.value ->> 5, e.value ->> 6, \
             CAST(e.value ->> 7 AS BIGINT) \
         FROM {} WHERE TRUE ON CONFLICT (delivery_id, attempt) DO NOTHING",
        json_rows(dialect, 1)
    );
    let rows = super::events::without_nul(serde_json::Value::Array(logged));
    sqlx::query(&sql).bind(rows.to_string()).execute(&mut **tx).await?;
    Ok(())
}

/// Takes the leases of up to `limit` due deliveries and reads what they carry (the event's
/// body, the subscription's destination), all of them as one JSON array in one row: a row per
/// delivery had cost the store's thread a hand-over (and a wake of this one) for each, and
/// this side a decoded row of a dozen columns.
///
/// On PostgreSQL that is one statement, the UPDATE … RETURNING aggregated; its outer condition
/// is checked again on each row it updates, so two instances never lease the same row. SQLite
/// cannot aggregate what an UPDATE returns, so there the due rows are read first and leased by
/// rowid second: the transaction took the write lock when it began (`BEGIN IMMEDIATE`), so no
/// other process writes between the two.
///
/// A leased row's next attempt is due when its lease runs out (should this attempt be lost),
/// so `next_attempt_at` moves there: the due scan, which walks `next_attempt_at` in order,
/// then never steps over rows in flight.
async fn claim(
    tx: &mut super::writer::WriteTx,
    dialect: Dialect,
    now: i64,
    lease_ms: i64,
    limit: i64,
    skip: &[String],
) -> Result<Vec<Claimed>, RecordError> {
    // The due scan, its limit at `$limit` and the skipped accounts (if any) at `$limit + 1`.
    // Accounts holding their share are passed over (the scan then walks past their due rows,
    // which is why the worker asks for it sparingly); with none, the claim is the plain one.
    let due = |key: &str, limit_at: usize| {
        let skipping = if skip.is_empty() {
            String::new()
        } else {
            format!("AND account_id NOT IN ({}) ", json_strings(dialect, limit_at + 1))
        };
        format!(
            "SELECT {key} FROM deliveries \
             WHERE status = 'pending' AND next_attempt_at <= $1 AND lease_until <= $1 {skipping}\
             ORDER BY next_attempt_at LIMIT ${limit_at}"
        )
    };
    let carried = "d.id, d.account_id, d.environment, d.subscription_id, d.destination, d.attempts, \
         d.event_id, e.body, s.webhook_url, s.s3_bucket, s.s3_file_path, s.google_drive_folder_id";
    let joins =
        "LEFT JOIN events e ON e.id = d.event_id LEFT JOIN subscriptions s ON s.id = d.subscription_id";
    let skip_json = (!skip.is_empty()).then(|| serde_json::json!(skip).to_string());
    let claimed: Option<String> = match dialect {
        Dialect::Postgres => {
            let sql = format!(
                "WITH d AS (UPDATE deliveries SET lease_until = $2, next_attempt_at = $2 \
                            WHERE id IN ({}) AND status = 'pending' AND lease_until <= $1 \
                            RETURNING id, account_id, environment, subscription_id, destination, attempts, event_id) \
                 SELECT CAST(json_agg(json_build_array({carried})) AS TEXT) AS claimed FROM d {joins}",
                due("id", 3)
            );
            let mut query = sqlx::query(&sql).bind(now).bind(now + lease_ms).bind(limit);
            if let Some(skip) = &skip_json {
                query = query.bind(skip.clone());
            }
            query.fetch_one(&mut **tx).await?.get("claimed")
        }
        Dialect::Sqlite => {
            let sql = format!(
                "SELECT json_group_array(json_array(d.rowid, {carried})) AS claimed \
                 FROM ({}) AS due JOIN deliveries d ON d.rowid = due.rid {joins}",
                due("rowid AS rid", 2)
            );
            let mut query = sqlx::query(&sql).bind(now).bind(limit);
            if let Some(skip) = &skip_json {
                query = query.bind(skip.clone());
            }
            query.fetch_one(&mut **tx).await?.get("claimed")
        }
    };
    let Some(claimed) = claimed else { return Ok(Vec::new()) };
    let mut rows: Vec<serde_json::Value> = serde_json::from_str(&claimed)
        .map_err(|err| RecordError::Unavailable(format!("a claim read back: {err}")))?;
    let rowids: Vec<Option<i64>> = match dialect {
        Dialect::Sqlite => rows
            .iter_mut()
            .map(|row| row.as_array_mut().and_then(|fields| fields.remove(0).as_i64()))
            .collect(),
        Dialect::Postgres => vec![None; rows.len()],
    };
    if dialect == Dialect::Sqlite && !rows.is_empty() {
        sqlx::query(
            "UPDATE deliveries SET lease_until = $1, next_attempt_at = $1 \
             WHERE rowid IN (SELECT value FROM json_each($2))",
        )
        .bind(now + lease_ms)
        .bind(serde_json::json!(rowids).to_string())
        .execute(&mut **tx)
        .await?;
    }
    // A delivery whose event is gone has nothing to carry and is left out (leased); one whose
    // subscription is gone has no destination (its attempt says so).
    Ok(rows.into_iter().zip(rowids).filter_map(|(fields, row)| claimed_from(fields, row)).collect())
}

/// A claimed delivery from its JSON array (in the order of `claim`'s columns).
fn claimed_from(fields: serde_json::Value, row: Option<i64>) -> Option<Claimed> {
    type Fields = (
        String,
        String,
        String,
        String,
        String,
        i64,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let (
        id,
        account_id,
        environment,
        subscription_id,
        destination,
        attempts,
        event_id,
        body,
        webhook_url,
        s3_bucket,
        s3_file_path,
        google_drive_folder_id,
    ): Fields = serde_json::from_value(fields).ok()?;
    Some(Claimed {
        id,
        row,
        account_id,
        environment,
        subscription_id,
        destination,
        attempts,
        event_id,
        body: body?,
        webhook_url,
        s3_bucket,
        s3_file_path,
        google_drive_folder_id,
    })
}

fn delivery(row: &AnyRow) -> DeliveryRecord {
    DeliveryRecord {
        id: row.get("id"),
        subscription_id: row.get("subscription_id"),
        event_id: row.get("event_id"),
        destination: row.get("destination"),
        status: row.get("status"),
        next_attempt_at: row.get("next_attempt_at"),
        created_at: row.get("created_at"),
        // A first attempt that delivered is kept on the row; the others follow it.
        attempts: row
            .get::<Option<i64>, _>("first_attempted_at")
            .map(|at| Attempt {
                at,
                status_code: row.get("first_status_code"),
                latency_ms: row.get::<Option<i64>, _>("first_latency_ms").unwrap_or_default(),
                response_excerpt: row.get("first_response_excerpt"),
                error: None,
                next_retry_at: None,
            })
            .into_iter()
            .collect(),
    }
}

impl Records {
    /// Records finished attempts and claims up to `limit` due deliveries for `lease_ms`, in
    /// one write transaction: the delivery worker is then one writer, not two taking turns at
    /// SQLite's write lock (whose busy wait sleeps for milliseconds). Two processes never hold
    /// the same row: the claim's outer condition is checked again on each row it updates.
    /// Deliveries of the accounts in `skip` (holding their share already) are not claimed.
    pub async fn settle_and_claim(
        &self,
        finished: &[Finished],
        now: i64,
        lease_ms: i64,
        limit: i64,
        skip: &[String],
    ) -> Result<Vec<Claimed>, RecordError> {
        if finished.is_empty() && (limit <= 0 || !self.any_due(now).await?) {
            // An idle worker only reads: a write transaction every poll would keep taking
            // SQLite's write lock from everyone else (the CLI's writes among them).
            return Ok(Vec::new());
        }
        let mut tx = self.begin_write().await?;
        settle(&mut tx, self.dialect, finished).await?;
        let claimed = if limit > 0 {
            claim(&mut tx, self.dialect, now, lease_ms, limit, skip).await?
        } else {
            Vec::new()
        };
        tx.commit().await?;
        Ok(claimed)
    }

    async fn any_due(&self, now: i64) -> Result<bool, RecordError> {
        let due = sqlx::query(
            "SELECT id FROM deliveries WHERE status = 'pending' AND next_attempt_at <= $1 AND lease_until <= $1 LIMIT 1",
        )
        .bind(now)
        .fetch_optional(&self.pool)
        .await?;
        Ok(due.is_some())
    }

    /// The deliveries of a subscription or of an event (newest last), with their attempts.
    pub async fn deliveries_of(
        &self,
        owner: Owner<'_>,
        subscription_id: Option<&str>,
        event_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<DeliveryRecord>, RecordError> {
        let (column, value) = match (subscription_id, event_id) {
            (Some(id), _) => ("subscription_id", id),
            (None, Some(id)) => ("event_id", id),
            (None, None) => return Ok(Vec::new()),
        };
        let sql = format!(
            "SELECT id, subscription_id, event_id, destination, status, next_attempt_at, created_at, \
                 first_attempted_at, first_status_code, first_latency_ms, first_response_excerpt FROM deliveries \
             WHERE {column} = $1 AND account_id = $2 AND environment = $3 ORDER BY created_at, id LIMIT $4"
        );
        let rows = sqlx::query(&sql)
            .bind(value)
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        let mut deliveries: Vec<DeliveryRecord> = rows.iter().map(delivery).collect();
        for delivery in &mut deliveries {
            let attempts = sqlx::query(
                "SELECT attempted_at, status_code, latency_ms, response_excerpt, error, next_retry_at \
                 FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt",
            )
            .bind(&delivery.id)
            .fetch_all(&self.pool)
            .await?;
            delivery.attempts.extend(attempts.iter().map(|row| Attempt {
                at: row.get("attempted_at"),
                status_code: row.get("status_code"),
                latency_ms: row.get("latency_ms"),
                response_excerpt: row.get("response_excerpt"),
                error: row.get("error"),
                next_retry_at: row.get("next_retry_at"),
            }));
        }
        Ok(deliveries)
    }

    /// Queues a delivery again now, whatever its state; false when there is no such delivery.
    pub async fn redeliver(&self, owner: Owner<'_>, id: &str, now: i64) -> Result<bool, RecordError> {
        let done = sqlx::query(
            "UPDATE deliveries SET status = 'pending', next_attempt_at = $4, lease_until = 0, updated_at = $4 \
             WHERE id = $1 AND account_id = $2 AND environment = $3",
        )
        .bind(id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(now)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// How many deliveries are pending (the benchmark and tests wait on it).
    pub async fn pending_deliveries(&self) -> Result<i64, RecordError> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM deliveries WHERE status = 'pending'")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.get("n"))
    }
}
