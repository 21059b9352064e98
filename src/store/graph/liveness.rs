//! Telling a slow graph query from a graph engine that stopped answering (FalkorDB or Neo4j).
//!
//! A stalled engine (SIGSTOP, or the upstream deadlock of FalkorDB's main thread against a
//! graph's write lock) accepts queries and never answers: without a bound every request that
//! needs the graph hangs, and the client's own response timeout (a minute) is far past what a
//! client waits. A plain short timeout would instead cut legitimate long statements (a bulk
//! seed, an index build). So a query that has not answered after [`FIRST_CHECK`] makes canon
//! ask the server, on a connection of its own, a question it answers at once whatever it runs
//! ([`Probe`]: `INFO server` on FalkorDB, which Redis answers on its main thread while queries
//! run on FalkorDB's own threads; `RETURN 1` on Neo4j, on a Bolt session of its own).
//! An answer means "busy": the query is waited for, checked again every [`CHECK_EVERY`]. No
//! answer within [`PROBE_LIMIT`] means "stalled": the query ends with
//! [`GraphError::Stalled`] (503 with `Retry-After`), within [`STALL_ANSWER`] of its start.
//! While the last probe failed, later queries probe first (at most once per
//! [`PROBE_FRESH`]) and fail at once instead of each waiting out the stall.
//!
//! Writes on FalkorDB are not cut by a failed probe: a large write holds Redis' main lock
//! while it commits (a million-node CREATE on a loaded machine kept `INFO` unanswered for over
//! 2 s), so a silent server may be one finishing a write, and a 503 would tell the client that
//! a write which then lands had failed. A write on a stalled FalkorDB waits for the client's
//! own response timeout (60 s, `GraphError::Unavailable`, 503) instead. Neo4j answers its probe
//! on a thread of its own whatever a write holds, so there writes are cut like reads
//! (`cuts_writes`); a write cut while the server was stalled may still commit when
//! it resumes (as a write cut by any timeout may).
//!
//! Reads on FalkorDB wait behind such a commit too, and its probe goes unanswered meanwhile: a
//! bench writing relations under load once got 503 for 5,804 of 20,000 requests that way. So a
//! failed probe is excused, as the embedded child's supervisor excuses a silent PING, while a
//! write that was already waiting when the server last answered (a probe or any query) is
//! still within its own response timeout ([`WritesInFlight::excuse_silence_since`]): the read
//! is waited for, checked again each second. A write sent during the silence excuses nothing,
//! so a stalled server still ends reads within that write's 60 s.

use super::writes_in_flight::WritesInFlight;
use super::GraphError;
use async_trait::async_trait;
use falkordb::{ConnectionStrategy, FalkorAsyncClient, FalkorClientBuilder, FalkorConnectionInfo};
use std::future::Future;
use std::num::NonZeroU8;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How long a query runs before canon asks whether the server still answers.
pub const FIRST_CHECK: Duration = Duration::from_secs(5);
/// How long the liveness probe may take before the server counts as stalled.
pub const PROBE_LIMIT: Duration = Duration::from_secs(2);
/// How often a query that runs on (the server answering) is checked again.
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// How long one probe's verdict stands for other queries.
const PROBE_FRESH: Duration = Duration::from_secs(1);
/// The longest a query on a stalled server waits for its 503 (README, `### Limits`).
pub const STALL_ANSWER: Duration = Duration::from_secs(7);

/// A question the engine answers at once whatever it is running, asked on a connection used by
/// nothing else, so it never queues behind a query on a shared socket.
#[async_trait]
pub trait Probe: Send + Sync + 'static {
    /// Asks it once (connecting first when there is no connection); [`Liveness`] bounds the wait.
    async fn ask(&self) -> Result<(), String>;
    /// Drops the connection after a failed or cut question: a connection to a server that
    /// died stays dead, and one cut mid-question is out of step, so the next question
    /// connects anew (to the restarted server).
    async fn forget(&self);
}

