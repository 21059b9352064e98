//! Workers of the durable job queue: at-least-once execution with retries and exponential
//! backoff. Handlers must be idempotent, since a job whose worker died runs again, up to its
//! attempt limit: a job whose workers kept stopping while running it (it may be what kills
//! the process) is given up instead of being run past that limit.
//!
//! Workers are shared across tenants: a worker skips the jobs of an account that holds
//! [`Sharing::per_account`] leases already, so one tenant's backlog or hung calls hold at
//! most that many workers and every other tenant's jobs find one free.

use crate::error::{ServiceError, ServiceResult};
use crate::store::records::jobs::ClaimedJob;
use crate::store::records::Records;
use async_trait::async_trait;
use futures::FutureExt;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::Instrument;

/// How long a claim holds before another worker may take the job over.
pub const LEASE_MS: i64 = 30_000;
/// How often a running job's lease is renewed.
const HEARTBEAT: Duration = Duration::from_secs(10);
/// How long a job may run before it is stopped and failed for good (see
/// [`JobHandler::time_limit`]): a handler that never returned held its worker, and one of its
/// account's shares, for as long as the process ran, renewing its lease all the while. Far
/// above what any job of canon's takes (a call's functions, a seed of a bulk's rows, a
/// collection's embeddings each have their own, smaller bounds): it bounds what none foresaw.
pub const JOB_TIME_LIMIT: Duration = Duration::from_secs(3_600);
/// How long an idle worker waits before looking again.
const IDLE_POLL: Duration = Duration::from_millis(200);

/// Wakes idle workers at once (instead of at their next poll) when a job is added that
/// someone is waiting on, such as a workflow call with `wait=true`.
static WAKE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Tells idle workers of this process to look for work now.
pub fn wake() {
    WAKE.notify_waiters();
}

/// Jobs of one kind an account may have waiting for a worker, and how a refusal names the
/// bound. A worker's claim reads runnable jobs in order and steps over those of accounts at
/// their share, so one account's backlog (a million queued writes) was read by every claim,
/// every tenant's, under the claim lock; and each queued job keeps what it will work on.
#[derive(Clone, Copy, Debug)]
pub struct QueueRoom {
    pub kind: &'static str,
    /// What they are, in a refusal's words ("calls", "seed jobs").
    pub what: &'static str,
    /// The bound's name in the 422's `details.limit`.
    pub limit: &'static str,
    pub most: usize,
}

impl QueueRoom {
    /// Refuses `adding` more jobs when they would take `account_id` past the bound (a few
    /// submitted at the same moment may pass it together).
    pub async fn check(&self, records: &Records, account_id: &str, adding: usize) -> ServiceResult<()> {
        let queued = usize::try_from(records.queued_jobs(account_id, self.kind).await?).unwrap_or(0);
        let QueueRoom { what, limit, most, .. } = *self;
        if queued + adding > most {
            let message = format!(
                "this account has {queued} {what} waiting for a worker and at most {most} may wait at once \
                 ({limit}); {adding} more would pass it: wait for some to finish"
            );
            return Err(ServiceError::count_reached(message, limit, most as i64));
        }
        Ok(())
    }
}

/// Seed jobs, collection writes waiting for their embeddings and evaluations one account may
/// have waiting, each kind apart (calls have theirs: [`crate::calls::MAX_QUEUED_CALLS`]). A
/// seed job keeps up to 10,000 rows, so 100 hold a million.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueBounds {
    pub seeds: usize,
    pub embeddings: usize,
    pub evaluations: usize,
}

pub const QUEUE_BOUNDS: QueueBounds = QueueBounds { seeds: 100, embeddings: 10_000, evaluations: 10_000 };

/// A job as its handler sees it while a worker holds it.
pub struct HeldJob<'a> {
    pub id: &'a str,
    pub worker: &'a str,
    pub payload: serde_json::Value,
}

/// Who marks a job that succeeded as done.
#[derive(Debug, PartialEq, Eq)]
pub enum Completion {
    /// The worker, once the handler returns.
    ByWorker,
    /// The handler did, in its own last transaction (one write fewer).
    Recorded,
}

