//! `POST /v3/entities/bulk` behaviour: small batches are seeded in the request; larger ones
//! become a seed job on the durable queue, processed chunk by chunk with progress saved
//! after each, so a restart resumes where it stopped and no row is applied twice (rows
//! carry a tag that makes a replayed chunk report what it did the first time).

use crate::error::{ServiceError, ServiceResult};
use crate::graph::seed::{SeedRowResult, SeedSummary, TypeCache, MAX_ROWS, SYNC_LIMIT};
use crate::graph::{GraphService, Tenant};
use crate::ids;
use crate::jobs::JobHandler;
use crate::store::records::keys::Environment;
use crate::store::records::Records;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use utoipa::ToSchema;

/// The job kind that runs seed jobs.
pub const SEED_JOB_KIND: &str = "entities.seed";
/// Rows a seed job processes between two saves of its progress: four statements, of which
/// the seed keeps one ahead of the engine (see `WaveKeys` in `seed/pipeline.rs`); at a save
/// that pipeline empties (1,000 rows, two statements, left half the seed without one ahead).
/// A crash replays at most these rows, which the rows' tags make idempotent. Tried on
/// 2026-12-04 and not kept: 5,000, for fewer empty pipelines on Neo4j; alternated in one
/// sitting the Neo4j seed bench read 0.92, 0.90, 0.87, 0.82, 0.95, 0.84 with it and 0.84,
/// 0.91, 0.91, 0.87, 0.86 without: no difference beyond the machine's noise.
const JOB_CHUNK: usize = 2_000;
/// Rows of a job's first chunk, and the most its last one holds: one statement. The engine
/// gets a fresh job's first statement once 500 rows are prepared, not 2,000 (~13 ms, when the
/// first requests of a bulk load also want the CPU), and a job completes soon after its last
/// statement is answered: recording that chunk (its events and results, ~20 ms for 2,000
/// rows) is the one step of a job the engine does not overlap.
const EDGE_CHUNK: usize = 500;

/// Where the chunk that starts at row `start` of a job of `total` rows ends.
fn chunk_end(start: usize, total: usize) -> usize {
    let end = if start == 0 { EDGE_CHUNK } else { start + JOB_CHUNK };
    match end + EDGE_CHUNK >= total {
        // This chunk reaches the job's last EDGE_CHUNK rows: it is the last, or stops short
        // of them so the last is small.
        true if total - start <= EDGE_CHUNK => total,
        true => total - EDGE_CHUNK,
        false => end,
    }
}

/// Rows of seed jobs submitted to this instance and not run yet: the worker that runs one here
/// takes them instead of reading back and parsing what the request has just stored (~10 ms
/// for 10,000 rows, before the engine had the job's first statement). A job run by another
/// instance, after a restart or on a retry reads its stored rows. Bounded: past `HELD_JOBS`,
/// or once held `HELD_FOR`, rows are dropped (their job reads the store).
#[derive(Clone, Default)]
struct HeldRows(Arc<Mutex<VecDeque<Held>>>);

/// A job's ID, when its rows were held, and the rows.
type Held = (String, Instant, Vec<Value>);

const HELD_JOBS: usize = 8;
const HELD_FOR: Duration = Duration::from_secs(60);

impl HeldRows {
    fn hold(&self, id: &str, rows: Vec<Value>) {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        held.retain(|(_, since, _)| since.elapsed() < HELD_FOR);
        if held.len() >= HELD_JOBS {
            held.pop_front();
        }
        held.push_back((id.to_string(), Instant::now(), rows));
    }

    fn take(&self, id: &str) -> Option<Vec<Value>> {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let at = held.iter().position(|(held_id, _, _)| held_id == id)?;
        held.remove(at).map(|(_, _, rows)| rows)
    }
}

/// Results of a batch seeded in the request.
#[derive(Debug, Serialize, ToSchema)]
pub struct SeedResults {
    pub results: Vec<SeedRowResult>,
    pub summary: SeedSummary,
}

/// A batch accepted for asynchronous seeding.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedAccepted {
    #[serde(rename = "seedJobID")]
    pub seed_job_id: String,
    pub status: String,
    #[serde(rename = "statusURL")]
    pub status_url: String,
}

pub enum Submitted {
    Done(SeedResults),
    Queued(SeedAccepted),
}

