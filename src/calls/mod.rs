//! Workflow calls: submission (with `callReferenceID` deduplication), waiting, reading a
//! call with its terminal events, and its trace. The DAG itself runs as one durable job per
//! call (see [`executor`]); every node run is checkpointed, so a call cut off by a crash
//! resumes where it stopped and re-emits nothing.

pub mod executor;
pub mod inline;
pub mod linking;
mod progress;
pub mod shapes;
pub mod trace;

use crate::engines::{self, Context};
use crate::error::{ServiceError, ServiceResult};
use crate::graph::{GraphService, Tenant};
use crate::ids;
use crate::pagination::PageRequest;
use crate::store::records::calls::{CallFilter, CallRow};
use crate::store::records::events::EventFilter;
use crate::store::records::jobs::{ClaimedJob, JobClaim};
use crate::store::records::plans::WorkflowPlan;
use crate::store::records::traces::TraceBounds;
use crate::store::records::Records;
use crate::versions::{FunctionVersion, WorkflowVersion};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, Semaphore};

pub use crate::store::records::calls::{CALL_JOB, CALL_JOB_ATTEMPTS};
/// How long a `callReferenceID` keeps naming its call (decision: one day).
pub const REFERENCE_WINDOW_MS: i64 = 24 * 60 * 60 * 1000;
/// The states a call is in, as `GET /v3/calls?statuses=` filters them.
pub const STATUSES: [&str; 4] = ["pending", "running", "completed", "failed"];
/// `metadata` bound (the SDK documents 4 KB).
pub const MAX_METADATA_BYTES: usize = 4 * 1024;

/// One submitted file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputFile {
    /// Normalised input type.
    pub input_type: String,
    /// Base64 of the file.
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_reference_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
}

/// One file as the transport read it.
#[derive(Debug)]
pub struct SubmittedFile {
    /// As sent (aliases such as `jpg` are normalised later).
    pub input_type: String,
    pub bytes: Vec<u8>,
    pub item_reference_id: Option<String>,
    pub file_name: Option<String>,
}

/// A call as submitted, once the transport has read it.
#[derive(Debug, Default)]
pub struct CallRequest {
    pub files: Vec<SubmittedFile>,
    pub wait: bool,
    pub bucket: Option<String>,
    pub call_reference_id: Option<String>,
    pub metadata: Option<Value>,
}

/// The workflow version a call runs and its function versions, resolved at submission.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    pub workflow: WorkflowVersion,
    /// Node name → the function version it runs.
    pub functions: BTreeMap<String, FunctionVersion>,
}

/// A call that has just ended, as its waiters learn it (so they need not read it back).
#[derive(Clone, Debug)]
pub struct Ended {
    pub call_id: String,
    pub status: String,
    pub finished_at: Option<i64>,
    /// Everything the call recorded, when the process that ran it still holds it (see
    /// `progress::Kept`): the waiter answers from it instead of reading it back.
    pub recorded: Option<Arc<Recorded>>,
}

/// A call's runs and events as stored, in the order the records return them.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Each run's node, by run ID.
    pub nodes: HashMap<String, String>,
    /// Each event with `true` when it is intermediate.
    pub events: Vec<(Value, bool)>,
}

/// What the submission answers: the call, and whether it has finished.
pub struct Submitted {
    pub call: Value,
    pub finished: bool,
}

/// Entry point of calls.
#[derive(Clone)]
pub struct CallService {
    pub records: Records,
    pub graph: Arc<GraphService>,
    pub engines: EngineParts,
    /// Carries the ID of each call that finishes in this process (wakes `wait=true`).
    pub finished: broadcast::Sender<Ended>,
    /// How long `wait=true` blocks before answering 202 with the running call (30 s).
    pub wait_limit: Duration,
    /// Waited calls this process runs itself as they arrive, at most [`INLINE_CALLS`] at
    /// once; `None` (a process without job workers) leaves every call to the queue.
    inline: Option<Arc<Semaphore>>,
    /// Inline calls running per account (see [`inline`]).
    inline_shares: Arc<inline::InlineShares>,
    /// What one call may make: [`MAX_RUNS`] and [`MAX_OUTPUT_BYTES`] but in tests.
    pub limits: CallLimits,
}

