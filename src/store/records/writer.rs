//! Where writes go. PostgreSQL writes in parallel, so there they take pool connections. SQLite
//! admits one writer at a time and makes the others sleep in its busy handler (1, 2, 5,
//! 10 … ms, however soon the lock frees), so there every write of this process goes through
//! one connection held outside the pool, taken in turn behind an async mutex: a write waits
//! exactly as long as the one before it, and costs one round trip to SQLite's thread (sqlx's
//! pool adds a ping on acquire and another on release to every statement; measured 500 µs for
//! a one-row UPDATE through a one-connection pool against 90 µs for the statement alone).
//! Batches take their turn through a queue, and those that queue together commit together
//! (see [`group_commit`](super::group_commit)).

use super::batch::{Batch, SQLITE_MAX_PARAMETERS};
use super::group_commit::Committer;
use super::single_writer::{take_turn, SingleWriter};
use super::RecordError;
use sqlx::pool::PoolConnection;
use sqlx::AnyConnection;
use sqlx::{Any, AnyPool};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use tokio::sync::{Mutex, OwnedMutexGuard};

#[derive(Clone)]
pub(crate) enum Writer {
    Pool(AnyPool),
    /// The connection, and the queue its batches take (see [`group_commit`](super::group_commit)).
    Single {
        conn: Arc<Mutex<SingleWriter>>,
        commits: Committer,
    },
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

impl Writer {
    /// Runs `batch` as one transaction.
    pub(crate) async fn run(&self, batch: &Batch<'_>) -> Result<(), RecordError> {
        if batch.statements.is_empty() {
            return Ok(());
        }
        if let Writer::Single { commits, .. } = self {
            if batch.parameters() <= SQLITE_MAX_PARAMETERS {
                return commits.run(batch).await;
            }
        }
        let mut tx = self.begin().await?;
        for statement in &batch.statements {
            statement.execute(&mut tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }
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
