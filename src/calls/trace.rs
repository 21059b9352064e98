//! A call's trace, `{trace: {functionCalls, events}}`: per node run its input, output,
//! timing and error, and every event of the call, within [`TRACE_VALUE_BYTES`] a value and
//! [`TRACE_BYTES`] together (the runs' values first, in the order they started, then the
//! events' bodies). A value not read is `null` beside `inputOmitted` / `outputOmitted` (an
//! event: `{eventID, eventType, bodyOmitted}`) saying its size and where to read it whole.

use crate::ids;
use crate::store::records::calls::CallRow;
use crate::store::records::traces::{TracedEvent, TracedRun};
use serde_json::{json, Value};

/// Bytes of one value a trace reads at most (a run's input or output, an event's body).
pub const TRACE_VALUE_BYTES: i64 = 1024 * 1024;
/// Bytes of values one trace reads at most, together: a call's runs may output 128 MiB,
/// each stored twice (checkpoint and event), beside 50,000 inputs.
pub const TRACE_BYTES: usize = 32 * 1024 * 1024;

/// What a trace says of a value it does not show.
fn omitted(json_bytes: i64, whole: &str) -> Value {
    let reason = if json_bytes > TRACE_VALUE_BYTES {
        format!("longer than the {TRACE_VALUE_BYTES} bytes a trace shows of one value; {whole}")
    } else {
        format!("past the bytes a trace shows together ({TRACE_BYTES} at most); {whole}")
    };
    json!({ "jsonBytes": json_bytes, "reason": reason })
}

/// What an omitted checkpoint's first characters say: `{"result":"routed","outlet":…` or
/// `{"result":"failed","kind":…` (the tag first, then the fields in order, as serde writes
/// them), else nothing.
fn named_in_head(head: &str, tag: &str, field: &str) -> Option<String> {
    let rest = head.strip_prefix(&format!("{{\"result\":\"{tag}\",\"{field}\":"))?;
    serde_json::Deserializer::from_str(rest).into_iter::<String>().next()?.ok()
}

/// The trace's JSON.
pub fn shape(call: &CallRow, runs: &[TracedRun], events: &[TracedEvent]) -> Value {
    let function_calls: Vec<Value> = runs
        .iter()
        .map(|traced| {
            let run = &traced.run;
            let checkpoint: Value =
                run.output.as_deref().and_then(|o| serde_json::from_str(o).ok()).unwrap_or(Value::Null);
            let output = match checkpoint.get("result").and_then(Value::as_str) {
                Some("output") | Some("routed") => checkpoint.get("output").cloned(),
                Some("items") => Some(json!({
                    "items": checkpoint.get("items").and_then(Value::as_array)
                        .map(|items| items.iter().map(|i| i.get("output").cloned().unwrap_or(Value::Null)).collect::<Vec<_>>())
                })),
                _ => None,
            };
            let head = traced.output_omitted.as_ref().map(|(_, head)| head.as_str()).unwrap_or("");
            let error = (run.status == "failed").then(|| match &traced.output_omitted {
                None => json!({ "kind": checkpoint.get("kind"), "message": checkpoint.get("message") }),
                Some(_) => json!({ "kind": named_in_head(head, "failed", "kind"), "message": run.error }),
            });
            let routed_to = match &traced.output_omitted {
                None => checkpoint.get("outlet").cloned(),
                Some(_) => named_in_head(head, "routed", "outlet").map(Value::String),
            };
            let mut shown = json!({
                "functionCallID": run.id,
                "functionID": run.function_id,
                "functionName": run.function_name,
                "functionVersionNum": run.function_version_num,
                "type": run.function_type,
                "status": run.status,
                "referenceID": call.reference_id.clone().unwrap_or_default(),
                "workflowCallID": call.id,
                "workflowNodeName": run.node_name,
                "itemKey": run.item_key,
                "sourceEventID": run.source_event_id,
                "sourceFunctionCallID": run.source_function_call_id,
                "incomingDestinationName": run.incoming_destination,
                "startedAt": ids::millis_rfc3339(run.started_at),
                "finishedAt": run.finished_at.map(ids::millis_rfc3339),
                "durationMs": run.finished_at.map(|f| f - run.started_at),
                "input": run.input.as_deref().and_then(|i| serde_json::from_str::<Value>(i).ok()),
                "output": output,
                "error": error,
                "routedTo": routed_to,
            });
            if let Some(bytes) = traced.input_omitted {
                shown["inputOmitted"] = omitted(bytes, "the input is its source event's output (sourceEventID)");
            }
            if let Some((bytes, _)) = &traced.output_omitted {
                shown["outputOmitted"] = omitted(*bytes, "read the run's event through GET /v3/outputs/{eventID}");
            }
            shown
        })
        .collect();
    let events: Vec<Value> = events
        .iter()
        .map(|event| match &event.body {
            Ok(body) => body.clone(),
            Err(bytes) => json!({
                "eventID": event.id,
                "eventType": event.event_type,
                "bodyOmitted": omitted(*bytes, "read it through GET /v3/outputs/{eventID} (or /v3/errors/{eventID})"),
            }),
        })
        .collect();
    json!({ "trace": { "functionCalls": function_calls, "events": events } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_omitted_checkpoint_still_names_its_outlet_and_its_failure() {
        // As the executor's checkpoint is written: its tag first, then its fields in order.
        let routed = r#"{"result":"routed","outlet":"in\"voice","output":"x"}"#;
        assert_eq!(named_in_head(&routed[..40], "routed", "outlet").as_deref(), Some("in\"voice"));
        assert_eq!(
            named_in_head("{\"result\":\"failed\",\"kind\":\"input_limit\",\"mes", "failed", "kind")
                .as_deref(),
            Some("input_limit")
        );
        assert_eq!(named_in_head("{\"result\":\"output\",\"output\":1", "routed", "outlet"), None);
        assert_eq!(named_in_head("{\"result\":\"routed\",\"outlet\":\"cut sho", "routed", "outlet"), None);
    }
}
