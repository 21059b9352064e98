//! Storage of function accuracy: corrections with their per-field outcomes, and the grouped
//! sums metrics, review and compare read. Sums are computed by the database; callers make
//! one statement per page of functions, not one per event.

use super::filters::placeholders;
use super::Owner;
use super::{RecordError, Records};
use crate::confusion::Counts;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;
use std::collections::HashMap;

/// A pipeline event with the columns accuracy works from.
#[derive(Clone, Debug)]
pub struct EventRow {
    pub id: String,
    pub event_type: String,
    pub body: Value,
    pub call_id: Option<String>,
    pub function_call_id: Option<String>,
    pub function_id: Option<String>,
    pub function_version_num: Option<i64>,
    pub reference_id: Option<String>,
}

const EVENT_COLUMNS: &str =
    "id, event_type, body, call_id, function_call_id, function_id, function_version_num, reference_id";

fn event_row(row: &AnyRow) -> EventRow {
    EventRow {
        id: row.get("id"),
        event_type: row.get("event_type"),
        body: serde_json::from_str(&row.get::<String, _>("body")).unwrap_or(Value::Null),
        call_id: row.get("call_id"),
        function_call_id: row.get("function_call_id"),
        function_id: row.get("function_id"),
        function_version_num: row.get("function_version_num"),
        reference_id: row.get("reference_id"),
    }
}

/// A correction to store, with its fields' outcomes (`tp`, `fp`, `fn`, `tn`).
pub struct NewCorrection<'a> {
    pub event: &'a EventRow,
    pub function_type: &'a str,
    pub correction: &'a Value,
    pub order_matching: bool,
    pub fields: &'a [(String, &'static str)],
    /// The event's body showing its correction.
    pub body: &'a Value,
    pub now: i64,
}

/// Which corrections a sum covers.
#[derive(Clone, Copy, Debug)]
pub enum Scope {
    /// Every correction of the version (every version with `None`).
    Version(Option<i64>),
    /// Corrections of the regression rows runs against `comparison` produced (from one
    /// baseline, or from any with `None`).
    RegressionRows { baseline: Option<i64>, comparison: i64 },
    /// Corrections of the original events those regression rows replayed.
    RegressionOriginals { baseline: i64, comparison: i64 },
}

impl Scope {
    /// The condition on `c` (corrections) and its binds, numbered from `$next`.
    fn condition(self, next: usize) -> (String, Vec<i64>) {
        match self {
            Scope::Version(None) => (String::new(), vec![]),
            Scope::Version(Some(v)) => (format!(" AND c.function_version_num = ${next}"), vec![v]),
            Scope::RegressionRows { baseline, comparison } => (
                format!(
                    " AND c.is_regression = 1 AND c.function_version_num = ${} AND c.call_id IN \
                     (SELECT r.call_id FROM regression_calls r WHERE ${next} IN (0, r.baseline_version_num) \
                      AND r.comparison_version_num = ${})",
                    next + 1,
                    next + 1
                ),
                vec![baseline.unwrap_or(0), comparison],
            ),
            Scope::RegressionOriginals { baseline, comparison } => (
                format!(
                    " AND c.function_version_num = ${next} AND c.event_id IN \
                     (SELECT r.original_event_id FROM regression_calls r WHERE r.baseline_version_num = ${next} \
                      AND r.comparison_version_num = ${})",
                    next + 1
                ),
                vec![baseline, comparison],
            ),
        }
    }
}

const SUMS: &str = "CAST(SUM(c.tp) AS BIGINT) AS tp, CAST(SUM(c.fp) AS BIGINT) AS fp, \
    CAST(SUM(c.fn) AS BIGINT) AS fn, CAST(SUM(c.tn) AS BIGINT) AS tn, COUNT(*) AS n";

const FIELD_SUMS: &str = "CAST(SUM(CASE WHEN f.outcome = 'tp' THEN 1 ELSE 0 END) AS BIGINT) AS tp, \
    CAST(SUM(CASE WHEN f.outcome = 'fp' THEN 1 ELSE 0 END) AS BIGINT) AS fp, \
    CAST(SUM(CASE WHEN f.outcome = 'fn' THEN 1 ELSE 0 END) AS BIGINT) AS fn, \
    CAST(SUM(CASE WHEN f.outcome = 'tn' THEN 1 ELSE 0 END) AS BIGINT) AS tn";

fn counts(row: &AnyRow) -> Counts {
    let get = |name: &str| row.try_get::<Option<i64>, _>(name).ok().flatten().unwrap_or(0);
    Counts { tp: get("tp"), fp: get("fp"), fn_: get("fn"), tn: get("tn") }
}

