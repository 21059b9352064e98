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
//!
//! [`jobs`] holds the job handlers that run a call; this file, the run of a call's DAG;
//! [`node`], the run of one node.

mod jobs;
mod node;

pub use jobs::{CallJob, ClaimedCall};

use super::progress::{self, FinishedNow, Kept, Progress};
use super::{CallService, Ended, InputFile, Plan};
use crate::engines::{self, EngineError, Payload, SplitItem};
use crate::graph::Tenant;
use crate::ids;
use crate::jobs::{Completion, HeldJob};
use crate::store::records::calls::{CallRow, FunctionCallRow};
use crate::store::records::keys::Environment;
use crate::store::records::progress::CallEnd;
use crate::versions::Kind;
use anyhow::Context as _;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

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
    /// One payload down each edge (shared: a node that fans out copies nothing).
    Forward {
        downstream: Vec<(String, Option<String>)>,
        handed_on: Arc<Payload>,
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
    /// Shared by every activation it was handed on to.
    payload: Arc<Payload>,
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
    /// Node runs the call has made or handed on so far (bounded by `limits.runs`).
    planned: usize,
    /// What its runs output so far, by [`crate::shaping::weight`] (bounded by
    /// `limits.output_bytes`).
    output_bytes: usize,
    /// What its classify runs share: compiled routes, time spent on rules.
    rules: Arc<crate::engines::call_rules::CallRules>,
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
            planned: 0,
            output_bytes: 0,
            rules: Arc::default(),
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
        let roots = self.roots().await?;
        self.planned = roots.len();
        arriving.insert(self.plan.workflow.main_node_name.clone(), roots);
        for node in order {
            let Some(activations) = arriving.remove(&node) else { continue };
            let function = self.plan.functions.get(&node).cloned().context("node without a function")?;
            if function.kind() == Kind::Join {
                let first = activations[0].clone();
                let mut joined =
                    Activation { item_key: "join".into(), item_offset: 0, item_count: 1, ..first };
                let inputs = match self.join_inputs(&activations) {
                    Ok(inputs) => inputs,
                    Err(too_much) => {
                        joined.unreadable = Some(too_much);
                        Vec::new()
                    }
                };
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

    /// A join's inputs as JSON, each payload converted once however many edges brought it,
    /// or `input_limit` when together they weigh more than a call may output: every edge hands
    /// on the same payload, and a document classified once and routed down 1,000 edges into a
    /// join was 1,000 copies of 32 MiB before the join's output was weighed.
    fn join_inputs(&self, activations: &[Activation]) -> Result<Vec<Value>, EngineError> {
        let mut converted: HashMap<*const Payload, (Value, usize)> = HashMap::new();
        let mut total = 0_usize;
        for activation in activations {
            let (_, weight) = converted.entry(Arc::as_ptr(&activation.payload)).or_insert_with(|| {
                let value = engines::payload_value(&activation.payload);
                let weight = crate::shaping::weight(&value);
                (value, weight)
            });
            total = total.saturating_add(*weight);
        }
        let limit = self.service.limits.output_bytes;
        if total > limit {
            return Err(engines::limits::exceeded(
                format!(
                    "the join's {} inputs weigh {} together (as counted: 64 bytes a value plus its text)",
                    activations.len(),
                    node::bytes_shown(total)
                ),
                format!("{} a call (outputBytesPerCall)", node::bytes_shown(limit)),
            ));
        }
        Ok(activations.iter().map(|a| converted[&Arc::as_ptr(&a.payload)].0.clone()).collect())
    }

    /// Records runs that finished now (see [`progress`]), with the call's end when given.
    async fn record(&self, finished: &[FinishedNow], end: Option<CallEnd<'_>>) -> anyhow::Result<()> {
        let owner = self.tenant.owner();
        progress::record(&self.service.records, owner, self.call, &self.plan, finished, end).await
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
                payload: Arc::new(payload),
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
