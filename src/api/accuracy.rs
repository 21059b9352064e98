//! REST transport for function accuracy: corrections, evaluations, score runs, metrics,
//! review, regression runs and version comparison (`bem-sdk`'s shapes). Behaviour lives in
//! [`crate::accuracy`].

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{array_param, int_param, list_param};
use crate::access::state::AppState;
use crate::accuracy::compare::CompareOptions;
use crate::accuracy::corrections::BatchItem;
use crate::accuracy::evaluations::Ids;
use crate::accuracy::metrics::MetricsQuery;
use crate::accuracy::review::ReviewRequest;
use crate::accuracy::score::{check_pairs, RawPair};
use crate::accuracy::stats::Method;
use crate::pagination::{Limits, Order, PageRequest};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use utoipa::{IntoParams, ToSchema};

const LIMITS: Limits = Limits { default: 50, max: 100 };

/// A correction of one event.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Feedback {
    /// Extract, transform, analyze and join events: a JSON object in the output schema's
    /// shape; classify events: the right classification as a string.
    // Read as optional so that a missing one is refused by name (below), as a null one is.
    #[schema(required = true)]
    pub correction: Option<Value>,
    /// `false`: array elements are paired by content before counting (default true).
    pub order_matching: Option<bool>,
}

/// Submit (or replace) an event's correction; the event becomes labelled.
#[utoipa::path(post, path = "/v3/events/{eventID}/feedback", tag = "accuracy", params(("eventID" = String, Path)),
    request_body = Feedback,
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn feedback(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Feedback>,
) -> Result<Json<Value>, ApiError> {
    let correction = body.correction.filter(|c| !c.is_null()).ok_or_else(|| {
        ApiError::bad_request(
            "correction: required",
            Some(json!({ "field": "correction", "error": "required" })),
        )
    })?;
    Ok(Json(state.accuracy.submit_feedback(&caller.tenant, &id, correction, body.order_matching).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LegacyCorrection {
    #[serde(rename = "transformationID")]
    pub transformation_id: String,
    /// As `correction` of the feedback endpoint: an object or a classification, by the
    /// event's function type (a row that does not fit fails alone, in a 207).
    #[serde(rename = "correctedJSON")]
    pub corrected_json: Value,
}

/// Bem's legacy correction batch.
#[derive(Deserialize, ToSchema)]
pub struct LegacyCorrections {
    pub transformations: Vec<LegacyCorrection>,
}

/// Deprecated: a batch of corrections by transformation ID; 207 when some failed.
#[utoipa::path(patch, path = "/v1-beta/transformations", tag = "accuracy", request_body = LegacyCorrections,
    responses((status = 200, body = Object), (status = 207, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn correct_batch(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<LegacyCorrections>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let items = body
        .transformations
        .into_iter()
        .map(|t| BatchItem { transformation_id: t.transformation_id, corrected: t.corrected_json })
        .collect();
    let (answer, all) = state.accuracy.correct_batch(&caller.tenant, items).await?;
    Ok((if all { StatusCode::OK } else { StatusCode::MULTI_STATUS }, Json(answer)))
}

/// Transformations to evaluate.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvalRequest {
    /// 1 to 100 transformation IDs (`tr_…`).
    #[serde(rename = "transformationIDs")]
    pub transformation_ids: Vec<String>,
    pub evaluation_version: Option<String>,
}

/// Queue evaluations (202): `{queued, skipped, errors?}`. 422 when the account has its most
/// evaluations waiting (10,000, `queuedEvaluationsPerAccount`).
#[utoipa::path(post, path = "/v3/eval", tag = "accuracy", request_body = EvalRequest,
    responses((status = 202, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn trigger(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<EvalRequest>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let answer = state
        .accuracy
        .trigger(&caller.tenant, &body.transformation_ids, body.evaluation_version.as_deref())
        .await?;
    Ok((StatusCode::ACCEPTED, Json(answer)))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ResultsQuery {
    /// Comma-separated event IDs (1..100); or `transformationIDs`, not both.
    #[serde(rename = "eventIDs")]
    pub event_ids: Option<String>,
    /// Comma-separated transformation IDs (1..100).
    #[serde(rename = "transformationIDs")]
    pub transformation_ids: Option<String>,
    pub evaluation_version: Option<String>,
}

/// Evaluation results keyed by event ID: `{results, pending, failed}`.
#[utoipa::path(get, path = "/v3/eval/results", tag = "accuracy", params(ResultsQuery),
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn results(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ResultsQuery>,
) -> Result<Json<Value>, ApiError> {
    let split = |raw: &String| list_param(std::slice::from_ref(raw));
    let ids = match (&query.event_ids, &query.transformation_ids) {
        (Some(events), None) => Ids::Events(split(events)),
        (None, Some(transformations)) => Ids::Transformations(split(transformations)),
        _ => {
            return Err(ApiError::bad_request(
                "send exactly one of eventIDs and transformationIDs",
                Some(json!({ "fields": ["eventIDs", "transformationIDs"], "error": "exactly one" })),
            ))
        }
    };
    Ok(Json(state.accuracy.results(&caller.tenant, ids, query.evaluation_version.as_deref(), false).await?))
}

/// Deprecated: evaluation results by transformation ID, unknown IDs in `errors`.
#[utoipa::path(post, path = "/v1-beta/transformations/eval/results", tag = "accuracy", request_body = EvalRequest,
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn legacy_results(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<EvalRequest>,
) -> Result<Json<Value>, ApiError> {
    let ids = Ids::Transformations(body.transformation_ids);
    Ok(Json(state.accuracy.results(&caller.tenant, ids, body.evaluation_version.as_deref(), true).await?))
}

// Named apart from a call's `FileInput`: two schemas of one name are one in the document,
// and the call's lost its `itemReferenceID` there.
/// A pair's input file.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScoreFile {
    /// Base64 of the file.
    pub input_content: String,
    pub input_type: String,
}

#[derive(Deserialize, ToSchema)]
pub struct Pair {
    pub input: ScoreFile,
    #[schema(value_type = Object)]
    pub expected: Value,
}

/// A score run: `pairs` (1..1000), or `datasetID`: the rows of a golden dataset with an
/// input and a corrected column (the input as the pair's input, the corrected value as expected;
/// its first 1,000 such rows, whose values may hold at most 64 MiB: past it, 422 naming
/// `datasetReadBytes`).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScoreRequest {
    pub function_name: String,
    pub function_version_num: Option<i64>,
    pub pairs: Option<Vec<Pair>>,
    #[serde(rename = "datasetID")]
    pub dataset_id: Option<String>,
}

/// Start a score run (202): `{scoreRunID, status}`.
#[utoipa::path(post, path = "/v3/eval/score", tag = "accuracy", request_body = ScoreRequest,
    responses((status = 202, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn score_create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<ScoreRequest>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let raw: Vec<RawPair> = match (body.pairs, body.dataset_id) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(ApiError::bad_request(
                "send exactly one of pairs and datasetID",
                Some(json!({ "fields": ["pairs", "datasetID"], "error": "exactly one" })),
            ))
        }
        (None, Some(dataset_id)) => {
            let text = |value: &Value, field: &str| value[field].as_str().unwrap_or_default().to_string();
            let rows = state.datasets.pairs(&caller.tenant, &dataset_id).await?;
            rows.into_iter()
                .map(|(input, expected)| RawPair {
                    input_content: text(&input, "inputContent"),
                    input_type: text(&input, "inputType"),
                    expected,
                })
                .collect()
        }
        (Some(pairs), None) => pairs
            .into_iter()
            .map(|p| RawPair {
                input_content: p.input.input_content,
                input_type: p.input.input_type,
                expected: p.expected,
            })
            .collect(),
    };
    let pairs = check_pairs(raw)?;
    let answer = state
        .accuracy
        .start_score_run(&caller.tenant, &body.function_name, body.function_version_num, pairs)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(answer)))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ScoreQuery {
    /// canon's addition: numbers within this absolute distance match (default 0: exact).
    #[param(value_type = Option<f64>)]
    pub numeric_tolerance: Option<String>,
    /// canon's addition: strings match when 1 − edit distance / longer length (trimmed,
    /// lower-cased) is at least this, in [0, 1] (default: exact). A field's `similarity` is
    /// computed for two strings whose lengths multiply to at most 4,096 × 4,096, within
    /// 16 such pairs' worth for a read; past either it is null, and those strings match only
    /// when equal.
    #[param(value_type = Option<f64>)]
    pub fuzzy_threshold: Option<String>,
    /// canon's addition: JSON Pointers not compared (comma-separated or repeated).
    #[serde(default)]
    #[param(value_type = Option<Vec<String>>)]
    pub ignore_paths: Vec<String>,
}

fn number_param(
    name: &str,
    raw: Option<&str>,
    range: std::ops::RangeInclusive<f64>,
) -> Result<Option<f64>, ApiError> {
    raw.map(|text| {
        text.parse::<f64>().ok().filter(|n| range.contains(n)).ok_or_else(|| {
            ApiError::bad_request(
                format!("{name}: must be a number in [{}, {}] (got {text:?})", range.start(), range.end()),
                Some(json!({ "field": name, "error": "out of range" })),
            )
        })
    })
    .transpose()
}

/// A score run, compared now: the SDK's `EvalScoreRun`.
#[utoipa::path(get, path = "/v3/eval/score/{scoreRunID}", tag = "accuracy", params(("scoreRunID" = String, Path), ScoreQuery),
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn score_get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ScoreQuery>,
) -> Result<Json<Value>, ApiError> {
    let options = CompareOptions {
        numeric_tolerance: number_param(
            "numericTolerance",
            query.numeric_tolerance.as_deref(),
            0.0..=crate::accuracy::score::MAX_NUMERIC_TOLERANCE,
        )?
        .unwrap_or(0.0),
        fuzzy_threshold: number_param("fuzzyThreshold", query.fuzzy_threshold.as_deref(), 0.0..=1.0)?,
        ignored_paths: array_param("ignorePaths", &query.ignore_paths)?,
    };
    Ok(Json(state.accuracy.score_run(&caller.tenant, &id, &options).await?))
}

/// Cancel a score run (no body).
#[utoipa::path(post, path = "/v3/eval/score/{scoreRunID}/cancel", tag = "accuracy", params(("scoreRunID" = String, Path)),
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn score_cancel(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(state.accuracy.cancel_score_run(&caller.tenant, &id).await?))
}

#[derive(Deserialize, IntoParams, Default)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct MetricsParams {
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
    pub sort_order: Option<String>,
    /// A functionID: the page after it.
    pub starting_after: Option<String>,
    /// A functionID: the page before it.
    pub ending_before: Option<String>,
    /// Case-insensitive substring of the display name.
    pub display_name: Option<String>,
    #[serde(rename = "functionIDs", default)]
    #[param(value_type = Option<Vec<String>>)]
    pub function_ids: Vec<String>,
    #[serde(default)]
    #[param(value_type = Option<Vec<String>>)]
    pub function_names: Vec<String>,
    #[serde(default)]
    #[param(value_type = Option<Vec<String>>)]
    pub types: Vec<String>,
    #[serde(default)]
    #[param(value_type = Option<Vec<String>>)]
    pub tags: Vec<String>,
    #[serde(rename = "workflowIDs", default)]
    #[param(value_type = Option<Vec<String>>)]
    pub workflow_ids: Vec<String>,
    #[serde(default)]
    #[param(value_type = Option<Vec<String>>)]
    pub workflow_names: Vec<String>,
    /// `<workflowID>.<versionNum>` entries.
    #[serde(rename = "workflowIDVersionNums", default)]
    #[param(value_type = Option<Vec<String>>)]
    pub workflow_id_version_nums: Vec<String>,
    /// `<workflowName>.<versionNum>` entries.
    #[serde(default)]
    #[param(value_type = Option<Vec<String>>)]
    pub workflow_name_version_nums: Vec<String>,
}