/// Probes one graph server and bounds queries by its verdict.
pub struct Liveness {
    probe: Box<dyn Probe>,
    /// The engine's name, for the log.
    engine: &'static str,
    /// Whether a failed probe ends writes too (see the module's docs).
    cuts_writes: bool,
    /// One probe at a time; the others reuse its verdict.
    probing: tokio::sync::Mutex<()>,
    /// The last probe: when, and whether the server answered.
    last: std::sync::Mutex<Option<(Instant, bool)>>,
    /// Writes waiting for their answer, which may hold the server silent (FalkorDB only), and
    /// how long a write may wait for its answer.
    writes: Option<(Arc<WritesInFlight>, Duration)>,
    /// When the server last answered anything: a probe, or a query that completed.
    answered_at: std::sync::Mutex<Instant>,
}

impl Liveness {
    /// Liveness of a FalkorDB server, its probe connected now (an error when it does not answer).
    pub async fn connect(info: FalkorConnectionInfo) -> Result<Self, GraphError> {
        let probe =
            probe_client(info.clone()).await.map_err(|err| GraphError::Unavailable(err.to_string()))?;
        let probe = FalkorProbe { info, client: tokio::sync::Mutex::new(Some(probe)) };
        Ok(Self::new(Box::new(probe), "FalkorDB", false))
    }

    /// Liveness by `probe`; `cuts_writes` when a failed probe means the engine cannot be
    /// finishing a write (see the module's docs).
    pub fn new(probe: Box<dyn Probe>, engine: &'static str, cuts_writes: bool) -> Self {
        Self {
            probe,
            engine,
            cuts_writes,
            probing: tokio::sync::Mutex::new(()),
            last: std::sync::Mutex::new(None),
            writes: None,
            answered_at: std::sync::Mutex::new(Instant::now()),
        }
    }

    /// Excuses a failed probe while one of `writes`, younger than `limit` (a write's response
    /// timeout), may be committing (see the module's docs).
    pub fn excused_by(mut self, writes: Arc<WritesInFlight>, limit: Duration) -> Self {
        self.writes = Some((writes, limit));
        self
    }

    /// Runs `work`, ending it with [`GraphError::Stalled`] when the server stops answering,
    /// unless it `writes` on an engine whose writes are not cut (see the module's docs).
    pub async fn bound<T>(
        &self,
        writes: bool,
        work: impl Future<Output = Result<T, GraphError>>,
    ) -> Result<T, GraphError> {
        if writes && !self.cuts_writes {
            return work.await;
        }
        if self.last_failed() && !self.answering().await {
            return Err(stalled(Duration::ZERO));
        }
        let started = Instant::now();
        let work = std::pin::pin!(work);
        let mut work = work;
        let mut check_at = started + FIRST_CHECK;
        loop {
            tokio::select! {
                biased;
                result = &mut work => {
                    if result.is_ok() {
                        self.heard_now();
                    }
                    return result;
                }
                () = tokio::time::sleep_until(check_at) => {}
            }
            if !self.answering().await {
                tracing::warn!(engine = self.engine, waited = ?started.elapsed(), "graph engine stopped answering; the query ends with 503");
                return Err(stalled(started.elapsed()));
            }
            check_at = Instant::now() + CHECK_EVERY;
        }
    }

    fn heard_now(&self) {
        if let Ok(mut at) = self.answered_at.lock() {
            *at = Instant::now();
        }
    }

    /// Whether a silent server may be committing a write canon sent before it fell silent.
    fn silence_excused(&self) -> bool {
        let Some((writes, limit)) = &self.writes else { return false };
        let Ok(answered_at) = self.answered_at.lock().map(|at| *at) else { return false };
        writes.excuse_silence_since(answered_at, *limit)
    }

    fn last_failed(&self) -> bool {
        self.last.lock().map(|last| matches!(*last, Some((_, false)))).unwrap_or(false)
    }

    /// Whether the server answers the probe within [`PROBE_LIMIT`] (a fresh verdict of
    /// another query's probe counts).
    async fn answering(&self) -> bool {
        let _probing = self.probing.lock().await;
        let fresh = self.last.lock().ok().and_then(|last| *last).filter(|(at, _)| at.elapsed() < PROBE_FRESH);
        if let Some((_, answered)) = fresh {
            return answered;
        }
        let reply = tokio::time::timeout(PROBE_LIMIT, self.probe.ask()).await;
        let mut answered = matches!(reply, Ok(Ok(())));
        if answered {
            self.heard_now();
        } else {
            self.probe.forget().await;
            if self.silence_excused() {
                tracing::info!(engine = self.engine, "graph engine silent while a write commits; waiting");
                answered = true;
            }
        }
        let was_failing = self.last_failed();
        if let Ok(mut last) = self.last.lock() {
            *last = Some((Instant::now(), answered));
        }
        if answered && was_failing {
            tracing::info!(engine = self.engine, "graph engine answers again");
        } else if !answered && !was_failing {
            let reason = match reply {
                Ok(Err(error)) => error,
                _ => format!("no answer within {PROBE_LIMIT:?}"),
            };
            tracing::warn!(engine = self.engine, %reason, "graph engine liveness probe failed");
        }
        answered
    }
}