/// Bounds on one call's work (see [`MAX_RUNS`] and [`MAX_OUTPUT_BYTES`]).
#[derive(Clone, Copy, Debug)]
pub struct CallLimits {
    pub runs: usize,
    pub output_bytes: usize,
    /// Bytes of values one trace reads together ([`trace::TRACE_BYTES`]).
    pub trace_bytes: usize,
    /// Mentions, and declared relations, one run links at most ([`MAX_LINKED_PER_RUN`]).
    pub linked: usize,
    /// Calls one account may have waiting for a worker ([`MAX_QUEUED_CALLS`]).
    pub queued: usize,
}

impl Default for CallLimits {
    fn default() -> Self {
        Self {
            runs: MAX_RUNS,
            output_bytes: MAX_OUTPUT_BYTES,
            trace_bytes: trace::TRACE_BYTES,
            linked: MAX_LINKED_PER_RUN,
            queued: MAX_QUEUED_CALLS,
        }
    }
}

/// Node runs one call makes at most, its files' and every fan-out's together: a split's
/// items each run every node after it, and a split after a split multiplies them (10,000 ×
/// 10,000). A split whose items would take the call past it fails, naming the limit.
pub const MAX_RUNS: usize = 50_000;

/// What one call's runs output at most, together, as [`crate::shaping::weight`] counts it
/// (64 bytes a value plus its text: roughly what it holds in memory): outputs, a route's
/// output, a split's items. Each output is bounded on its own (a JMESPath evaluation builds at
/// most 64 MiB beyond its input), but a split's 10,000 items each shaped to 64 MiB, or a chain
/// of transforms each doubling its input, had no bound together: the call held them in memory
/// on their way to the next node and stored each twice (its run's checkpoint and its event).
/// The run whose output would take the call past it fails naming the limit, and nothing runs
/// after it; a call's answer (`GET /v3/calls/{id}`) is bounded with it.
pub const MAX_OUTPUT_BYTES: usize = 128 * 1024 * 1024;

/// Mentions one run links into the knowledge graph at most (its annotated strings first, in
/// output order, then the gazetteer's names in text order), and declared `x-relations` it
/// records at most. Each mention is a few statements on the graph engine every tenant shares,
/// one after another: an output of 100,000 annotated strings (a JSON input of that many names
/// through the built-in extract) held a job worker for many minutes. What is past it is not
/// linked (logged); the run's output stands whole.
pub const MAX_LINKED_PER_RUN: usize = 1_000;

/// Calls one account may have waiting for a worker at once, across its environments: a
/// worker's claim reads the runnable jobs in order and steps over every job of an account at
/// its share, so one account's million queued calls (1,000 score runs of 1,000 pairs) made
/// every claim, of every tenant, read them, under the record store's claim lock. Past it a
/// call (or a score run, all its pairs at once) is refused, naming `queuedCallsPerAccount`.
pub const MAX_QUEUED_CALLS: usize = 10_000;

/// Waited calls one process runs at once outside its job workers. A waited call runs in the
/// process that took it, at once, instead of queueing behind the workers (two by default,
/// which seed and embedding jobs share): its job is stored already claimed by the process, so
/// a crash leaves a lease that runs out and a worker resumes the call. Beyond this many at
/// once, or past [`inline::INLINE_CALLS_PER_TENANT`] of one account, waited calls queue like
/// the others.
pub const INLINE_CALLS: usize = 64;

/// What the engines need besides the tenant.
#[derive(Clone)]
pub struct EngineParts {
    pub embedder: Arc<dyn crate::embeddings::Embedder>,
    pub collections: Arc<crate::collections::CollectionsService>,
    pub egress: Arc<crate::egress::Egress>,
    pub secrets: crate::secrets::SecretsService,
}

impl EngineParts {
    pub fn context(&self, tenant: Tenant) -> Context {
        Context {
            tenant,
            embedder: self.embedder.clone(),
            collections: self.collections.clone(),
            egress: self.egress.clone(),
            secrets: self.secrets.clone(),
            rules: Arc::default(),
        }
    }
}