/// `FROM … WHERE` of one version's completed evaluations, each with its event's correction
/// if any (`c`): the tenant `$1`, `$2`, the function `$3`, version `$4`, evaluation version
/// `$5`, regression or not `$6`.
const EVALUATED: &str = "FROM evaluations e LEFT JOIN corrections c ON c.event_id = e.event_id \
     WHERE e.account_id = $1 AND e.environment = $2 AND e.function_id = $3 \
     AND e.function_version_num = $4 AND e.evaluation_version = $5 AND e.status = 'completed' \
     AND e.is_regression = $6";

/// A statement over [`EVALUATED`] with its six values bound.
fn evaluated<'q>(
    sql: &'q str,
    owner: Owner<'q>,
    function_id: &'q str,
    version: i64,
    evaluation_version: &'q str,
    regression: bool,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    sqlx::query(sql)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .bind(version)
        .bind(evaluation_version)
        .bind(i64::from(regression))
}

/// Sums of one function's corrections: the whole matrix, how many events, and per field.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    pub counts: Counts,
    pub labelled: i64,
    pub fields: Vec<(String, Counts)>,
}

impl Records {
    /// One of the owner's events.
    pub async fn accuracy_event(&self, owner: Owner<'_>, id: &str) -> Result<Option<EventRow>, RecordError> {
        let row = sqlx::query(&format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE id = $1 AND account_id = $2 AND environment = $3"
        ))
        .bind(id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(event_row))
    }

    /// The non-error event that carries `transformation_id` (`tr_X` is run `fc_X`'s). Found
    /// from the run's row through its call, whose events are indexed: `events` has no index on
    /// the run (one more on every event would cost each call's write a page), and filtering the
    /// tenant's events by it scanned them all (4.8 ms at 12,600 events against 0.01 ms). A
    /// split's items carry transformation IDs of their own, never their run's: they are left
    /// out, or a split run's ID read its 10,000 items whole to find none.
    pub async fn event_of_transformation(
        &self,
        owner: Owner<'_>,
        transformation_id: &str,
    ) -> Result<Option<EventRow>, RecordError> {
        let Some(suffix) = transformation_id.strip_prefix("tr_") else { return Ok(None) };
        let rows = sqlx::query(&format!(
            "SELECT {} FROM function_calls f JOIN calls c ON c.id = f.call_id \
             JOIN events e ON e.call_id = f.call_id \
             WHERE f.id = $3 AND c.account_id = $1 AND c.environment = $2 \
             AND e.function_call_id = $3 AND e.event_type NOT IN ('error', 'split_item') ORDER BY e.id",
            EVENT_COLUMNS.split(", ").map(|column| format!("e.{column}")).collect::<Vec<_>>().join(", ")
        ))
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(format!("fc_{suffix}"))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(event_row).find(|event| {
            event.body.get("transformationID").and_then(Value::as_str) == Some(transformation_id)
        }))
    }

    /// Stores (or replaces) an event's correction and marks the event labelled, in one
    /// transaction.
    pub async fn save_correction(&self, owner: Owner<'_>, new: NewCorrection<'_>) -> Result<(), RecordError> {
        let event = new.event;
        let is_regression = match &event.call_id {
            Some(call_id) => sqlx::query("SELECT call_id FROM regression_calls WHERE call_id = $1")
                .bind(call_id)
                .fetch_optional(&self.pool)
                .await?
                .is_some(),
            None => false,
        };
        let mut sums = [0i64; 4];
        for (_, outcome) in new.fields {
            let index = ["tp", "fp", "fn", "tn"].iter().position(|o| o == outcome).unwrap_or(3);
            sums[index] += 1;
        }
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM correction_fields WHERE event_id = $1")
            .bind(&event.id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM corrections WHERE event_id = $1").bind(&event.id).execute(&mut *tx).await?;
        sqlx::query(
            "INSERT INTO corrections (event_id, account_id, environment, function_id, function_version_num, \
                 function_type, call_id, reference_id, correction, order_matching, tp, fp, fn, tn, is_regression, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        )
        .bind(&event.id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(event.function_id.as_deref().unwrap_or_default())
        .bind(event.function_version_num.unwrap_or_default())
        .bind(new.function_type)
        .bind(&event.call_id)
        .bind(&event.reference_id)
        .bind(new.correction.to_string())
        .bind(i64::from(new.order_matching))
        .bind(sums[0])
        .bind(sums[1])
        .bind(sums[2])
        .bind(sums[3])
        .bind(i64::from(is_regression))
        .bind(new.now)
        .execute(&mut *tx)
        .await?;
        // Many rows per statement, well under either database's bind limit.
        for chunk in new.fields.chunks(100) {
            let values: Vec<String> =
                (0..chunk.len()).map(|i| format!("({})", placeholders(i * 5 + 1, 5))).collect();
            let sql = format!(
                "INSERT INTO correction_fields (event_id, function_id, function_version_num, path, outcome) VALUES {}",
                values.join(", ")
            );
            let mut query = sqlx::query(&sql);
            for (path, outcome) in chunk {
                query = query
                    .bind(&event.id)
                    .bind(event.function_id.as_deref().unwrap_or_default())
                    .bind(event.function_version_num.unwrap_or_default())
                    .bind(path)
                    .bind(*outcome);
            }
            query.execute(&mut *tx).await?;
        }
        sqlx::query("UPDATE events SET labelled = 1, body = $1 WHERE id = $2")
            .bind(new.body.to_string())
            .bind(&event.id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// An event's stored correction and its `orderMatching`.
    pub async fn correction_of(&self, event_id: &str) -> Result<Option<(Value, bool)>, RecordError> {
        let row = sqlx::query("SELECT correction, order_matching FROM corrections WHERE event_id = $1")
            .bind(event_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|row| {
            let correction = serde_json::from_str(&row.get::<String, _>("correction")).unwrap_or(Value::Null);
            (correction, row.get::<i64, _>("order_matching") != 0)
        }))
    }

    /// Sums of the corrections of each function, with per-field sums, in two statements.
    pub async fn correction_totals(
        &self,
        owner: Owner<'_>,
        function_ids: &[String],
    ) -> Result<HashMap<String, Totals>, RecordError> {
        let mut totals: HashMap<String, Totals> = HashMap::new();
        if function_ids.is_empty() {
            return Ok(totals);
        }
        let among = placeholders(3, function_ids.len());
        let sql = format!(
            "SELECT c.function_id, {SUMS} FROM corrections c WHERE c.account_id = $1 AND c.environment = $2 \
             AND c.function_id IN ({among}) GROUP BY c.function_id"
        );
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment);
        for id in function_ids {
            query = query.bind(id);
        }
        for row in query.fetch_all(&self.pool).await? {
            let entry = totals.entry(row.get("function_id")).or_default();
            entry.counts = counts(&row);
            entry.labelled = row.get("n");
        }
        let sql = format!(
            "SELECT f.function_id, f.path, {FIELD_SUMS} FROM correction_fields f \
             JOIN corrections c ON c.event_id = f.event_id \
             WHERE c.account_id = $1 AND c.environment = $2 AND f.function_id IN ({among}) \
             GROUP BY f.function_id, f.path ORDER BY f.function_id, f.path"
        );
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment);
        for id in function_ids {
            query = query.bind(id);
        }
        for row in query.fetch_all(&self.pool).await? {
            totals.entry(row.get("function_id")).or_default().fields.push((row.get("path"), counts(&row)));
        }
        Ok(totals)
    }

    /// Sums of one function's corrections within `scope`.
    pub async fn scoped_totals(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        scope: Scope,
    ) -> Result<Totals, RecordError> {
        let (condition, binds) = scope.condition(4);
        let sql = format!(
            "SELECT {SUMS} FROM corrections c WHERE c.account_id = $1 AND c.environment = $2 \
             AND c.function_id = $3{condition}"
        );
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment).bind(function_id);
        for value in &binds {
            query = query.bind(*value);
        }
        let row = query.fetch_one(&self.pool).await?;
        let mut totals = Totals { counts: counts(&row), labelled: row.get("n"), fields: Vec::new() };
        let sql = format!(
            "SELECT f.path, {FIELD_SUMS} FROM correction_fields f JOIN corrections c ON c.event_id = f.event_id \
             WHERE c.account_id = $1 AND c.environment = $2 AND c.function_id = $3 AND f.function_id = $3{condition} \
             GROUP BY f.path ORDER BY f.path"
        );
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment).bind(function_id);
        for value in &binds {
            query = query.bind(*value);
        }
        for row in query.fetch_all(&self.pool).await? {
            totals.fields.push((row.get("path"), counts(&row)));
        }
        Ok(totals)
    }

    /// How many terminal outputs each function produced (all versions).
    pub async fn output_counts(
        &self,
        owner: Owner<'_>,
        function_ids: &[String],
    ) -> Result<HashMap<String, i64>, RecordError> {
        if function_ids.is_empty() {
            return Ok(HashMap::new());
        }
        let sql = format!(
            "SELECT function_id, COUNT(*) AS n FROM events WHERE account_id = $1 AND environment = $2 \
             AND function_id IN ({}) AND intermediate = 0 AND event_type <> 'error' GROUP BY function_id",
            placeholders(3, function_ids.len())
        );
        let mut query = sqlx::query(&sql).bind(owner.account_id).bind(owner.environment);
        for id in function_ids {
            query = query.bind(id);
        }
        let rows = query.fetch_all(&self.pool).await?;
        Ok(rows.iter().map(|row| (row.get("function_id"), row.get("n"))).collect())
    }

    /// How many terminal outputs one version produced (only regression rows, or none of them).
    pub async fn version_output_count(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        version: i64,
        regression: bool,
    ) -> Result<i64, RecordError> {
        let among = if regression { "IN" } else { "NOT IN" };
        let row = sqlx::query(&format!(
            "SELECT COUNT(*) AS n FROM events WHERE account_id = $1 AND environment = $2 AND function_id = $3 \
             AND function_version_num = $4 AND intermediate = 0 AND event_type <> 'error' \
             AND COALESCE(call_id, '') {among} (SELECT call_id FROM regression_calls)"
        ))
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .bind(version)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.get("n"))
    }

    /// The completed evaluations of one version by confidence band, counted in the store:
    /// `(≥ 0.8, ≥ 0.5, below)`, no confidence counting as 0.
    pub async fn review_bands(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        version: i64,
        evaluation_version: &str,
        regression: bool,
    ) -> Result<(i64, i64, i64), RecordError> {
        let sql = format!(
            "SELECT COALESCE(SUM(CASE WHEN c >= 0.8 THEN 1 ELSE 0 END), 0) AS high, \
                    COALESCE(SUM(CASE WHEN c >= 0.5 AND c < 0.8 THEN 1 ELSE 0 END), 0) AS medium, \
                    COALESCE(SUM(CASE WHEN c < 0.5 THEN 1 ELSE 0 END), 0) AS low \
             FROM (SELECT COALESCE(e.confidence, 0) AS c {EVALUATED}) s"
        );
        let row = evaluated(&sql, owner, function_id, version, evaluation_version, regression)
            .fetch_one(&self.pool)
            .await?;
        Ok((row.get("high"), row.get("medium"), row.get("low")))
    }

    /// The completed evaluations of one version whose event carries a correction: the
    /// confidence and the correction's counts (what review's precision-recall reads; the
    /// others are only counted, [`Records::review_bands`]).
    pub async fn labelled_review_rows(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        version: i64,
        evaluation_version: &str,
        regression: bool,
    ) -> Result<Vec<(f64, Counts)>, RecordError> {
        let sql =
            format!("SELECT e.confidence, c.tp, c.fp, c.fn, c.tn {EVALUATED} AND c.event_id IS NOT NULL");
        let rows = evaluated(&sql, owner, function_id, version, evaluation_version, regression)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .iter()
            .map(|row| (row.get::<Option<f64>, _>("confidence").unwrap_or(0.0), counts(row)))
            .collect())
    }
}

