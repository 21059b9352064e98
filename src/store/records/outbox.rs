//! The delivery outbox: rows written in the same transaction as the event they carry, claimed
//! by the delivery workers with a lease (a worker that dies lets its lease run out and the
//! row is claimed again), and every attempt kept for the delivery log.

use super::batch::Statement;
use super::json_params::{json_numbers, json_rows, json_strings, json_text};
use super::outbox_rows::{claimed_from, due_sql, kept_on_row, log_sql, BODIES, CARRIED, CARRIED_FROM};
use super::outbox_sqlite::Turn;
use super::writer::Writer;
use super::Owner;
use super::{Dialect, RecordError, Records};
use sqlx::any::AnyRow;
use sqlx::Row;
use std::sync::OnceLock;

pub use super::outbox_rows::{Attempt, Claimed, DeliveryRecord, Finished};

/// What an event is, for choosing the subscriptions it goes to. (Account-wide `entity_*`
/// events go in batches: [`account_deliveries`].)
pub enum EventSource<'a> {
    /// A terminal event of a workflow call's function.
    Function { function_id: &'a str, is_error: bool },
    /// A `collection_processing` event.
    Collection { collection_id: &'a str },
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

/// The head of both statements that write pending deliveries, up to the delivery ID's event
/// part: one text, so a delivery's ID (`dlv_<subscription>_<event>_<destination>`) is made the
/// same way for function, collection and account events, and a replay finds it taken.
const INSERT_DELIVERIES: &str = "INSERT INTO deliveries (id, account_id, environment, subscription_id, \
     event_id, destination, status, attempts, next_attempt_at, created_at, updated_at) \
     SELECT 'dlv_' || s.id || '_' || ";

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
    };
    let (names, target) = destinations();
    // One statement for the three destinations (a terminal event of every call passes here):
    // each subscription crossed with the destination names, kept where it sets that one.
    Statement::new(format!(
        "{INSERT_DELIVERIES}$3 || '_' || d.name, s.account_id, s.environment, s.id, $3, \
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

/// The destinations as SQL: a subquery of their names (`d.name`), and the `WHEN` arms that
/// read a subscription's setting for each (`CASE d.name … END`).
fn destinations() -> &'static (String, String) {
    static SQL: OnceLock<(String, String)> = OnceLock::new();
    SQL.get_or_init(|| {
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
        (names, target)
    })
}

/// Writes the pending deliveries of a batch of recorded account-wide events (the IDs as a
/// JSON array at `$3`) in one statement: each event goes to the live subscriptions of its own
/// type with no function or collection, once per destination they set, with the IDs
/// [`enqueued`] would give them. One statement per event had cost a seed with an
/// `entity_proposed` subscription a round trip to the store per entity.
pub(super) fn account_deliveries(
    dialect: Dialect,
    owner: Owner<'_>,
    event_ids: String,
    now: i64,
) -> Statement<'_> {
    let (names, target) = destinations();
    Statement::new(format!(
        "{INSERT_DELIVERIES}e.id || '_' || d.name, s.account_id, s.environment, s.id, e.id, \
             d.name, 'pending', 0, $4, $4, $4 \
         FROM events e JOIN subscriptions s ON s.account_id = e.account_id AND s.environment = e.environment \
             AND s.type = e.event_type \
         CROSS JOIN ({names}) d \
         WHERE e.id IN ({}) AND e.account_id = $1 AND e.environment = $2 \
             AND s.function_id IS NULL AND s.collection_id IS NULL AND s.disabled = 0 \
             AND (CASE d.name {target} END) <> '' \
         ON CONFLICT (id) DO NOTHING",
        json_strings(dialect, 3)
    ))
    .arg(owner.account_id)
    .arg(owner.environment)
    .arg(event_ids)
    .arg(now)
}

/// A turn's finished attempts as the JSON parameter of [`settle_sql`] (every delivery's new
/// state; PostgreSQL's, SQLite binds them as rows of its own, see
/// [`outbox_sqlite`](super::outbox_sqlite)).
///
/// Written straight as text: a `serde_json::Value` tree per row (a dozen allocations), then
/// copied once more to clean it of NULs, cost the outbox loop about a microsecond a delivery.
fn settled_rows(finished: &[Finished]) -> String {
    let mut states = String::with_capacity(finished.len() * 160 + 2);
    for done in finished {
        let attempt = &done.attempt;
        states.push(if states.is_empty() { '[' } else { ',' });
        states.push('[');
        json_text(&mut states, Some(&done.delivery_id));
        states.push(',');
        json_text(&mut states, Some(done.status));
        // `"y"` marks an attempt kept on the row (see settle_sql).
        let kept = kept_on_row(done).then_some("y");
        let next_at = attempt.next_retry_at.unwrap_or(attempt.at);
        json_numbers(&mut states, &[Some(done.number), Some(next_at), Some(attempt.at)]);
        states.push(',');
        json_text(&mut states, kept);
        json_numbers(&mut states, &[attempt.status_code, Some(attempt.latency_ms)]);
        states.push(',');
        json_text(&mut states, attempt.response_excerpt.as_deref());
        json_numbers(&mut states, &[done.row]);
        states.push(']');
    }
    states.push_str(if states.is_empty() { "[]" } else { "]" });
    states
}

/// The attempts of a turn not kept on their delivery's row, as the JSON parameter of
/// [`log_sql`] (`None` when none).
pub(super) fn logged_rows(finished: &[Finished]) -> Option<String> {
    let mut logged = String::new();
    for done in finished.iter().filter(|done| !kept_on_row(done)) {
        let attempt = &done.attempt;
        logged.push(if logged.is_empty() { '[' } else { ',' });
        logged.push('[');
        json_text(&mut logged, Some(&done.delivery_id));
        let numbers = [Some(done.number), Some(attempt.at), attempt.status_code, Some(attempt.latency_ms)];
        json_numbers(&mut logged, &numbers);
        logged.push(',');
        json_text(&mut logged, attempt.response_excerpt.as_deref());
        logged.push(',');
        json_text(&mut logged, attempt.error.as_deref());
        json_numbers(&mut logged, &[attempt.next_retry_at]);
        logged.push(']');
    }
    (!logged.is_empty()).then(|| logged + "]")
}

/// One UPDATE sets every finished delivery's state (rows of [`settled_rows`] at `$1`),
/// whatever its outcome, and keeps a first attempt that delivered on its row ([`kept_on_row`]).
/// A turn then writes two statements at most, however many deliveries it records. PostgreSQL's:
/// SQLite's reads its rows from plain parameters ([`outbox_sqlite`](super::outbox_sqlite)).
fn settle_sql() -> String {
    // `"y"` at 5 marks an attempt kept on the row.
    format!(
        "UPDATE deliveries SET status = e.value ->> 1, attempts = CAST(e.value ->> 2 AS BIGINT), \
             next_attempt_at = CAST(e.value ->> 3 AS BIGINT), lease_until = 0, \
             updated_at = CAST(e.value ->> 4 AS BIGINT), \
             first_attempted_at = CASE WHEN e.value ->> 5 = 'y' THEN CAST(e.value ->> 4 AS BIGINT) ELSE first_attempted_at END, \
             first_status_code = CASE WHEN e.value ->> 5 = 'y' THEN CAST(e.value ->> 6 AS BIGINT) ELSE first_status_code END, \
             first_latency_ms = CASE WHEN e.value ->> 5 = 'y' THEN CAST(e.value ->> 7 AS BIGINT) ELSE first_latency_ms END, \
             first_response_excerpt = CASE WHEN e.value ->> 5 = 'y' THEN e.value ->> 8 ELSE first_response_excerpt END \
         FROM {} WHERE deliveries.id = e.value ->> 0",
        json_rows(Dialect::Postgres, 1),
    )
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
    /// the same row. Deliveries of the accounts in `skip` (holding their share already) are
    /// not claimed.
    ///
    /// The claim takes the rows' leases and reads what they carry (the event's body, the
    /// subscription's destination) as one JSON array in one row: a row per delivery had cost
    /// the store's thread a hand-over (and a wake of this one) for each, and this side a
    /// decoded row of a dozen columns. A leased row's next attempt is due when its lease runs
    /// out (should this attempt be lost), so `next_attempt_at` moves there: the due scan,
    /// which walks `next_attempt_at` in order, then never steps over rows in flight.
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
        let logged = logged_rows(finished);
        let skip = (!skip.is_empty()).then(|| serde_json::json!(skip).to_string());
        match &self.writer {
            Writer::Single { conn, .. } => {
                let turn = Turn { finished, logged, now, lease_until: now + lease_ms, limit, skip };
                turn.run(conn).await
            }
            Writer::Pool(_) => {
                let mut tx = self.begin_write().await?;
                let states = (!finished.is_empty()).then(|| settled_rows(finished));
                for (sql, rows) in [(settle_sql(), states), (log_sql(self.dialect, 1), logged)] {
                    if let Some(rows) = rows {
                        sqlx::query(&sql).bind(rows).execute(&mut *tx).await?;
                    }
                }
                let claimed = if limit > 0 {
                    // One statement: the UPDATE … RETURNING aggregated. Its outer condition is
                    // checked again on each row it updates, so two instances never lease the
                    // same row.
                    let sql = format!(
                        "WITH d AS (UPDATE deliveries SET lease_until = $2, next_attempt_at = $2 \
                                    WHERE id IN ({}) AND status = 'pending' AND lease_until <= $1 \
                                    RETURNING id, account_id, environment, subscription_id, destination, attempts, event_id) \
                         SELECT CAST(json_agg(json_build_array(CAST(NULL AS BIGINT), {CARRIED})) \
                             FILTER (WHERE e.id IS NOT NULL) AS TEXT) AS claimed, {BODIES} AS bodies \
                         FROM d {CARRIED_FROM}",
                        due_sql(self.dialect, "id", 1, 3, skip.as_ref().map(|_| 4)),
                    );
                    let mut query = sqlx::query(&sql).bind(now).bind(now + lease_ms).bind(limit);
                    if let Some(skip) = skip {
                        query = query.bind(skip);
                    }
                    let row = query.fetch_one(&mut *tx).await?;
                    claimed_from(row.get("claimed"), row.get("bodies"))?
                } else {
                    Vec::new()
                };
                tx.commit().await?;
                Ok(claimed)
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settled_rows_are_the_json_arrays_the_settling_statements_read() {
        let delivered = Finished {
            delivery_id: "dlv_a".into(),
            row: Some(7),
            number: 1,
            attempt: Attempt {
                at: 100,
                status_code: Some(200),
                latency_ms: 3,
                response_excerpt: Some("ok \"fine\"\0".into()),
                ..Attempt::default()
            },
            status: "delivered",
        };
        let retried = Finished {
            delivery_id: "dlv_b".into(),
            row: None,
            number: 2,
            attempt: Attempt {
                at: 200,
                status_code: None,
                latency_ms: 15_000,
                response_excerpt: None,
                error: Some("timed out".into()),
                next_retry_at: Some(30_200),
            },
            status: "pending",
        };
        let both = [delivered.clone(), retried];
        let states: serde_json::Value = serde_json::from_str(&settled_rows(&both)).unwrap();
        assert_eq!(
            states,
            serde_json::json!([
                ["dlv_a", "delivered", 1, 100, 100, "y", 200, 3, "ok \"fine\"\u{fffd}", 7],
                ["dlv_b", "pending", 2, 30_200, 200, null, null, 15_000, null, null]
            ])
        );
        let logged: serde_json::Value = serde_json::from_str(&logged_rows(&both).unwrap()).unwrap();
        assert_eq!(logged, serde_json::json!([["dlv_b", 2, 200, null, 15_000, null, "timed out", 30_200]]));
        assert_eq!(logged_rows(&[delivered]), None, "a first attempt that delivered is kept on its row");
    }

    #[test]
    fn a_claims_bodies_are_cut_by_their_byte_lengths_whatever_they_hold() {
        let claimed = r#"[[7,"dlv_a","acc","sandbox","sub","webhook",0,"ev_a","http://r/hook",null,null,null],
                          [8,"dlv_b","acc","sandbox","sub","webhook",2,"ev_b","http://r/hook",null,null,null]]"#;
        let first = r#"{"name":"Müller: 12:30","note":"a\"quoted\""}"#;
        let second = "{\"emoji\":\"🚚\",\"empty\":\"\"}";
        let bodies = format!("{}:{first}{}:{second}", first.len(), second.len());
        let got = claimed_from(Some(claimed.into()), Some(bodies)).unwrap();
        assert_eq!((got[0].body.as_str(), got[1].body.as_str()), (first, second));
        assert_eq!((got[0].row, got[1].attempts, got[1].event_id.as_str()), (Some(7), 2, "ev_b"));

        let short = format!("{}:{first}", first.len() + 1);
        assert!(claimed_from(Some(claimed.into()), Some(short)).is_err(), "a body cut short");
        let extra = format!("{}:{first}{}:{second}2:{{}}", first.len(), second.len());
        assert!(claimed_from(Some(claimed.into()), Some(extra)).is_err(), "a body too many");
        assert!(claimed_from(None, None).unwrap().is_empty());
    }
}