impl CallService {
    pub fn new(
        records: Records,
        graph: Arc<GraphService>,
        engines: EngineParts,
        wait_limit: Duration,
    ) -> Self {
        let (finished, _) = broadcast::channel(1024);
        Self {
            records,
            graph,
            engines,
            finished,
            wait_limit,
            inline: None,
            inline_shares: Arc::default(),
            limits: CallLimits::default(),
        }
    }

    /// This service with other bounds on a call's work (tests reach them with small ones).
    pub fn with_limits(mut self, limits: CallLimits) -> Self {
        self.limits = CallLimits { runs: limits.runs.max(1), ..limits };
        self
    }

    /// Lets this process run waited calls itself (see [`INLINE_CALLS`]).
    pub fn running_waited_calls(mut self) -> Self {
        self.inline = Some(Arc::new(Semaphore::new(INLINE_CALLS)));
        self
    }

    /// Waits (up to `limit`) for the waited calls this process is running to finish.
    pub async fn finish_running_calls(&self, limit: Duration) {
        if let Some(inline) = &self.inline {
            let all = u32::try_from(INLINE_CALLS).unwrap_or(u32::MAX);
            if tokio::time::timeout(limit, inline.acquire_many(all)).await.is_err() {
                tracing::warn!("stopping with waited calls still running; a worker resumes them");
            }
        }
    }

    /// Starts a call of the workflow's current version (or returns the call its reference
    /// already names), waiting for it when asked.
    pub async fn submit(
        &self,
        tenant: &Tenant,
        workflow_name: &str,
        request: CallRequest,
    ) -> ServiceResult<Submitted> {
        if let Some(metadata) = &request.metadata {
            if !metadata.is_object() {
                return Err(ServiceError::invalid_field("metadata", "must be a JSON object"));
            }
            if crate::json_size::json_bytes(metadata) > MAX_METADATA_BYTES {
                return Err(ServiceError::invalid_field("metadata", "must be at most 4 KB of JSON"));
            }
        }
        let stored = self
            .records
            .workflow_plan(tenant.owner(), workflow_name)
            .await?
            .ok_or_else(|| ServiceError::not_found("workflow", workflow_name))?;
        let files = check_files(request.files)?;
        let plan = resolve(&stored)?;
        if let Some(bucket) = &request.bucket {
            if plan.functions.values().any(linking::links)
                && linking::bucket_by_name(&self.graph, tenant, bucket).await?.is_none()
            {
                return Err(ServiceError::invalid_field("bucket", format!("no bucket named {bucket:?}")));
            }
        }
        let now = ids::now_millis();
        let permit = match &self.inline {
            Some(inline) if request.wait => inline::take(&self.inline_shares, inline, tenant),
            _ => None,
        };
        let worker = permit.as_ref().map(|_| ids::new_id("inl"));
        if permit.is_none() {
            self.check_queue_room(tenant, 1).await?;
        }
        let row = CallRow {
            id: ids::new_id("wc"),
            account_id: tenant.account_id.clone(),
            environment: tenant.environment.as_str().to_string(),
            workflow_id: plan.workflow.workflow_id.clone(),
            workflow_name: plan.workflow.workflow_name.clone(),
            workflow_version_num: plan.workflow.version_num,
            reference_id: request.call_reference_id.filter(|r| !r.is_empty()),
            status: if permit.is_some() { "running" } else { "pending" }.into(),
            input: serde_json::to_string(&files).map_err(anyhow::Error::from)?,
            plan: serde_json::to_string(&plan).map_err(anyhow::Error::from)?,
            metadata: request.metadata.map(|m| m.to_string()),
            bucket: request.bucket,
            created_at: now,
            finished_at: None,
            error: None,
        };
        let mut finished_rx = self.finished.subscribe();
        let claim = worker.as_deref().map(|worker| JobClaim { worker, lease_ms: crate::jobs::LEASE_MS });
        let (call, job) = self.records.insert_call(&row, now - REFERENCE_WINDOW_MS, claim).await?;
        match (job, permit.zip(worker)) {
            (Some(job), Some((permit, worker))) => self.run_inline(call.clone(), plan, job, worker, permit),
            (Some(_), None) => crate::jobs::wake(),
            (None, _) => {}
        }
        let mut ended = None;
        if request.wait && !is_final(&call.status) {
            let deadline = tokio::time::Instant::now() + self.wait_limit;
            loop {
                match tokio::time::timeout_at(deadline, finished_rx.recv()).await {
                    Ok(Ok(end)) if end.call_id != call.id => continue,
                    Ok(Ok(end)) => {
                        ended = Some(end);
                        break;
                    }
                    Ok(Err(broadcast::error::RecvError::Lagged(_))) => {}
                    Ok(Err(broadcast::error::RecvError::Closed)) | Err(_) => break,
                }
                // Lagged: look at the record before waiting on.
                if self.records.call_by_id(&call.id).await?.is_some_and(|c| is_final(&c.status)) {
                    break;
                }
            }
        }
        let (current, recorded) = match ended {
            Some(Ended { status, finished_at, recorded, .. }) => {
                (CallRow { status, finished_at, ..call }, recorded)
            }
            None => (self.records.call_by_id(&call.id).await?.unwrap_or(call), None),
        };
        // The spec: 200 for a waited call that finished, 202 for every call not waited for
        // (even one the workers finished before this answer).
        let finished = request.wait && is_final(&current.status);
        let json = match recorded {
            Some(recorded) => shapes::call(&current, &recorded.nodes, &recorded.events),
            None => self.call_json(&current).await?,
        };
        Ok(Submitted { call: json, finished })
    }

