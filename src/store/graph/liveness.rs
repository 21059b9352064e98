//! Telling a slow FalkorDB query from a FalkorDB that stopped answering.
//!
//! A stalled engine (SIGSTOP, or the upstream deadlock of its main thread against a graph's
//! write lock) accepts queries and never answers: without a bound every request that needs
//! the graph hangs, and the client's own response timeout (a minute) is far past what a
//! client waits. A plain short timeout would instead cut legitimate long statements (a bulk
//! seed, an index build). So a query that has not answered after [`FIRST_CHECK`] makes canon
//! ask the server, on a connection of its own, for `INFO server`: Redis answers that on its
//! main thread, which a running query does not hold (queries run on FalkorDB's own threads).
//! An answer means "busy": the query is waited for, checked again every [`CHECK_EVERY`]. No
//! answer within [`PROBE_LIMIT`] means "stalled": the query ends with
//! [`GraphError::Stalled`] (503 with `Retry-After`), within [`STALL_ANSWER`] of its start.
//! While the last probe failed, later queries probe first (at most once per
//! [`PROBE_FRESH`]) and fail at once instead of each waiting out the stall.
//!
//! Writes are not cut by a failed probe: a large write holds Redis' main lock while it
//! commits (a million-node CREATE on a loaded machine kept `INFO` unanswered for over 2 s),
//! so a silent server may be one finishing a write, and a 503 would tell the client that a
//! write which then lands had failed. A write on a stalled server waits for the client's own
//! response timeout (60 s, `GraphError::Unavailable`, 503) instead.

use super::GraphError;
use falkordb::{ConnectionStrategy, FalkorAsyncClient, FalkorClientBuilder, FalkorConnectionInfo};
use std::future::Future;
use std::num::NonZeroU8;
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

/// Probes one FalkorDB server on a connection used by nothing else, so the probe never
/// queues behind a query on a shared socket.
pub struct Liveness {
    info: FalkorConnectionInfo,
    /// The probe's own client, dropped when a probe fails: a pooled connection to a server
    /// that died stays dead, so the next probe connects anew (to the restarted server).
    probe: tokio::sync::Mutex<Option<FalkorAsyncClient>>,
    /// The last probe: when, and whether the server answered.
    last: std::sync::Mutex<Option<(Instant, bool)>>,
}

impl Liveness {
    pub async fn connect(info: FalkorConnectionInfo) -> Result<Self, GraphError> {
        let probe =
            probe_client(info.clone()).await.map_err(|err| GraphError::Unavailable(err.to_string()))?;
        Ok(Self { info, probe: tokio::sync::Mutex::new(Some(probe)), last: std::sync::Mutex::new(None) })
    }

    /// Runs `work`, ending it with [`GraphError::Stalled`] when the server stops answering,
    /// unless it `writes` (see the module's docs).
    pub async fn bound<T>(
        &self,
        writes: bool,
        work: impl Future<Output = Result<T, GraphError>>,
    ) -> Result<T, GraphError> {
        if writes {
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
                result = &mut work => return result,
                () = tokio::time::sleep_until(check_at) => {}
            }
            if !self.answering().await {
                tracing::warn!(waited = ?started.elapsed(), "FalkorDB stopped answering; the query ends with 503");
                return Err(stalled(started.elapsed()));
            }
            check_at = Instant::now() + CHECK_EVERY;
        }
    }

    fn last_failed(&self) -> bool {
        self.last.lock().map(|last| matches!(*last, Some((_, false)))).unwrap_or(false)
    }

    /// Whether the server answers `INFO server` within [`PROBE_LIMIT`] (a fresh verdict of
    /// another query's probe counts).
    async fn answering(&self) -> bool {
        // One probe at a time; the others reuse its verdict.
        let mut probe = self.probe.lock().await;
        let fresh = self.last.lock().ok().and_then(|last| *last).filter(|(at, _)| at.elapsed() < PROBE_FRESH);
        if let Some((_, answered)) = fresh {
            return answered;
        }
        let reply = tokio::time::timeout(PROBE_LIMIT, async {
            if probe.is_none() {
                *probe = Some(probe_client(self.info.clone()).await?);
            }
            match probe.as_ref() {
                Some(client) => client.redis_info(Some("server")).await.map(|_| ()),
                None => Err(falkordb::FalkorDBError::NoConnection),
            }
        })
        .await;
        let answered = matches!(reply, Ok(Ok(())));
        if !answered {
            *probe = None;
        }
        let was_failing = self.last_failed();
        if let Ok(mut last) = self.last.lock() {
            *last = Some((Instant::now(), answered));
        }
        if answered && was_failing {
            tracing::info!("FalkorDB answers again");
        }
        answered
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

    #[test]
    fn a_stalled_query_is_answered_within_the_stated_bound() {
        assert!(FIRST_CHECK + PROBE_LIMIT <= STALL_ANSWER);
        assert!(STALL_ANSWER < Duration::from_secs(10), "the issue's bound for a 503");
    }
}