/// Something a job of one kind does.
#[async_trait]
pub trait JobHandler: Send + Sync + 'static {
    async fn run(&self, payload: serde_json::Value) -> anyhow::Result<()>;

    /// Runs the job held as `job`. Handlers whose last write is a transaction of their own
    /// may mark the job done in it (`HeldJob::id` by `HeldJob::worker`) and say so.
    async fn run_held(&self, job: HeldJob<'_>) -> anyhow::Result<Completion> {
        self.run(job.payload).await.map(|()| Completion::ByWorker)
    }

    /// How long one run of a job of this kind may take before it is stopped (its future
    /// dropped, as a crash would) and failed without a retry: it would likely run as long again.
    fn time_limit(&self) -> Duration {
        JOB_TIME_LIMIT
    }

    /// Called once when the job failed for the last time (no retry is left), so what it
    /// stood for can be marked as failed instead of staying in progress.
    async fn gave_up(&self, _payload: serde_json::Value, _error: &str) {}

    /// Called when a run was stopped at [`Self::time_limit`] (and is not retried); `message`
    /// says so, in words for the tenant. Like [`Self::gave_up`] by default.
    async fn stopped(&self, payload: serde_json::Value, message: &str) {
        self.gave_up(payload, message).await
    }

    /// Called instead of running a job whose workers stopped while running it until its
    /// attempts ran out; `message` says so, in words for the tenant. Like [`Self::gave_up`] by
    /// default.
    async fn abandoned(&self, payload: serde_json::Value, message: &str) {
        self.gave_up(payload, message).await
    }
}

/// What a job stopped at its time limit records.
fn time_limit_message(limit: Duration) -> String {
    format!("the job ran for its time limit of {} s and was stopped; it is not retried", limit.as_secs_f64())
}

/// What a job that is never run again records, naming how often its worker stopped.
pub fn stopped_message(interruptions: i64) -> String {
    format!("the worker stopped while running this job {interruptions} times; it is not retried")
}

/// How a process's workers share themselves across tenants.
#[derive(Clone, Copy, Debug)]
pub struct Sharing {
    /// Workers of the process.
    pub workers: usize,
    /// Leases one account may hold at once (its jobs wait while it holds this many).
    pub per_account: usize,
}

/// The handlers of every job kind this process runs.
#[derive(Clone, Default)]
pub struct Handlers(HashMap<String, Arc<dyn JobHandler>>);

impl Handlers {
    pub fn register(&mut self, kind: &str, handler: Arc<dyn JobHandler>) {
        self.0.insert(kind.to_string(), handler);
    }

    /// Adds every handler of `other` (replacing same-kind ones).
    pub fn extend(&mut self, other: Handlers) {
        self.0.extend(other.0);
    }
}

/// Delay before retry `attempt` (1-based): 1 s, 2 s, 4 s … capped at 5 minutes.
pub fn backoff_ms(attempt: i64) -> i64 {
    let exponent = attempt.clamp(1, 20) - 1;
    (1_000i64 << exponent).min(300_000)
}

/// Starts `sharing.workers` workers; they stop after their current job once `stop` turns true.
pub fn spawn_workers(
    records: Records,
    handlers: Handlers,
    sharing: Sharing,
    stop: watch::Receiver<bool>,
) -> Vec<JoinHandle<()>> {
    let per_account = i64::try_from(sharing.per_account.max(1)).unwrap_or(i64::MAX);
    (0..sharing.workers)
        .map(|_| {
            let worker = Worker {
                id: crate::ids::new_id("wrk"),
                records: records.clone(),
                handlers: handlers.clone(),
                per_account,
            };
            tokio::spawn(worker.run(stop.clone()))
        })
        .collect()
}

struct Worker {
    id: String,
    records: Records,
    handlers: Handlers,
    per_account: i64,
}