/// Accuracy, precision, recall, F1 and the confusion matrix of each function, overall and
/// per field, from its corrected outputs: `{functions, totalCount}`.
#[utoipa::path(get, path = "/v3/functions/metrics", tag = "accuracy", params(MetricsParams),
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn metrics(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<MetricsParams>,
) -> Result<Json<Value>, ApiError> {
    let page = PageRequest::parse(
        int_param("limit", query.limit.as_deref())?,
        query.starting_after,
        query.ending_before,
        LIMITS,
        "",
    )?;
    let ascending = Order::parse(query.sort_order.as_deref())? == Order::Asc;
    let filter = MetricsQuery {
        function_ids: array_param("functionIDs", &query.function_ids)?,
        function_names: array_param("functionNames", &query.function_names)?,
        types: array_param("types", &query.types)?,
        tags: array_param("tags", &query.tags)?,
        display_name: query.display_name.filter(|d| !d.is_empty()),
        workflow_ids: array_param("workflowIDs", &query.workflow_ids)?,
        workflow_names: array_param("workflowNames", &query.workflow_names)?,
        workflow_id_version_nums: array_param("workflowIDVersionNums", &query.workflow_id_version_nums)?,
        workflow_name_version_nums: array_param(
            "workflowNameVersionNums",
            &query.workflow_name_version_nums,
        )?,
    };
    Ok(Json(state.accuracy.metrics(&caller.tenant, &filter, &page, ascending).await?))
}

