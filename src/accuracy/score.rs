//! Score runs: a function run over `(input, expected)` pairs, each pair one call of a
//! one-node plan; the comparison ([`super::compare::score_fields`]) is redone on every read,
//! so a read with other [`CompareOptions`] costs no function call.
//!
//! Pairs come from anywhere as a `Vec<ScorePair>` ([`AccuracyService::start_score_run`]):
//! inline pairs, or a golden dataset's rows ([`crate::datasets::DatasetsService::pairs`]).

use super::compare::{score_fields, CompareOptions, SimilarityBudget, Tally};
use super::regression::{new_call, single_node_plan};
use super::AccuracyService;
use crate::calls::InputFile;
use crate::engines;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::store::records::accuracy_runs::ScoreRunRow;
use crate::store::records::events::TerminalEvent;
use crate::versions::Kind;
use base64::Engine as _;
use serde_json::{json, Value};

/// Pairs per run.
pub const MAX_PAIRS: usize = 1000;
/// Characters of a function's output event a score run compares: a read compares every
/// pair's and answers each field's actual and expected values, so 1,000 pairs of outputs of up
/// to 128 MiB each were read whole into one answer. The bound a correction has
/// ([`crate::accuracy::corrections::MAX_CORRECTION_BYTES`]); a pair past it is `failed`, saying
/// so, and its output is never read into the process.
pub const MAX_SCORED_OUTPUT_CHARS: usize = crate::accuracy::corrections::MAX_CORRECTION_BYTES;
/// Characters of output events one read compares together: under the bound above, 1,000
/// pairs still made an answer of 262 MB of actual values (and their parsed copies, several
/// times that). Read in the order the outputs were recorded; a pair past it is `failed` for
/// that read, saying so (64 KB an output on average over 1,000 pairs).
pub const MAX_SCORED_CHARS_PER_READ: usize = 64 * 1024 * 1024;
/// Field results one read answers: 64 MiB of `[0,0,…]` outputs were 33 million fields, each
/// an object of its path, values and verdict (tens of GB). Checked before each pair (a pair
/// has at most twice [`crate::accuracy::fields::MAX_FIELDS`]); the pairs after it are `failed`
/// for that read, saying so.
pub const FIELD_RESULTS_PER_READ: usize = 200_000;
/// Largest `numericTolerance` a score read takes (a bound, so the number stays finite).
pub const MAX_NUMERIC_TOLERANCE: f64 = 1e12;

/// One input and the output expected from it.
#[derive(Clone, Debug)]
pub struct ScorePair {
    pub input: InputFile,
    pub expected: Value,
}

/// A pair as a client sends it: base64 content and its input type.
pub struct RawPair {
    pub input_content: String,
    pub input_type: String,
    pub expected: Value,
}

/// Checks raw pairs into [`ScorePair`]s (input type normalised, base64 decodable).
pub fn check_pairs(raw: Vec<RawPair>) -> ServiceResult<Vec<ScorePair>> {
    if raw.is_empty() || raw.len() > MAX_PAIRS {
        return Err(ServiceError::invalid_field("pairs", format!("send 1 to {MAX_PAIRS} pairs")));
    }
    raw.into_iter()
        .enumerate()
        .map(|(i, pair)| {
            let field = format!("pairs[{i}].input");
            let input_type = engines::supported_input_type(&pair.input_type).ok_or_else(|| {
                ServiceError::invalid_field(
                    &format!("{field}.inputType"),
                    format!("unsupported inputType {:?}", pair.input_type),
                )
            })?;
            base64::engine::general_purpose::STANDARD.decode(&pair.input_content).map_err(|_| {
                ServiceError::invalid_field(&format!("{field}.inputContent"), "must be base64")
            })?;
            crate::text::check_json(&format!("pairs[{i}].expected"), &pair.expected)?;
            Ok(ScorePair {
                input: InputFile {
                    input_type: input_type.to_string(),
                    content: pair.input_content,
                    item_reference_id: Some(format!("pair-{i}")),
                    file_name: None,
                },
                expected: pair.expected,
            })
        })
        .collect()
}

impl AccuracyService {
    /// Starts a run of the function's current version over `pairs`: `{scoreRunID, status}`.
    pub async fn start_score_run(
        &self,
        tenant: &Tenant,
        function_name: &str,
        version: Option<i64>,
        pairs: Vec<ScorePair>,
    ) -> ServiceResult<Value> {
        let record = self.function(tenant, function_name).await?;
        let current = record.head.current_version;
        if let Some(asked) = version.filter(|v| *v != current) {
            return Err(ServiceError::Unprocessable {
                message: format!("only the current version ({current}) can be scored (got {asked})"),
                details: Some(json!({ "field": "functionVersionNum" })),
            });
        }
        let function = self.version(tenant, &record, current).await?;
        if !matches!(function.kind(), Kind::Extract | Kind::Transform | Kind::Analyze) {
            return Err(ServiceError::invalid_field(
                "functionName",
                "score runs cover extract, transform and analyze functions",
            ));
        }
        // All its pairs' calls queue at once: the account's queue must hold them all.
        self.calls.check_queue_room(tenant, pairs.len()).await?;
        let run = ScoreRunRow {
            id: ids::new_id("esr"),
            function_name: record.head.name.clone(),
            function_version_num: current,
            cancelled: false,
        };
        let plan = single_node_plan((&run.id, &format!("score:{}", record.head.name), 1), &function);
        let mut calls = Vec::new();
        for pair in &pairs {
            calls.push(new_call(tenant, &plan, std::slice::from_ref(&pair.input))?);
        }
        let stored: Vec<(String, Value)> =
            calls.iter().zip(&pairs).map(|(call, pair)| (call.id.clone(), pair.expected.clone())).collect();
        let now = ids::now_millis();
        self.records.insert_score_run(tenant.owner(), &run, &stored, now).await?;
        for call in &calls {
            self.records.insert_call(call, now, None).await?;
        }
        crate::jobs::wake();
        Ok(json!({ "scoreRunID": run.id, "status": "pending" }))
    }