impl Worker {
    async fn run(self, mut stop: watch::Receiver<bool>) {
        while !*stop.borrow() {
            match self.records.claim_job_within(&self.id, LEASE_MS, self.per_account).await {
                Ok(Some(job)) => {
                    let span = tracing::info_span!("job", job_id = %job.id, kind = %job.kind, attempt = job.attempts);
                    self.execute(job).instrument(span).await
                }
                Ok(None) => {
                    tokio::select! {
                        _ = stop.changed() => {}
                        _ = WAKE.notified() => {}
                        _ = tokio::time::sleep(IDLE_POLL) => {}
                    }
                }
                Err(err) => {
                    tracing::error!(error = %err, "cannot claim a job");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    async fn execute(&self, job: ClaimedJob) {
        let Some(handler) = self.handlers.0.get(&job.kind).cloned() else {
            let message = format!("no handler for job kind {}", job.kind);
            tracing::error!("{message}");
            record_failure(&self.records, &self.id, &job, &message, None).await;
            return;
        };
        if job.exhausted() {
            return abandon(&self.records, &self.id, handler.as_ref(), &job).await;
        }
        run_claimed(&self.records, &self.id, handler.as_ref(), job).await
    }
}

/// Gives up a job past its attempt limit without running it. What it stood for is marked
/// failed first, then the job: should this process stop in between, the next claim does both
/// again (marking a call failed twice is harmless), and nothing is left `running`.
async fn abandon(records: &Records, worker: &str, handler: &dyn JobHandler, job: &ClaimedJob) {
    let message = stopped_message(job.interruptions);
    tracing::error!(
        interruptions = job.interruptions,
        "giving up a job whose worker kept stopping while running it"
    );
    handler.abandoned(job.payload.clone(), &message).await;
    record_failure(records, worker, job, &message, None).await;
}

/// Runs a job `worker` holds to its end: renews the lease while it runs, then marks it done,
/// or failed with a retry (which any worker takes) or for good.
pub async fn run_claimed(records: &Records, worker: &str, handler: &dyn JobHandler, job: ClaimedJob) {
    run_renewing(records, worker, handler, job, HEARTBEAT).await
}

/// [`run_claimed`], renewing the lease every `period`.
async fn run_renewing(
    records: &Records,
    worker: &str,
    handler: &dyn JobHandler,
    job: ClaimedJob,
    period: Duration,
) {
    let outcome = {
        // A handler that panics (a defect, whatever the tenant's input) fails its attempt like
        // an error: unwound through here it ended the worker's task for good, and the job's
        // next claim ended the next worker's, until no worker was left.
        let work =
            AssertUnwindSafe(handler.run_held(HeldJob { id: &job.id, worker, payload: job.payload.clone() }))
                .catch_unwind()
                .map(|ran| {
                    ran.unwrap_or_else(|panic| {
                        Err(anyhow::anyhow!("the job stopped on a defect: {}", panic_text(&*panic)))
                    })
                });
        // The renewals run beside the work, never instead of it: on SQLite a renewal waits for
        // the one write connection, which the work itself may hold (a seed job between two
        // statements of its transaction). Awaited in turn with the work, a renewal waited out
        // its 10 s for a turn the stalled work could not give back, and every renewal after
        // it did the same, so a job that outlived its first period crawled and starved every
        // other writer of the process.
        let renewals = async {
            // The first renewal one period from now. (Awaiting an interval's immediate first
            // tick instead cost up to a millisecond: tokio's timer fires on millisecond ticks.)
            let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                heartbeat.tick().await;
                if let Err(err) = records.extend_job_lease(&job.id, worker, LEASE_MS).await {
                    tracing::warn!(error = %err, "cannot extend the job's lease");
                }
            }
        };
        let limit = handler.time_limit();
        let work = tokio::time::timeout(limit, work);
        tokio::pin!(work);
        tokio::pin!(renewals);
        tokio::select! {
            biased;
            outcome = &mut work => outcome.map_err(|_| limit),
            never = &mut renewals => never,
        }
    };
    match outcome {
        Err(limit) => {
            tracing::error!(?limit, "job stopped at its time limit");
            let message = time_limit_message(limit);
            if still_held(records, worker, &job).await {
                handler.stopped(job.payload.clone(), &message).await;
            }
            record_failure(records, worker, &job, &message, None).await;
        }
        Ok(Ok(Completion::Recorded)) => {}
        Ok(Ok(Completion::ByWorker)) => {
            if let Err(err) = records.complete_job(&job.id, worker).await {
                tracing::error!(error = %err, "job ran but could not be marked done");
            }
        }
        Ok(Err(err)) => {
            let retry = (job.attempts < job.max_attempts).then(|| backoff_ms(job.attempts));
            tracing::warn!(error = %err, retry_in_ms = ?retry, "job failed");
            let message = format!("{err:#}");
            // As `abandon` does: what the job stood for is marked failed first, then the job
            // (a crash between: the next claim abandons it and does both again). The other
            // order left it in progress for good, and showed the job failed before it was.
            if retry.is_none() && still_held(records, worker, &job).await {
                handler.gave_up(job.payload.clone(), &message).await;
            }
            record_failure(records, worker, &job, &message, retry).await;
        }
    }
}

/// Whether `worker` still holds `job` (its lease renewed once more), before it marks what the
/// job stood for failed: a worker whose renewals failed long enough lost the job to another,
/// whose run decides its end (marked failed here, a write's items the other then embedded
/// kept an event saying they failed). Unknown (the store did not answer): held.
async fn still_held(records: &Records, worker: &str, job: &ClaimedJob) -> bool {
    match records.extend_job_lease(&job.id, worker, LEASE_MS).await {
        Ok(held) => {
            if !held {
                tracing::warn!("the job's lease passed to another worker; its run decides the job's end");
            }
            held
        }
        Err(_) => true,
    }
}

/// What a panic said, when it said it in text.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

async fn record_failure(
    records: &Records,
    worker: &str,
    job: &ClaimedJob,
    message: &str,
    retry_in_ms: Option<i64>,
) {
    if let Err(err) = records.fail_job(&job.id, worker, message, retry_in_ms).await {
        tracing::error!(error = %err, "cannot record the job's failure");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_one_second_and_is_capped() {
        assert_eq!(backoff_ms(1), 1_000);
        assert_eq!(backoff_ms(2), 2_000);
        assert_eq!(backoff_ms(4), 8_000);
        assert_eq!(backoff_ms(40), 300_000);
    }

    /// A job that writes in stretches, holding the one write connection between statements.
    struct WritesInStretches {
        records: Records,
    }

    #[async_trait]
    impl JobHandler for WritesInStretches {
        async fn run(&self, _payload: serde_json::Value) -> anyhow::Result<()> {
            for _ in 0..4 {
                let tx = self.records.begin_write().await?;
                tokio::time::sleep(Duration::from_millis(150)).await;
                tx.commit().await?;
            }
            Ok(())
        }
    }

    /// A record store of its own holding one job of `kind`, claimed by worker `w`.
    async fn one_claimed_job(kind: &str, attempts: i64) -> (tempfile::TempDir, Records, ClaimedJob) {
        let (dir, records) = Records::on_sqlite_for_tests().await;
        records.enqueue_job(kind, &serde_json::json!({}), attempts, None).await.unwrap();
        let job = records.claim_job("w", LEASE_MS).await.unwrap().expect("the job");
        (dir, records, job)
    }

    struct Panics;

    #[async_trait]
    impl JobHandler for Panics {
        async fn run(&self, _payload: serde_json::Value) -> anyhow::Result<()> {
            panic!("an index out of range")
        }
    }

    #[tokio::test]
    async fn a_handler_that_panics_fails_its_attempt_and_the_worker_goes_on() {
        let (_dir, records, job) = one_claimed_job("panics", 2).await;
        let id = job.id.clone();
        run_claimed(&records, "w", &Panics, job).await;
        let state = records.job_state(&id).await.unwrap().expect("state");
        assert_eq!((state.status.as_str(), state.attempts), ("queued", 1), "{state:?}");
        let error = state.last_error.unwrap_or_default();
        assert!(error.contains("the job stopped on a defect: an index out of range"), "{error}");
    }

    /// A handler that never returns, with a time limit of 100 ms; remembers what it gave up.
    #[derive(Default)]
    struct NeverReturns {
        gave_up: std::sync::Mutex<Vec<String>>,
    }

    #[async_trait]
    impl JobHandler for NeverReturns {
        async fn run(&self, _payload: serde_json::Value) -> anyhow::Result<()> {
            std::future::pending().await
        }

        fn time_limit(&self) -> Duration {
            Duration::from_millis(100)
        }

        async fn stopped(&self, _payload: serde_json::Value, message: &str) {
            self.gave_up.lock().unwrap().push(message.to_string());
        }
    }

    #[tokio::test]
    async fn a_job_past_its_time_limit_is_stopped_and_failed_for_good_with_the_reason() {
        let (_dir, records, job) = one_claimed_job("hangs", 3).await;
        let id = job.id.clone();
        let handler = NeverReturns::default();
        let ran = run_renewing(&records, "w", &handler, job, Duration::from_millis(20));
        tokio::time::timeout(Duration::from_secs(10), ran).await.expect("the worker is given back");
        let state = records.job_state(&id).await.unwrap().expect("state");
        assert_eq!(state.status, "failed", "not retried (2 attempts were left): {state:?}");
        let reason = "the job ran for its time limit of 0.1 s and was stopped; it is not retried";
        assert_eq!(state.last_error.as_deref(), Some(reason));
        assert_eq!(*handler.gave_up.lock().unwrap(), [reason], "what it stood for is marked failed");
    }

    #[tokio::test]
    async fn lease_renewals_wait_beside_a_job_holding_the_write_connection_not_instead_of_it() {
        let (_dir, records, job) = one_claimed_job("stretches", 1).await;
        let id = job.id.clone();
        let handler = WritesInStretches { records: records.clone() };
        // Renewals fall due while the job holds the connection. Awaited instead of the job,
        // each waited for its turn (10 s) while the job, not polled, could not give it back.
        let ran = run_renewing(&records, "w", &handler, job, Duration::from_millis(50));
        tokio::time::timeout(Duration::from_secs(5), ran).await.expect("the job ends in its own time");
        assert_eq!(records.job_state(&id).await.unwrap().expect("state").status, "done");
    }
}
