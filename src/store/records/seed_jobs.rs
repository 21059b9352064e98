//! Bulk seed jobs as stored: rows, progress and results (one row of `seed_job_results` per
//! saved chunk, with how many of its rows were created, merged and rejected).
//!
//! A result is stored as the JSON of a row's outcome; its `outcome` field (`created`,
//! `merged-with` or `rejected`) is what the counts count.

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

/// How many of a job's rows were created, merged into an entity, or rejected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutcomeCounts {
    pub created: i64,
    pub merged: i64,
    pub rejected: i64,
}

/// A row's result as a seed job stores it: its JSON, counted by its outcome. The seeding
/// service saves its typed results straight to text (a `serde_json::Value` made of each first,
/// then printed, was ~2 % of a bulk seed's CPU); what is read back is a `Value`.
pub trait StoredResult: serde::Serialize {
    /// `created`, `merged-with` or `rejected`.
    fn outcome(&self) -> &str;
}

impl StoredResult for serde_json::Value {
    fn outcome(&self) -> &str {
        self["outcome"].as_str().unwrap_or_default()
    }
}

impl OutcomeCounts {
    fn of<R: StoredResult>(results: &[R]) -> Self {
        let count = |outcome: &str| results.iter().filter(|r| r.outcome() == outcome).count() as i64;
        Self { created: count("created"), merged: count("merged-with"), rejected: count("rejected") }
    }

    fn add(&mut self, other: Self) {
        self.created += other.created;
        self.merged += other.merged;
        self.rejected += other.rejected;
    }
}

