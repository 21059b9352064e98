//! Corrections: what an event's output should have been. A corrected event is *labelled*
//! (`isLabelled` on `/v1-alpha/events`), shows its `correction` in its body, and its fields
//! are counted as [`super::compare`] describes; submitting again overwrites.

use super::compare::{field_outcomes, Compared};
use super::{event_kind, AccuracyService};
use crate::engines::output_schema;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::store::records::accuracy::{EventRow, NewCorrection};
use crate::versions::Kind;
use serde_json::{json, Value};

/// Corrections one legacy batch (`PATCH /v1-beta/transformations`) takes at most.
pub const MAX_CORRECTIONS: usize = 100;

/// A correction's size bound (the JSON text).
pub const MAX_CORRECTION_BYTES: usize = 256 * 1024;

/// One correction of the legacy batch.
pub struct BatchItem {
    pub transformation_id: String,
    pub corrected: Value,
}

impl AccuracyService {
    /// `POST /v3/events/{eventID}/feedback`: stores the correction and answers the SDK's
    /// `EventSubmitFeedbackResponse`.
    pub async fn submit_feedback(
        &self,
        tenant: &Tenant,
        event_id: &str,
        correction: Value,
        order_matching: Option<bool>,
    ) -> ServiceResult<Value> {
        crate::text::check_len("eventID", event_id, 64, true)?;
        let event = self
            .records
            .accuracy_event(tenant.owner(), event_id)
            .await?
            .ok_or_else(|| ServiceError::not_found("event", event_id))?;
        self.correct(tenant, &event, correction, order_matching.unwrap_or(true)).await
    }

    /// Stores `correction` for `event` (checked against its type), marks it labelled.
    pub async fn correct(
        &self,
        tenant: &Tenant,
        event: &EventRow,
        correction: Value,
        order_matching: bool,
    ) -> ServiceResult<Value> {
        let kind = event_kind(event).ok_or_else(|| {
            ServiceError::invalid_field(
                "eventID",
                format!("{} events take no feedback: send it for extract, transform, analyze, join or classify events", event.event_type),
            )
        })?;
        crate::text::check_json("correction", &correction)?;
        if crate::json_size::json_bytes(&correction) > MAX_CORRECTION_BYTES {
            return Err(ServiceError::invalid_field("correction", "must be at most 256 KB of JSON"));
        }
        let function = self.event_function(tenant, event).await?;
        let (output, expected, function_type) = match kind {
            Kind::Extract | Kind::Transform | Kind::Analyze | Kind::Join => {
                if !correction.is_object() {
                    return Err(ServiceError::invalid_field(
                        "correction",
                        "must be a JSON object matching the function's output schema",
                    ));
                }
                let output = event.body.get("transformedContent").cloned().unwrap_or(Value::Null);
                (output, correction.clone(), if kind == Kind::Join { "join" } else { "extract" })
            }
            Kind::Classify => {
                let Some(choice) = correction.as_str().filter(|c| !c.trim().is_empty()) else {
                    return Err(ServiceError::invalid_field(
                        "correction",
                        "must be a JSON string naming one of the function's classifications",
                    ));
                };
                let declared: Vec<&str> = function
                    .as_ref()
                    .and_then(|f| crate::engines::setting(f, "classifications"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c.get("name").and_then(Value::as_str))
                    .collect();
                if !declared.is_empty() && !declared.contains(&choice) {
                    return Err(ServiceError::invalid_field(
                        "correction",
                        format!("{choice:?} is not a classification of the function: {}", declared.join(", ")),
                    ));
                }
                let output = json!({ "choice": event.body.get("choice") });
                (output, json!({ "choice": choice }), "classify")
            }
            Kind::Split | Kind::Send | Kind::Enrich => {
                return Err(ServiceError::invalid_field(
                    "eventID",
                    format!(
                        "{} events take no feedback: send it for extract, transform, analyze, join or classify events",
                        event.event_type
                    ),
                ))
            }
        };
        let schema = match kind {
            Kind::Classify => None,
            _ => function.as_ref().and_then(output_schema),
        };
        let outcomes =
            field_outcomes(schema, &output, &expected, order_matching).map_err(|(what, err)| match what {
                Compared::Correction => ServiceError::invalid_field("correction", err.message(what.name())),
                Compared::Output | Compared::OutputSchema => {
                    ServiceError::Unprocessable { message: err.message(what.name()), details: None }
                }
            })?;
        let fields: Vec<(String, &'static str)> =
            outcomes.into_iter().map(|(path, outcome)| (path, outcome.as_str())).collect();
        let now = ids::now_millis();
        let created_at = ids::millis_rfc3339(now);
        let mut body = event.body.clone();
        if let Some(map) = body.as_object_mut() {
            map.insert("correction".into(), correction.clone());
            map.insert("correctedAt".into(), json!(created_at));
        }
        self.records
            .save_correction(
                tenant.owner(),
                NewCorrection {
                    event,
                    function_type,
                    correction: &correction,
                    order_matching,
                    fields: &fields,
                    body: &body,
                    now,
                },
            )
            .await?;
        Ok(json!({
            "eventID": event.id, "correction": correction, "createdAt": created_at, "functionType": function_type,
        }))
    }

    /// The deprecated `PATCH /v1-beta/transformations`: each correction on its own;
    /// `{results, successCount, totalCount}` and whether every one succeeded.
    pub async fn correct_batch(
        &self,
        tenant: &Tenant,
        items: Vec<BatchItem>,
    ) -> ServiceResult<(Value, bool)> {
        if items.is_empty() || items.len() > MAX_CORRECTIONS {
            return Err(ServiceError::invalid_field(
                "transformations",
                format!("send 1 to {MAX_CORRECTIONS} corrections"),
            ));
        }
        // A malformed ID refuses the batch (400) as every tenant text does; an unknown one
        // fails its row alone (207).
        for (i, item) in items.iter().enumerate() {
            crate::text::check(&format!("transformations[{i}].transformationID"), &item.transformation_id)?;
        }
        let mut results = Vec::new();
        let mut successes = 0;
        for item in &items {
            let outcome =
                match self.records.event_of_transformation(tenant.owner(), &item.transformation_id).await? {
                    None => Err(format!("transformation {} not found", item.transformation_id)),
                    Some(event) => match self.correct(tenant, &event, item.corrected.clone(), true).await {
                        Ok(_) => Ok(()),
                        Err(ServiceError::Internal(err)) => return Err(ServiceError::Internal(err)),
                        Err(err) => Err(err.to_string()),
                    },
                };
            successes += usize::from(outcome.is_ok());
            results.push(json!({
                "transformationID": item.transformation_id,
                "success": outcome.is_ok(),
                "error": outcome.err().unwrap_or_default(),
            }));
        }
        let all = successes == items.len();
        Ok((json!({ "results": results, "successCount": successes, "totalCount": items.len() }), all))
    }
}
