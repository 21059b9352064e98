//! Review sampling: how many outputs a person should check, and below which confidence.
//!
//! An output's confidence is its evaluation's ([`super::checks`]); it is *right* when its
//! correction changed no field (no FP, no FN). At a threshold `t`, outputs at or above `t`
//! would be accepted without review: TP = accepted and right, FP = accepted and wrong,
//! FN = sent to review though right, TN = sent to review and wrong. Each threshold row gives
//! the rates a reviewer weighs — accuracy of the accepted outputs' fields, precision, recall,
//! false-positive rate (FP / (FP + TN)), false-discovery rate (FP / (TP + FP)) — each with a
//! Wald or Wilson interval per confidence level and the sample needed for the asked margin of
//! error, finite-population corrected over the version's outputs ([`super::stats`]).
//! Confidence buckets: high ≥ 0.8, medium ≥ 0.5, low below.

use super::stats::{average_precision, interval, sample_size, z_for_level, Counts, Method};
use super::{AccuracyService, DEFAULT_EVALUATION_VERSION};
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::store::records::accuracy::Scope;
use serde_json::{json, Map, Value};

/// What a review estimate is asked for.
#[derive(Clone, Debug)]
pub struct ReviewRequest {
    pub function_name: String,
    pub function_version_num: Option<i64>,
    pub confidence_levels: Option<Vec<i64>>,
    pub method: Method,
    pub evaluation_version: Option<String>,
    pub is_regression: bool,
    pub margin_of_error: Option<f64>,
    pub threshold_min: Option<f64>,
    pub threshold_max: Option<f64>,
    pub threshold_step: Option<f64>,
}

/// The checked settings of a matrix.
#[derive(Clone, Debug)]
pub struct MatrixSettings {
    pub levels: Vec<i64>,
    pub method: Method,
    pub margin: f64,
    pub thresholds: Vec<f64>,
    /// The version's outputs (the finite population).
    pub population: i64,
}

impl ReviewRequest {
    fn settings(&self, population: i64) -> ServiceResult<MatrixSettings> {
        let levels = self.confidence_levels.clone().unwrap_or_else(|| vec![90, 95, 99]);
        if levels.is_empty() || levels.len() > 10 || levels.iter().any(|l| !(1..=99).contains(l)) {
            return Err(ServiceError::invalid_field(
                "confidenceLevels",
                "send 1 to 10 integers between 1 and 99",
            ));
        }
        let margin = self.margin_of_error.unwrap_or(0.05);
        if !(margin > 0.0 && margin < 1.0) {
            return Err(ServiceError::invalid_field(
                "marginOfError",
                "must be a fraction between 0 and 1, e.g. 0.05",
            ));
        }
        let (min, max, step) = (
            self.threshold_min.unwrap_or(0.5),
            self.threshold_max.unwrap_or(0.95),
            self.threshold_step.unwrap_or(0.05),
        );
        for (field, value) in [("thresholdMin", min), ("thresholdMax", max)] {
            if !(0.0..=1.0).contains(&value) {
                return Err(ServiceError::invalid_field(field, "must be between 0 and 1"));
            }
        }
        if min > max {
            return Err(ServiceError::invalid_field("thresholdMin", "must not exceed thresholdMax"));
        }
        if !(step > 0.0 && step <= 1.0) || (max - min) / step > 1000.0 {
            return Err(ServiceError::invalid_field(
                "thresholdStep",
                "must be in (0, 1] and give at most 1000 thresholds",
            ));
        }
        let count = ((max - min) / step + 1e-9).floor() as usize + 1;
        // Rounded so 0.1 + 0.2 reads 0.3.
        let thresholds = (0..count).map(|i| ((min + step * i as f64) * 1e9).round() / 1e9).collect();
        Ok(MatrixSettings { levels, method: self.method, margin, thresholds, population })
    }
}

/// The SDK's `RateConfidenceInterval` of `successes / n`, keyed by level.
fn rate(successes: i64, n: i64, settings: &MatrixSettings) -> Value {
    let mut by_level = Map::new();
    for level in &settings.levels {
        let z = z_for_level(*level as f64);
        let mid = (n > 0).then(|| successes as f64 / n as f64);
        let bounds = interval(successes, n, z, settings.method);
        let needed = sample_size(planning_rate(mid), settings.margin, z, Some(settings.population.max(1)));
        by_level.insert(
            level.to_string(),
            json!({
                "currentSample": n, "sampleNeeded": needed, "mid": mid,
                "ciLower": bounds.map(|b| b.0), "ciUpper": bounds.map(|b| b.1),
            }),
        );
    }
    Value::Object(by_level)
}

