//! Bulk seed jobs as stored: rows, progress and results.

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
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// A tenant's seed job (another tenant's is None).
    pub async fn seed_job(
        &self,
        id: &str,
        account_id: &str,
        environment: &str,
    ) -> Result<Option<SeedJob>, RecordError> {
        Ok(self
            .seed_job_by_id(id)
            .await?
            .filter(|job| job.account_id == account_id && job.environment == environment))
    }

    /// A seed job whoever owns it (for the worker that runs it).
    pub async fn seed_job_by_id(&self, id: &str) -> Result<Option<SeedJob>, RecordError> {
        let row = sqlx::query(
            "SELECT id, account_id, environment, bucket_id, status, total_rows, processed_rows, rows_json, \
             results_json, error FROM seed_jobs WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|row| {
            let parse = |column: &str| -> Vec<serde_json::Value> {
                serde_json::from_str(&row.get::<String, _>(column)).unwrap_or_default()
            };
            SeedJob {
                id: row.get("id"),
                account_id: row.get("account_id"),
                environment: row.get("environment"),
                bucket_id: row.get("bucket_id"),
                status: row.get("status"),
                total_rows: row.get("total_rows"),
                processed_rows: row.get("processed_rows"),
                rows: parse("rows_json"),
                results: parse("results_json"),
                error: row.get("error"),
            }
        }))
    }

    /// Saves the results of every row up to `processed` and the job's status.
    pub async fn save_seed_progress(
        &self,
        id: &str,
        status: &str,
        processed: i64,
        results: &[serde_json::Value],
        error: Option<&str>,
    ) -> Result<(), RecordError> {
        sqlx::query(
            "UPDATE seed_jobs SET status = $1, processed_rows = $2, results_json = $3, error = $4, updated_at = $5 \
             WHERE id = $6",
        )
        .bind(status)
        .bind(processed)
        .bind(serde_json::Value::from(results.to_vec()).to_string())
        .bind(error)
        .bind(ids::now_millis())
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