/// FalkorDB's probe: `INFO server` on a client of one connection.
struct FalkorProbe {
    info: FalkorConnectionInfo,
    client: tokio::sync::Mutex<Option<FalkorAsyncClient>>,
}

#[async_trait]
impl Probe for FalkorProbe {
    async fn ask(&self) -> Result<(), String> {
        let mut client = self.client.lock().await;
        if client.is_none() {
            *client = Some(probe_client(self.info.clone()).await.map_err(|err| err.to_string())?);
        }
        match client.as_ref() {
            Some(client) => client.redis_info(Some("server")).await.map(drop).map_err(|err| err.to_string()),
            None => Err(falkordb::FalkorDBError::NoConnection.to_string()),
        }
    }

    async fn forget(&self) {
        *self.client.lock().await = None;
    }
}

async fn probe_client(info: FalkorConnectionInfo) -> Result<FalkorAsyncClient, falkordb::FalkorDBError> {
    FalkorClientBuilder::new_async()
        .with_connection_info(info)
        .with_connection_strategy(ConnectionStrategy::Pooled { size: NonZeroU8::MIN })
        .with_connect_timeout(Some(PROBE_LIMIT))
        .with_response_timeout(Some(PROBE_LIMIT))
        .build()
        .await
}

fn stalled(waited: Duration) -> GraphError {
    GraphError::Stalled(format!(
        "no answer after {:.1} s and no answer to a liveness probe within {PROBE_LIMIT:?}",
        waited.as_secs_f64()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt as _;

    #[test]
    fn a_stalled_query_is_answered_within_the_stated_bound() {
        assert!(FIRST_CHECK + PROBE_LIMIT <= STALL_ANSWER);
        assert!(STALL_ANSWER < Duration::from_secs(10), "the issue's bound for a 503");
    }

    /// A server that accepts the question and never answers (stalled, or committing a write).
    struct Silent;

    #[async_trait]
    impl Probe for Silent {
        async fn ask(&self) -> Result<(), String> {
            std::future::pending().await
        }
        async fn forget(&self) {}
    }

    fn silent_falkordb(writes: &Arc<WritesInFlight>) -> Liveness {
        Liveness::new(Box::new(Silent), "FalkorDB", false).excused_by(writes.clone(), Duration::from_secs(60))
    }

    #[tokio::test]
    async fn a_read_behind_a_write_sent_before_the_silence_waits_instead_of_failing() {
        let writes = Arc::new(WritesInFlight::default());
        let liveness = silent_falkordb(&writes);
        let _write = writes.begin();
        tokio::time::sleep(Duration::from_millis(5)).await;
        liveness.bound(false, async { Ok(()) }).await.expect("the server answers a read");
        // Past the first check, so the silent probe is asked (and excused) at least once.
        let read = tokio::time::sleep(FIRST_CHECK + Duration::from_millis(1_500)).map(Ok);
        liveness.bound(false, read).await.expect("the read is waited for while the write may commit");
    }

    #[tokio::test]
    async fn a_silent_server_with_no_write_waiting_counts_as_stalled() {
        let writes = Arc::new(WritesInFlight::default());
        assert!(!silent_falkordb(&writes).answering().await);
    }

    #[tokio::test]
    async fn a_write_sent_after_the_server_last_answered_excuses_nothing() {
        let writes = Arc::new(WritesInFlight::default());
        let liveness = silent_falkordb(&writes);
        tokio::time::sleep(Duration::from_millis(5)).await;
        let _write = writes.begin();
        assert!(!liveness.answering().await, "a stream of new writes must not hide a hang");
    }
}
