//! Runs a call's DAG. Nodes run in topological order from the main node; each node runs
//! once per payload that reaches it (a split fans out, one run per item), except a join,
//! which runs once over everything that reached it. A node whose outlet feeds no edge is
//! terminal: its output becomes an output event, a failure an error event; other nodes'
//! outputs are recorded as intermediate events (they show in traces, not in `outputs`).
//!
//! Every run is checkpointed in `function_calls` in the transaction that records its events
//! (several quick runs share one, see [`progress`](super::progress)), and events are recorded
//! by a key derived from the run, so running a call again after a crash reuses finished runs
//! and emits no event twice.

use super::progress::{self, Emission, EmittedBy, FinishedNow, Kept, Progress, RUN_SHOWN_AFTER};
use super::shapes::RunInfo;
use super::{linking, shapes, CallService, Ended, InputFile, Plan};
use crate::documents::{structure, DocumentService, ParsedBy};
use crate::engines::{self, EngineError, Outcome, Payload, SplitItem};
use crate::graph::Tenant;
use crate::ids;
use crate::jobs::{Completion, HeldJob, JobHandler};
use crate::store::records::calls::{CallRow, FunctionCallRow};
use crate::store::records::keys::Environment;
use crate::store::records::progress::CallEnd;
use crate::versions::{FunctionVersion, Kind};
use anyhow::Context as _;
use async_trait::async_trait;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

/// The job handler of [`CALL_JOB`].
pub struct CallJob {
    pub service: CallService,
}

#[async_trait]
impl JobHandler for CallJob {
    async fn run(&self, payload: Value) -> anyhow::Result<()> {
        self.run_stored(&payload, None).await.map(|_| ())
    }

    async fn run_held(&self, job: HeldJob<'_>) -> anyhow::Result<Completion> {
        self.run_stored(&job.payload, Some(&job)).await
    }

    async fn gave_up(&self, payload: Value, error: &str) {
        give_up(&self.service, payload, error, INTERNAL_FAILURE).await
    }

    async fn abandoned(&self, payload: Value, message: &str) {
        give_up(&self.service, payload, message, message).await
    }
}

impl CallJob {
    async fn run_stored(&self, payload: &Value, job: Option<&HeldJob<'_>>) -> anyhow::Result<Completion> {
        let call_id = payload.get("callID").and_then(Value::as_str).context("call job without callID")?;
        let Some(call) = self.service.records.call_by_id(call_id).await? else {
            tracing::warn!(call_id, "job for a call that no longer exists");
            return Ok(Completion::ByWorker);
        };
        run_call(&self.service, &call, None, false, job).await
    }
}

/// The first attempt of a call's job, by the process that stored the call already claimed
/// (see [`super::INLINE_CALLS`]): it has the call in hand, and knows no run of it exists.
pub struct ClaimedCall {
    pub service: CallService,
    pub call: CallRow,
    /// The plan stored in `call`, as submission resolved it (not parsed back).
    pub plan: Plan,
}

#[async_trait]
impl JobHandler for ClaimedCall {
    async fn run(&self, _payload: Value) -> anyhow::Result<()> {
        run_call(&self.service, &self.call, Some(&self.plan), true, None).await.map(|_| ())
    }

    async fn run_held(&self, job: HeldJob<'_>) -> anyhow::Result<Completion> {
        run_call(&self.service, &self.call, Some(&self.plan), true, Some(&job)).await
    }

    async fn gave_up(&self, payload: Value, error: &str) {
        give_up(&self.service, payload, error, INTERNAL_FAILURE).await
    }

    async fn abandoned(&self, payload: Value, message: &str) {
        give_up(&self.service, payload, message, message).await
    }
}

/// Runs the call unless it has finished, then wakes its waiters. `plan`: the call's plan when
/// the caller holds it (else it is parsed from the call). `fresh`: nothing of it has run yet
/// and it is stored as `running` (no earlier runs to read, no status to set). The call's end
/// is recorded with its last runs, and marks `job` done there when given.
async fn run_call(
    service: &CallService,
    call: &CallRow,
    plan: Option<&Plan>,
    fresh: bool,
    job: Option<&HeldJob<'_>>,
) -> anyhow::Result<Completion> {
    let (completion, ended) = if super::is_final(&call.status) {
        let ended = Ended {
            call_id: call.id.clone(),
            status: call.status.clone(),
            finished_at: call.finished_at,
            recorded: None,
        };
        (Completion::ByWorker, ended)
    } else {
        Execution::new(service, call, plan)?.run(fresh, job).await?
    };
    let _ = service.finished.send(ended);
    Ok(completion)
}

