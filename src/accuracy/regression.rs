//! Regression runs: corrected inputs of a baseline version replayed against another version
//! as one-node calls (the original call's workflow, its node running the comparison version),
//! each tied to the event it replays; then the baseline's corrections copied onto the new
//! outputs so [`super::metrics`] can compare the two versions on the same inputs.

use super::compare::schema_leaves;
use super::{is_scored, versions_or_default, AccuracyService};
use crate::calls::{InputFile, Plan};
use crate::engines::output_schema;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::store::records::accuracy_runs::RegressionCall;
use crate::store::records::calls::CallRow;
use crate::versions::{FunctionVersion, Node, WorkflowVersion};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The largest `sampleSize` a regression takes.
pub const MAX_SAMPLE: i64 = 1000;

/// The node name of a regression (and score) call's one-node plan.
pub const NODE: &str = "accuracy";

/// A one-node plan running `function` inside the named workflow.
pub fn single_node_plan(workflow: (&str, &str, i64), function: &FunctionVersion) -> Plan {
    let (workflow_id, workflow_name, version_num) = workflow;
    Plan {
        workflow: WorkflowVersion {
            workflow_id: workflow_id.to_string(),
            workflow_name: workflow_name.to_string(),
            version_num,
            main_node_name: NODE.into(),
            nodes: vec![Node {
                name: NODE.into(),
                function_id: function.function_id.clone(),
                function_name: function.function_name.clone(),
                function_version_num: function.version_num,
            }],
            edges: Vec::new(),
        },
        functions: BTreeMap::from([(NODE.to_string(), function.clone())]),
    }
}

/// A pending call of `plan` over `files` for the tenant.
pub fn new_call(tenant: &Tenant, plan: &Plan, files: &[InputFile]) -> ServiceResult<CallRow> {
    Ok(CallRow {
        id: ids::new_id("wc"),
        account_id: tenant.account_id.clone(),
        environment: tenant.environment.as_str().to_string(),
        workflow_id: plan.workflow.workflow_id.clone(),
        workflow_name: plan.workflow.workflow_name.clone(),
        workflow_version_num: plan.workflow.version_num,
        reference_id: None,
        status: "pending".into(),
        input: serde_json::to_string(files).map_err(anyhow::Error::from)?,
        plan: serde_json::to_string(plan).map_err(anyhow::Error::from)?,
        metadata: None,
        bucket: None,
        created_at: ids::now_millis(),
        finished_at: None,
        error: None,
    })
}

/// Leaf fields whose declared `type` differs between two output schemas.
fn schema_differences(baseline: Option<&Value>, comparison: Option<&Value>) -> Vec<Value> {
    let (Some(a), Some(b)) = (baseline, comparison) else { return Vec::new() };
    let type_at = |schema: &Value, path: &str| {
        let pointer: String = path.split('/').skip(1).map(|k| format!("/properties/{k}")).collect();
        schema.pointer(&pointer).and_then(|p| p.get("type")).cloned()
    };
    // A schema past the field bounds (saving one keeps it far below) shows no differences.
    schema_leaves(a)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|path| {
            let (x, y) = (type_at(a, &path), type_at(b, &path));
            (x.is_some() && y.is_some() && x != y)
                .then(|| json!({ "fieldPath": path, "baselineType": x, "comparisonType": y }))
        })
        .collect()
}