impl Records {
    /// Reads every correction row and field row of a function and returns how many rows it
    /// read: the benchmark's baseline ("reading the same rows alone").
    pub async fn read_correction_rows(
        &self,
        owner: Owner<'_>,
        function_id: &str,
    ) -> Result<usize, RecordError> {
        let corrections = sqlx::query(
            "SELECT c.event_id, c.tp, c.fp, c.fn, c.tn FROM corrections c \
             WHERE c.account_id = $1 AND c.environment = $2 AND c.function_id = $3",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .fetch_all(&self.pool)
        .await?;
        let fields = sqlx::query(
            "SELECT f.path, f.outcome FROM correction_fields f JOIN corrections c ON c.event_id = f.event_id \
             WHERE c.account_id = $1 AND c.environment = $2 AND f.function_id = $3",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(corrections.len() + fields.len())
    }

    /// Reads one version's evaluation rows with their correction counts, undigested: the
    /// review benchmark's baseline.
    pub async fn read_evaluation_rows(
        &self,
        owner: Owner<'_>,
        function_id: &str,
    ) -> Result<usize, RecordError> {
        let rows = sqlx::query(
            "SELECT e.confidence, c.tp, c.fp, c.fn, c.tn FROM evaluations e \
             LEFT JOIN corrections c ON c.event_id = e.event_id \
             WHERE e.account_id = $1 AND e.environment = $2 AND e.function_id = $3",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.len())
    }
}
