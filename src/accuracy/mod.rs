//! Function accuracy: corrections (the ground truth), evaluations (confidence without
//! labels), metrics, review sampling, regression runs, version comparison and score runs.
//! One service shared by the REST handlers (`src/api/accuracy.rs`); storage in
//! `store::records::accuracy` and `accuracy_runs`.

pub mod checks;
pub mod compare;
pub mod corrections;
pub mod evaluations;
pub mod fields;
pub mod judge;
pub mod metrics;
pub mod regression;
pub mod review;
pub mod score;
pub mod stats;

use crate::calls::CallService;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::store::records::accuracy::EventRow;
use crate::store::records::functions::FunctionRecord;
use crate::store::records::Records;
use crate::versions::{canonical_type, FunctionVersion, Kind};

/// The evaluation version stored when a request names none: the SDK's only enum value, so
/// `POST /v3/functions/review` finds canon's evaluations by default (the checks are canon's,
/// named by `method` in each result).
pub const DEFAULT_EVALUATION_VERSION: &str = "0.1.0-gemini";

/// Regression outputs one `POST /v3/functions/regression/corrections` examines at most: ten
/// regression runs of the largest sample (1,000).
pub const CORRECTIONS_PER_REQUEST: usize = 10_000;

/// Entry point of function accuracy.
#[derive(Clone)]
pub struct AccuracyService {
    pub records: Records,
    /// Runs the calls of regression and score runs.
    pub calls: CallService,
    /// [`CORRECTIONS_PER_REQUEST`], lowered by tests.
    pub corrections_per_request: usize,
    /// Evaluations one account may have waiting ([`crate::jobs::QUEUE_BOUNDS`]).
    pub queued_evaluations: usize,
}

/// The engine an event's function ran on (`None`: not a function's output event).
pub fn event_kind(event: &EventRow) -> Option<Kind> {
    match event.event_type.as_str() {
        "split_collection" | "split_item" => Some(Kind::Split),
        other => canonical_type(other),
    }
}

/// Kinds whose outputs carry fields to score (eval, metrics, review, regression, compare).
pub fn is_scored(kind: Kind) -> bool {
    matches!(kind, Kind::Extract | Kind::Transform | Kind::Analyze | Kind::Join)
}

impl AccuracyService {
    /// A function by name at its current version, or 404.
    async fn function(&self, tenant: &Tenant, name: &str) -> ServiceResult<FunctionRecord> {
        crate::text::check_len("functionName", name, 128, true)?;
        self.records
            .find_function(tenant.owner(), name)
            .await?
            .ok_or_else(|| ServiceError::not_found("function", name))
    }

    /// One version of a function, or 404 naming it.
    async fn version(
        &self,
        tenant: &Tenant,
        record: &FunctionRecord,
        num: i64,
    ) -> ServiceResult<FunctionVersion> {
        self.records
            .function_version(tenant.owner(), &record.head.id, num)
            .await?
            .ok_or_else(|| ServiceError::not_found("function version", format!("{} {num}", record.head.name)))
    }

    /// An event's function version, when it still exists.
    async fn event_function(
        &self,
        tenant: &Tenant,
        event: &EventRow,
    ) -> ServiceResult<Option<FunctionVersion>> {
        match (&event.function_id, event.function_version_num) {
            (Some(id), Some(num)) => Ok(self.records.function_version(tenant.owner(), id, num).await?),
            _ => Ok(None),
        }
    }
}

/// `(baseline, comparison)`: given ones, else the previous and the current version.
fn versions_or_default(
    record: &FunctionRecord,
    baseline: Option<i64>,
    comparison: Option<i64>,
) -> ServiceResult<(i64, i64)> {
    let current = record.head.current_version;
    let comparison = comparison.unwrap_or(current);
    let baseline = baseline.unwrap_or(comparison - 1);
    for (field, num) in [("baselineVersionNum", baseline), ("comparisonVersionNum", comparison)] {
        if num < 1 || num > current {
            return Err(ServiceError::invalid_field(
                field,
                format!("function {} has versions 1 to {current} (got {num})", record.head.name),
            ));
        }
    }
    if baseline == comparison {
        return Err(ServiceError::invalid_field(
            "comparisonVersionNum",
            "must differ from baselineVersionNum",
        ));
    }
    Ok((baseline, comparison))
}
