//! Pipeline events: terminal outputs and errors of calls (and their intermediate outputs,
//! kept for traces). The stored body is the event exactly as the API returns it.

use super::filters::Cursor;
use super::filters::{page_rows, placeholders, Filter};
use super::outbox::{self, EventSource};
use super::Owner;
use super::{RecordError, Records};
use futures::TryStreamExt;
use serde_json::Value;
use sqlx::Row;
use std::collections::HashMap;

/// Stored bytes of event bodies one page of a list reads at most: an output may be tens of
/// MiB (a document's text as JSON).
pub use super::filters::PAGE_BYTES;

/// A terminal event read by [`Records::terminal_events_within`].
pub struct TerminalEvent {
    pub event_type: String,
    /// The stored body's length (characters, as the store counts them).
    pub length: usize,
    /// The body, when it was within the bounds (its own, and the total read).
    pub body: Option<Value>,
}

/// An event to record once.
pub struct NewEvent<'a> {
    pub id: &'a str,
    pub event_type: &'a str,
    pub body: &'a Value,
    pub call_id: &'a str,
    pub function_call_id: &'a str,
    pub workflow_id: &'a str,
    pub workflow_name: &'a str,
    pub function_id: &'a str,
    pub function_name: &'a str,
    pub function_version_num: i64,
    pub reference_id: &'a str,
    pub intermediate: bool,
    /// Same key, same event: recording it again changes nothing.
    pub dedupe_key: &'a str,
    pub now: i64,
}

/// Which events a list returns; every given filter must hold.
#[derive(Default, Debug)]
pub struct EventFilter {
    pub event_ids: Vec<String>,
    pub call_ids: Vec<String>,
    pub event_types: Vec<String>,
    pub workflow_ids: Vec<String>,
    pub workflow_names: Vec<String>,
    pub function_ids: Vec<String>,
    pub function_names: Vec<String>,
    pub function_version_nums: Vec<i64>,
    pub reference_ids: Vec<String>,
    pub reference_id_substring: Option<String>,
    pub is_labelled: Option<bool>,
    /// Only outputs of regression runs (true) or none of them (false).
    pub is_regression: Option<bool>,
    /// `Some(true)` only errors, `Some(false)` only non-errors.
    pub errors: Option<bool>,
    pub include_intermediate: bool,
}

