//! Terminal events of a function recorded straight into the record store, as a workflow
//! call's last step records them (each with its outbox rows). Shared by the delivery benchmark
//! and the delivery tests, which include this file (`tests/api/delivery_batches.rs`).

use canon::store::records::events::NewEvent;
use canon::store::records::Owner;
use canon::store::records::{RecordError, Records};
use serde_json::json;

/// Records `count` `transform` events of the function `shaper` (`function_id`) back to back,
/// each keyed `<prefix>-<n>`; returns each event's ID and body, in order.
pub async fn record_terminal_events(
    records: &Records,
    owner: Owner<'_>,
    function_id: &str,
    prefix: &str,
    count: usize,
) -> Result<Vec<(String, String)>, RecordError> {
    let (call_id, workflow_id) = (format!("wc_{prefix}"), format!("wf_{prefix}"));
    let mut recorded = Vec::with_capacity(count);
    for n in 0..count {
        let id = canon::ids::new_ksuid();
        let body = json!({"eventID": id, "eventType": "transform", "functionName": "shaper", "n": n,
                          "createdAt": canon::ids::now_rfc3339(), "transformedContent": {"invoiceNumber": "INV-42"}});
        let key = format!("{prefix}-{n}");
        let event = NewEvent {
            id: &id,
            event_type: "transform",
            body: &body,
            call_id: &call_id,
            function_call_id: &key,
            workflow_id: &workflow_id,
            workflow_name: prefix,
            function_id,
            function_name: "shaper",
            function_version_num: 1,
            reference_id: "",
            intermediate: false,
            dedupe_key: &key,
            now: canon::ids::now_millis(),
        };
        records.record_pipeline_event(owner, event).await?;
        recorded.push((id, body.to_string()));
    }
    Ok(recorded)
}