/// The rate a sample size is planned with: the observed one, except where it says nothing of
/// the variance. An observed 0 or 1 (recall 0 on a handful of labels) or no sample at all
/// would plan p(1 − p) = 0, "no sample needed", exactly when more are: those plan with the
/// conservative 0.5, the largest variance.
fn planning_rate(observed: Option<f64>) -> f64 {
    observed.filter(|p| *p > 0.0 && *p < 1.0).unwrap_or(0.5)
}

/// The per-threshold matrix over `(confidence, field counts)` of evaluated, corrected outputs.
pub fn threshold_matrix(rows: &[(f64, Counts)], settings: &MatrixSettings) -> Vec<Value> {
    settings
        .thresholds
        .iter()
        .map(|&threshold| {
            let mut m = Counts::default();
            let (mut right_fields, mut fields) = (0, 0);
            for (confidence, counts) in rows {
                let right = counts.fp + counts.fn_ == 0;
                match (*confidence >= threshold, right) {
                    (true, true) => m.tp += 1,
                    (true, false) => m.fp += 1,
                    (false, true) => m.fn_ += 1,
                    (false, false) => m.tn += 1,
                }
                if *confidence >= threshold {
                    right_fields += counts.tp + counts.tn;
                    fields += counts.total();
                }
            }
            json!({
                "threshold": threshold, "tp": m.tp, "fp": m.fp, "fn": m.fn_, "tn": m.tn,
                "accuracyAboveThreshold": rate(right_fields, fields, settings),
                "precision": rate(m.tp, m.tp + m.fp, settings),
                "recall": rate(m.tp, m.tp + m.fn_, settings),
                "falsePositiveRate": rate(m.fp, m.fp + m.tn, settings),
                "falseDiscoveryRate": rate(m.fp, m.tp + m.fp, settings),
            })
        })
        .collect()
}