/// What a review estimate is asked for.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewBody {
    pub function_name: String,
    pub function_version_num: Option<i64>,
    /// Integers, e.g. [90, 95, 99] (default); 0.95 is refused.
    pub confidence_levels: Option<Vec<i64>>,
    /// `wald` (default) or `wilson`.
    pub confidence_method: Option<String>,
    pub evaluation_version: Option<String>,
    pub is_regression: Option<bool>,
    /// A fraction, e.g. 0.05 (default).
    pub margin_of_error: Option<f64>,
    pub threshold_min: Option<f64>,
    pub threshold_max: Option<f64>,
    pub threshold_step: Option<f64>,
}

/// Review requirements: confidence buckets, sample sizes, PR-AUC and a per-threshold matrix.
#[utoipa::path(post, path = "/v3/functions/review", tag = "accuracy", request_body = ReviewBody,
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn review(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<ReviewBody>,
) -> Result<Json<Value>, ApiError> {
    let method = match body.confidence_method.as_deref() {
        None | Some("wald") => Method::Wald,
        Some("wilson") => Method::Wilson,
        Some(other) => {
            return Err(ApiError::bad_request(
                format!("confidenceMethod: use wald or wilson (got {other:?})"),
                Some(json!({ "field": "confidenceMethod", "error": "unknown method" })),
            ))
        }
    };
    let request = ReviewRequest {
        function_name: body.function_name,
        function_version_num: body.function_version_num,
        confidence_levels: body.confidence_levels,
        method,
        evaluation_version: body.evaluation_version,
        is_regression: body.is_regression.unwrap_or(false),
        margin_of_error: body.margin_of_error,
        threshold_min: body.threshold_min,
        threshold_max: body.threshold_max,
        threshold_step: body.threshold_step,
    };
    Ok(Json(state.accuracy.review(&caller.tenant, &request).await?))
}