impl AccuracyService {
    /// `POST /v3/functions/regression`: the SDK's `RegressionRunResponse`.
    pub async fn run_regression(
        &self,
        tenant: &Tenant,
        function_name: &str,
        baseline: Option<i64>,
        comparison: Option<i64>,
        only_corrected: bool,
        sample_size: Option<i64>,
    ) -> ServiceResult<Value> {
        let sample_size = sample_size.unwrap_or(50);
        if !(1..=MAX_SAMPLE).contains(&sample_size) {
            return Err(ServiceError::invalid_field(
                "sampleSize",
                format!("must be between 1 and {MAX_SAMPLE}"),
            ));
        }
        let record = self.function(tenant, function_name).await?;
        let (baseline, comparison) = versions_or_default(&record, baseline, comparison)?;
        let base_fn = self.version(tenant, &record, baseline).await?;
        let next_fn = self.version(tenant, &record, comparison).await?;
        if !is_scored(next_fn.kind()) {
            return Err(ServiceError::invalid_field(
                "functionName",
                "regression runs cover extract, transform, analyze and join functions",
            ));
        }
        let diffs = schema_differences(output_schema(&base_fn), output_schema(&next_fn));
        if !diffs.is_empty() {
            return Err(ServiceError::Invalid {
                message: format!("versions {baseline} and {comparison} have incompatible output schemas"),
                details: Some(json!({ "field": "comparisonVersionNum", "diffs": diffs })),
            });
        }
        let owner = tenant.owner();
        let sample = self
            .records
            .regression_sample(owner, &record.head.id, baseline, only_corrected, sample_size)
            .await?;
        let mut calls = Vec::new();
        for event in &sample {
            let original = match &event.call_id {
                Some(id) => self.records.call_by_id(id).await?,
                None => None,
            };
            let Some(original) = original else { continue };
            let files: Vec<InputFile> = serde_json::from_str(&original.input).map_err(anyhow::Error::from)?;
            let reference =
                event.reference_id.clone().filter(|r| !r.is_empty()).unwrap_or_else(|| event.id.clone());
            let own: Vec<InputFile> = files
                .iter()
                .filter(|f| f.item_reference_id.is_some() && f.item_reference_id == event.reference_id)
                .cloned()
                .collect();
            let replay: Vec<InputFile> = if own.is_empty() { files } else { own }
                .into_iter()
                .map(|f| InputFile { item_reference_id: Some(reference.clone()), ..f })
                .collect();
            let plan = single_node_plan(
                (&original.workflow_id, &original.workflow_name, original.workflow_version_num),
                &next_fn,
            );
            let row = new_call(tenant, &plan, &replay)?;
            let link = RegressionCall {
                call_id: &row.id,
                function_id: &record.head.id,
                baseline,
                comparison,
                original_event_id: &event.id,
                original_reference_id: &reference,
            };
            // The link first: the call's outputs are regression rows from their first moment.
            self.records.insert_regression_call(owner, link, row.created_at).await?;
            self.records.insert_call(&row, row.created_at, None).await?;
            calls.push(json!({ "originalReferenceID": reference, "callID": row.id }));
        }
        crate::jobs::wake();
        Ok(json!({
            "functionName": record.head.name,
            "result": { "functionName": record.head.name, "totalSamples": calls.len(), "calls": calls,
                        "baselineVersionNum": baseline, "comparisonVersionNum": comparison },
        }))
    }

    /// `POST /v3/functions/regression/corrections`: the SDK's
    /// `RegressionApplyCorrectionsResponse`, and `remaining`: outputs without a correction
    /// left for the next request. One request examines at most
    /// [`CORRECTIONS_PER_REQUEST`](super::CORRECTIONS_PER_REQUEST) of them, the first in
    /// event order (each is a read and a write, and a pair's outputs grow with every
    /// regression run); outputs that fail (in `errors`) stay without a correction and come
    /// first again next time.
    pub async fn apply_regression_corrections(
        &self,
        tenant: &Tenant,
        function_name: &str,
        baseline: i64,
        comparison: i64,
    ) -> ServiceResult<Value> {
        let record = self.function(tenant, function_name).await?;
        versions_or_default(&record, Some(baseline), Some(comparison))?;
        let owner = tenant.owner();
        let (id, versions) = (&record.head.id, (baseline, comparison));
        let (skipped, uncorrected) = self.records.regression_counts(owner, id, versions).await?;
        let limit = i64::try_from(self.corrections_per_request).unwrap_or(i64::MAX);
        let rows = self.records.uncorrected_regression_rows(owner, id, versions, limit).await?;
        let remaining = uncorrected - rows.len() as i64;
        let (mut applied, mut errors) = (Vec::new(), Map::new());
        for row in rows {
            let Some((correction, order_matching)) =
                self.records.correction_of(&row.original_event_id).await?
            else {
                errors.insert(
                    row.event_id.clone(),
                    json!(format!("baseline event {} has no correction", row.original_event_id)),
                );
                continue;
            };
            let Some(event) = self.records.accuracy_event(owner, &row.event_id).await? else { continue };
            match self.correct(tenant, &event, correction, order_matching).await {
                Ok(_) => applied.push(row.event_id),
                Err(ServiceError::Internal(err)) => return Err(ServiceError::Internal(err)),
                Err(err) => {
                    errors.insert(row.event_id, json!(err.to_string()));
                }
            }
        }
        Ok(
            json!({ "applied": applied.len(), "appliedEventIDs": applied, "errors": errors, "skipped": skipped,
                   "remaining": remaining }),
        )
    }
}
