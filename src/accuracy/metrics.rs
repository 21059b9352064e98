//! Function metrics from corrections, and the comparison of two versions. Every number is a
//! grouped sum the database computes over the `corrections` rows (see
//! [`super::compare`] for how a field counts); a function's matrix is the sum of its fields'.

use super::stats::{average_precision, Counts};
use super::{versions_or_default, AccuracyService, DEFAULT_EVALUATION_VERSION};
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::pagination::{Cursor, PageRequest};
use crate::store::records::accuracy::{Scope, Totals};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// `GET /v3/functions/metrics` filters; all given ones must hold.
#[derive(Default, Debug)]
pub struct MetricsQuery {
    pub function_ids: Vec<String>,
    pub function_names: Vec<String>,
    pub types: Vec<String>,
    pub tags: Vec<String>,
    pub display_name: Option<String>,
    pub workflow_ids: Vec<String>,
    pub workflow_names: Vec<String>,
    /// `<workflowID>.<versionNum>`.
    pub workflow_id_version_nums: Vec<String>,
    /// `<workflowName>.<versionNum>`.
    pub workflow_name_version_nums: Vec<String>,
}

/// `(workflow, version)` from `<workflow>.<versionNum>`.
fn split_version(field: &str, value: &str) -> ServiceResult<(String, i64)> {
    value
        .rsplit_once('.')
        .and_then(|(name, num)| num.parse::<i64>().ok().map(|num| (name.to_string(), num)))
        .ok_or_else(|| {
            ServiceError::invalid_field(field, format!("{value:?} is not <workflow>.<versionNum>"))
        })
}

fn field_metrics(fields: &[(String, Counts)]) -> Vec<Value> {
    fields.iter().map(|(path, counts)| json!({ "fieldPath": path, "metrics": counts.json() })).collect()
}

