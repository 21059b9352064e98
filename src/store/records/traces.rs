//! What a call's trace reads: its runs and its events, each run's input and output and each
//! event's body read only while the trace's bytes last. A call holds up to 50,000 runs and
//! 128 MiB of outputs, stored twice (each run's checkpoint and its event), and each run's
//! input: read whole, one trace was hundreds of MiB, parsed and copied again to answer.
//!
//! Sizes are asked first, in order, with a running sum (`SUM … OVER`, which both engines
//! have) over the sizes alone: the rows' texts are then read only where the sum is within the
//! bound, and the rows are put in order here rather than in the database's sorter.

use super::calls::{function_call_row, FunctionCallRow, FUNCTION_CALL_COLUMNS};
use super::{RecordError, Records};
use serde_json::Value;
use sqlx::Row;

/// How much of its values a trace reads.
#[derive(Clone, Copy, Debug)]
pub struct TraceBounds {
    /// Bytes of one value (an input, an output, an event's body) read at most.
    pub value_bytes: i64,
    /// Bytes of values read at most, in order: the runs' (inputs and outputs), then the
    /// events' bodies.
    pub total_bytes: i64,
}

/// A run of a trace: its input and output are `None` in `run` when not read, their sizes
/// said here.
#[derive(Clone, Debug)]
pub struct TracedRun {
    pub run: FunctionCallRow,
    /// The input's bytes, when it was not read.
    pub input_omitted: Option<i64>,
    /// The output's bytes, when it was not read, with its first 256 characters (where a
    /// checkpoint names its result and outlet).
    pub output_omitted: Option<(i64, String)>,
}

/// An event of a trace: its body, or its size when the body was not read.
#[derive(Clone, Debug)]
pub struct TracedEvent {
    pub id: String,
    pub event_type: String,
    pub body: Result<Value, i64>,
}

/// The size of `column` when it fits in a value's bound (`$3`), else 0: what counts toward
/// the running sum (a value past its own bound is not read, so it costs nothing).
fn counted(column: &str) -> String {
    format!("CASE WHEN {column} <= $3 THEN {column} ELSE 0 END")
}

/// The running sum, in `order`, of the sizes `s` holds (`$2` and `$3` are the bounds).
fn running(sizes: &str, order: &str) -> String {
    format!("CAST(SUM({sizes}) OVER (ORDER BY {order} ROWS UNBOUNDED PRECEDING) AS BIGINT)")
}

impl Records {
    /// A call's runs (in the order they started) and events (in the order they were
    /// recorded), their values read within `bounds`: the runs' first, then the events'.
    pub async fn trace_of_call(
        &self,
        call_id: &str,
        bounds: TraceBounds,
    ) -> Result<(Vec<TracedRun>, Vec<TracedEvent>), RecordError> {
        let columns: Vec<String> = FUNCTION_CALL_COLUMNS
            .split(',')
            .map(str::trim)
            .filter(|c| *c != "input" && *c != "output")
            .map(|c| format!("r.{c}"))
            .collect();
        let sum = running(&format!("{} + {}", counted("in_n"), counted("out_n")), "started_at, id");
        let runs_sql = format!(
            "SELECT {}, w.in_n, w.out_n, w.running, \
                    CASE WHEN w.running <= $2 AND w.in_n <= $3 THEN r.input END AS input, \
                    CASE WHEN w.running <= $2 AND w.out_n <= $3 THEN r.output END AS output, \
                    CASE WHEN w.running > $2 OR w.out_n > $3 THEN substr(r.output, 1, 256) END AS head \
             FROM (SELECT id, in_n, out_n, {sum} AS running \
                   FROM (SELECT id, started_at, \
                                CAST(COALESCE(octet_length(input), 0) AS BIGINT) AS in_n, \
                                CAST(COALESCE(octet_length(output), 0) AS BIGINT) AS out_n \
                         FROM function_calls WHERE call_id = $1) s) w \
             JOIN function_calls r ON r.id = w.id",
            columns.join(", ")
        );
        let rows = sqlx::query(&runs_sql)
            .bind(call_id)
            .bind(bounds.total_bytes)
            .bind(bounds.value_bytes)
            .fetch_all(&self.pool)
            .await?;
        let mut shown = 0i64;
        let mut runs: Vec<TracedRun> = rows
            .iter()
            .map(|row| {
                let run = function_call_row(row);
                let (in_n, out_n): (i64, i64) = (row.get("in_n"), row.get("out_n"));
                if row.get::<i64, _>("running") <= bounds.total_bytes {
                    shown = shown.max(row.get("running"));
                }
                TracedRun {
                    input_omitted: (run.input.is_none() && in_n > 0).then_some(in_n),
                    output_omitted: match (&run.output, row.get::<Option<String>, _>("head")) {
                        (None, Some(head)) => Some((out_n, head)),
                        _ => None,
                    },
                    run,
                }
            })
            .collect();
        runs.sort_by(|a, b| (a.run.started_at, &a.run.id).cmp(&(b.run.started_at, &b.run.id)));

        // The events' bodies share what the runs left.
        let left = (bounds.total_bytes - shown).max(0);
        let sum = running(&counted("n"), "created_at, id");
        let events_sql = format!(
            "SELECT e.id, e.event_type, e.created_at, w.n, \
                    CASE WHEN w.running <= $2 AND w.n <= $3 THEN e.body END AS body \
             FROM (SELECT id, n, {sum} AS running \
                   FROM (SELECT id, created_at, CAST(octet_length(body) AS BIGINT) AS n \
                         FROM events WHERE call_id = $1) s) w \
             JOIN events e ON e.id = w.id"
        );
        let rows = sqlx::query(&events_sql)
            .bind(call_id)
            .bind(left)
            .bind(bounds.value_bytes)
            .fetch_all(&self.pool)
            .await?;
        let mut events: Vec<(i64, TracedEvent)> = rows
            .iter()
            .map(|row| {
                let body = match row.get::<Option<String>, _>("body") {
                    Some(text) => Ok(serde_json::from_str(&text).unwrap_or(Value::Null)),
                    None => Err(row.get("n")),
                };
                let event = TracedEvent { id: row.get("id"), event_type: row.get("event_type"), body };
                (row.get("created_at"), event)
            })
            .collect();
        events.sort_by(|(a_at, a), (b_at, b)| (a_at, &a.id).cmp(&(b_at, &b.id)));
        Ok((runs, events.into_iter().map(|(_, event)| event).collect()))
    }
}