/// Progress of a seed job (`GET /v3/entities/seed/{id}`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeedStatus {
    #[serde(rename = "seedJobID")]
    pub seed_job_id: String,
    /// `pending`, `processing`, `completed` or `failed`.
    pub status: String,
    pub total_rows: i64,
    pub processed_rows: i64,
    pub created_count: usize,
    pub merged_count: usize,
    pub rejected_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Per-row outcomes, once completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<SeedRowResult>>,
}

#[derive(Clone)]
pub struct SeedService {
    graph: Arc<GraphService>,
    records: Records,
    held: HeldRows,
    /// Seed jobs one account may have waiting ([`crate::jobs::QUEUE_BOUNDS`]).
    queued_most: usize,
}

impl SeedService {
    pub fn new(graph: Arc<GraphService>, records: Records) -> Self {
        Self { graph, records, held: HeldRows::default(), queued_most: crate::jobs::QUEUE_BOUNDS.seeds }
    }

    /// This service with another bound on waiting seed jobs (tests reach it with a small one).
    pub fn with_queued_most(mut self, most: usize) -> Self {
        self.queued_most = most;
        self
    }

    pub async fn submit(
        &self,
        tenant: &Tenant,
        bucket: Option<&str>,
        on_conflict: Option<&str>,
        rows: Vec<Value>,
    ) -> ServiceResult<Submitted> {
        if on_conflict.is_some_and(|c| c != "merge") {
            return Err(ServiceError::invalid_field("onConflict", "only \"merge\" is supported"));
        }
        if rows.is_empty() || rows.len() > MAX_ROWS {
            return Err(ServiceError::invalid_field(
                "entities",
                format!("must hold between 1 and {MAX_ROWS} rows"),
            ));
        }
        // Hostile text refuses the whole request up front, before a seed job stores it.
        for (i, row) in rows.iter().enumerate() {
            crate::text::check_json(&format!("entities[{i}]"), row)?;
        }
        let bucket_id = self.graph.write_bucket(tenant, bucket).await?;
        if rows.len() < SYNC_LIMIT {
            let tag = ids::new_id("sync");
            let results = self.graph.seed_rows(tenant, &bucket_id, &rows, &tag, 0).await?;
            let summary = SeedSummary::of(&results);
            return Ok(Submitted::Done(SeedResults { results, summary }));
        }
        let room = crate::jobs::QueueRoom {
            kind: SEED_JOB_KIND,
            what: "seed jobs",
            limit: "queuedSeedJobsPerAccount",
            most: self.queued_most,
        };
        room.check(&self.records, &tenant.account_id, 1).await?;
        let id = ids::new_id("esj");
        self.records
            .create_seed_job(&id, &tenant.account_id, tenant.environment.as_str(), &bucket_id, &rows)
            .await?;
        self.held.hold(&id, rows);
        let payload = serde_json::json!({ "seedJobID": id });
        self.records.enqueue_job(SEED_JOB_KIND, &payload, 10, Some(&tenant.account_id)).await?;
        // An idle worker takes it now, not at its next look (each looks every 200 ms; with
        // eight idle, ~20 ms later on average: no change measured in the bench's seed ratio).
        crate::jobs::wake();
        Ok(Submitted::Queued(SeedAccepted {
            status_url: format!("/v3/entities/seed/{id}"),
            seed_job_id: id,
            status: "pending".into(),
        }))
    }

    /// A seed job's progress, with its per-row results once it has completed. A poll of a
    /// running job reads the counts saved with each chunk, not the results so far.
    pub async fn status(&self, tenant: &Tenant, id: &str) -> ServiceResult<SeedStatus> {
        let (account, environment) = (tenant.account_id.as_str(), tenant.environment.as_str());
        let job = self
            .records
            .seed_job_progress(id, account, environment)
            .await?
            .ok_or_else(|| ServiceError::not_found("seed job", id))?;
        let results =
            match job.status.as_str() {
                // A completed job's results never change again.
                "completed" => self.records.seed_job(id, account, environment).await?.map(|done| {
                    done.results.iter().filter_map(|r| SeedRowResult::deserialize(r).ok()).collect()
                }),
                _ => None,
            };
        let count = |n: i64| usize::try_from(n).unwrap_or_default();
        Ok(SeedStatus {
            seed_job_id: id.to_string(),
            total_rows: job.total_rows,
            processed_rows: job.processed_rows,
            created_count: count(job.counts.created),
            merged_count: count(job.counts.merged),
            rejected_count: count(job.counts.rejected),
            error: job.error,
            results,
            status: job.status,
        })
    }