/// A tenant's seed job without its rows or results: what a status poll needs.
#[derive(Clone, Debug)]
pub struct SeedJobProgress {
    pub status: String,
    pub total_rows: i64,
    pub processed_rows: i64,
    pub error: Option<String>,
    pub counts: OutcomeCounts,
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
        // An encoding failure is the statement's (sqlx's own kind for a value it cannot bind),
        // not an empty job that would fail later for a reason nobody could see.
        let rows_json = serde_json::to_string(rows)
            .map_err(|err| RecordError::Query(sqlx::Error::Encode(Box::new(err))))?;
        sqlx::query(
            "INSERT INTO seed_jobs (id, account_id, environment, bucket_id, status, total_rows, rows_json, \
             results_json, created_at, updated_at) VALUES ($1, $2, $3, $4, 'pending', $5, $6, '[]', $7, $7)",
        )
        .bind(id)
        .bind(account_id)
        .bind(environment)
        .bind(bucket_id)
        .bind(rows.len() as i64)
        // Printed from the slice (a `Value` of it first copied every row).
        .bind(rows_json)
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
            .load_seed_job(id, false, true)
            .await?
            .filter(|job| job.account_id == account_id && job.environment == environment))
    }

    /// A tenant's seed job (another tenant's is None) with the counts of its saved results,
    /// read without the results themselves (only chunks saved before their counts were kept
    /// are parsed).
    pub async fn seed_job_progress(
        &self,
        id: &str,
        account_id: &str,
        environment: &str,
    ) -> Result<Option<SeedJobProgress>, RecordError> {
        let row = sqlx::query(
            "SELECT status, total_rows, processed_rows, results_json, error FROM seed_jobs \
             WHERE id = $1 AND account_id = $2 AND environment = $3",
        )
        .bind(id)
        .bind(account_id)
        .bind(environment)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        // Jobs saved before migration 0014 keep their first results in results_json.
        let mut counts = OutcomeCounts::of(&parse(&row.get::<String, _>("results_json")));
        let chunks = sqlx::query(
            "SELECT created_count, merged_count, rejected_count, \
                 CASE WHEN created_count IS NULL THEN results_json ELSE '[]' END AS uncounted \
             FROM seed_job_results WHERE job_id = $1",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        for chunk in chunks {
            counts.add(match chunk.get::<Option<i64>, _>("created_count") {
                Some(created) => OutcomeCounts {
                    created,
                    merged: chunk.get::<Option<i64>, _>("merged_count").unwrap_or_default(),
                    rejected: chunk.get::<Option<i64>, _>("rejected_count").unwrap_or_default(),
                },
                None => OutcomeCounts::of(&parse(&chunk.get::<String, _>("uncounted"))),
            });
        }
        Ok(Some(SeedJobProgress {
            status: row.get("status"),
            total_rows: row.get("total_rows"),
            processed_rows: row.get("processed_rows"),
            error: row.get("error"),
            counts,
        }))
    }

    /// A seed job whoever owns it, its rows and saved results included (what a test checks;
    /// the worker reads [`Records::seed_job_to_run`]).
    pub async fn seed_job_by_id(&self, id: &str) -> Result<Option<SeedJob>, RecordError> {
        self.load_seed_job(id, true, true).await
    }

    /// A seed job whoever owns it, without its results (the worker that runs it resumes from
    /// `processed_rows`), with its rows only if `with_rows` (the worker may hold them already).
    pub async fn seed_job_to_run(&self, id: &str, with_rows: bool) -> Result<Option<SeedJob>, RecordError> {
        self.load_seed_job(id, with_rows, false).await
    }

    async fn load_seed_job(
        &self,
        id: &str,
        with_rows: bool,
        with_results: bool,
    ) -> Result<Option<SeedJob>, RecordError> {
        let rows_column = if with_rows { "rows_json" } else { "'[]' AS rows_json" };
        let row = sqlx::query(&format!(
            "SELECT id, account_id, environment, bucket_id, status, total_rows, processed_rows, {rows_column}, \
             results_json, error FROM seed_jobs WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        // Jobs saved before migration 0014 keep their results in results_json; chunks follow.
        let mut results = Vec::new();
        if with_results {
            results = parse(&row.get::<String, _>("results_json"));
            let chunks =
                sqlx::query("SELECT results_json FROM seed_job_results WHERE job_id = $1 ORDER BY first_row")
                    .bind(id)
                    .fetch_all(&self.pool)
                    .await?;
            for chunk in chunks {
                results.extend(parse(&chunk.get::<String, _>("results_json")));
            }
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
    pub async fn save_seed_progress<R: StoredResult>(
        &self,
        id: &str,
        status: &str,
        first_row: i64,
        results: &[R],
        error: Option<&str>,
    ) -> Result<(), RecordError> {
        let mut tx = self.begin_write().await?;
        if !results.is_empty() {
            let counts = OutcomeCounts::of(results);
            sqlx::query(
                "INSERT INTO seed_job_results (job_id, first_row, results_json, created_count, merged_count, \
                     rejected_count) VALUES ($1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (job_id, first_row) DO UPDATE SET results_json = excluded.results_json, \
                     created_count = excluded.created_count, merged_count = excluded.merged_count, \
                     rejected_count = excluded.rejected_count",
            )
            .bind(id)
            .bind(first_row)
            .bind(serde_json::to_string(results).unwrap_or_else(|_| "[]".into()))
            .bind(counts.created)
            .bind(counts.merged)
            .bind(counts.rejected)
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

    /// Records why a seed job's run failed: `status` `failed` once it is given up, else its
    /// status is kept (a retry follows) and the error says what the last attempt met, so a
    /// client polling it sees the failure instead of a job that never moves.
    pub async fn note_seed_failure(&self, id: &str, failed: bool, error: &str) -> Result<(), RecordError> {
        sqlx::query(
            "UPDATE seed_jobs SET status = CASE WHEN $1 THEN 'failed' ELSE status END, error = $2, \
             updated_at = $3 WHERE id = $4",
        )
        .bind(failed)
        .bind(error)
        .bind(ids::now_millis())
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

fn parse(text: &str) -> Vec<serde_json::Value> {
    serde_json::from_str(text).unwrap_or_default()
}
