//! Account-wide events (an entity's status change): each stored once by its ID, with its
//! deliveries in the same transaction.

use super::json_params::{json_rows, json_string_array, json_text, positional_rows};
use super::outbox::account_deliveries;
use super::{Dialect, Owner, RecordError, Records};
use sqlx::Row;
use std::sync::OnceLock;

/// An account-wide event (an entity's status change), its ID derived from what happened.
pub struct AccountEvent {
    pub id: String,
    pub event_type: &'static str,
    pub body: serde_json::Value,
}

/// Account events written per transaction: a seed of 10,000 entities is ten writes, not
/// 10,000, and no write holds SQLite's lock for long.
const EVENTS_PER_WRITE: usize = 1_000;

/// The rows of SQLite's insert: a batch takes the smallest that holds it, the rest NULL rows
/// that insert nothing. A few shapes, each prepared once and kept in the statement cache.
const SQLITE_ROWS: [usize; 3] = [8, 64, EVENTS_PER_WRITE];

/// The insert of a batch of events; `RETURNING` names the rows inserted (not those already
/// there) when deliveries are to follow. `WHERE` keeps SQLite from reading `ON CONFLICT`
/// as a join's `ON`.
///
/// SQLite's reads its rows from plain `?` parameters, three a row, then the account, the
/// environment and the time. From one JSON parameter (as on PostgreSQL) each `e.value ->> i`
/// turned the row back into text and parsed it again: ~11 % of SQLite's thread in a bulk
/// seed, each body also escaped into the JSON and out again.
fn insert_sql(dialect: Dialect, rows: usize, returning: bool) -> String {
    let returning = if returning { " RETURNING id" } else { "" };
    let columns = "INSERT INTO events (id, account_id, environment, event_type, body, created_at)";
    match dialect {
        Dialect::Sqlite => format!(
            "WITH r(id, type, body) AS (VALUES {}) {columns} SELECT r.id, ?, ?, r.type, r.body, ? FROM r \
             WHERE r.id IS NOT NULL ON CONFLICT (id) DO NOTHING{returning}",
            positional_rows(3, rows)
        ),
        Dialect::Postgres => format!(
            "{columns} SELECT e.value ->> 0, $2, $3, e.value ->> 1, e.value ->> 2, $4 \
             FROM {} WHERE TRUE ON CONFLICT (id) DO NOTHING{returning}",
            json_rows(dialect, 1)
        ),
    }
}

/// SQLite's insert for the `shape`-th of [`SQLITE_ROWS`], written once per process (up to
/// 1,000 rows of `?`: formatting it for every batch was needless).
fn sqlite_insert_sql(shape: usize, returning: bool) -> &'static str {
    static SQL: OnceLock<Vec<[String; 2]>> = OnceLock::new();
    let shapes = SQL.get_or_init(|| {
        SQLITE_ROWS.iter().map(|rows| [false, true].map(|r| insert_sql(Dialect::Sqlite, *rows, r))).collect()
    });
    &shapes[shape][usize::from(returning)]
}

/// `[[id, type, body], …]` for PostgreSQL's insert, written as text (NULs as U+FFFD, see
/// [`json_text`]): a seed's 100,000 `entity.proposed` events went through a JSON value per
/// event, a pass to clean it and a second serialisation.
fn event_rows(events: &[AccountEvent], bodies: &[String]) -> String {
    let mut rows = String::with_capacity(events.len() * 320);
    rows.push('[');
    for (i, (event, body)) in events.iter().zip(bodies).enumerate() {
        if i > 0 {
            rows.push(',');
        }
        rows.push('[');
        json_text(&mut rows, Some(&event.id));
        rows.push(',');
        json_text(&mut rows, Some(event.event_type));
        rows.push(',');
        json_text(&mut rows, Some(body));
        rows.push(']');
    }
    rows.push(']');
    rows
}

