//! Evaluations: each queued transformation is scored by [`super::checks`] on the job queue;
//! results are read back by event (or transformation) ID.

use super::checks::{evaluate, Evidence};
use super::compare::leaves;
use super::judge::{judge, Judgement};
use super::{event_kind, is_scored, AccuracyService, DEFAULT_EVALUATION_VERSION};
use crate::calls::InputFile;
use crate::engines::extract::{extract, Source};
use crate::engines::llm::LlmConfig;
use crate::engines::{self, output_schema, Document, Payload};
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::jobs::JobHandler;
use crate::store::records::accuracy::EventRow;
use crate::store::records::accuracy_runs::{EvaluationRow, Queued};
use crate::store::records::keys::Environment;
use anyhow::Context as _;
use base64::Engine as _;
use serde_json::{json, Map, Value};

/// Job kind of an evaluation.
pub const EVAL_JOB: &str = "evaluation";
/// IDs per request.
pub const MAX_IDS: usize = 100;

/// Which IDs a results request names.
pub enum Ids {
    Events(Vec<String>),
    Transformations(Vec<String>),
}

fn check_ids(field: &str, ids: &[String]) -> ServiceResult<()> {
    if ids.is_empty() || ids.len() > MAX_IDS {
        return Err(ServiceError::invalid_field(
            field,
            format!("send 1 to {MAX_IDS} IDs (got {})", ids.len()),
        ));
    }
    crate::text::check_each(field, ids)?;
    if let Some(long) = ids.iter().find(|id| id.len() > 64) {
        return Err(ServiceError::invalid_field(field, format!("{:?}… is not an ID", &long[..16])));
    }
    Ok(())
}

fn check_version(version: Option<&str>) -> ServiceResult<()> {
    if let Some(version) = version {
        crate::text::check_len("evaluationVersion", version, 64, true)?;
    }
    Ok(())
}

impl AccuracyService {
    /// `POST /v3/eval`: `{queued, skipped, errors?}`.
    pub async fn trigger(
        &self,
        tenant: &Tenant,
        transformation_ids: &[String],
        version: Option<&str>,
    ) -> ServiceResult<Value> {
        check_ids("transformationIDs", transformation_ids)?;
        check_version(version)?;
        let version = version.unwrap_or(DEFAULT_EVALUATION_VERSION);
        let room = crate::jobs::QueueRoom {
            kind: EVAL_JOB,
            what: "evaluations",
            limit: "queuedEvaluationsPerAccount",
            most: self.queued_evaluations,
        };
        room.check(&self.records, &tenant.account_id, transformation_ids.len()).await?;
        let (mut queued, mut skipped, mut errors) = (0, 0, Map::new());
        for id in transformation_ids {
            let Some(event) = self.records.event_of_transformation(tenant.owner(), id).await? else {
                errors.insert(id.clone(), json!("transformation not found"));
                continue;
            };
            if !event_kind(&event).is_some_and(is_scored) {
                errors.insert(
                    id.clone(),
                    json!(format!(
                        "{} outputs are not evaluated: only extract, transform, analyze and join",
                        event.event_type
                    )),
                );
                continue;
            }
            let now = ids::now_millis();
            match self.records.queue_evaluation(tenant.owner(), &event, id, version, EVAL_JOB, now).await? {
                Queued::Queued => queued += 1,
                Queued::Skipped => skipped += 1,
            }
        }
        if queued > 0 {
            crate::jobs::wake();
        }
        let mut answer = json!({ "queued": queued, "skipped": skipped });
        if !errors.is_empty() {
            answer["errors"] = Value::Object(errors);
        }
        Ok(answer)
    }

    /// `GET /v3/eval/results` (`legacy`: the deprecated POST, keyed by transformation ID,
    /// items naming `transformationId`, and an `errors` map of unknown IDs).
    pub async fn results(
        &self,
        tenant: &Tenant,
        ids: Ids,
        version: Option<&str>,
        legacy: bool,
    ) -> ServiceResult<Value> {
        check_version(version)?;
        let mut events: Vec<(String, Option<EventRow>)> = Vec::new();
        match &ids {
            Ids::Events(list) => {
                check_ids("eventIDs", list)?;
                for id in list {
                    events.push((id.clone(), self.records.accuracy_event(tenant.owner(), id).await?));
                }
            }
            Ids::Transformations(list) => {
                check_ids("transformationIDs", list)?;
                for id in list {
                    events
                        .push((id.clone(), self.records.event_of_transformation(tenant.owner(), id).await?));
                }
            }
        }
        let found: Vec<String> =
            events.iter().filter_map(|(_, e)| e.as_ref().map(|e| e.id.clone())).collect();
        let rows = self.records.evaluations(tenant.owner(), &found, version).await?;
        let (mut results, mut pending, mut failed, mut errors) =
            (Map::new(), Vec::new(), Vec::new(), Map::new());
        for (asked, event) in &events {
            let Some(event) = event else {
                if legacy {
                    errors.insert(asked.clone(), json!("not found"));
                } else {
                    failed.push(json!({ "eventID": asked, "errorMessage": "event not found", "createdAt": ids::now_rfc3339() }));
                }
                continue;
            };
            let key = if legacy { asked.clone() } else { event.id.clone() };
            let id_field = if legacy { "transformationId" } else { "eventID" };
            match rows.iter().find(|row| row.event_id == event.id) {
                Some(EvaluationRow { status, result: Some(result), evaluation_version, .. })
                    if status == "completed" =>
                {
                    let mut result = result.clone();
                    result["evaluationVersion"] = json!(evaluation_version);
                    results.insert(key, result);
                }
                Some(row) if row.status == "pending" => {
                    pending.push(json!({ id_field: key, "createdAt": ids::millis_rfc3339(row.created_at) }));
                }
                Some(row) => failed.push(json!({
                    id_field: key,
                    "errorMessage": row.error.clone().unwrap_or_else(|| "evaluation failed".into()),
                    "createdAt": ids::millis_rfc3339(row.finished_at.unwrap_or(row.created_at)),
                })),
                None => failed.push(json!({
                    id_field: key, "errorMessage": "no evaluation was requested for this event",
                    "createdAt": ids::now_rfc3339(),
                })),
            }
        }
        let mut answer = json!({ "results": results, "pending": pending, "failed": failed });
        if legacy {
            answer["errors"] = Value::Object(errors);
        }
        Ok(answer)
    }