/// What the caller of a call reads when its job failed on errors of canon's own (they are
/// logged, not shown).
const INTERNAL_FAILURE: &str =
    "the call could not be run: every attempt failed on an internal error (the server log says which)";

/// The call could not be run at all (its job exhausted its retries on infrastructure
/// errors, or its worker kept stopping while running it): it fails with `shown` as its
/// error, instead of staying `running` forever. Node failures never get here; they are
/// error events.
async fn give_up(service: &CallService, payload: Value, error: &str, shown: &str) {
    let Some(call_id) = payload.get("callID").and_then(Value::as_str) else { return };
    tracing::error!(call_id, error, "giving up on a workflow call");
    let finished_at = ids::now_millis();
    if let Err(err) = service.records.fail_call(call_id, shown, finished_at).await {
        tracing::error!(call_id, error = %err, "cannot mark the call as failed");
    }
    let ended = Ended {
        call_id: call_id.to_string(),
        status: "failed".into(),
        finished_at: Some(finished_at),
        recorded: None,
    };
    let _ = service.finished.send(ended);
}

/// What a finished run left: reused as is when a call resumes.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "result")]
enum Checkpoint {
    Output { output: Value },
    Routed { outlet: String, output: Value },
    Items { items: Vec<SplitItem> },
    Failed { kind: String, message: String },
}

/// Where a run's result goes once its events are stored.
enum Next {
    Nothing,
    /// One payload down each edge.
    Forward {
        downstream: Vec<(String, Option<String>)>,
        handed_on: Box<Payload>,
    },
    /// Each item of a split down each edge.
    Fan {
        downstream: Vec<(String, Option<String>)>,
        items: Vec<SplitItem>,
    },
}

/// How a run that ran now went.
struct RanNow {
    /// It was stored as `running` while it ran.
    shown: bool,
    /// An earlier attempt left a row for its node and item.
    replaces: bool,
    elapsed: std::time::Duration,
}

/// One payload arriving at a node.
#[derive(Clone)]
struct Activation {
    item_key: String,
    payload: Payload,
    /// Why the call's file could not be decoded (then `payload` is null): the node's run
    /// reports it as its error.
    unreadable: Option<EngineError>,
    source_event_id: Option<String>,
    source_function_call_id: Option<String>,
    incoming_destination: Option<String>,
    item_offset: i64,
    item_count: i64,
    reference_id: String,
}

struct Execution<'a> {
    service: &'a CallService,
    call: &'a CallRow,
    plan: Cow<'a, Plan>,
    tenant: Tenant,
    inbound_email: Option<Value>,
    any_error: bool,
    /// Runs an earlier attempt recorded, by `(node, item key)`: read once, reused or redone.
    earlier: HashMap<(String, String), FunctionCallRow>,
    /// Runs finished and not yet recorded.
    progress: Progress,
    /// Runs recorded, for the answer (see [`Kept`]).
    kept: Option<Kept>,
}

impl<'a> Execution<'a> {
    fn new(service: &'a CallService, call: &'a CallRow, plan: Option<&'a Plan>) -> anyhow::Result<Self> {
        let plan = match plan {
            Some(plan) => Cow::Borrowed(plan),
            None => Cow::Owned(serde_json::from_str(&call.plan).context("call plan")?),
        };
        let environment = match call.environment.as_str() {
            "sandbox" => Environment::Sandbox,
            _ => Environment::Production,
        };
        let tenant = Tenant { account_id: call.account_id.clone(), environment };
        Ok(Self {
            service,
            call,
            plan,
            tenant,
            inbound_email: None,
            any_error: false,
            earlier: HashMap::new(),
            progress: Progress::default(),
            kept: None,
        })
    }

