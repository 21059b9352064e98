//! One node's run: reused from an earlier attempt or run now, its events, and where its
//! result goes next.

use super::{Activation, Checkpoint, Next, RanNow};
use crate::calls::progress::{Emission, EmittedBy, FinishedNow, Kept, Progress, RUN_SHOWN_AFTER};
use crate::calls::shapes::RunInfo;
use crate::calls::{linking, shapes};
use crate::documents::{structure, DocumentService, ParsedBy};
use crate::engines::{self, Context, EngineError, Outcome, Payload};
use crate::ids;
use crate::json_size::Measured;
use crate::shaping;
use crate::store::records::calls::FunctionCallRow;
use crate::versions::FunctionVersion;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

impl<'a> super::Execution<'a> {
    pub(super) async fn run_node(
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
                // Within the limit when it ran: counted, not judged again.
                self.output_bytes = self.output_bytes.saturating_add(output_weight(&checkpoint));
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
                let checkpoint = self.within_runs(node, checkpoint);
                let checkpoint = self.within_output_bytes(checkpoint);
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
                let handed_on = Arc::new(Payload::Json(output.clone()));
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
                self.planned += downstream.len();
                for (destination, label) in downstream {
                    let next = from(label, handed_on.clone(), activation.item_key.clone(), context);
                    arriving.entry(destination).or_default().push(next);
                }
            }
            Next::Fan { downstream, items } => {
                self.planned += items.len() * downstream.len();
                let count = items.len() as i64;
                for (offset, item) in items.into_iter().enumerate() {
                    let payload = Arc::new(item.payload);
                    for (destination, label) in &downstream {
                        let item_key = format!("{}.{offset}", activation.item_key);
                        let next = from(label.clone(), payload.clone(), item_key, (offset as i64, count));
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
        handed_on: Arc<Payload>,
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
        Next::Forward { downstream, handed_on }
    }

    /// A run that would hand on more runs than the call has left fails instead: a split's
    /// items down each edge after it, or one output down each edge that fires (a route's
    /// outlet, or every edge of a node that fans out).
    fn within_runs(&self, node: &str, checkpoint: Checkpoint) -> Checkpoint {
        let (runs, what) = match &checkpoint {
            Checkpoint::Items { items } => (
                items.len().saturating_mul(self.downstream(node, None).len()),
                format!("the split's {} items", items.len()),
            ),
            Checkpoint::Output { .. } => (self.downstream(node, None).len(), "its output".to_string()),
            Checkpoint::Routed { outlet, .. } => {
                (self.downstream(node, Some(outlet)).len(), format!("its output routed to {outlet:?}"))
            }
            Checkpoint::Failed { .. } => return checkpoint,
        };
        let limit = self.service.limits.runs;
        if self.planned.saturating_add(runs) <= limit {
            return checkpoint;
        }
        let error = engines::limits::exceeded(
            format!(
                "{what} would run {runs} nodes after it, {} in the call with those before",
                self.planned.saturating_add(runs)
            ),
            format!("{limit} node runs a call (runsPerCall)"),
        );
        Checkpoint::Failed { kind: error.kind, message: error.message }
    }

    /// A run whose output would take the call's outputs past their limit fails instead; one
    /// within it is counted.
    fn within_output_bytes(&mut self, checkpoint: Checkpoint) -> Checkpoint {
        let weight = output_weight(&checkpoint);
        let total = self.output_bytes.saturating_add(weight);
        let limit = self.service.limits.output_bytes;
        if total <= limit {
            self.output_bytes = total;
            return checkpoint;
        }
        let error = engines::limits::exceeded(
            format!(
                "this run's output ({}) would take the call's outputs to {} (as counted: 64 bytes a \
                 value plus its text)",
                bytes_shown(weight),
                bytes_shown(total)
            ),
            format!("{} a call (outputBytesPerCall)", bytes_shown(limit)),
        );
        Checkpoint::Failed { kind: error.kind, message: error.message }
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
        let context =
            Context { rules: self.rules.clone(), ..self.service.engines.context(self.tenant.clone()) };
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
                self.service.limits.linked,
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

/// What a run's result counts towards its call's [`crate::calls::MAX_OUTPUT_BYTES`]: its
/// output, or its items' outputs (an item's payload is the same value handed on).
fn output_weight(checkpoint: &Checkpoint) -> usize {
    match checkpoint {
        Checkpoint::Output { output } | Checkpoint::Routed { output, .. } => shaping::weight(output),
        Checkpoint::Items { items } => items.iter().map(|item| shaping::weight(&item.output)).sum(),
        Checkpoint::Failed { .. } => 0,
    }
}

/// Bytes as a person reads them: KiB below a MiB, MiB above.
pub(super) fn bytes_shown(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    match bytes {
        b if b >= MIB => format!("{:.1} MiB", b as f64 / MIB as f64),
        b => format!("{:.1} KiB", b as f64 / 1024.0),
    }
}

/// Most of a JSON input (serialized) a run keeps whole for its trace. A node's input is the
/// output before it, already stored once; kept whole, it was stored again for every run it
/// was handed to (up to the call's 50,000 runs). A larger one is kept as a document is: its
/// size and the first [`EXCERPT_BYTES`].
pub(crate) const TRACE_INPUT_BYTES: usize = 8 * 1024;
const EXCERPT_BYTES: usize = 2_000;

/// What a trace shows as a run's input (documents and large JSON summarised, not copied
/// whole).
fn trace_input(payload: &Payload, join_inputs: Option<&[Value]>) -> Value {
    if let Some(inputs) = join_inputs {
        return json_input("inputs", inputs);
    }
    match payload {
        Payload::Json(value) => json_input("json", value),
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

/// `{key: value}` when `value` serializes within [`TRACE_INPUT_BYTES`], else
/// `{keyBytes, keyExcerpt}`: its size and its first bytes (measured as it is written, never
/// copied whole).
fn json_input(key: &str, value: &(impl serde::Serialize + ?Sized)) -> Value {
    let measured = Measured::keeping(EXCERPT_BYTES).of(value);
    if measured.bytes <= TRACE_INPUT_BYTES {
        return json!({ key: value });
    }
    // The first bytes may end inside a character: the excerpt stops before it.
    let excerpt = match std::str::from_utf8(&measured.head) {
        Ok(text) => text,
        Err(err) => std::str::from_utf8(&measured.head[..err.valid_up_to()]).unwrap_or_default(),
    };
    json!({ format!("{key}Bytes"): measured.bytes, format!("{key}Excerpt"): excerpt })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_json_input_is_kept_whole_and_a_large_one_as_its_size_and_first_bytes() {
        let small = json!({"invoiceNumber": "INV-42", "total": 12.5});
        assert_eq!(trace_input(&Payload::Json(small.clone()), None), json!({ "json": small }));
        // Three-byte characters, so the excerpt's end falls inside one.
        let large = json!({ "notes": "€".repeat(5_000) });
        let shown = trace_input(&Payload::Json(large.clone()), None);
        assert_eq!(shown["jsonBytes"], large.to_string().len(), "{shown}");
        let excerpt = shown["jsonExcerpt"].as_str().unwrap();
        assert!(excerpt.len() <= EXCERPT_BYTES && excerpt.len() > EXCERPT_BYTES - 3, "{}", excerpt.len());
        assert!(large.to_string().starts_with(excerpt));
        assert!(shown.get("json").is_none());
        let joined = trace_input(&Payload::Json(Value::Null), Some(&[large.clone(), large]));
        assert!(joined["inputsBytes"].as_u64().unwrap() > 2 * 15_000, "{joined}");
    }
}