/// The event types the environment's live account-wide subscriptions listen to.
fn subscribed_types(owner: Owner<'_>) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments<'_>> {
    sqlx::query(
        "SELECT DISTINCT type FROM subscriptions WHERE account_id = $1 AND environment = $2 \
         AND function_id IS NULL AND collection_id IS NULL AND disabled = 0",
    )
    .bind(owner.account_id)
    .bind(owner.environment)
}

impl Records {
    /// The account-wide event types (`entity_proposed`, …) some live subscription of the
    /// environment listens to: an event of any other type would be stored for nobody.
    pub async fn subscribed_account_event_types(&self, owner: Owner<'_>) -> Result<Vec<String>, RecordError> {
        let rows = subscribed_types(owner).fetch_all(&self.pool).await?;
        Ok(rows.iter().map(|row| row.get("type")).collect())
    }

    /// Records account-wide events, each once by its ID, with their deliveries in the same
    /// transaction as the event. A batch's events go in one INSERT: one statement per event
    /// had cost a seed of 1,000 entities ~40 ms, longer than its lookups in the graph.
    pub async fn record_account_events(
        &self,
        owner: Owner<'_>,
        events: &[AccountEvent],
        now: i64,
    ) -> Result<(), RecordError> {
        for batch in events.chunks(EVENTS_PER_WRITE) {
            let mut tx = self.begin_write().await?;
            // The types someone subscribed to, read in the transaction that enqueues: an event
            // of another type skips the outbox's statements.
            let subscribed = subscribed_types(owner).fetch_all(&mut *tx).await?;
            let subscribed: Vec<String> = subscribed.iter().map(|row| row.get("type")).collect();
            // Without a subscription nothing reads which rows were new: returning them cost a
            // hand-over from SQLite's thread per event.
            let returning = batch.iter().any(|event| subscribed.iter().any(|t| t == event.event_type));
            // serde_json escapes a NUL in a string, so a body holds none.
            let bodies: Vec<String> = batch.iter().map(|event| event.body.to_string()).collect();
            let insert = match self.dialect {
                Dialect::Sqlite => {
                    // A batch is at most EVENTS_PER_WRITE, the largest shape.
                    let (shape, rows) = SQLITE_ROWS
                        .into_iter()
                        .enumerate()
                        .find(|(_, rows)| *rows >= batch.len())
                        .unwrap_or((SQLITE_ROWS.len() - 1, EVENTS_PER_WRITE));
                    let mut query = sqlx::query(sqlite_insert_sql(shape, returning));
                    for (event, body) in batch.iter().zip(&bodies) {
                        query = query.bind(event.id.as_str()).bind(event.event_type).bind(body.as_str());
                    }
                    for _ in batch.len()..rows {
                        query = query.bind(None::<&str>).bind(None::<&str>).bind(None::<&str>);
                    }
                    let query = query.bind(owner.account_id).bind(owner.environment).bind(now);
                    query.fetch_all(&mut *tx).await?
                }
                Dialect::Postgres => {
                    let sql = insert_sql(self.dialect, batch.len(), returning);
                    let query = sqlx::query(&sql).bind(event_rows(batch, &bodies));
                    let query = query.bind(owner.account_id).bind(owner.environment).bind(now);
                    query.fetch_all(&mut *tx).await?
                }
            };
            // Only the events new in this write are delivered: a replayed chunk's were already.
            if returning {
                let new = json_string_array(insert.iter().map(|row| row.get::<&str, _>("id")));
                account_deliveries(self.dialect, owner, new, now).execute(&mut tx).await?;
            }
            tx.commit().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::subscriptions::SubscriptionBounds;

    async fn stored(records: &Records) -> Vec<(String, String, String)> {
        sqlx::query("SELECT id, event_type, body FROM events ORDER BY id")
            .fetch_all(&records.pool)
            .await
            .unwrap()
            .iter()
            .map(|row| (row.get("id"), row.get("event_type"), row.get("body")))
            .collect()
    }

    /// Events `range`, every tenth an `entity_merged` (the others `entity_proposed`).
    fn events(range: std::ops::Range<usize>) -> Vec<AccountEvent> {
        range
            .map(|i| {
                let event_type = if i % 10 == 0 { "entity_merged" } else { "entity_proposed" };
                AccountEvent {
                    id: format!("evt_{event_type}_ent_{i:05}"),
                    event_type,
                    body: serde_json::json!({ "entityID": format!("ent_{i:05}"), "note": "a \"quoted\" \u{0}" }),
                }
            })
            .collect()
    }

    fn subscription(id: &str, event_type: &str) -> super::super::subscriptions::SubscriptionRow {
        super::super::subscriptions::SubscriptionRow {
            id: id.into(),
            subscription_type: event_type.into(),
            webhook_url: Some(format!("https://h.example.com/{id}")),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn account_events_of_every_batch_size_are_stored_once_and_delivered_when_new() {
        let (_dir, records) = Records::on_sqlite_for_tests().await;
        let owner = Owner { account_id: "acc_a", environment: "sandbox" };
        // One of each shape, a batch filling the largest, and one past it; nobody subscribed.
        for range in [0..1, 1..10, 10..74, 74..1_074, 1_074..2_100] {
            records.record_account_events(owner, &events(range), 5).await.unwrap();
        }
        // Proposals go to a webhook; merges to a webhook and a bucket; a disabled subscription
        // and another tenant's get nothing.
        records
            .save_subscription(owner, &subscription("sub_p", "entity_proposed"), SubscriptionBounds::NONE)
            .await
            .unwrap();
        let merged = super::super::subscriptions::SubscriptionRow {
            s3_bucket: Some("bucket".into()),
            ..subscription("sub_m", "entity_merged")
        };
        records.save_subscription(owner, &merged, SubscriptionBounds::NONE).await.unwrap();
        let off = super::super::subscriptions::SubscriptionRow {
            disabled: true,
            ..subscription("sub_off", "entity_proposed")
        };
        records.save_subscription(owner, &off, SubscriptionBounds::NONE).await.unwrap();
        let stranger = Owner { account_id: "acc_b", environment: "sandbox" };
        records
            .save_subscription(stranger, &subscription("sub_b", "entity_proposed"), SubscriptionBounds::NONE)
            .await
            .unwrap();
        // Recorded again with a hundred new ones (a replayed seed chunk, then more): only the
        // new ones are added, and only they are delivered.
        records.record_account_events(owner, &events(2_000..2_200), 6).await.unwrap();
        let rows = stored(&records).await;
        let mut expected: Vec<_> = events(0..2_200)
            .into_iter()
            .map(|event| (event.id, event.event_type.to_string(), event.body.to_string()))
            .collect();
        expected.sort();
        assert_eq!(rows, expected);
        let body: serde_json::Value = serde_json::from_str(&rows[7].2).unwrap();
        assert_eq!(body["note"], "a \"quoted\" \u{0}", "a body is stored as the JSON it was");
        let delivered: Vec<(String, String, String, String)> =
            sqlx::query("SELECT id, account_id, event_id, status FROM deliveries ORDER BY id")
                .fetch_all(&records.pool)
                .await
                .unwrap()
                .iter()
                .map(|row| (row.get("id"), row.get("account_id"), row.get("event_id"), row.get("status")))
                .collect();
        let mut expected: Vec<(String, String, String, String)> = Vec::new();
        for event in events(2_100..2_200) {
            let (subscription, destinations) = match event.event_type {
                "entity_merged" => ("sub_m", &["s3", "webhook"][..]),
                _ => ("sub_p", &["webhook"][..]),
            };
            for destination in destinations {
                let id = format!("dlv_{subscription}_{}_{destination}", event.id);
                expected.push((id, "acc_a".into(), event.id.clone(), "pending".into()));
            }
        }
        expected.sort();
        assert_eq!(delivered, expected);
    }
}
