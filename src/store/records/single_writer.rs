//! SQLite's one write connection, taken in turn (see [`writer`](super::writer)), and a batch
//! run on it as one query.

use super::batch::{bind_all, Batch};
use super::RecordError;
use sqlx::AnyConnection;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// How long a write waits for its turn before answering "busy" (503 with `Retry-After`).
pub(super) const WAIT_FOR_TURN: Duration = Duration::from_secs(10);

pub(crate) struct SingleWriter {
    pub(super) conn: AnyConnection,
    /// A transaction was begun and never committed (its owner was dropped mid-way): the next
    /// writer rolls it back first.
    pub(super) open: bool,
}

/// The one write connection of a SQLite database.
pub(crate) fn single(conn: AnyConnection) -> Arc<Mutex<SingleWriter>> {
    Arc::new(Mutex::new(SingleWriter { conn, open: false }))
}

/// The single connection, once the writes before this one are done (and any transaction one
/// of them left open is rolled back).
pub(super) async fn take_turn(
    single: &Arc<Mutex<SingleWriter>>,
) -> Result<OwnedMutexGuard<SingleWriter>, RecordError> {
    let mut guard = tokio::time::timeout(WAIT_FOR_TURN, single.clone().lock_owned())
        .await
        .map_err(|_| RecordError::Query(sqlx::Error::PoolTimedOut))?;
    if guard.open {
        // Fails harmlessly when SQLite already ended it.
        let _ = sqlx::query("ROLLBACK").execute(&mut guard.conn).await;
        guard.open = false;
    }
    Ok(guard)
}

/// The whole batch in one query (SQLite).
pub(super) async fn run_at_once(writer: &mut SingleWriter, batch: &Batch<'_>) -> Result<(), RecordError> {
    let (statements, args) = batch.joined();
    let sql = format!("BEGIN IMMEDIATE;\n{statements};\nCOMMIT");
    writer.open = true;
    match bind_all(sqlx::query(&sql), &args).execute(&mut writer.conn).await {
        Ok(_) => {
            writer.open = false;
            Ok(())
        }
        // A statement failed: the transaction is still open (the next writer would also roll
        // it back).
        Err(err) => {
            let _ = sqlx::query("ROLLBACK").execute(&mut writer.conn).await;
            writer.open = false;
            Err(err.into())
        }
    }
}