    /// Refuses `adding` more queued calls when they would take the account past its
    /// [`CallLimits::queued`] (a few submitted at the same moment may pass it together).
    pub async fn check_queue_room(&self, tenant: &Tenant, adding: usize) -> ServiceResult<()> {
        let room = crate::jobs::QueueRoom {
            kind: CALL_JOB,
            what: "calls",
            limit: "queuedCallsPerAccount",
            most: self.limits.queued,
        };
        room.check(&self.records, &tenant.account_id, adding).await
    }

    /// Runs a call this process claimed at submission, as its job's first attempt.
    fn run_inline(
        &self,
        call: CallRow,
        plan: Plan,
        job_id: String,
        worker: String,
        permit: inline::InlineTurn,
    ) {
        let service = self.clone();
        let span = tracing::info_span!("job", job_id = %job_id, kind = CALL_JOB, attempt = 1);
        let job = ClaimedJob {
            id: job_id,
            kind: CALL_JOB.into(),
            payload: json!({ "callID": call.id }),
            attempts: 1,
            max_attempts: CALL_JOB_ATTEMPTS,
            interruptions: 0,
        };
        let work = async move {
            let _permit = permit;
            let handler = executor::ClaimedCall { service: service.clone(), call, plan };
            crate::jobs::run_claimed(&service.records, &worker, &handler, job).await;
        };
        tokio::spawn(tracing::Instrument::instrument(work, span));
    }

    /// `{call: …}` of one of the tenant's calls.
    pub async fn get(&self, tenant: &Tenant, call_id: &str) -> ServiceResult<Value> {
        let call = self
            .records
            .call(tenant.owner(), call_id)
            .await?
            .ok_or_else(|| ServiceError::not_found("call", call_id))?;
        self.call_json(&call).await
    }

    /// A page of the tenant's calls, each with its terminal events.
    pub async fn list(
        &self,
        tenant: &Tenant,
        filter: &CallFilter,
        page: &PageRequest,
        ascending: bool,
    ) -> ServiceResult<(Vec<Value>, i64)> {
        let (rows, total) =
            self.records.list_calls(tenant.owner(), filter, &page.cursor, ascending, page.limit).await?;
        // Two statements for the whole page, not two per call. The page was read by ID, against
        // the sort order before a cursor; a page whose outputs pass the bytes a page reads ends
        // at the last call they fit (the next page goes on after it).
        let descending = !page.cursor.reads_up(ascending);
        let ids: Vec<String> = rows.iter().map(|row| row.id.clone()).collect();
        let mut events = self.records.terminal_events_of_page(&ids, descending).await?;
        let mut nodes = self.records.run_nodes_of_calls(&ids).await?;
        let calls = rows
            .iter()
            .filter_map(|row| {
                let events = events.remove(&row.id)?;
                Some(shapes::call(row, &nodes.remove(&row.id).unwrap_or_default(), &events))
            })
            .collect();
        Ok((calls, total))
    }

