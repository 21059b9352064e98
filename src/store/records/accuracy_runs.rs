//! Storage of accuracy work that runs later: evaluations (queued as jobs), the calls of
//! regression runs, and score runs with their pairs.

use super::accuracy::EventRow;
use super::filters::placeholders;
use super::jobs::insert_job;
use super::Owner;
use super::{RecordError, Records};
use serde_json::Value;
use sqlx::Row;

/// An evaluation as stored.
#[derive(Clone, Debug)]
pub struct EvaluationRow {
    pub event_id: String,
    pub transformation_id: String,
    pub evaluation_version: String,
    pub status: String,
    pub result: Option<Value>,
    pub error: Option<String>,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

/// What queueing an evaluation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    Queued,
    /// One of that version is pending or done already.
    Skipped,
}

/// A link from a regression call to the event it replays.
pub struct RegressionCall<'a> {
    pub call_id: &'a str,
    pub function_id: &'a str,
    pub baseline: i64,
    pub comparison: i64,
    pub original_event_id: &'a str,
    pub original_reference_id: &'a str,
}

/// A regression output and the event it replayed.
#[derive(Clone, Debug)]
pub struct RegressionRow {
    pub event_id: String,
    pub original_event_id: String,
}

/// The terminal outputs of regression calls between two versions (`$4`, `$5`) of a function
/// (`$3`) of the owner (`$1`, `$2`), each beside its correction if it has one (`c`).
const REGRESSION_OUTPUTS: &str = "FROM regression_calls r \
     JOIN events v ON v.call_id = r.call_id AND v.function_id = r.function_id \
     LEFT JOIN corrections c ON c.event_id = v.id \
     WHERE r.account_id = $1 AND r.environment = $2 AND r.function_id = $3 \
     AND r.baseline_version_num = $4 AND r.comparison_version_num = $5 \
     AND v.intermediate = 0 AND v.event_type <> 'error'";

/// A score run's head row.
#[derive(Clone, Debug)]
pub struct ScoreRunRow {
    pub id: String,
    pub function_name: String,
    pub function_version_num: i64,
    pub cancelled: bool,
}