    /// Runs the call to its end; returns who completes its job, and how it ended.
    async fn run(mut self, fresh: bool, job: Option<&HeldJob<'_>>) -> anyhow::Result<(Completion, Ended)> {
        if fresh {
            self.kept = Some(Kept::new());
        } else {
            self.service.records.set_call_status(&self.call.id, "running", None).await?;
            for run in self.service.records.function_calls(&self.call.id).await? {
                self.earlier.insert((run.node_name.clone(), run.item_key.clone()), run);
            }
        }
        let order = topological_order(&self.plan)?;
        let mut arriving: HashMap<String, Vec<Activation>> = HashMap::new();
        arriving.insert(self.plan.workflow.main_node_name.clone(), self.roots().await?);
        for node in order {
            let Some(activations) = arriving.remove(&node) else { continue };
            let function = self.plan.functions.get(&node).cloned().context("node without a function")?;
            if function.kind() == Kind::Join {
                let first = activations[0].clone();
                let inputs: Vec<Value> =
                    activations.iter().map(|a| engines::payload_value(&a.payload)).collect();
                let joined = Activation { item_key: "join".into(), item_offset: 0, item_count: 1, ..first };
                self.run_node(&node, &function, joined, Some(inputs), &mut arriving).await?;
            } else {
                for activation in activations {
                    self.run_node(&node, &function, activation, None, &mut arriving).await?;
                }
            }
        }
        let status = if self.any_error { "failed" } else { "completed" };
        let finished_at = ids::now_millis();
        let end =
            CallEnd { call_id: &self.call.id, status, finished_at, job: job.map(|job| (job.id, job.worker)) };
        let pending = self.progress.take();
        self.record(&pending, Some(end)).await?;
        let completion = if job.is_some() { Completion::Recorded } else { Completion::ByWorker };
        let recorded = Kept::extend(self.kept.take(), pending).map(|kept| Arc::new(kept.into_recorded()));
        let ended = Ended {
            call_id: self.call.id.clone(),
            status: status.into(),
            finished_at: Some(finished_at),
            recorded,
        };
        Ok((completion, ended))
    }

    /// The call's files, decoded, one activation each (a file that cannot be decoded
    /// becomes an error event of the main node).
    async fn roots(&mut self) -> anyhow::Result<Vec<Activation>> {
        let files: Vec<InputFile> = serde_json::from_str(&self.call.input).context("call input")?;
        let count = files.len() as i64;
        let mut roots = Vec::new();
        for (index, file) in files.into_iter().enumerate() {
            let bytes =
                base64::engine::general_purpose::STANDARD.decode(&file.content).context("input base64")?;
            let decoded = if decodes_in_place(&file.input_type, bytes.len()) {
                engines::decode(&file.input_type, &bytes)
            } else {
                // PDFs and images run pdftotext and Tesseract: off the async workers.
                let input_type = file.input_type.clone();
                tokio::task::spawn_blocking(move || engines::decode(&input_type, &bytes)).await?
            };
            let (payload, unreadable) = match decoded {
                Ok(mut document) => {
                    document.file_name = document.file_name.or(file.file_name.clone());
                    if self.inbound_email.is_none() {
                        self.inbound_email = document.email.as_ref().map(|e| json!(e));
                    }
                    (Payload::Document(document), None)
                }
                Err(err) => (Payload::Json(Value::Null), Some(err)),
            };
            let reference_id =
                file.item_reference_id.clone().or_else(|| self.call.reference_id.clone()).unwrap_or_default();
            roots.push(Activation {
                item_key: if count == 1 { "root".into() } else { format!("file{index}") },
                payload,
                unreadable,
                source_event_id: None,
                source_function_call_id: None,
                incoming_destination: None,
                item_offset: if count == 1 { 0 } else { index as i64 },
                item_count: count.max(1),
                reference_id,
            });
        }
        Ok(roots)
    }