    /// Scores one event's output (what the job runs).
    pub async fn evaluate_event(&self, tenant: &Tenant, event_id: &str) -> anyhow::Result<(Value, f64)> {
        let event = self.records.accuracy_event(tenant.owner(), event_id).await?.context("event is gone")?;
        let function = self.event_function(tenant, &event).await?;
        let schema = function.as_ref().and_then(output_schema).cloned();
        let output = event.body.get("transformedContent").cloned().unwrap_or(Value::Null);
        let fields = leaves(&output).map_err(|err| anyhow::anyhow!(err.message("the event's output")))?;
        let document = self.input_document(&event).await?;
        let pages: Vec<String> = match &document {
            Some(d) if !d.pages.is_empty() => d.pages.clone(),
            Some(d) => vec![d.text.clone()],
            None => Vec::new(),
        };
        let model = function.as_ref().and_then(|f| LlmConfig::of(f).ok().flatten());
        // A second engine only when the function's own was the language model (none when the
        // built-in extraction passes its steps on this input).
        let second = match (&model, &schema, &document) {
            (Some(_), Some(s), Some(d)) => {
                crate::cpu::blocking(|| extract(s, &Source::of(&Payload::Document(d.clone()))).ok())
            }
            _ => None,
        };
        let judgement = match (&model, &document) {
            (Some(model), Some(d)) => {
                let context = self.calls.engines.context(tenant.clone());
                judge(model, &fields, &d.text, &context).await
            }
            (Some(model), None) => Judgement::Unavailable {
                model: model.model.clone(),
                error: "the event's input document is not available to judge against".into(),
            },
            (None, _) => Judgement::NotConfigured,
        };
        let evidence = document.as_ref().map(|_| Evidence { pages: &pages });
        let result = crate::cpu::blocking(|| {
            evaluate(schema.as_ref(), &fields, evidence.as_ref(), second.as_ref(), &judgement)
        });
        let confidence = result["confidence"].as_f64().unwrap_or(0.0);
        Ok((result, confidence))
    }

    /// The decoded call file the event's output came from (the one carrying its reference,
    /// else the first).
    async fn input_document(&self, event: &EventRow) -> anyhow::Result<Option<Document>> {
        let Some(call_id) = &event.call_id else { return Ok(None) };
        let Some(call) = self.records.call_by_id(call_id).await? else { return Ok(None) };
        let files: Vec<InputFile> = serde_json::from_str(&call.input).context("call input")?;
        let file = files
            .iter()
            .find(|f| f.item_reference_id.is_some() && f.item_reference_id == event.reference_id)
            .or(files.first());
        let Some(file) = file else { return Ok(None) };
        let bytes =
            base64::engine::general_purpose::STANDARD.decode(&file.content).context("input base64")?;
        let input_type = file.input_type.clone();
        let decoded = tokio::task::spawn_blocking(move || engines::decode(&input_type, &bytes)).await?;
        Ok(decoded.ok())
    }
}

/// The job handler of [`EVAL_JOB`].
pub struct EvalJob {
    pub service: AccuracyService,
}

fn tenant_of(payload: &Value) -> Tenant {
    let environment = match payload["environment"].as_str() {
        Some("sandbox") => Environment::Sandbox,
        _ => Environment::Production,
    };
    Tenant { account_id: payload["accountID"].as_str().unwrap_or_default().to_string(), environment }
}

#[async_trait::async_trait]
impl JobHandler for EvalJob {
    async fn run(&self, payload: Value) -> anyhow::Result<()> {
        let event_id = payload["eventID"].as_str().context("job without eventID")?;
        let tenant = tenant_of(&payload);
        let now = ids::now_millis();
        match self.service.evaluate_event(&tenant, event_id).await {
            Ok((result, confidence)) => {
                self.service.records.finish_evaluation(event_id, Ok((&result, confidence)), now).await?
            }
            Err(err) => {
                self.service.records.finish_evaluation(event_id, Err(&format!("{err:#}")), now).await?
            }
        }
        Ok(())
    }

    async fn gave_up(&self, payload: Value, error: &str) {
        if let Some(event_id) = payload["eventID"].as_str() {
            let _ = self.service.records.finish_evaluation(event_id, Err(error), ids::now_millis()).await;
        }
    }
}
