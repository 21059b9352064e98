//! Storage of the durable job queue. A job is claimed with a lease (`locked_by`,
//! `locked_until`) in one atomic statement, so exactly one worker holds it at a time; a
//! lease that runs out (its worker crashed) makes the job claimable again, and counts as an
//! interruption: a job past its attempt limit is handed to a worker only to be given up.
//!
//! Jobs of an account are claimed only while that account holds fewer than the claimer's cap
//! of live leases, so one tenant's backlog cannot hold every worker.

use super::batch::Statement;
use super::{Dialect, RecordError, Records};
use crate::ids;
use sqlx::Row;

/// The PostgreSQL advisory lock job claims take turns on (any fixed number of canon's own).
const CLAIM_LOCK: i64 = 0x6361_6e6f_6e6a_6f62;

/// Adds a job on `conn`, so it can share a transaction with the writes that call for it.
/// `account`: the tenant whose work it is, so it takes that tenant's share of the workers;
/// `None` only for work no tenant caused (no production kind today: tests' own kinds), which
/// no cap holds back.
pub async fn insert_job(
    conn: &mut sqlx::AnyConnection,
    kind: &str,
    payload: &serde_json::Value,
    max_attempts: i64,
    account: Option<&str>,
) -> Result<String, RecordError> {
    insert_job_claimed(conn, kind, payload, max_attempts, account, None).await
}

/// Who holds a job from the moment it is added, and for how long (its first attempt).
#[derive(Clone, Copy, Debug)]
pub struct JobClaim<'a> {
    pub worker: &'a str,
    pub lease_ms: i64,
}

/// [`insert_job`], already claimed by `claim` when given: its first attempt runs where it
/// was added, and if that worker dies the lease runs out and any worker takes the job over.
pub async fn insert_job_claimed(
    conn: &mut sqlx::AnyConnection,
    kind: &str,
    payload: &serde_json::Value,
    max_attempts: i64,
    account: Option<&str>,
    claim: Option<JobClaim<'_>>,
) -> Result<String, RecordError> {
    let (id, statement) = new_job(kind, payload, max_attempts, account, claim);
    statement.execute(conn).await?;
    Ok(id)
}

/// The statement that adds a job (see [`insert_job_claimed`]), and the job's ID. `account`:
/// the tenant whose work it is, whose share of the workers it takes.
pub(super) fn new_job<'a>(
    kind: &'a str,
    payload: &serde_json::Value,
    max_attempts: i64,
    account: Option<&str>,
    claim: Option<JobClaim<'_>>,
) -> (String, Statement<'a>) {
    let id = ids::new_id("job");
    let now = ids::now_millis();
    let (status, attempts) = if claim.is_some() { ("running", 1) } else { ("queued", 0) };
    let statement = Statement::new(
        "INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, created_at, updated_at, \
             locked_by, locked_until, account_id) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $7, $8, $9, $10)",
    )
    .arg(id.clone())
    .arg(kind)
    .arg(payload.to_string())
    .arg(status)
    .arg(attempts)
    .arg(max_attempts)
    .arg(now)
    .arg(claim.map(|c| c.worker.to_string()))
    .arg(claim.map(|c| now + c.lease_ms))
    .arg(account.map(str::to_string));
    (id, statement)
}

/// A job as a worker sees it.
#[derive(Clone, Debug)]
pub struct ClaimedJob {
    pub id: String,
    pub kind: String,
    pub payload: serde_json::Value,
    pub attempts: i64,
    pub max_attempts: i64,
    /// Attempts whose worker stopped while running them (their lease ran out, or the
    /// process that held them started again).
    pub interruptions: i64,
}

impl ClaimedJob {
    /// This claim is past the job's attempt limit: only a job whose last attempt's worker
    /// stopped gets here (a failed attempt is queued again only below the limit), and it must
    /// not run again, since running it may be what stopped the worker.
    pub fn exhausted(&self) -> bool {
        self.attempts > self.max_attempts
    }
}