    async fn run_node(
        &mut self,
        node: &str,
        function: &FunctionVersion,
        activation: Activation,
        join_inputs: Option<Vec<Value>>,
        arriving: &mut HashMap<String, Vec<Activation>>,
    ) -> anyhow::Result<()> {
        let existing = self.earlier.remove(&(node.to_string(), activation.item_key.clone()));
        let try_number = 1 + i64::from(existing.as_ref().is_some_and(|r| r.status == "running"));
        let (run, checkpoint, duration, ran_now) = match existing {
            Some(run) if run.status != "running" && run.output.is_some() => {
                let checkpoint = serde_json::from_str(run.output.as_deref().unwrap_or_default())?;
                let duration = (run.finished_at.unwrap_or(run.started_at) - run.started_at) as f64 / 1000.0;
                (run, checkpoint, duration, None)
            }
            _ => {
                let replaces = existing.is_some();
                let mut run = FunctionCallRow {
                    id: ids::new_id("fc"),
                    call_id: self.call.id.clone(),
                    node_name: node.to_string(),
                    item_key: activation.item_key.clone(),
                    function_id: function.function_id.clone(),
                    function_name: function.function_name.clone(),
                    function_version_num: function.version_num,
                    function_type: function.function_type.clone(),
                    status: "running".into(),
                    input: Some(trace_input(&activation.payload, join_inputs.as_deref()).to_string()),
                    output: None,
                    error: None,
                    source_event_id: activation.source_event_id.clone(),
                    source_function_call_id: activation.source_function_call_id.clone(),
                    incoming_destination: activation.incoming_destination.clone(),
                    started_at: ids::now_millis(),
                    finished_at: None,
                };
                if self.progress.due() {
                    self.flush().await?;
                }
                let started = Instant::now();
                let mut progress = std::mem::take(&mut self.progress);
                let executed = self
                    .execute_visibly(function, &activation, join_inputs, &run, replaces, &mut progress)
                    .await;
                self.progress = progress;
                let (checkpoint, shown) = executed?;
                if shown {
                    // The runs recorded while it ran are not kept: its call reads itself back.
                    self.kept = None;
                }
                let elapsed = started.elapsed();
                if let Checkpoint::Failed { message, .. } = &checkpoint {
                    run.status = "failed".into();
                    run.error = Some(message.clone());
                } else {
                    run.status = "completed".into();
                }
                run.output = Some(serde_json::to_string(&checkpoint)?);
                run.finished_at = Some(ids::now_millis());
                (run, checkpoint, elapsed.as_secs_f64(), Some(RanNow { shown, replaces, elapsed }))
            }
        };
        let info = RunInfo {
            call: self.call,
            plan: &self.plan,
            node,
            function,
            function_call_id: &run.id,
            try_number,
            reference_id: &activation.reference_id,
            duration_seconds: duration,
            inbound_email: self.inbound_email.clone(),
        };
        let key = format!("{}/{node}/{}", self.call.id, activation.item_key);
        let context = (activation.item_offset, activation.item_count);
        let mut events = Vec::new();
        let next = match checkpoint {
            Checkpoint::Failed { kind, message } => {
                self.any_error = true;
                let body = shapes::error_event(&info, &kind, &message);
                events.push(Emission {
                    event_type: "error".into(),
                    body,
                    intermediate: false,
                    key: format!("{key}/error"),
                });
                Next::Nothing
            }
            Checkpoint::Output { output } => {
                self.link(&info, &output, &activation.payload).await;
                let handed_on = Payload::Json(output.clone());
                self.forward(&info, &key, None, output, context, handed_on, &mut events)
            }
            Checkpoint::Routed { outlet, output } => {
                // A route hands on what it was given (the document it classified).
                let handed_on = activation.payload.clone();
                self.forward(&info, &key, Some(outlet), output, context, handed_on, &mut events)
            }
            Checkpoint::Items { items } => {
                let downstream = self.downstream(node, None);
                let count = items.len() as i64;
                if downstream.is_empty() {
                    for (offset, item) in items.iter().enumerate() {
                        let body = shapes::output_event(
                            &info,
                            "split_item",
                            &item.output,
                            (offset as i64, count),
                            None,
                        );
                        let key = format!("{key}/{offset}");
                        events.push(Emission {
                            event_type: "split_item".into(),
                            body,
                            intermediate: false,
                            key,
                        });
                    }
                    Next::Nothing
                } else {
                    let outputs: Vec<Value> = items.iter().map(|i| i.output.clone()).collect();
                    let content = json!({ "items": outputs });
                    let body = shapes::output_event(&info, "split_collection", &content, (0, count), None);
                    events.push(Emission {
                        event_type: "split_collection".into(),
                        body,
                        intermediate: true,
                        key,
                    });
                    Next::Fan { downstream, items }
                }
            }
        };
        let run_id = run.id.clone();
        let source_event_id = match ran_now {
            Some(RanNow { shown, replaces, elapsed }) => {
                // Its events are new: stored under the IDs they were given.
                let first = events.first().map(|event| event.id().to_string());
                let reference_id = activation.reference_id.clone();
                let finished = FinishedNow {
                    node: node.into(),
                    run,
                    shown,
                    replaces,
                    reference_id,
                    emissions: events,
                    now: ids::now_millis(),
                };
                self.progress.add(finished, function, elapsed);
                first
            }
            None => self.record_reused(&info, &events).await?.into_iter().next(),
        };
        let from = |incoming_destination, payload, item_key, (item_offset, item_count)| Activation {
            item_key,
            payload,
            unreadable: None,
            source_event_id: source_event_id.clone(),
            source_function_call_id: Some(run_id.clone()),
            incoming_destination,
            item_offset,
            item_count,
            reference_id: activation.reference_id.clone(),
        };
        match next {
            Next::Nothing => {}
            Next::Forward { downstream, handed_on } => {
                for (destination, label) in downstream {
                    let next = from(label, (*handed_on).clone(), activation.item_key.clone(), context);
                    arriving.entry(destination).or_default().push(next);
                }
            }
            Next::Fan { downstream, items } => {
                let count = items.len() as i64;
                for (offset, item) in items.into_iter().enumerate() {
                    for (destination, label) in &downstream {
                        let item_key = format!("{}.{offset}", activation.item_key);
                        let next =
                            from(label.clone(), item.payload.clone(), item_key, (offset as i64, count));
                        arriving.entry(destination.clone()).or_default().push(next);
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs the node; a run still going after [`RUN_SHOWN_AFTER`] is stored as `running`
    /// meanwhile, after the runs `pending` before it, so traces show it (then `true`).
    /// Quicker runs are stored once, finished, in the transaction that records their events.
    async fn execute_visibly(
        &self,
        function: &FunctionVersion,
        activation: &Activation,
        join_inputs: Option<Vec<Value>>,
        run: &FunctionCallRow,
        replaces: bool,
        pending: &mut Progress,
    ) -> anyhow::Result<(Checkpoint, bool)> {
        let work = self.execute(function, activation, join_inputs);
        tokio::pin!(work);
        tokio::select! {
            biased;
            checkpoint = &mut work => Ok((checkpoint, false)),
            _ = tokio::time::sleep(RUN_SHOWN_AFTER) => {
                // The node runs on while it is shown: held back, a node that itself waits for
                // the records' write turn would stall the writes that wait on it.
                let show = async {
                    self.record(&pending.take(), None).await?;
                    self.service.records.start_function_call(run, replaces).await?;
                    anyhow::Ok(())
                };
                let (shown, checkpoint) = tokio::join!(show, &mut work);
                shown?;
                Ok((checkpoint, true))
            }
        }
    }

    /// The event of a non-split output, and where it goes next: an output event when no
    /// edge of its outlet leads on, else an intermediate event and `handed_on` down each edge.
    #[allow(clippy::too_many_arguments)]
    fn forward(
        &self,
        info: &RunInfo<'_>,
        key: &str,
        outlet: Option<String>,
        output: Value,
        context: (i64, i64),
        handed_on: Payload,
        events: &mut Vec<Emission>,
    ) -> Next {
        let event_type = info.function.function_type.clone();
        let downstream = self.downstream(info.node, outlet.as_deref());
        let body = shapes::output_event(info, &event_type, &output, context, outlet.as_deref());
        events.push(Emission {
            event_type,
            body,
            intermediate: !downstream.is_empty(),
            key: key.to_string(),
        });
        Next::Forward { downstream, handed_on: Box::new(handed_on) }
    }

    /// Destinations of the edges that fire from `node`: unlabelled edges always, labelled
    /// ones when their label is the chosen outlet.
    fn downstream(&self, node: &str, outlet: Option<&str>) -> Vec<(String, Option<String>)> {
        self.plan
            .workflow
            .edges
            .iter()
            .filter(|e| e.source_node_name == node)
            .filter(|e| match (&e.destination_name, outlet) {
                (None, _) => true,
                (Some(label), Some(chosen)) => label == chosen,
                (Some(_), None) => false,
            })
            .map(|e| (e.destination_node_name.clone(), e.destination_name.clone()))
            .collect()
    }

    async fn execute(
        &self,
        function: &FunctionVersion,
        activation: &Activation,
        join_inputs: Option<Vec<Value>>,
    ) -> Checkpoint {
        if let Some(err) = &activation.unreadable {
            return Checkpoint::Failed { kind: err.kind.clone(), message: err.message.clone() };
        }
        let payload = &activation.payload;
        let context = self.service.engines.context(self.tenant.clone());
        let result: Result<Outcome, EngineError> = match join_inputs {
            Some(inputs) => engines::join(function, &inputs, &context).await.map(Outcome::Output),
            None => engines::run(function, payload, &context).await,
        };
        match result {
            Ok(Outcome::Output(output)) => Checkpoint::Output { output },
            Ok(Outcome::Routed { outlet, output }) => Checkpoint::Routed { outlet, output },
            Ok(Outcome::Items(items)) => Checkpoint::Items { items },
            Err(err) => Checkpoint::Failed { kind: err.kind, message: err.message },
        }
    }

    /// Records runs that finished now (see [`progress`]), with the call's end when given.
    async fn record(&self, finished: &[FinishedNow], end: Option<CallEnd<'_>>) -> anyhow::Result<()> {
        let owner = self.tenant.owner();
        progress::record(&self.service.records, owner, self.call, &self.plan, finished, end).await
    }

    /// Records the runs pending so far.
    async fn flush(&mut self) -> anyhow::Result<()> {
        let pending = self.progress.take();
        self.record(&pending, None).await?;
        self.kept = Kept::extend(self.kept.take(), pending);
        Ok(())
    }

    /// The stored IDs of the events of a run reused from an earlier attempt (which recorded
    /// them: recording them again adds nothing).
    async fn record_reused(&self, info: &RunInfo<'_>, events: &[Emission]) -> anyhow::Result<Vec<String>> {
        let of_run = EmittedBy {
            call: self.call,
            function: info.function,
            function_call_id: info.function_call_id,
            reference_id: info.reference_id,
        };
        let now = ids::now_millis();
        let events: Vec<_> = events.iter().map(|emission| of_run.event(emission, now)).collect();
        let records = &self.service.records;
        records.record_runs(self.tenant.owner(), &[], &events, None).await?;
        Ok(records.stored_event_ids(&events).await?)
    }

    /// Links entities of an extracting function's output into the knowledge graph, and
    /// keeps what a parse read (its pages and sections, and what linking found) as a parsed
    /// document. A failure of either is logged, not turned into an error event: the output
    /// stands.
    async fn link(&self, info: &RunInfo<'_>, output: &Value, payload: &Payload) {
        let links = linking::links(info.function);
        let document = match payload {
            Payload::Document(document) => Some(document),
            Payload::Json(_) => None,
        };
        let parsed = info.function.function_type == "parse" && document.is_some();
        if !(links || parsed) {
            return;
        }
        let (sections, page_count) = document.map(structure::sections).unwrap_or_default();
        let transformation_id = shapes::transformation_id(info.function_call_id);
        let mut linked = None;
        if links {
            match linking::link(
                &self.service.graph,
                &self.tenant,
                self.call.bucket.as_deref(),
                info.function,
                output,
                document,
                info.reference_id,
                &transformation_id,
                &sections,
            )
            .await
            {
                Ok(found) => linked = found,
                Err(err) => {
                    tracing::error!(error = %err, call_id = %self.call.id, "cross-document linking failed")
                }
            }
        }
        let Some(document) = document else { return };
        let by = ParsedBy {
            transformation_id: &transformation_id,
            reference_id: info.reference_id,
            call_id: &self.call.id,
            function_id: &info.function.function_id,
            function_name: &info.function.function_name,
        };
        let documents = DocumentService::new(self.service.records.clone());
        if let Err(err) = documents
            .record(&self.tenant, by, document, (&sections, page_count), output, linked.as_ref())
            .await
        {
            tracing::error!(error = %err, call_id = %self.call.id, "cannot keep the parsed document");
        }
    }
}

/// Text-like inputs up to this size are decoded on the async worker: handing them to a
/// blocking thread (a hop there and a wake-up back) costs more than decoding them.
const DECODED_IN_PLACE_BYTES: usize = 64 * 1024;

fn decodes_in_place(input_type: &str, len: usize) -> bool {
    matches!(input_type, "text" | "json" | "csv" | "html" | "email") && len <= DECODED_IN_PLACE_BYTES
}

/// Node names in an order where every edge goes forwards (an error for a cycle).
fn topological_order(plan: &Plan) -> anyhow::Result<Vec<String>> {
    let mut incoming: BTreeMap<&str, usize> =
        plan.workflow.nodes.iter().map(|n| (n.name.as_str(), 0)).collect();
    for edge in &plan.workflow.edges {
        *incoming.entry(edge.destination_node_name.as_str()).or_default() += 1;
    }
    let mut ready: VecDeque<&str> =
        incoming.iter().filter(|(_, n)| **n == 0).map(|(name, _)| *name).collect();
    let mut order = Vec::new();
    while let Some(node) = ready.pop_front() {
        order.push(node.to_string());
        for edge in plan.workflow.edges.iter().filter(|e| e.source_node_name == node) {
            let count =
                incoming.get_mut(edge.destination_node_name.as_str()).context("edge to an unknown node")?;
            *count -= 1;
            if *count == 0 {
                ready.push_back(&edge.destination_node_name);
            }
        }
    }
    anyhow::ensure!(order.len() == incoming.len(), "workflow {} has a cycle", plan.workflow.workflow_name);
    Ok(order)
}

/// What a trace shows as a run's input (documents summarised, not copied whole).
fn trace_input(payload: &Payload, join_inputs: Option<&[Value]>) -> Value {
    if let Some(inputs) = join_inputs {
        return json!({ "inputs": inputs });
    }
    match payload {
        Payload::Json(value) => json!({ "json": value }),
        Payload::Document(document) => {
            let excerpt: String = document.text.chars().take(2_000).collect();
            json!({
                "inputType": document.input_type,
                "fileName": document.file_name,
                "pages": document.pages.len(),
                "attachments": document.attachments.len(),
                "text": excerpt,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::versions::{Edge, Node, WorkflowVersion};

    fn plan(nodes: &[&str], edges: &[(&str, &str)]) -> Plan {
        Plan {
            workflow: WorkflowVersion {
                workflow_id: "wf_1".into(),
                workflow_name: "w".into(),
                version_num: 1,
                main_node_name: nodes[0].into(),
                nodes: nodes
                    .iter()
                    .map(|n| Node {
                        name: n.to_string(),
                        function_id: "fn_1".into(),
                        function_name: "f".into(),
                        function_version_num: 1,
                    })
                    .collect(),
                edges: edges
                    .iter()
                    .map(|(s, d)| Edge {
                        source_node_name: s.to_string(),
                        destination_node_name: d.to_string(),
                        destination_name: None,
                    })
                    .collect(),
            },
            functions: BTreeMap::new(),
        }
    }

    #[test]
    fn nodes_run_after_every_node_that_feeds_them() {
        let order = topological_order(&plan(
            &["a", "b", "c", "d"],
            &[("a", "c"), ("a", "b"), ("b", "d"), ("c", "d")],
        ))
        .unwrap();
        let at = |n: &str| order.iter().position(|x| x == n).unwrap();
        assert!(at("a") < at("b") && at("a") < at("c") && at("b") < at("d") && at("c") < at("d"));
    }

    #[test]
    fn a_cycle_is_refused() {
        assert!(topological_order(&plan(&["a", "b"], &[("a", "b"), ("b", "a")])).is_err());
    }
}