    /// Runs (or resumes) a seed job from its first unsaved chunk. A chunk's entity events and
    /// results are recorded while the next chunk is written (and the one after it prepared),
    /// so the graph engine is not left idle during the record store's writes (one after the
    /// other, bulk seeding ran at 0.67 of the engine's own rate). Events are recorded before
    /// the chunk counts as done: a crash between the two replays the chunk, which tags and
    /// event IDs make idempotent.
    async fn run_job(&self, id: &str) -> anyhow::Result<()> {
        let held = self.held.take(id);
        let mut job = self
            .records
            .seed_job_to_run(id, held.is_none())
            .await?
            .ok_or_else(|| anyhow::anyhow!("seed job {id} does not exist"))?;
        if let Some(rows) = held {
            job.rows = rows;
        }
        anyhow::ensure!(
            job.rows.len() as i64 == job.total_rows,
            "seed job {id} holds {} of its {} rows",
            job.rows.len(),
            job.total_rows
        );
        let environment =
            Environment::parse(&job.environment).ok_or_else(|| anyhow::anyhow!("bad environment"))?;
        let tenant = Tenant { account_id: job.account_id.clone(), environment };
        let mut processed = job.processed_rows as usize;
        let mut unrecorded: Option<SeededChunk> = None;
        let mut types = TypeCache::default();
        let (graph, bucket_id) = (&self.graph, job.bucket_id.as_str());
        let mut next = None;
        while processed < job.rows.len() {
            let end = chunk_end(processed, job.rows.len());
            let rows = &job.rows[processed..end];
            let began = Instant::now();
            let prepared = match next.take() {
                Some(prepared) => prepared,
                None => graph.prepare_rows(&tenant, bucket_id, rows, &job.id, processed, &mut types).await,
            };
            let seeding = async {
                let seeded = graph.write_prepared(&tenant, rows, prepared).await;
                (seeded, began.elapsed())
            };
            // The next chunk is prepared while this one is written, so the engine has its first
            // statement at once when this one's last is answered.
            let following = &job.rows[end..chunk_end(end, job.rows.len())];
            let types = &mut types;
            let preparing = async {
                if following.is_empty() {
                    return None;
                }
                Some(graph.prepare_rows(&tenant, bucket_id, following, &job.id, end, types).await)
            };
            let (tenant, job_id) = (&tenant, job.id.as_str());
            let recording = |chunk| async move {
                let recorded = self.record(tenant, job_id, chunk).await;
                (recorded, began.elapsed())
            };
            let ((seeded, seed_time), record_time) = match unrecorded.take() {
                Some(chunk) => {
                    let (seeded, prepared, (recorded, took)) =
                        tokio::join!(seeding, preparing, recording(chunk));
                    next = prepared;
                    recorded?;
                    (seeded, Some(took))
                }
                None => {
                    let (seeded, prepared) = tokio::join!(seeding, preparing);
                    next = prepared;
                    (seeded, None)
                }
            };
            // Where a chunk's time goes (CANON_LOG=canon::graph::seeding=debug): seeding it, and
            // recording the chunk before it beside that.
            tracing::debug!(job = id, rows = rows.len(), ?seed_time, ?record_time, "seed chunk");
            let (results, proposed) = seeded.map_err(|err| anyhow::anyhow!("{err}"))?;
            let status = if end == job.rows.len() { "completed" } else { "processing" };
            unrecorded = Some(SeededChunk { status, first_row: processed, results, proposed });
            processed = end;
        }
        if let Some(chunk) = unrecorded {
            self.record(&tenant, &job.id, chunk).await?;
        }
        if job.status != "completed" {
            let none: &[SeedRowResult] = &[];
            self.records.save_seed_progress(&job.id, "completed", processed as i64, none, None).await?;
        }
        Ok(())
    }

    /// Announces a seeded chunk's new entities, then saves its results and the job's progress.
    async fn record(&self, tenant: &Tenant, job_id: &str, chunk: SeededChunk) -> anyhow::Result<()> {
        self.graph.emit(tenant, chunk.proposed).await;
        let first_row = chunk.first_row as i64;
        Ok(self.records.save_seed_progress(job_id, chunk.status, first_row, &chunk.results, None).await?)
    }
}