/// A job's state as stored (tests and operators read it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobState {
    pub status: String,
    pub attempts: i64,
    pub last_error: Option<String>,
}

impl Records {
    /// Adds a job that runs as soon as a worker is free (within `account`'s share, see
    /// [`insert_job`]).
    pub async fn enqueue_job(
        &self,
        kind: &str,
        payload: &serde_json::Value,
        max_attempts: i64,
        account: Option<&str>,
    ) -> Result<String, RecordError> {
        let mut conn = self.write().await?;
        insert_job(&mut conn, kind, payload, max_attempts, account).await
    }

    /// Jobs of `kind` of `account_id` (every environment) waiting for a worker.
    pub async fn queued_jobs(&self, account_id: &str, kind: &str) -> Result<i64, RecordError> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM jobs WHERE status = 'queued' AND account_id = $1 AND kind = $2",
        )
        .bind(account_id)
        .bind(kind)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.get("n"))
    }

    /// Claims the oldest runnable job for `worker` until `now + lease_ms`, of any account.
    pub async fn claim_job(&self, worker: &str, lease_ms: i64) -> Result<Option<ClaimedJob>, RecordError> {
        self.claim_job_within(worker, lease_ms, i64::MAX).await
    }

    /// Claims the oldest runnable job for `worker` until `now + lease_ms`, skipping the jobs
    /// of accounts that hold `per_account` live leases already. Taking over a lease that ran
    /// out counts an interruption: its worker stopped while running it.
    pub async fn claim_job_within(
        &self,
        worker: &str,
        lease_ms: i64,
        per_account: i64,
    ) -> Result<Option<ClaimedJob>, RecordError> {
        let now = ids::now_millis();
        if !self.any_runnable_job(now).await? {
            // An idle worker only reads: eight of them writing at every poll would keep
            // taking SQLite's write lock from everyone else.
            return Ok(None);
        }
        let lock = match self.dialect {
            Dialect::Postgres => "FOR UPDATE SKIP LOCKED",
            // SQLite serialises writers, so the UPDATE below is already atomic.
            Dialect::Sqlite => "",
        };
        let sql = format!(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, \
                 interruptions = interruptions + CASE WHEN status = 'running' THEN 1 ELSE 0 END, \
                 locked_by = $1, locked_until = $2, updated_at = $3 \
             WHERE id = (SELECT id FROM jobs \
                 WHERE ((status = 'queued' AND run_at <= $3) OR (status = 'running' AND locked_until < $3)) \
                   AND (account_id IS NULL OR account_id NOT IN ( \
                       SELECT account_id FROM jobs \
                       WHERE status = 'running' AND locked_until >= $3 AND account_id IS NOT NULL \
                       GROUP BY account_id HAVING COUNT(*) >= $4)) \
                 ORDER BY run_at, id LIMIT 1 {lock}) \
             RETURNING id, kind, payload, attempts, max_attempts, interruptions"
        );
        let mut tx = self.begin_write().await?;
        if self.dialect == Dialect::Postgres {
            // Claims take turns, across every instance on the database: two claimers could
            // otherwise each see an account one below its cap and both claim (CI saw 3 of a
            // share of 2). Under READ COMMITTED the claim's own snapshot, taken after the
            // lock, sees every earlier claim. (SQLite serialises writers already.)
            sqlx::query("SELECT 1 AS taken FROM (SELECT pg_advisory_xact_lock($1)) AS turn")
                .bind(CLAIM_LOCK)
                .execute(&mut *tx)
                .await?;
        }
        let row = sqlx::query(&sql)
            .bind(worker)
            .bind(now + lease_ms)
            .bind(now)
            .bind(per_account)
            .fetch_optional(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(row.map(|row| {
            let payload: String = row.get("payload");
            ClaimedJob {
                id: row.get("id"),
                kind: row.get("kind"),
                payload: serde_json::from_str(&payload).unwrap_or(serde_json::Value::Null),
                attempts: row.get("attempts"),
                max_attempts: row.get("max_attempts"),
                interruptions: row.get("interruptions"),
            }
        }))
    }

    async fn any_runnable_job(&self, now: i64) -> Result<bool, RecordError> {
        let found = sqlx::query(
            "SELECT id FROM jobs \
             WHERE (status = 'queued' AND run_at <= $1) OR (status = 'running' AND locked_until < $1) LIMIT 1",
        )
        .bind(now)
        .fetch_optional(&self.pool)
        .await?;
        Ok(found.is_some())
    }

    /// Extends the lease of a job this worker still holds; `false` if it lost it.
    pub async fn extend_job_lease(&self, id: &str, worker: &str, lease_ms: i64) -> Result<bool, RecordError> {
        let done = sqlx::query(
            "UPDATE jobs SET locked_until = $1 WHERE id = $2 AND locked_by = $3 AND status = 'running'",
        )
        .bind(ids::now_millis() + lease_ms)
        .bind(id)
        .bind(worker)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Marks a held job done.
    pub async fn complete_job(&self, id: &str, worker: &str) -> Result<(), RecordError> {
        mark_done(id, worker).execute(&mut *self.write().await?).await?;
        Ok(())
    }

    /// Records a failed attempt: queued again after `retry_in_ms`, or failed for good.
    pub async fn fail_job(
        &self,
        id: &str,
        worker: &str,
        error: &str,
        retry_in_ms: Option<i64>,
    ) -> Result<(), RecordError> {
        let now = ids::now_millis();
        let (status, run_at) = match retry_in_ms {
            Some(delay) => ("queued", now + delay),
            None => ("failed", now),
        };
        sqlx::query(
            "UPDATE jobs SET status = $1, run_at = $2, last_error = $3, locked_by = NULL, \
                 locked_until = NULL, updated_at = $4 \
             WHERE id = $5 AND locked_by = $6",
        )
        .bind(status)
        .bind(run_at)
        .bind(error)
        .bind(now)
        .bind(id)
        .bind(worker)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(())
    }

    /// Releases every lease held by workers of a process that stopped without finishing
    /// (SQLite only: one process owns that file, so no other live worker can hold them). Each
    /// counts an interruption and keeps its attempts, so a job past its limit is given up
    /// when next claimed instead of run.
    pub async fn release_orphaned_jobs(&self) -> Result<u64, RecordError> {
        if self.dialect != Dialect::Sqlite {
            return Ok(0);
        }
        let done = sqlx::query(
            "UPDATE jobs SET status = 'queued', locked_by = NULL, locked_until = NULL, \
                 interruptions = interruptions + 1 \
             WHERE status = 'running'",
        )
        .execute(&mut *self.write().await?)
        .await?;
        Ok(done.rows_affected())
    }

    pub async fn job_state(&self, id: &str) -> Result<Option<JobState>, RecordError> {
        let row = sqlx::query("SELECT status, attempts, last_error FROM jobs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|row| JobState {
            status: row.get("status"),
            attempts: row.get("attempts"),
            last_error: row.get("last_error"),
        }))
    }

    /// Jobs waiting or running, for the queue-depth gauge.
    pub async fn queue_depth(&self) -> Result<i64, RecordError> {
        let row = sqlx::query("SELECT COUNT(*) AS depth FROM jobs WHERE status IN ('queued', 'running')")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.get("depth"))
    }
}

/// Marks a job `worker` holds done (a statement, so a handler's last transaction can say it).
pub(super) fn mark_done<'a>(id: &'a str, worker: &'a str) -> Statement<'a> {
    Statement::new(
        "UPDATE jobs SET status = 'done', locked_by = NULL, locked_until = NULL, updated_at = $1 \
         WHERE id = $2 AND locked_by = $3",
    )
    .arg(ids::now_millis())
    .arg(id)
    .arg(worker)
}