impl Records {
    /// Records an event that belongs to no call (a collection's, an entity's) once by its ID,
    /// with its deliveries to `source`'s subscriptions in the same transaction.
    pub async fn record_event_once(
        &self,
        owner: Owner<'_>,
        id: &str,
        event_type: &str,
        body: &Value,
        now: i64,
        source: Option<EventSource<'_>>,
    ) -> Result<(), RecordError> {
        let mut tx = self.begin_write().await?;
        let inserted = insert_once(&mut tx, owner, id, event_type, body, now).await?;
        if let (true, Some(source)) = (inserted, source) {
            outbox::enqueue(&mut tx, owner, id, source, now).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The terminal events of a page of calls (`call_ids` in the order the page was read, by
    /// ID: `descending` when that order is), in one statement, reading at most [`PAGE_BYTES`]
    /// of bodies beyond the first call's: the calls whose events were all read, by call ID,
    /// with their events. A call past the bytes is left out, with every call after it.
    pub async fn terminal_events_of_page(
        &self,
        call_ids: &[String],
        descending: bool,
    ) -> Result<HashMap<String, Vec<(Value, bool)>>, RecordError> {
        let mut by_call: HashMap<String, Vec<(Value, bool)>> = HashMap::new();
        if call_ids.is_empty() {
            return Ok(by_call);
        }
        let sql = format!(
            "SELECT call_id, body FROM events WHERE call_id IN ({}) AND intermediate = 0 \
             ORDER BY call_id {}, created_at, id",
            placeholders(1, call_ids.len()),
            if descending { "DESC" } else { "ASC" }
        );
        let mut query = sqlx::query(&sql);
        for id in call_ids {
            query = query.bind(id);
        }
        let mut rows = query.fetch(&self.pool);
        let (mut bytes, mut cut) = (0usize, None);
        while let Some(row) = rows.try_next().await? {
            let call_id: String = row.get("call_id");
            if bytes >= PAGE_BYTES && !by_call.contains_key(&call_id) {
                cut = Some(call_id);
                break;
            }
            let body = row.get::<String, _>("body");
            bytes += body.len();
            let events = by_call.entry(call_id).or_default();
            events.extend(serde_json::from_str::<Value>(&body).ok().map(|body| (body, false)));
        }
        for id in call_ids {
            let past = cut.as_ref().is_some_and(|cut| if descending { id <= cut } else { id >= cut });
            if past {
                by_call.remove(id);
            } else {
                by_call.entry(id.clone()).or_default();
            }
        }
        Ok(by_call)
    }

    /// The terminal events of many calls in one statement, by call ID in the order they were
    /// recorded, each body read only when it is at most `body_chars` characters long (the
    /// store measures it: a longer one is never read into this process) and while the bodies
    /// read hold at most `total_chars` together (in the order recorded; the rest are kept
    /// without their body).
    pub async fn terminal_events_within(
        &self,
        call_ids: &[String],
        body_chars: usize,
        total_chars: usize,
    ) -> Result<HashMap<String, Vec<TerminalEvent>>, RecordError> {
        let mut by_call: HashMap<String, Vec<TerminalEvent>> = HashMap::new();
        if call_ids.is_empty() {
            return Ok(by_call);
        }
        let bound = call_ids.len() + 1;
        let sql = format!(
            "SELECT call_id, event_type, CAST(length(body) AS BIGINT) AS size, \
             CASE WHEN length(body) <= {} THEN body END AS body \
             FROM events WHERE call_id IN ({}) AND intermediate = 0 ORDER BY created_at, id",
            placeholders(bound, 1),
            placeholders(1, call_ids.len())
        );
        let mut query = sqlx::query(&sql);
        for id in call_ids {
            query = query.bind(id);
        }
        let mut rows = query.bind(body_chars as i64).fetch(&self.pool);
        let mut read = 0;
        while let Some(row) = rows.try_next().await? {
            let length = row.get::<i64, _>("size").max(0) as usize;
            let body: Option<String> =
                row.get::<Option<String>, _>("body").filter(|_| read + length <= total_chars);
            read += if body.is_some() { length } else { 0 };
            let event = TerminalEvent {
                event_type: row.get("event_type"),
                length,
                body: body.and_then(|body| serde_json::from_str(&body).ok()),
            };
            by_call.entry(row.get("call_id")).or_default().push(event);
        }
        Ok(by_call)
    }

    /// One page of the owner's events and how many match in all.
    pub async fn list_events(
        &self,
        owner: Owner<'_>,
        filter: &EventFilter,
        cursor: &Cursor,
        ascending: bool,
        limit: u32,
    ) -> Result<(Vec<Value>, i64), RecordError> {
        let mut conditions = Filter::default();
        conditions.eq("account_id", owner.account_id).eq("environment", owner.environment);
        conditions
            .any_of("id", &filter.event_ids)
            .any_of("call_id", &filter.call_ids)
            .any_of("event_type", &filter.event_types)
            .any_of("workflow_id", &filter.workflow_ids)
            .any_of("workflow_name", &filter.workflow_names)
            .any_of("function_id", &filter.function_ids)
            .any_of("function_name", &filter.function_names)
            .any_of_int("function_version_num", &filter.function_version_nums)
            .any_of("reference_id", &filter.reference_ids);
        if let Some(text) = &filter.reference_id_substring {
            conditions.contains("reference_id", text);
        }
        match filter.is_labelled {
            Some(true) => conditions.raw("labelled = 1"),
            Some(false) => conditions.raw("labelled = 0"),
            None => &mut conditions,
        };
        match filter.is_regression {
            Some(true) => conditions.raw("call_id IN (SELECT call_id FROM regression_calls)"),
            Some(false) => {
                conditions.raw("COALESCE(call_id, '') NOT IN (SELECT call_id FROM regression_calls)")
            }
            None => &mut conditions,
        };
        match filter.errors {
            Some(true) => conditions.raw("event_type = 'error'"),
            Some(false) => conditions.raw("event_type <> 'error'"),
            None => &mut conditions,
        };
        if !filter.include_intermediate {
            conditions.raw("intermediate = 0");
        }
        // Entity lifecycle events exist for delivery; the pipeline's lists do not show them.
        conditions.raw("event_type NOT IN ('entity_proposed', 'entity_validated', 'entity_rejected')");
        let count_sql = format!("SELECT COUNT(*) AS n FROM events {}", conditions.where_clause());
        let total: i64 = conditions.bind(sqlx::query(&count_sql)).fetch_one(&self.pool).await?.get("n");
        let sql = conditions.page_sql("body", "events", "id", cursor, ascending, limit);
        let mut rows = conditions.bind(sqlx::query(&sql)).fetch(&self.pool);
        let (mut bodies, mut bytes) = (Vec::new(), 0usize);
        while bytes < PAGE_BYTES {
            let Some(row) = rows.try_next().await? else { break };
            let body = row.get::<String, _>("body");
            bytes += body.len();
            bodies.extend(serde_json::from_str::<Value>(&body).ok());
        }
        Ok((page_rows(bodies, cursor), total))
    }
}

/// Inserts an event that belongs to no call unless its ID is recorded already; `true` when
/// it was new.
pub(super) async fn insert_once(
    tx: &mut super::writer::WriteTx,
    owner: Owner<'_>,
    id: &str,
    event_type: &str,
    body: &Value,
    now: i64,
) -> Result<bool, RecordError> {
    let done = sqlx::query(
        "INSERT INTO events (id, account_id, environment, event_type, body, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
    )
    .bind(id)
    .bind(owner.account_id)
    .bind(owner.environment)
    .bind(event_type)
    .bind(body.to_string())
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_page_of_large_events_stops_past_its_bytes_and_the_next_page_goes_on_after_it() {
        let (_dir, records) = Records::on_sqlite_for_tests().await;
        let owner = Owner { account_id: "acc_a", environment: "sandbox" };
        // Five events of 5 MiB each: three fit under the page's bytes, the fourth passes them.
        let text = "x".repeat(5 * 1024 * 1024);
        for i in 0..5 {
            let body = json!({"eventID": format!("ev_{i}"), "text": text});
            records.record_event_once(owner, &format!("ev_{i}"), "transform", &body, 1, None).await.unwrap();
        }
        let filter = EventFilter::default();
        let (first, total) = records.list_events(owner, &filter, &Cursor::First, true, 100).await.unwrap();
        let ids = |page: &[Value]| {
            page.iter().map(|e| e["eventID"].as_str().unwrap().to_string()).collect::<Vec<_>>()
        };
        assert_eq!(
            (ids(&first), total),
            (vec!["ev_0".into(), "ev_1".into(), "ev_2".into(), "ev_3".into()], 5)
        );
        let after = Cursor::After("ev_3".into());
        let (rest, _) = records.list_events(owner, &filter, &after, true, 100).await.unwrap();
        assert_eq!(ids(&rest), ["ev_4"]);
        // Backwards, the page holds the events nearest the cursor, in order.
        let before = Cursor::Before("ev_4".into());
        let (back, _) = records.list_events(owner, &filter, &before, true, 100).await.unwrap();
        assert_eq!(ids(&back), ["ev_0", "ev_1", "ev_2", "ev_3"].map(String::from));
        let before = Cursor::Before("ev_1".into());
        let (back, _) = records.list_events(owner, &filter, &before, true, 100).await.unwrap();
        assert_eq!(ids(&back), ["ev_0"]);
    }

    #[tokio::test]
    async fn a_page_of_calls_keeps_the_calls_whose_outputs_fit_its_bytes_in_the_order_it_was_read() {
        let (_dir, records) = Records::on_sqlite_for_tests().await;
        let owner = Owner { account_id: "acc_a", environment: "sandbox" };
        let text = "x".repeat(6 * 1024 * 1024);
        // wc_1 one output (and a large intermediate event, which a call's outputs leave out),
        // wc_2 two, wc_3 none, wc_4 one: 6 MiB each.
        let events = [
            ("ev_1", "wc_1", 0),
            ("ev_1i", "wc_1", 1),
            ("ev_2a", "wc_2", 0),
            ("ev_2b", "wc_2", 0),
            ("ev_4", "wc_4", 0),
        ];
        for (id, call, intermediate) in events {
            let body =
                json!({"eventID": id, "text": if intermediate == 1 { text.repeat(3) } else { text.clone() }});
            records.record_event_once(owner, id, "transform", &body, 1, None).await.unwrap();
            sqlx::query("UPDATE events SET call_id = $1, intermediate = $2 WHERE id = $3")
                .bind(call)
                .bind(intermediate)
                .bind(id)
                .execute(&records.pool)
                .await
                .unwrap();
        }
        let calls: Vec<String> = ["wc_1", "wc_2", "wc_3", "wc_4"].map(String::from).to_vec();
        let counts = |page: &HashMap<String, Vec<(Value, bool)>>| {
            let mut counts: Vec<(String, usize)> =
                page.iter().map(|(id, events)| (id.clone(), events.len())).collect();
            counts.sort();
            counts
        };
        // Read upwards: 18 MiB once wc_2 is read, so wc_4 is left for the next page.
        let up = records.terminal_events_of_page(&calls, false).await.unwrap();
        assert_eq!(counts(&up), [("wc_1".into(), 1), ("wc_2".into(), 2), ("wc_3".into(), 0)]);
        // Read downwards: wc_4, then wc_2 past the bytes, so wc_1 is left out.
        let mut down_ids = calls.clone();
        down_ids.reverse();
        let down = records.terminal_events_of_page(&down_ids, true).await.unwrap();
        assert_eq!(counts(&down), [("wc_2".into(), 2), ("wc_3".into(), 0), ("wc_4".into(), 1)]);
    }
}
