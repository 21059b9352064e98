//! Where writes go. PostgreSQL writes in parallel, so there they take pool connections. SQLite
//! admits one writer at a time and makes the others sleep in its busy handler (1, 2, 5,
//! 10 … ms, however soon the lock frees), so there every write of this process goes through
//! one connection held outside the pool, taken in turn behind an async mutex: a write waits
//! exactly as long as the one before it, and costs one round trip to SQLite's thread (sqlx's
//! pool adds a ping on acquire and another on release to every statement; measured 500 µs for
//! a one-row UPDATE through a one-connection pool against 90 µs for the statement alone).
//! Batches take their turn through a queue, and those that queue together commit together
//! (see [`group_commit`](super::group_commit)).

use super::group_commit::Committer;
use super::RecordError;
use sqlx::pool::PoolConnection;
use sqlx::AnyConnection;
use sqlx::{Any, AnyPool};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// How long a write waits for its turn before answering "busy" (503 with `Retry-After`).
pub(super) const WAIT_FOR_TURN: Duration = Duration::from_secs(10);

#[derive(Clone)]
pub(crate) enum Writer {
    Pool(AnyPool),
    /// The connection, and the queue its batches take (see [`group_commit`](super::group_commit)).
    Single {
        conn: Arc<Mutex<SingleWriter>>,
        commits: Committer,
    },
}

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

impl Writer {
    /// The connection for one write.
    pub(crate) async fn acquire(&self) -> Result<WriteConn, RecordError> {
        match self {
            Writer::Pool(pool) => Ok(WriteConn::Pooled(pool.acquire().await?)),
            Writer::Single { conn, .. } => Ok(WriteConn::Single(take_turn(conn).await?)),
        }
    }

    /// A write transaction (on SQLite `BEGIN IMMEDIATE`: it takes the write lock up front).
    pub(crate) async fn begin(&self) -> Result<WriteTx, RecordError> {
        match self {
            Writer::Pool(pool) => Ok(WriteTx::Pooled(pool.begin().await?)),
            Writer::Single { conn, .. } => {
                let mut guard = take_turn(conn).await?;
                guard.open = true;
                sqlx::query("BEGIN IMMEDIATE").execute(&mut guard.conn).await?;
                Ok(WriteTx::Single(guard))
            }
        }
    }

    pub(crate) async fn close(&self) {
        if let Writer::Pool(pool) = self {
            pool.close().await;
        }
    }
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

/// A connection that may write, for as long as it is held.
pub(crate) enum WriteConn {
    Pooled(PoolConnection<Any>),
    Single(OwnedMutexGuard<SingleWriter>),
}

impl Deref for WriteConn {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match self {
            WriteConn::Pooled(conn) => conn,
            WriteConn::Single(guard) => &guard.conn,
        }
    }
}

impl DerefMut for WriteConn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match self {
            WriteConn::Pooled(conn) => conn,
            WriteConn::Single(guard) => &mut guard.conn,
        }
    }
}

/// A write transaction; dropped without [`WriteTx::commit`], it is rolled back.
pub(crate) enum WriteTx {
    Pooled(sqlx::Transaction<'static, Any>),
    Single(OwnedMutexGuard<SingleWriter>),
}

impl WriteTx {
    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            WriteTx::Pooled(tx) => tx.commit().await,
            WriteTx::Single(mut guard) => {
                sqlx::query("COMMIT").execute(&mut guard.conn).await?;
                guard.open = false;
                Ok(())
            }
        }
    }

    pub(crate) async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            WriteTx::Pooled(tx) => tx.rollback().await,
            WriteTx::Single(mut guard) => {
                sqlx::query("ROLLBACK").execute(&mut guard.conn).await?;
                guard.open = false;
                Ok(())
            }
        }
    }
}

impl Deref for WriteTx {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match self {
            WriteTx::Pooled(tx) => tx,
            WriteTx::Single(guard) => &guard.conn,
        }
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match self {
            WriteTx::Pooled(tx) => tx,
            WriteTx::Single(guard) => &mut guard.conn,
        }
    }
}