impl Records {
    /// Queues an evaluation of `event` (and its job) unless one of that version is pending
    /// or done; a failed one is tried again.
    pub async fn queue_evaluation(
        &self,
        owner: Owner<'_>,
        event: &EventRow,
        transformation_id: &str,
        evaluation_version: &str,
        job_kind: &str,
        now: i64,
    ) -> Result<Queued, RecordError> {
        let mut tx = self.begin_write().await?;
        let existing = sqlx::query("SELECT status, evaluation_version FROM evaluations WHERE event_id = $1")
            .bind(&event.id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(row) = existing {
            let status: String = row.get("status");
            let version: String = row.get("evaluation_version");
            if status != "failed" && version == evaluation_version {
                tx.commit().await?;
                return Ok(Queued::Skipped);
            }
            sqlx::query("DELETE FROM evaluations WHERE event_id = $1")
                .bind(&event.id)
                .execute(&mut *tx)
                .await?;
        }
        let is_regression = match &event.call_id {
            Some(call_id) => sqlx::query("SELECT call_id FROM regression_calls WHERE call_id = $1")
                .bind(call_id)
                .fetch_optional(&mut *tx)
                .await?
                .is_some(),
            None => false,
        };
        sqlx::query(
            "INSERT INTO evaluations (event_id, account_id, environment, transformation_id, function_id, \
                 function_version_num, evaluation_version, is_regression, status, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $9, 'pending', $8)",
        )
        .bind(&event.id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(transformation_id)
        .bind(event.function_id.as_deref().unwrap_or_default())
        .bind(event.function_version_num.unwrap_or_default())
        .bind(evaluation_version)
        .bind(now)
        .bind(i64::from(is_regression))
        .execute(&mut *tx)
        .await?;
        let payload = serde_json::json!({ "eventID": event.id, "accountID": owner.account_id, "environment": owner.environment });
        insert_job(&mut tx, job_kind, &payload, 3, Some(owner.account_id)).await?;
        tx.commit().await?;
        Ok(Queued::Queued)
    }

    /// Records an evaluation's outcome: its result and overall confidence, or its error.
    pub async fn finish_evaluation(
        &self,
        event_id: &str,
        outcome: Result<(&Value, f64), &str>,
        now: i64,
    ) -> Result<(), RecordError> {
        let (status, result, confidence, error) = match outcome {
            Ok((result, confidence)) => ("completed", Some(result.to_string()), Some(confidence), None),
            Err(error) => ("failed", None, None, Some(error.to_string())),
        };
        sqlx::query(
            "UPDATE evaluations SET status = $1, result = $2, confidence = $3, error = $4, finished_at = $5 \
             WHERE event_id = $6",
        )
        .bind(status)
        .bind(result)
        .bind(confidence)
        .bind(error)
        .bind(now)
        .bind(event_id)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(())
    }

    /// The evaluations of these events (any version, or only `version`).
    pub async fn evaluations(
        &self,
        owner: Owner<'_>,
        event_ids: &[String],
        version: Option<&str>,
    ) -> Result<Vec<EvaluationRow>, RecordError> {
        if event_ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT event_id, transformation_id, evaluation_version, status, result, error, created_at, finished_at \
             FROM evaluations WHERE account_id = $1 AND environment = $2 AND ($3 = '' OR evaluation_version = $3) \
             AND event_id IN ({})",
            placeholders(4, event_ids.len())
        );
        let mut query = sqlx::query(&sql)
            .bind(owner.account_id)
            .bind(owner.environment)
            .bind(version.unwrap_or_default());
        for id in event_ids {
            query = query.bind(id);
        }
        let rows = query.fetch_all(&self.pool).await?;
        Ok(rows
            .iter()
            .map(|row| EvaluationRow {
                event_id: row.get("event_id"),
                transformation_id: row.get("transformation_id"),
                evaluation_version: row.get("evaluation_version"),
                status: row.get("status"),
                result: row.get::<Option<String>, _>("result").and_then(|r| serde_json::from_str(&r).ok()),
                error: row.get("error"),
                created_at: row.get("created_at"),
                finished_at: row.get("finished_at"),
            })
            .collect())
    }

    /// Corrected (or, with `only_corrected` false, any) terminal outputs of one version that
    /// are not themselves regression rows, oldest first.
    pub async fn regression_sample(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        version: i64,
        only_corrected: bool,
        limit: i64,
    ) -> Result<Vec<EventRow>, RecordError> {
        let corrected = if only_corrected { "AND labelled = 1" } else { "" };
        let rows = sqlx::query(&format!(
            "SELECT id FROM events WHERE account_id = $1 AND environment = $2 AND function_id = $3 \
             AND function_version_num = $4 AND intermediate = 0 AND event_type <> 'error' {corrected} \
             AND COALESCE(call_id, '') NOT IN (SELECT call_id FROM regression_calls) ORDER BY id LIMIT $5"
        ))
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .bind(version)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        let mut events = Vec::new();
        for row in rows {
            if let Some(event) = self.accuracy_event(owner, &row.get::<String, _>("id")).await? {
                events.push(event);
            }
        }
        Ok(events)
    }

    pub async fn insert_regression_call(
        &self,
        owner: Owner<'_>,
        link: RegressionCall<'_>,
        now: i64,
    ) -> Result<(), RecordError> {
        sqlx::query(
            "INSERT INTO regression_calls (call_id, account_id, environment, function_id, baseline_version_num, \
                 comparison_version_num, original_event_id, original_reference_id, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(link.call_id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(link.function_id)
        .bind(link.baseline)
        .bind(link.comparison)
        .bind(link.original_event_id)
        .bind(link.original_reference_id)
        .bind(now)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(())
    }

    /// How many terminal outputs of regression calls between two versions have a
    /// correction, and how many have none.
    pub async fn regression_counts(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        (baseline, comparison): (i64, i64),
    ) -> Result<(i64, i64), RecordError> {
        let row = sqlx::query(&format!(
            "SELECT COALESCE(SUM(CASE WHEN c.event_id IS NULL THEN 0 ELSE 1 END), 0) AS corrected, \
                 COALESCE(SUM(CASE WHEN c.event_id IS NULL THEN 1 ELSE 0 END), 0) AS uncorrected {REGRESSION_OUTPUTS}"
        ))
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .bind(baseline)
        .bind(comparison)
        .fetch_one(&self.pool)
        .await?;
        Ok((row.get("corrected"), row.get("uncorrected")))
    }

    /// The first `limit` terminal outputs of regression calls between two versions that have
    /// no correction, in event order, with the event each replayed.
    pub async fn uncorrected_regression_rows(
        &self,
        owner: Owner<'_>,
        function_id: &str,
        (baseline, comparison): (i64, i64),
        limit: i64,
    ) -> Result<Vec<RegressionRow>, RecordError> {
        let rows = sqlx::query(&format!(
            "SELECT v.id, r.original_event_id {REGRESSION_OUTPUTS} AND c.event_id IS NULL ORDER BY v.id LIMIT $6"
        ))
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(function_id)
        .bind(baseline)
        .bind(comparison)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(|row| RegressionRow {
                event_id: row.get("id"),
                original_event_id: row.get("original_event_id"),
            })
            .collect())
    }

    /// Stores a score run and its pairs (`(call ID, expected)` by index).
    pub async fn insert_score_run(
        &self,
        owner: Owner<'_>,
        run: &ScoreRunRow,
        pairs: &[(String, Value)],
        now: i64,
    ) -> Result<(), RecordError> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO score_runs (id, account_id, environment, function_name, function_version_num, cancelled, created_at) \
             VALUES ($1, $2, $3, $4, $5, 0, $6)",
        )
        .bind(&run.id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(&run.function_name)
        .bind(run.function_version_num)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        for (index, (call_id, expected)) in pairs.iter().enumerate() {
            sqlx::query(
                "INSERT INTO score_pairs (run_id, pair_index, call_id, expected) VALUES ($1, $2, $3, $4)",
            )
            .bind(&run.id)
            .bind(index as i64)
            .bind(call_id)
            .bind(expected.to_string())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn score_run(&self, owner: Owner<'_>, id: &str) -> Result<Option<ScoreRunRow>, RecordError> {
        let row = sqlx::query(
            "SELECT id, function_name, function_version_num, cancelled FROM score_runs \
             WHERE id = $1 AND account_id = $2 AND environment = $3",
        )
        .bind(id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|row| ScoreRunRow {
            id: row.get("id"),
            function_name: row.get("function_name"),
            function_version_num: row.get("function_version_num"),
            cancelled: row.get::<i64, _>("cancelled") != 0,
        }))
    }

    /// A run's pairs in order: `(call ID, expected)`.
    pub async fn score_pairs(&self, run_id: &str) -> Result<Vec<(String, Value)>, RecordError> {
        let rows =
            sqlx::query("SELECT call_id, expected FROM score_pairs WHERE run_id = $1 ORDER BY pair_index")
                .bind(run_id)
                .fetch_all(&self.pool)
                .await?;
        Ok(rows
            .iter()
            .map(|row| {
                let expected = serde_json::from_str(&row.get::<String, _>("expected")).unwrap_or(Value::Null);
                (row.get("call_id"), expected)
            })
            .collect())
    }

    pub async fn cancel_score_run(&self, id: &str) -> Result<(), RecordError> {
        sqlx::query("UPDATE score_runs SET cancelled = 1 WHERE id = $1")
            .bind(id)
            .execute(&mut *self.write().await?)
            .await?;
        Ok(())
    }
}