/// A chunk written to the graph whose events and results are not recorded yet.
struct SeededChunk {
    status: &'static str,
    first_row: usize,
    results: Vec<crate::graph::seed::SeedRowResult>,
    proposed: Vec<crate::graph::events::StatusChange>,
}

/// What a tenant reads on a seed job whose run failed. The cause (a store's error) is logged
/// with the job's ID, never shown: it may name the server's internals.
const RUN_FAILED: &str = "writing the rows failed on the server's side; the job is retried";
const GAVE_UP: &str = "writing the rows failed on the server's side at every attempt; the rows after processedRows were not seeded: send them again";

#[async_trait]
impl JobHandler for SeedService {
    async fn run(&self, payload: Value) -> anyhow::Result<()> {
        let id = payload["seedJobID"].as_str().ok_or_else(|| anyhow::anyhow!("payload without seedJobID"))?;
        let outcome = self.run_job(id).await;
        if let Err(error) = &outcome {
            tracing::warn!(error = format!("{error:#}"), seed_job = id, "seed run failed; it is retried");
            // Shown while the job waits for its retry; its next saved chunk clears it.
            self.note_failure(id, false, RUN_FAILED).await;
        }
        outcome
    }

    async fn gave_up(&self, payload: Value, error: &str) {
        if let Some(id) = payload["seedJobID"].as_str() {
            tracing::error!(error, seed_job = id, "seed job given up");
            self.note_failure(id, true, GAVE_UP).await;
        }
    }

    /// `message` is written for the tenant (how often the worker stopped): shown as it is.
    async fn abandoned(&self, payload: Value, message: &str) {
        if let Some(id) = payload["seedJobID"].as_str() {
            self.note_failure(id, true, message).await;
        }
    }

    /// `message` is written for the tenant (the time limit). The chunk being written when it
    /// was stopped may be in the graph already, uncounted: the rows after processedRows are
    /// to be sent again (seeding merges by name, so none is seeded twice).
    async fn stopped(&self, payload: Value, message: &str) {
        if let Some(id) = payload["seedJobID"].as_str() {
            let shown = format!(
                "{message}: the rows after processedRows may be seeded in part; send them again \
                 (seeding merges them by name)"
            );
            self.note_failure(id, true, &shown).await;
        }
    }
}

impl SeedService {
    /// Records a run's failure on the seed job (see `note_seed_failure`); a failure to record
    /// it is logged, the job's own error being the one that matters.
    async fn note_failure(&self, id: &str, failed: bool, error: &str) {
        if let Err(err) = self.records.note_seed_failure(id, failed, error).await {
            tracing::error!(error = %err, seed_job = id, "cannot record the seed job's failure");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(total: usize) -> Vec<usize> {
        let (mut start, mut sizes) = (0, Vec::new());
        while start < total {
            let end = chunk_end(start, total);
            sizes.push(end - start);
            start = end;
        }
        sizes
    }

    #[test]
    fn a_job_starts_and_ends_on_one_statement_and_saves_every_2000_rows_between() {
        assert_eq!(chunks(10_000), [500, 2000, 2000, 2000, 2000, 1000, 500]);
        assert_eq!(chunks(5_000), [500, 2000, 2000, 500]);
        assert_eq!(chunks(2_700), [500, 1700, 500]);
        assert_eq!(chunks(900), [400, 500]);
        assert_eq!(chunks(300), [300]);
        for total in 100..3_000 {
            let sizes = chunks(total);
            assert_eq!(sizes.iter().sum::<usize>(), total, "every row of {total}, once");
            assert!(sizes.iter().all(|&n| n > 0 && n <= JOB_CHUNK), "{total}: {sizes:?}");
            assert!(sizes[0] <= EDGE_CHUNK && *sizes.last().unwrap() <= EDGE_CHUNK, "{total}: {sizes:?}");
        }
    }

    #[test]
    fn held_rows_are_taken_once_and_the_oldest_give_way() {
        let held = HeldRows::default();
        for n in 0..=HELD_JOBS {
            held.hold(&format!("esj_{n}"), vec![Value::from(n)]);
        }
        assert_eq!(held.take("esj_0"), None, "the oldest gave way to the ninth");
        assert_eq!(held.take("esj_1"), Some(vec![Value::from(1)]));
        assert_eq!(held.take("esj_1"), None, "taken once: a retry reads the store");
    }
}