impl AccuracyService {
    /// A page of functions with their metrics: `{functions, totalCount}`.
    pub async fn metrics(
        &self,
        tenant: &Tenant,
        query: &MetricsQuery,
        page: &PageRequest,
        ascending: bool,
    ) -> ServiceResult<Value> {
        let owner = tenant.owner();
        // What the filters and the answer read of each function: never its whole body.
        let mut functions = self.records.current_function_summaries(owner).await?;
        let has = |list: &[String], value: &str| list.is_empty() || list.iter().any(|v| v == value);
        let wanted_display = query.display_name.as_deref().map(str::to_lowercase);
        functions.retain(|f| {
            let body = &f.version.body;
            let tags: Vec<&str> =
                body["tags"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let display = body["displayName"].as_str().unwrap_or_default().to_lowercase();
            has(&query.function_ids, &f.head.id)
                && has(&query.function_names, &f.head.name)
                && has(&query.types, &f.version.function_type)
                && (query.tags.is_empty() || query.tags.iter().any(|t| tags.contains(&t.as_str())))
                && wanted_display.as_deref().is_none_or(|d| display.contains(d))
        });
        let by_workflow = !(query.workflow_ids.is_empty()
            && query.workflow_names.is_empty()
            && query.workflow_id_version_nums.is_empty()
            && query.workflow_name_version_nums.is_empty());
        if by_workflow {
            let id_versions = query
                .workflow_id_version_nums
                .iter()
                .map(|v| split_version("workflowIDVersionNums", v))
                .collect::<ServiceResult<Vec<_>>>()?;
            let name_versions = query
                .workflow_name_version_nums
                .iter()
                .map(|v| split_version("workflowNameVersionNums", v))
                .collect::<ServiceResult<Vec<_>>>()?;
            let uses = self.records.function_uses(owner, None).await?;
            let used: HashSet<String> = uses
                .iter()
                .filter(|u| {
                    query.workflow_ids.contains(&u.workflow_id)
                        || query.workflow_names.contains(&u.workflow_name)
                        || id_versions
                            .iter()
                            .any(|(id, n)| *id == u.workflow_id && *n == u.workflow_version_num)
                        || name_versions
                            .iter()
                            .any(|(name, n)| *name == u.workflow_name && *n == u.workflow_version_num)
                })
                .map(|u| u.function_id.clone())
                .collect();
            functions.retain(|f| used.contains(&f.head.id));
        }
        let total = functions.len();
        if !ascending {
            functions.reverse();
        }
        let position = |id: &str| functions.iter().position(|f| f.head.id == id);
        let limit = page.limit as usize;
        let window: Vec<_> = match &page.cursor {
            Cursor::First => functions.iter().take(limit).collect(),
            Cursor::After(id) => {
                let start = position(id).map_or(0, |i| i + 1);
                functions.iter().skip(start).take(limit).collect()
            }
            Cursor::Before(id) => {
                let end = position(id).unwrap_or(0);
                functions[..end].iter().rev().take(limit).rev().collect()
            }
        };
        let ids: Vec<String> = window.iter().map(|f| f.head.id.clone()).collect();
        let mut totals = self.records.correction_totals(owner, &ids).await?;
        let outputs = self.records.output_counts(owner, &ids).await?;
        let items: Vec<Value> = window
            .iter()
            .map(|f| {
                let t = totals.remove(&f.head.id).unwrap_or_default();
                json!({
                    "functionID": f.head.id, "functionName": f.head.name,
                    "functionType": f.version.function_type,
                    "metrics": t.counts.json(), "fieldMetrics": field_metrics(&t.fields),
                    "totalLabeledResults": t.labelled,
                    "totalResults": outputs.get(&f.head.id).copied().unwrap_or(0),
                })
            })
            .collect();
        Ok(json!({ "functions": items, "totalCount": total }))
    }

    /// `POST /v3/functions/compare`: the SDK's `FunctionCompareMetricsResponse`.
    pub async fn compare(
        &self,
        tenant: &Tenant,
        function_name: &str,
        baseline: Option<i64>,
        comparison: Option<i64>,
        regression: bool,
    ) -> ServiceResult<Value> {
        let record = self.function(tenant, function_name).await?;
        let (baseline, comparison) = versions_or_default(&record, baseline, comparison)?;
        let owner = tenant.owner();
        let id = &record.head.id;
        let (base_scope, comparison_scope) = if regression {
            (
                Scope::RegressionOriginals { baseline, comparison },
                Scope::RegressionRows { baseline: Some(baseline), comparison },
            )
        } else {
            (Scope::Version(Some(baseline)), Scope::Version(Some(comparison)))
        };
        let base = self.records.scoped_totals(owner, id, base_scope).await?;
        let candidate = self.records.scoped_totals(owner, id, comparison_scope).await?;
        let base_auc = self.pr_auc(tenant, id, baseline, false).await?;
        let candidate_auc = self.pr_auc(tenant, id, comparison, regression).await?;
        let mut changes = Vec::new();
        // Each version's paths in a map: looking each path up in the other's list was
        // quadratic in a function's distinct field paths.
        let base_fields: BTreeMap<&String, Counts> = base.fields.iter().map(|(p, c)| (p, *c)).collect();
        let candidate_fields: BTreeMap<&String, Counts> =
            candidate.fields.iter().map(|(p, c)| (p, *c)).collect();
        let paths: BTreeSet<&String> = base_fields.keys().chain(candidate_fields.keys()).copied().collect();
        for path in paths {
            let comparison = metrics_comparison(base_fields.get(path), candidate_fields.get(path));
            let moved = comparison.as_object().into_iter().flat_map(|m| m.values()).any(|m| {
                match (m["liftPercent"].as_f64(), m["difference"].as_f64()) {
                    (Some(lift), _) => lift.abs() > 1.0,
                    (None, Some(difference)) => difference.abs() > 0.01,
                    (None, None) => m["baselineValue"].is_null() != m["comparisonValue"].is_null(),
                }
            });
            if moved {
                changes.push(json!({ "fieldPath": path, "comparison": comparison }));
            }
        }
        let details = |t: &Totals, auc: Option<f64>| json!({ "aggregateMetrics": t.counts.json(), "fieldMetrics": field_metrics(&t.fields), "precisionRecallAuc": auc });
        let message = match (base.labelled, candidate.labelled) {
            (0, 0) => Some(format!("neither version {baseline} nor {comparison} has corrected outputs")),
            (0, _) => Some(format!("version {baseline} has no corrected outputs")),
            (_, 0) => Some(format!("version {comparison} has no corrected outputs")),
            _ => None,
        };
        Ok(json!({
            "functionName": record.head.name, "baselineVersionNum": baseline, "comparisonVersionNum": comparison,
            "aggregateComparison": metrics_comparison(Some(&base.counts), Some(&candidate.counts)),
            "baselineMetrics": details(&base, base_auc), "comparisonMetrics": details(&candidate, candidate_auc),
            "baselineTransformationCount": base.labelled, "comparisonTransformationCount": candidate.labelled,
            "fieldMetricsChanges": changes, "message": message,
        }))
    }

    /// Average precision of one version's evaluated, corrected outputs (confidence against
    /// "the output was right").
    pub(crate) async fn pr_auc(
        &self,
        tenant: &Tenant,
        function_id: &str,
        version: i64,
        regression: bool,
    ) -> ServiceResult<Option<f64>> {
        let rows = self
            .records
            .labelled_review_rows(
                tenant.owner(),
                function_id,
                version,
                DEFAULT_EVALUATION_VERSION,
                regression,
            )
            .await?;
        let samples: Vec<(f64, bool)> = rows.iter().map(|(c, k)| (*c, k.fp + k.fn_ == 0)).collect();
        Ok(average_precision(&samples))
    }
}

/// The SDK's `MetricsComparison` of two matrices (a side without one has `null` values).
fn metrics_comparison(base: Option<&Counts>, candidate: Option<&Counts>) -> Value {
    let one = |get: fn(&Counts) -> Option<f64>| {
        let (b, c) = (base.and_then(get), candidate.and_then(get));
        let difference = b.zip(c).map(|(b, c)| c - b);
        let lift = b.zip(c).filter(|(b, _)| *b != 0.0).map(|(b, c)| (c - b) / b * 100.0);
        json!({ "baselineValue": b, "comparisonValue": c, "difference": difference, "liftPercent": lift })
    };
    json!({
        "accuracy": one(Counts::accuracy), "precision": one(Counts::precision),
        "recall": one(Counts::recall), "f1Score": one(Counts::f1),
    })
}
