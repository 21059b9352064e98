//! Keeps what a crash leaves to replay small, whatever the graph's size.
//!
//! After a crash (of canon or of the FalkorDB child) Redis loads the append-only file: its
//! snapshot part is decoded (fast), but every query written after the snapshot is run again,
//! one by one. Measured once at 4.2 MB of seed queries (5,000 entities) replayed in 12.7 s,
//! about 0.33 MB/s, before the indexes were built ahead of a replay; since, several MB/s: on
//! 130,000 entities FalkorDB answered 5.1–5.7 s after a crash with 4–10 MB to replay and
//! 7.7–8.0 s with 21.5 MB (`make bench-graph`, 2026-12-02). Redis's own trigger
//! (`auto-aof-rewrite-percentage`) rewrites only once the queries reach a share of the
//! snapshot, so a large graph would replay hundreds of MB. So the supervisor asks for a
//! rewrite itself once the queries since the last snapshot pass [`REPLAY_LIMIT`]: a crash
//! then replays about that much (well under a second), plus whatever was written while a
//! rewrite ran (a rewrite runs in a forked child; on a large graph rewrites follow each other
//! under a steady write load).

use super::resp::{command, info_field};
use std::path::Path;

/// Queries written since the last snapshot past which the supervisor asks for a rewrite.
pub const REPLAY_LIMIT: u64 = 1024 * 1024;

/// Asks the child at `socket` to rewrite its append-only file when the queries written since
/// its last snapshot pass [`REPLAY_LIMIT`] and no rewrite is running or scheduled.
pub async fn bound_replay(socket: &Path) {
    let Ok(info) = command(socket, "INFO persistence").await else { return };
    let number = |field| info_field(&info, field).and_then(|v| v.parse::<u64>().ok());
    let (Some(current), Some(base)) = (number("aof_current_size"), number("aof_base_size")) else {
        return;
    };
    let busy = number("aof_rewrite_in_progress") != Some(0)
        || number("aof_rewrite_scheduled") != Some(0)
        || number("loading") != Some(0);
    let queries = current.saturating_sub(base);
    if busy || queries < REPLAY_LIMIT {
        return;
    }
    match command(socket, "BGREWRITEAOF").await {
        Ok(reply) if !reply.starts_with('-') => {
            tracing::info!(
                queries,
                snapshot = base,
                "FalkorDB's append-only file is being rewritten into a snapshot"
            );
        }
        Ok(reply) => {
            tracing::warn!(reply = reply.trim(), "FalkorDB refused a rewrite of its append-only file")
        }
        Err(err) => tracing::warn!(error = %err, "no answer to a rewrite of FalkorDB's append-only file"),
    }
}
