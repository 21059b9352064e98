//! What a workflow call's node runs leave in the records: their checkpoints, their events
//! (with the outputs views read and the deliveries subscriptions ask for) and, with the last
//! of them, the call's end. The executor hands over several runs at once, so each kind of row
//! is one multi-row statement, and all of them one transaction (on SQLite one round trip, see
//! [`batch`](super::batch)), however many runs it holds.

use super::batch::ROWS_PER_INSERT;
use super::batch::{Batch, Statement};
use super::calls::{add_checkpoints, FinishedRun};
use super::events::NewEvent;
use super::filters::{placeholders, value_rows};
use super::jobs::mark_done;
use super::json_params::without_nul;
use super::outbox::{self, EventSource};
use super::Owner;
use super::{Dialect, RecordError, Records};
use sqlx::Row;
use std::collections::HashMap;

/// Events per `event_outputs` statement: one `SELECT` each, and SQLite allows at most 500 in
/// a compound `SELECT`.
const OUTPUTS_PER_INSERT: usize = 200;

/// How a call ended, recorded in the transaction of its last runs.
#[derive(Clone, Copy, Debug)]
pub struct CallEnd<'a> {
    pub call_id: &'a str,
    pub status: &'a str,
    pub finished_at: i64,
    /// The call's job and the worker holding it, marked done in the same transaction.
    pub job: Option<(&'a str, &'a str)>,
}

impl Records {
    /// Records node runs in one transaction (on SQLite one round trip): the checkpoints of
    /// those that ran now (runs reused from an earlier attempt have none), their events, each
    /// unless one with its dedupe key exists, and the call's end when given. A terminal
    /// event's deliveries to the subscriptions of its function are written in the same
    /// transaction, so an event is never recorded without them, nor a checkpoint without its
    /// events.
    pub async fn record_runs<'a>(
        &self,
        owner: Owner<'a>,
        runs: &'a [FinishedRun<'a>],
        events: &'a [NewEvent<'a>],
        end: Option<CallEnd<'a>>,
    ) -> Result<(), RecordError> {
        let mut batch = Batch::default();
        add_checkpoints(&mut batch, runs);
        self.add_events(&mut batch, owner, events);
        if let Some(end) = end {
            batch.add(
                Statement::new("UPDATE calls SET status = $1, finished_at = $2 WHERE id = $3")
                    .arg(end.status)
                    .arg(end.finished_at)
                    .arg(end.call_id),
            );
            if let Some((job, worker)) = end.job {
                batch.add(mark_done(job, worker));
            }
        }
        self.write_batch(&batch).await
    }

    /// Records one event that belongs to no node run being checkpointed; returns the stored
    /// ID (an earlier event's when its dedupe key was recorded before).
    pub async fn record_pipeline_event(
        &self,
        owner: Owner<'_>,
        event: NewEvent<'_>,
    ) -> Result<String, RecordError> {
        let events = std::slice::from_ref(&event);
        self.record_runs(owner, &[], events, None).await?;
        let mut ids = self.stored_event_ids(events).await?;
        ids.pop().ok_or_else(|| RecordError::Unavailable("an event was recorded without an ID".into()))
    }

    /// The stored ID of each event, by its dedupe key, in order.
    pub async fn stored_event_ids(&self, events: &[NewEvent<'_>]) -> Result<Vec<String>, RecordError> {
        let mut found = HashMap::new();
        for chunk in events.chunks(ROWS_PER_INSERT) {
            let sql = format!(
                "SELECT id, dedupe_key FROM events WHERE dedupe_key IN ({})",
                placeholders(1, chunk.len())
            );
            let mut query = sqlx::query(&sql);
            for event in chunk {
                query = query.bind(event.dedupe_key);
            }
            for row in query.fetch_all(&self.pool).await? {
                found.insert(row.get::<String, _>("dedupe_key"), row.get::<String, _>("id"));
            }
        }
        events
            .iter()
            .map(|e| {
                found.remove(e.dedupe_key).ok_or_else(|| {
                    RecordError::Unavailable(format!("event {} was not recorded", e.dedupe_key))
                })
            })
            .collect()
    }

    /// Adds to `batch` the events whose dedupe key is new, with their outputs and deliveries
    /// (written only for the events the insert recorded).
    fn add_events<'a>(&self, batch: &mut Batch<'a>, owner: Owner<'a>, events: &'a [NewEvent<'a>]) {
        for chunk in events.chunks(ROWS_PER_INSERT) {
            let rows = value_rows(chunk.len(), 17);
            let mut insert = Statement::new(format!(
                "INSERT INTO events (id, account_id, environment, event_type, body, created_at, call_id, \
                     function_call_id, workflow_id, workflow_name, function_id, function_name, \
                     function_version_num, reference_id, intermediate, labelled, dedupe_key) \
                 VALUES {rows} ON CONFLICT (dedupe_key) DO NOTHING"
            ));
            for event in chunk {
                insert.push(event.id);
                insert.push(owner.account_id);
                insert.push(owner.environment);
                insert.push(event.event_type);
                insert.push(event.body.to_string());
                insert.push(event.now);
                insert.push(event.call_id);
                insert.push(event.function_call_id);
                insert.push(event.workflow_id);
                insert.push(event.workflow_name);
                insert.push(event.function_id);
                insert.push(event.function_name);
                insert.push(event.function_version_num);
                insert.push(event.reference_id);
                insert.push(i64::from(event.intermediate));
                // Not labelled yet.
                insert.push(0);
                insert.push(event.dedupe_key);
            }
            batch.add(insert);
        }
        let outputs: Vec<&NewEvent<'a>> = events.iter().filter(|e| e.event_type != "error").collect();
        for chunk in outputs.chunks(OUTPUTS_PER_INSERT) {
            batch.add(self.outputs(owner, chunk));
        }
        for event in events.iter().filter(|e| !e.intermediate) {
            let source = EventSource::Function {
                function_id: event.function_id,
                is_error: event.event_type == "error",
            };
            batch.add(outbox::enqueued(owner, event.id, source, event.now));
        }
    }

    /// Keeps the `transformedContent` of each event in `event_outputs`, which views read (see
    /// the migration `0012_event_outputs`), when the event was recorded under its ID.
    fn outputs<'a>(&self, owner: Owner<'a>, events: &[&'a NewEvent<'a>]) -> Statement<'a> {
        let rows = (0..events.len())
            .map(|row| {
                let at = row * 6;
                let json = match self.dialect {
                    Dialect::Sqlite => format!("jsonb(${})", at + 6),
                    Dialect::Postgres => format!("CAST(${} AS JSONB)", at + 6),
                };
                format!(
                    "SELECT {}, {json} WHERE EXISTS (SELECT 1 FROM events WHERE id = ${})",
                    placeholders(at + 1, 5),
                    at + 1
                )
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let mut insert = Statement::new(format!(
            "INSERT INTO event_outputs (event_id, account_id, environment, function_id, created_at, content) {rows}"
        ));
        for event in events {
            insert.push(event.id);
            insert.push(owner.account_id);
            insert.push(owner.environment);
            insert.push(event.function_id);
            insert.push(event.now);
            insert.push(self.output_json(event));
        }
        insert
    }

    /// The event's `transformedContent` as JSON text the store accepts.
    fn output_json(&self, event: &NewEvent<'_>) -> Option<String> {
        event.body.get("transformedContent").map(|content| {
            let text = content.to_string();
            // PostgreSQL's JSONB holds no NUL character; the events table keeps the original.
            if self.dialect == Dialect::Postgres && text.contains("\\u0000") {
                without_nul(content.clone()).to_string()
            } else {
                text
            }
        })
    }
}
