//! Bulk seed jobs as stored: rows, progress and results (one row of `seed_job_results` per
//! saved chunk).

use super::{RecordError, Records};
use crate::ids;
use sqlx::Row;

/// A seed job's stored state.
#[derive(Clone, Debug)]
pub struct SeedJob {
    pub id: String,
    pub account_id: String,
    pub environment: String,
    pub bucket_id: String,
    pub status: String,
    pub total_rows: i64,
    pub processed_rows: i64,
    pub rows: Vec<serde_json::Value>,
    pub results: Vec<serde_json::Value>,
    pub error: Option<String>,
}

impl Records {
    pub async fn create_seed_job(
        &self,
        id: &str,
        account_id: &str,
        environment: &str,
        bucket_id: &str,
        rows: &[serde_json::Value],
    ) -> Result<(), RecordError> {
        let now = ids::now_millis();
        sqlx::query(
            "INSERT INTO seed_jobs (id, account_id, environment, bucket_id, status, total_rows, rows_json, \
             results_json, created_at, updated_at) VALUES ($1, $2, $3, $4, 'pending', $5, $6, '[]', $7, $7)",
        )
        .bind(id)
        .bind(account_id)
        .bind(environment)
        .bind(bucket_id)
        .bind(rows.len() as i64)
        .bind(serde_json::Value::from(rows.to_vec()).to_string())
        .bind(now)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(())
    }

    /// A tenant's seed job (another tenant's is None), without its rows: what a status read
    /// needs.
    pub async fn seed_job(
        &self,
        id: &str,
        account_id: &str,
        environment: &str,
    ) -> Result<Option<SeedJob>, RecordError> {
        Ok(self
            .load_seed_job(id, false)
            .await?
            .filter(|job| job.account_id == account_id && job.environment == environment))
    }

    /// A seed job whoever owns it, rows included (for the worker that runs it).
    pub async fn seed_job_by_id(&self, id: &str) -> Result<Option<SeedJob>, RecordError> {
        self.load_seed_job(id, true).await
    }

    async fn load_seed_job(&self, id: &str, with_rows: bool) -> Result<Option<SeedJob>, RecordError> {
        let rows_column = if with_rows { "rows_json" } else { "'[]' AS rows_json" };
        let row = sqlx::query(&format!(
            "SELECT id, account_id, environment, bucket_id, status, total_rows, processed_rows, {rows_column}, \
             results_json, error FROM seed_jobs WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let parse = |text: &str| -> Vec<serde_json::Value> { serde_json::from_str(text).unwrap_or_default() };
        // Jobs saved before migration 0014 keep their results in results_json; chunks follow.
        let mut results = parse(&row.get::<String, _>("results_json"));
        let chunks =
            sqlx::query("SELECT results_json FROM seed_job_results WHERE job_id = $1 ORDER BY first_row")
                .bind(id)
                .fetch_all(&self.pool)
                .await?;
        for chunk in chunks {
            results.extend(parse(&chunk.get::<String, _>("results_json")));
        }
        Ok(Some(SeedJob {
            id: row.get("id"),
            account_id: row.get("account_id"),
            environment: row.get("environment"),
            bucket_id: row.get("bucket_id"),
            status: row.get("status"),
            total_rows: row.get("total_rows"),
            processed_rows: row.get("processed_rows"),
            rows: parse(&row.get::<String, _>("rows_json")),
            results,
            error: row.get("error"),
        }))
    }

    /// Saves the results of rows `first_row..first_row + results.len()` and the job's status,
    /// its progress then being the end of those rows. Each chunk's results are written once:
    /// rewriting every result so far after each chunk made a job's writes grow with the
    /// square of its rows.
    pub async fn save_seed_progress(
        &self,
        id: &str,
        status: &str,
        first_row: i64,
        results: &[serde_json::Value],
        error: Option<&str>,
    ) -> Result<(), RecordError> {
        let mut tx = self.begin_write().await?;
        if !results.is_empty() {
            sqlx::query(
                "INSERT INTO seed_job_results (job_id, first_row, results_json) VALUES ($1, $2, $3) \
                 ON CONFLICT (job_id, first_row) DO UPDATE SET results_json = excluded.results_json",
            )
            .bind(id)
            .bind(first_row)
            .bind(serde_json::to_string(results).unwrap_or_else(|_| "[]".into()))
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query(
            "UPDATE seed_jobs SET status = $1, processed_rows = $2, error = $3, updated_at = $4 WHERE id = $5",
        )
        .bind(status)
        .bind(first_row + results.len() as i64)
        .bind(error)
        .bind(ids::now_millis())
        .bind(id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
