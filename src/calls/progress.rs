//! A call's finished node runs not yet recorded. Writing each run in a transaction of its own
//! cost most of a quick call's time (a 3-node call made ~22 writes), so the executor keeps
//! finished runs here and records them together, with the call's end, in one transaction.
//!
//! Durability is unchanged: a run's checkpoint and events still go in one transaction, so a
//! call cut off by a crash reruns only the runs not recorded, and their events were not
//! recorded either, so none is emitted twice. What a crash can cost is redoing those runs;
//! hence pending runs are recorded before the next node starts whenever one of them
//! - acted outside the records (a send; linking into the knowledge graph; keeping a parsed
//!   document), so that it is not redone after a crash more often than before;
//! - took longer than [`RUN_SHOWN_AFTER`] (a language-model request is not cheap to redo),
//!   or the oldest has waited that long (traces lag a running call by at most that much);
//! - or [`MAX_PENDING_EVENTS`] events are waiting (a split's items).

use super::{linking, CallRow, Plan, Recorded};
use crate::store::records::calls::{FinishedRun, FunctionCallRow};
use crate::store::records::events::NewEvent;
use crate::store::records::progress::CallEnd;
use crate::store::records::Owner;
use crate::store::records::Records;
use crate::versions::{FunctionVersion, Kind};
use anyhow::Context as _;
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A run stored as `running` before it ends only if it lasts longer than this: quick runs
/// (most built-in functions take well under a millisecond) are stored once, finished, with
/// their events. A crash during a quick run leaves no row, and the run starts again as its
/// first try; a crash during a longer one shows as try 2.
pub(super) const RUN_SHOWN_AFTER: Duration = Duration::from_millis(50);

/// Pending events that make the runs holding them be recorded before the next node starts.
const MAX_PENDING_EVENTS: usize = 256;

/// An event a run emits, before it is stored.
pub(super) struct Emission {
    pub event_type: String,
    pub body: Value,
    pub intermediate: bool,
    /// Same key, same event (see [`NewEvent::dedupe_key`]).
    pub key: String,
}

impl Emission {
    /// The ID the event is given (and stored under, being new).
    pub fn id(&self) -> &str {
        self.body.get("eventID").and_then(Value::as_str).unwrap_or_default()
    }
}

/// A run that ran now and finished, with what it emitted.
pub(super) struct FinishedNow {
    pub node: String,
    /// With its final status, output and error.
    pub run: FunctionCallRow,
    /// It was stored as `running` while it ran.
    pub shown: bool,
    /// An earlier attempt left a row for the same node and item.
    pub replaces: bool,
    pub reference_id: String,
    pub emissions: Vec<Emission>,
    /// When it finished: its events' time.
    pub now: i64,
}

/// Finished runs waiting to be recorded, and whether they must be before the next node.
#[derive(Default)]
pub(super) struct Progress {
    pending: Vec<FinishedNow>,
    since: Option<Instant>,
    events: usize,
    urgent: bool,
}

impl Progress {
    /// Keeps a run that finished now; `elapsed` is how long it ran.
    pub fn add(&mut self, finished: FinishedNow, function: &FunctionVersion, elapsed: Duration) {
        self.urgent |= acts_outside_records(function) || finished.shown || elapsed >= RUN_SHOWN_AFTER;
        self.since.get_or_insert_with(Instant::now);
        self.events += finished.emissions.len();
        self.pending.push(finished);
    }

    /// The pending runs should be recorded before another node starts.
    pub fn due(&self) -> bool {
        self.urgent
            || self.events >= MAX_PENDING_EVENTS
            || self.since.is_some_and(|since| since.elapsed() >= RUN_SHOWN_AFTER)
    }

    /// Hands over the pending runs, to be recorded.
    pub fn take(&mut self) -> Vec<FinishedNow> {
        let pending = std::mem::take(&mut self.pending);
        *self = Self::default();
        pending
    }
}

/// Whether a function's run does something outside the call's own records that a rerun would
/// do again.
fn acts_outside_records(function: &FunctionVersion) -> bool {
    function.kind() == Kind::Send || linking::links(function) || function.function_type == "parse"
}

/// Records finished runs (and the call's end, when given) in one transaction.
pub(super) async fn record(
    records: &Records,
    owner: Owner<'_>,
    call: &CallRow,
    plan: &Plan,
    finished: &[FinishedNow],
    end: Option<CallEnd<'_>>,
) -> anyhow::Result<()> {
    let mut runs = Vec::with_capacity(finished.len());
    let mut events = Vec::new();
    for done in finished {
        let function = plan.functions.get(&done.node).context("node without a function")?;
        runs.push(FinishedRun { run: &done.run, shown: done.shown, replaces: done.replaces });
        let of_run =
            EmittedBy { call, function, function_call_id: &done.run.id, reference_id: &done.reference_id };
        events.extend(done.emissions.iter().map(|emission| of_run.event(emission, done.now)));
    }
    records.record_runs(owner, &runs, &events, end).await?;
    Ok(())
}

/// What every event of one run has in common.
pub(super) struct EmittedBy<'a> {
    pub call: &'a CallRow,
    pub function: &'a FunctionVersion,
    pub function_call_id: &'a str,
    pub reference_id: &'a str,
}

impl<'a> EmittedBy<'a> {
    pub fn event(&self, emission: &'a Emission, now: i64) -> NewEvent<'a> {
        NewEvent {
            id: emission.id(),
            event_type: &emission.event_type,
            body: &emission.body,
            call_id: &self.call.id,
            function_call_id: self.function_call_id,
            workflow_id: &self.call.workflow_id,
            workflow_name: &self.call.workflow_name,
            function_id: &self.function.function_id,
            function_name: &self.function.function_name,
            function_version_num: self.function.version_num,
            reference_id: self.reference_id,
            intermediate: emission.intermediate,
            dedupe_key: &emission.key,
            now,
        }
    }
}

/// Events a call's recorded runs may hold for its waiter before they are dropped (and the
/// waiter reads the call back instead).
const MAX_KEPT_EVENTS: usize = 256;

/// What a call has recorded so far, kept for its answer while it stays small and every run
/// of the call ran in this attempt.
pub(super) struct Kept {
    runs: Vec<FinishedNow>,
    events: usize,
}

impl Kept {
    pub fn new() -> Self {
        Self { runs: Vec::new(), events: 0 }
    }

    /// Keeps runs just recorded; `None` once they are too many.
    pub fn extend(kept: Option<Self>, recorded: Vec<FinishedNow>) -> Option<Self> {
        let mut kept = kept?;
        kept.events += recorded.iter().map(|run| run.emissions.len()).sum::<usize>();
        kept.runs.extend(recorded);
        (kept.events <= MAX_KEPT_EVENTS).then_some(kept)
    }

    /// The runs' nodes and the events as the records return them: events by time, then by ID.
    pub fn into_recorded(self) -> Recorded {
        let mut events: Vec<(i64, String, Value, bool)> = Vec::with_capacity(self.events);
        let mut nodes = HashMap::with_capacity(self.runs.len());
        for done in self.runs {
            for emission in done.emissions {
                events.push((done.now, emission.id().to_string(), emission.body, emission.intermediate));
            }
            nodes.insert(done.run.id, done.run.node_name);
        }
        events.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        Recorded {
            nodes,
            events: events.into_iter().map(|(_, _, body, intermediate)| (body, intermediate)).collect(),
        }
    }
}