    /// The SDK's `EvalScoreRun`, compared now under `options`.
    pub async fn score_run(
        &self,
        tenant: &Tenant,
        id: &str,
        options: &CompareOptions,
    ) -> ServiceResult<Value> {
        crate::text::check_len("scoreRunID", id, 64, true)?;
        let run = self
            .records
            .score_run(tenant.owner(), id)
            .await?
            .ok_or_else(|| ServiceError::not_found("score run", id))?;
        let pairs = self.records.score_pairs(&run.id).await?;
        let call_ids: Vec<String> = pairs.iter().map(|(call, _)| call.clone()).collect();
        let mut events = self
            .records
            .terminal_events_within(&call_ids, MAX_SCORED_OUTPUT_CHARS, MAX_SCORED_CHARS_PER_READ)
            .await?;
        let (mut completed, mut failed, mut started) = (0, 0, 0);
        let mut tally = Tally::default();
        let mut per_pair = Vec::new();
        let mut budget = SimilarityBudget::default();
        let mut shown = 0usize;
        for (index, (call_id, expected)) in pairs.iter().enumerate() {
            let terminal = events.remove(call_id).unwrap_or_default();
            let output = terminal.iter().find(|e| e.event_type != "error");
            let error = terminal.iter().find(|e| e.event_type == "error");
            let mut item =
                json!({ "pairIndex": index, "callID": call_id, "errorMessage": null, "fieldResults": null });
            if let Some(TerminalEvent { length, body: None, .. }) = output {
                failed += 1;
                item["status"] = json!("failed");
                item["errorMessage"] = json!(if *length > MAX_SCORED_OUTPUT_CHARS {
                    format!(
                        "not compared: the function's output event is {length} characters long, past the \
                         {MAX_SCORED_OUTPUT_CHARS} a score run compares (scoredOutputCharacters)"
                    )
                } else {
                    format!(
                        "not compared in this read: the outputs recorded before it hold the \
                         {MAX_SCORED_CHARS_PER_READ} characters one read compares together \
                         (scoredOutputCharactersPerRead)"
                    )
                });
            } else if output.is_some() && shown >= FIELD_RESULTS_PER_READ {
                failed += 1;
                item["status"] = json!("failed");
                item["errorMessage"] = json!(format!(
                    "not compared in this read: the pairs before it hold the {FIELD_RESULTS_PER_READ} field \
                     results one read answers (fieldResultsPerRead)"
                ));
            } else if let Some(TerminalEvent { body: Some(output), .. }) = output {
                let actual = output.get("transformedContent").cloned().unwrap_or(Value::Null);
                match crate::cpu::blocking(|| score_fields(&actual, expected, options, &mut budget)) {
                    Ok((fields, pair_tally)) => {
                        shown += fields.len();
                        tally.add(pair_tally);
                        completed += 1;
                        item["status"] = json!("completed");
                        item["fieldResults"] = Value::Array(fields);
                    }
                    Err((what, err)) => {
                        failed += 1;
                        item["status"] = json!("failed");
                        item["errorMessage"] = json!(format!("not compared: {}", err.message(what)));
                    }
                }
            } else if let Some(error) = error {
                failed += 1;
                item["status"] = json!("failed");
                item["errorMessage"] = error
                    .body
                    .as_ref()
                    .and_then(|body| body.get("message").cloned())
                    .unwrap_or(json!("the function call failed"));
            } else {
                let status = self.records.call_by_id(call_id).await?.map(|c| c.status).unwrap_or_default();
                let running = status == "running";
                started += usize::from(running);
                item["status"] = json!(if running { "running" } else { "pending" });
            }
            per_pair.push(item);
        }
        let finished = completed + failed == pairs.len();
        let status = if run.cancelled {
            "cancelled"
        } else if finished && completed == 0 && !pairs.is_empty() {
            "error"
        } else if finished {
            "completed"
        } else if started + completed + failed > 0 {
            "running"
        } else {
            "pending"
        };
        let aggregate = matches!(status, "completed" | "error").then(|| tally.aggregate());
        Ok(json!({
            "scoreRunID": run.id, "functionName": run.function_name, "functionVersionNum": run.function_version_num,
            "status": status, "perPair": per_pair,
            "progress": { "completed": completed, "failed": failed, "total": pairs.len() },
            "aggregate": aggregate,
        }))
    }

    /// Marks the run cancelled (calls already queued may still finish and show). A run that
    /// already finished (`completed` or `error`) keeps its status and its figures: cancelling
    /// it answers the run as it is (200, decision: the SDK's `cancel()` returns the run, and a
    /// 409 would raise for what is only a late click).
    pub async fn cancel_score_run(&self, tenant: &Tenant, id: &str) -> ServiceResult<Value> {
        crate::text::check_len("scoreRunID", id, 64, true)?;
        let run = self
            .records
            .score_run(tenant.owner(), id)
            .await?
            .ok_or_else(|| ServiceError::not_found("score run", id))?;
        let now = self.score_run(tenant, id, &CompareOptions::default()).await?;
        if matches!(now["status"].as_str(), Some("completed" | "error" | "cancelled")) {
            return Ok(now);
        }
        self.records.cancel_score_run(&run.id).await?;
        self.score_run(tenant, id, &CompareOptions::default()).await
    }
}
