//! SQLite's WAL checkpoints, off the write path. By default SQLite checkpoints in the
//! connection whose commit grows the WAL past 1,000 pages: that commit copies the WAL into
//! the database and syncs both files, and every other write of this process waits behind it
//! for its turn on the one write connection (see [`writer`](super::writer)). On a disk where
//! a sync takes milliseconds, that made the writes of quick calls queue behind it (calls
//! bench, SQLite on a slow disk and the send node's folder on a tmpfs, 3 runs each: 434–498
//! calls/s at 8 in flight, sequential p99 ~20 ms, against 566–624 calls/s with checkpoints
//! off the write path).
//!
//! So the write connection leaves checkpoints to a task of its own, on a connection of its
//! own: a PASSIVE checkpoint takes no write lock, so writes go on while it copies and syncs.
//! The write connection keeps a backstop ([`BACKSTOP_PAGES`]) should the task fall behind
//! or stop. Durability is SQLite's for WAL with `synchronous = NORMAL` either way: a commit
//! survives a crash of canon at once, and an OS crash once a checkpoint synced it.
//!
//! Every 100 ms. Tried on 2026-12-04 and not kept: once a second. Beside a graph engine on
//! the same disk it helped the engine's commits (during the API's side of the Neo4j seed
//! bench, with SQLite records, the disk saw 102–139 writes and 19–24 flushes a second instead
//! of 245–295 and 27–35, and the seed ratio went 0.82–0.95, median 0.88 in nine runs, to
//! 0.90–1.06 in five), but deliveries, on SQLite alone, fell: alternated in one sitting,
//! 0.84 / 0.84 / 0.82 of the plain client at 100 ms against 0.84 / 0.70 / 0.77 at 1 s. The
//! production pair (Neo4j with PostgreSQL) does not share this, and did no better: with the
//! records on a PostgreSQL that syncs each commit, the seed ratio was 0.84 and 0.76 (0.78 with
//! `synchronous_commit = off`) beside SQLite's 0.84 in the same sitting.

use super::single_writer::SingleWriter;
use super::RecordError;
use sqlx::AnyConnection;
use std::sync::Weak;
use std::time::Duration;
use tokio::sync::Mutex;

/// How often the task checkpoints what was written since (see the module's docs).
const EVERY: Duration = Duration::from_millis(100);

/// WAL pages past which the write connection checkpoints itself (SQLite's own default is
/// 1,000): only when the task cannot keep up.
pub(super) const BACKSTOP_PAGES: u32 = 20_000;

/// Checkpoints on `conn` every [`EVERY`] until the write connection it serves is gone.
pub(super) fn spawn(mut conn: AnyConnection, writer: Weak<Mutex<SingleWriter>>) {
    tokio::spawn(async move {
        let mut failing = false;
        loop {
            tokio::time::sleep(EVERY).await;
            if writer.strong_count() == 0 {
                break;
            }
            match checkpoint(&mut conn).await {
                Ok(()) => failing = false,
                // Once per run of failures: the backstop still checkpoints meanwhile.
                Err(err) if !failing => {
                    failing = true;
                    tracing::warn!(error = %err, "WAL checkpoint failed; retrying");
                }
                Err(_) => {}
            }
        }
    });
}

/// Copies what the WAL holds beyond the last checkpoint into the database (a no-op, without
/// syncs, when nothing is new).
async fn checkpoint(conn: &mut AnyConnection) -> Result<(), RecordError> {
    sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(conn).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Records;
    use sqlx::{Connection, Row};
    use std::time::{Duration, Instant};

    /// What a copy of the database file alone (as a file backup takes it) holds of table `t`.
    async fn rows_in_the_file_alone(dir: &std::path::Path) -> i64 {
        let copy = tempfile::tempdir().unwrap();
        std::fs::copy(dir.join(crate::data_dir::SQLITE_FILE), copy.path().join("copy.sqlite")).unwrap();
        let url = format!("sqlite://{}", copy.path().join("copy.sqlite").display());
        let mut conn = sqlx::AnyConnection::connect(&url).await.unwrap();
        let row = sqlx::query("SELECT count(*) AS n FROM sqlite_master WHERE name = 't'")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        if row.get::<i64, _>("n") == 0 {
            return 0;
        }
        sqlx::query("SELECT count(*) AS n FROM t").fetch_one(&mut conn).await.unwrap().get("n")
    }

    /// Writes `rows` rows of table `t` through `store`, then waits until a copy of the
    /// database file alone holds them: a checkpoint moved them out of the WAL. The wait is
    /// bounded (60 s) to catch a checkpoint that never comes, not to time one: with builds
    /// writing to the same disk, a checkpoint's sync took over 5 s (the bound was 5 s and
    /// failed 1 run in 10 there).
    async fn rows_reach_the_file(store: &Records, dir: &std::path::Path, rows: i64) {
        let mut conn = store.write().await.unwrap();
        sqlx::query("CREATE TABLE t (n INTEGER)").execute(&mut *conn).await.unwrap();
        for n in 0..rows {
            sqlx::query("INSERT INTO t VALUES ($1)").bind(n).execute(&mut *conn).await.unwrap();
        }
        drop(conn);
        let started = Instant::now();
        while rows_in_the_file_alone(dir).await < rows {
            assert!(started.elapsed() < Duration::from_secs(60), "the rows stay in the WAL");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    #[tokio::test]
    async fn commits_reach_the_database_file_within_moments_without_a_commit_checkpointing() {
        let dir = tempfile::tempdir().unwrap();
        let records = Records::connect(&crate::data_dir::prepare_sqlite(dir.path()).unwrap()).await.unwrap();
        // Three rows are far from the write connection's own checkpoint (`BACKSTOP_PAGES`).
        rows_reach_the_file(&records, dir.path(), 3).await;
    }

    #[tokio::test]
    async fn a_store_connected_alone_is_checkpointed_by_the_first_stores_task() {
        let dir = tempfile::tempdir().unwrap();
        let records = Records::connect(&crate::data_dir::prepare_sqlite(dir.path()).unwrap()).await.unwrap();
        // The delivery worker's own connection: no checkpoint task of its own.
        let alone = records.connect_alone(1).await.unwrap();
        rows_reach_the_file(&alone, dir.path(), 2).await;
        drop(records);
    }
}