impl AccuracyService {
    /// `POST /v3/functions/review`: the SDK's `FunctionEstimateReviewRequirementsResponse`
    /// plus `estimate.sampleSizes` and `estimate.precisionRecallAuc`.
    pub async fn review(&self, tenant: &Tenant, request: &ReviewRequest) -> ServiceResult<Value> {
        let record = self.function(tenant, &request.function_name).await?;
        let version = request.function_version_num.unwrap_or(record.head.current_version);
        self.version(tenant, &record, version).await?;
        let evaluation_version = request.evaluation_version.as_deref().unwrap_or(DEFAULT_EVALUATION_VERSION);
        crate::text::check_len("evaluationVersion", evaluation_version, 64, true)?;
        let owner = tenant.owner();
        let id = &record.head.id;
        let population = self.records.version_output_count(owner, id, version, request.is_regression).await?;
        let settings = request.settings(population)?;
        // Counted in the store; only the labelled outputs are read.
        let (high, medium, low) =
            self.records.review_bands(owner, id, version, evaluation_version, request.is_regression).await?;
        let labelled = self
            .records
            .labelled_review_rows(owner, id, version, evaluation_version, request.is_regression)
            .await?;
        let samples: Vec<(f64, bool)> = labelled.iter().map(|(c, k)| (*c, k.fp + k.fn_ == 0)).collect();
        let auc = average_precision(&samples);
        let right = samples.iter().filter(|(_, r)| *r).count() as f64;
        let observed = (!samples.is_empty()).then(|| right / samples.len() as f64);
        let sample_sizes: Vec<Value> = settings
            .levels
            .iter()
            .map(|level| {
                let z = z_for_level(*level as f64);
                json!({
                    "confidenceLevel": level, "marginOfError": settings.margin,
                    "sampleSize": sample_size(planning_rate(observed), settings.margin, z, Some(population.max(1))),
                })
            })
            .collect();
        let scope = if request.is_regression {
            Scope::RegressionRows { baseline: None, comparison: version }
        } else {
            Scope::Version(Some(version))
        };
        let totals = self.records.scoped_totals(owner, id, scope).await?;
        let field_metrics: Vec<Value> = totals
            .fields
            .iter()
            .map(|(path, counts)| json!({ "fieldPath": path, "metrics": counts.json() }))
            .collect();
        Ok(json!({
            "functionName": record.head.name,
            "functionVersionNum": version,
            "estimate": {
                "confidenceDistribution": { "high": high, "medium": medium, "low": low },
                "labeledTransformations": totals.labelled,
                "unlabeledTransformations": (population - totals.labelled).max(0),
                "missingEvaluations": (population - (high + medium + low)).max(0),
                "totalTransformations": population,
                "thresholdMatrix": threshold_matrix(&labelled, &settings),
                "sampleSizes": sample_sizes,
                "precisionRecallAuc": auc,
            },
            "metrics": {
                "aggregateMetrics": totals.counts.json(), "fieldMetrics": field_metrics, "precisionRecallAuc": auc,
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_observed_rate_of_zero_or_one_plans_the_sample_as_the_most_uncertain_rate() {
        let settings = MatrixSettings {
            levels: vec![95],
            method: Method::Wilson,
            margin: 0.05,
            thresholds: vec![0.5],
            population: 1_000,
        };
        let unknown = rate(0, 0, &settings)["95"]["sampleNeeded"].as_i64().unwrap();
        assert!(unknown > 250, "with no sample, plan for p = 0.5: {unknown}");
        for (successes, n) in [(0, 4), (4, 4)] {
            let needed = rate(successes, n, &settings)["95"]["sampleNeeded"].as_i64().unwrap();
            assert_eq!(needed, unknown, "{successes}/{n} says nothing of the variance");
        }
        let observed = rate(1, 4, &settings)["95"]["sampleNeeded"].as_i64().unwrap();
        assert!(observed > 0 && observed < unknown, "a rate inside (0, 1) plans with itself: {observed}");
    }

    /// Inputs and scikit-learn / statsmodels values from `tests/fixtures/accuracy/reference.py`.
    const FIXTURE: &str = include_str!("../../tests/fixtures/accuracy/review_fixture.json");

    fn close(actual: &Value, expected: &Value, what: &str) {
        match (actual.as_f64(), expected.as_f64()) {
            (Some(a), Some(e)) => assert!((a - e).abs() < 1e-7, "{what}: {a} != {e}"),
            _ => assert_eq!(actual, expected, "{what}"),
        }
    }

    #[test]
    fn review_statistics_match_scikit_learn_and_statsmodels() {
        let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
        let rows: Vec<(f64, Counts)> = fixture["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let n = |k: &str| r[k].as_i64().unwrap();
                (
                    r["confidence"].as_f64().unwrap(),
                    Counts { tp: n("tp"), fp: n("fp"), fn_: n("fn"), tn: n("tn") },
                )
            })
            .collect();
        let expected = &fixture["expected"];
        let samples: Vec<(f64, bool)> = rows.iter().map(|(c, k)| (*c, k.fp + k.fn_ == 0)).collect();
        close(&json!(average_precision(&samples)), &expected["averagePrecision"], "average precision");
        let mut fields = Counts::default();
        rows.iter().for_each(|(_, k)| fields.add(*k));
        close(&json!(fields.precision()), &expected["fieldPrecision"], "field precision");
        close(&json!(fields.recall()), &expected["fieldRecall"], "field recall");
        close(&json!(fields.f1()), &expected["fieldF1"], "field F1");
        for (method, key) in [(Method::Wald, "wald"), (Method::Wilson, "wilson")] {
            let settings = MatrixSettings {
                levels: vec![90, 95, 99],
                method,
                margin: fixture["marginOfError"].as_f64().unwrap(),
                thresholds: fixture["thresholds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_f64().unwrap())
                    .collect(),
                population: fixture["population"].as_i64().unwrap(),
            };
            let matrix = threshold_matrix(&rows, &settings);
            for (row, want) in matrix.iter().zip(expected[key].as_array().unwrap()) {
                for k in ["threshold", "tp", "fp", "fn", "tn"] {
                    assert_eq!(row[k], want[k], "{key} {k}");
                }
                let t = &want["threshold"];
                let counts = Counts {
                    tp: row["tp"].as_i64().unwrap(),
                    fp: row["fp"].as_i64().unwrap(),
                    fn_: row["fn"].as_i64().unwrap(),
                    tn: row["tn"].as_i64().unwrap(),
                };
                close(&json!(counts.precision().unwrap_or(0.0)), &want["sklearnPrecision"], "precision");
                close(&json!(counts.recall().unwrap_or(0.0)), &want["sklearnRecall"], "recall");
                close(&json!(counts.f1().unwrap_or(0.0)), &want["sklearnF1"], "F1");
                for rate in [
                    "accuracyAboveThreshold",
                    "precision",
                    "recall",
                    "falsePositiveRate",
                    "falseDiscoveryRate",
                ] {
                    for level in ["90", "95", "99"] {
                        for field in ["currentSample", "mid", "ciLower", "ciUpper", "sampleNeeded"] {
                            close(
                                &row[rate][level][field],
                                &want[rate][level][field],
                                &format!("{key} t={t} {rate} {level} {field}"),
                            );
                        }
                    }
                }
            }
        }
    }
}