    async fn call_json(&self, call: &CallRow) -> ServiceResult<Value> {
        // Two reads at once, on two of the pool's connections.
        // The answer shows terminal events only: the intermediate ones (every node's output
        // again) are for the trace.
        let ids = [call.id.clone()];
        let (mut events, mut nodes) = tokio::try_join!(
            self.records.terminal_events_of_page(&ids, false),
            self.records.run_nodes_of_calls(&ids)
        )?;
        let events = events.remove(&call.id).unwrap_or_default();
        Ok(shapes::call(call, &nodes.remove(&call.id).unwrap_or_default(), &events))
    }

    /// Every node run of a call and every event it emitted.
    pub async fn trace(&self, tenant: &Tenant, call_id: &str) -> ServiceResult<Value> {
        let call = self
            .records
            .call(tenant.owner(), call_id)
            .await?
            .ok_or_else(|| ServiceError::not_found("call", call_id))?;
        let bounds = TraceBounds {
            value_bytes: trace::TRACE_VALUE_BYTES,
            total_bytes: self.limits.trace_bytes.min(i64::MAX as usize) as i64,
        };
        let (runs, events) = self.records.trace_of_call(&call.id, bounds).await?;
        Ok(trace::shape(&call, &runs, &events))
    }

    /// A page of the tenant's events.
    pub async fn events(
        &self,
        tenant: &Tenant,
        filter: &EventFilter,
        page: &PageRequest,
        ascending: bool,
    ) -> ServiceResult<(Vec<Value>, i64)> {
        Ok(self.records.list_events(tenant.owner(), filter, &page.cursor, ascending, page.limit).await?)
    }

    /// One of the tenant's events, if it is of the wanted sort (`Some(true)` errors only,
    /// `Some(false)` non-errors only).
    pub async fn event(&self, tenant: &Tenant, event_id: &str, errors: Option<bool>) -> ServiceResult<Value> {
        let event = self.records.event(tenant.owner(), event_id).await?;
        let is_error = |e: &Value| e.get("eventType").and_then(Value::as_str) == Some("error");
        match event {
            Some(event) if errors.is_none_or(|want| is_error(&event) == want) => Ok(event),
            _ => Err(ServiceError::not_found(if errors == Some(true) { "error" } else { "event" }, event_id)),
        }
    }
}

pub fn is_final(status: &str) -> bool {
    matches!(status, "completed" | "failed")
}

/// Normalises input types (400 "unsupported inputType" for any other) and encodes files.
fn check_files(files: Vec<SubmittedFile>) -> ServiceResult<Vec<InputFile>> {
    if files.is_empty() {
        return Err(ServiceError::invalid_field(
            "input",
            "send one file: input.singleFile {inputContent, inputType} or a multipart `file` part",
        ));
    }
    files
        .into_iter()
        .enumerate()
        .map(|(index, SubmittedFile { input_type, bytes, item_reference_id, file_name })| {
            let normalised = engines::supported_input_type(&input_type).ok_or_else(|| ServiceError::Invalid {
                message: format!("unsupported inputType {input_type:?}: send one of {}", engines::INPUT_TYPES.join(", ")),
                details: Some(json!({ "field": format!("inputs[{index}].inputType"), "error": "unsupported inputType" })),
            })?;
            Ok(InputFile {
                input_type: normalised.to_string(),
                content: base64::engine::general_purpose::STANDARD.encode(bytes),
                item_reference_id,
                file_name,
            })
        })
        .collect()
}

/// The plan a call runs: each node with the function version it pins (422 when one is gone).
fn resolve(stored: &WorkflowPlan) -> ServiceResult<Plan> {
    let workflow = &stored.workflow;
    let mut functions = BTreeMap::new();
    for node in &workflow.nodes {
        let function = stored
            .functions
            .iter()
            .find(|f| f.function_id == node.function_id && f.version_num == node.function_version_num)
            .cloned()
            .ok_or_else(|| ServiceError::Unprocessable {
                message: format!(
                    "workflow node {} runs function {} version {}, which no longer exists",
                    node.name, node.function_name, node.function_version_num
                ),
                details: Some(json!({ "node": node.name })),
            })?;
        functions.insert(node.name.clone(), function);
    }
    Ok(Plan { workflow: workflow.clone(), functions })
}