/// A regression run.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegressionBody {
    pub function_name: String,
    pub baseline_version_num: Option<i64>,
    pub comparison_version_num: Option<i64>,
    /// Default true.
    pub only_corrected_data: Option<bool>,
    /// 1..1000, default 50.
    pub sample_size: Option<i64>,
}

/// Replay corrected inputs of the baseline against the comparison version.
#[utoipa::path(post, path = "/v3/functions/regression", tag = "accuracy", request_body = RegressionBody,
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn regression(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<RegressionBody>,
) -> Result<Json<Value>, ApiError> {
    let answer = state
        .accuracy
        .run_regression(
            &caller.tenant,
            &body.function_name,
            body.baseline_version_num,
            body.comparison_version_num,
            body.only_corrected_data.unwrap_or(true),
            body.sample_size,
        )
        .await?;
    Ok(Json(answer))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegressionCorrectionsBody {
    pub function_name: String,
    pub baseline_version_num: i64,
    pub comparison_version_num: i64,
}

/// Copy baseline corrections onto the regression outputs.
#[utoipa::path(post, path = "/v3/functions/regression/corrections", tag = "accuracy", request_body = RegressionCorrectionsBody,
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn regression_corrections(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<RegressionCorrectionsBody>,
) -> Result<Json<Value>, ApiError> {
    let answer = state
        .accuracy
        .apply_regression_corrections(
            &caller.tenant,
            &body.function_name,
            body.baseline_version_num,
            body.comparison_version_num,
        )
        .await?;
    Ok(Json(answer))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompareBody {
    pub function_name: String,
    pub baseline_version_num: Option<i64>,
    pub comparison_version_num: Option<i64>,
    pub is_regression: Option<bool>,
}

/// Aggregate and field-level lift between two versions.
#[utoipa::path(post, path = "/v3/functions/compare", tag = "accuracy", request_body = CompareBody,
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn compare(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CompareBody>,
) -> Result<Json<Value>, ApiError> {
    let answer = state
        .accuracy
        .compare(
            &caller.tenant,
            &body.function_name,
            body.baseline_version_num,
            body.comparison_version_num,
            body.is_regression.unwrap_or(false),
        )
        .await?;
    Ok(Json(answer))
}
