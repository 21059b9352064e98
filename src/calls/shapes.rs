//! The JSON of events, calls and traces, in the spec's shapes (and `bem-sdk`'s where the
//! spec says "not shown").

use super::Plan;
use crate::ids;
use crate::store::records::calls::CallRow;
use crate::versions::FunctionVersion;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// What every event of a run has in common.
pub struct RunInfo<'a> {
    pub call: &'a CallRow,
    pub plan: &'a Plan,
    pub node: &'a str,
    pub function: &'a FunctionVersion,
    pub function_call_id: &'a str,
    pub try_number: i64,
    pub reference_id: &'a str,
    pub duration_seconds: f64,
    pub inbound_email: Option<Value>,
}

/// The transformation ID of a run: the run's own ID under the `tr_` prefix, so mentions
/// linked from a run and its event name the same transformation.
pub fn transformation_id(function_call_id: &str) -> String {
    format!("tr_{}", function_call_id.trim_start_matches("fc_"))
}

/// Fields every event of a run carries.
fn common(info: &RunInfo<'_>, event_type: &str) -> Map<String, Value> {
    let mut event = Map::new();
    event.insert("eventID".into(), json!(ids::new_ksuid()));
    event.insert("eventType".into(), json!(event_type));
    event.insert("createdAt".into(), json!(ids::now_rfc3339()));
    event.insert("referenceID".into(), json!(info.reference_id));
    event.insert("functionCallTryNumber".into(), json!(info.try_number));
    event.insert("functionCallID".into(), json!(info.function_call_id));
    event.insert("functionID".into(), json!(info.function.function_id));
    event.insert("functionName".into(), json!(info.function.function_name));
    event.insert("functionVersionNum".into(), json!(info.function.version_num));
    event.insert("callID".into(), json!(info.call.id));
    event.insert("workflowID".into(), json!(info.plan.workflow.workflow_id));
    event.insert("workflowName".into(), json!(info.plan.workflow.workflow_name));
    event.insert("workflowVersionNum".into(), json!(info.plan.workflow.version_num));
    if let Some(email) = &info.inbound_email {
        event.insert("inboundEmail".into(), email.clone());
    }
    event.insert("metadata".into(), json!({ "durationFunctionToEventSeconds": info.duration_seconds }));
    event
}

/// A non-error event: the output is `transformedContent`; a classify event also names its
/// `choice`, a join its `items`.
pub fn output_event(
    info: &RunInfo<'_>,
    event_type: &str,
    output: &Value,
    (item_offset, item_count): (i64, i64),
    outlet: Option<&str>,
) -> Value {
    let mut event = common(info, event_type);
    // One transformation per run, except a split's items (one per item).
    let transformation =
        if event_type == "split_item" { ids::new_id("tr") } else { transformation_id(info.function_call_id) };
    event.insert("transformationID".into(), json!(transformation));
    event.insert("transformedContent".into(), output.clone());
    event.insert("invalidProperties".into(), json!([]));
    event.insert("itemOffset".into(), json!(item_offset));
    event.insert("itemCount".into(), json!(item_count));
    if let Some(outlet) = outlet {
        event.insert("choice".into(), json!(outlet));
    }
    if event_type == "join" {
        event.insert("joinType".into(), json!("standard"));
        event.insert("items".into(), output.get("items").cloned().unwrap_or(json!([])));
    }
    if let Some(metadata) = info.call.metadata.as_deref().and_then(|m| serde_json::from_str::<Value>(m).ok())
    {
        if let Some(content) = event.get_mut("transformedContent").and_then(Value::as_object_mut) {
            content.insert("_metadata".into(), metadata);
        }
    }
    Value::Object(event)
}

/// An error event: the common fields plus `message` and `kind`.
pub fn error_event(info: &RunInfo<'_>, kind: &str, message: &str) -> Value {
    let mut event = common(info, "error");
    event.insert("message".into(), json!(message));
    event.insert("kind".into(), json!(kind));
    Value::Object(event)
}

/// `{call: …}`: terminal outputs and errors (the spec's error items: the error event plus
/// `workflowNodeName`, from the run that emitted it, and `errorMessage`).
/// `nodes` names each run's node by run ID.
pub fn call(call: &CallRow, nodes: &HashMap<String, String>, events: &[(Value, bool)]) -> Value {
    let terminal = events.iter().filter(|(_, intermediate)| !intermediate).map(|(event, _)| event);
    let (errors, outputs): (Vec<&Value>, Vec<&Value>) =
        terminal.partition(|event| event.get("eventType").and_then(Value::as_str) == Some("error"));
    let mut errors: Vec<Value> = errors
        .into_iter()
        .map(|event| {
            let mut item = event.clone();
            if let Some(fields) = item.as_object_mut() {
                fields.insert("errorMessage".into(), event.get("message").cloned().unwrap_or(Value::Null));
                let run = event.get("functionCallID").and_then(Value::as_str);
                let node = run.and_then(|run| nodes.get(run)).cloned();
                fields.insert("workflowNodeName".into(), json!(node));
            }
            item
        })
        .collect();
    if let Some(message) = &call.error {
        errors.push(call_error(call, message));
    }
    // A listed call's input is its summary, a read one's the files whole: both read the same.
    let input = crate::store::records::calls::file_summaries(&call.input);
    let describe = |file: &crate::store::records::calls::FileSummary| json!({ "inputType": file.input_type, "itemReferenceID": file.item_reference_id });
    let input = if input.len() == 1 {
        json!({ "singleFile": describe(&input[0]) })
    } else {
        json!({ "batchFiles": { "inputs": input.iter().map(describe).collect::<Vec<_>>() } })
    };
    json!({
        "callID": call.id,
        "callType": "workflow",
        "status": call.status,
        "outputs": outputs,
        "errors": errors,
        "url": format!("/v3/calls/{}", call.id),
        "traceUrl": format!("/v3/calls/{}/trace", call.id),
        "callReferenceID": call.reference_id,
        "createdAt": ids::millis_rfc3339(call.created_at),
        "finishedAt": call.finished_at.map(ids::millis_rfc3339),
        "workflowID": call.workflow_id,
        "workflowName": call.workflow_name,
        "workflowVersionNum": call.workflow_version_num,
        "input": input,
        "metadata": call.metadata.as_deref().and_then(|m| serde_json::from_str::<Value>(m).ok()),
    })
}

/// The error item of a call that failed as a whole (no node's run to say why): its job
/// was given up. Shaped like a node's error item, with no node.
fn call_error(call: &CallRow, message: &str) -> Value {
    json!({
        "eventType": "error",
        "kind": "call_failed",
        "message": message,
        "errorMessage": message,
        "callID": call.id,
        "workflowID": call.workflow_id,
        "workflowName": call.workflow_name,
        "workflowVersionNum": call.workflow_version_num,
        "workflowNodeName": null,
    })
}
