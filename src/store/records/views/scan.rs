//! Where a view's statements run. Their cost is the tenant's to shape: a window of up to 366
//! days over outputs of up to 128 MiB each, filters and columns that each read every one of
//! them (on PostgreSQL each column read decompresses the whole JSONB value again). So each
//! runs within a time bound, past which it is stopped ([`RecordError::TimedOut`]), and on
//! connections of its own: a heavy view waits for a scan connection, never for those every
//! other read of every tenant shares.
//!
//! - PostgreSQL: a pool of [`SCAN_CONNECTIONS`]; each statement in a transaction that sets
//!   `statement_timeout` for itself alone.
//! - SQLite: sqlx's `Any` driver cannot interrupt a statement, so scans go through a pool of
//!   the SQLite driver itself, whose connections take a progress handler that looks at the
//!   clock every [`STEPS_BETWEEN_CHECKS`] virtual-machine steps and stops the statement
//!   (`SQLITE_INTERRUPT`) at its deadline.

use super::projection::{Sql, Workers};
use crate::store::records::{Dialect, ErrorCode, RecordError, Records};
use futures::{Stream, TryStreamExt};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteRow};
use sqlx::{Any, AnyPool, Decode, Row, Sqlite, Type};
use std::str::FromStr;
use std::time::{Duration, Instant};

/// Connections scans may hold at once (a table page runs two: its count and its page).
pub const SCAN_CONNECTIONS: u32 = 4;
/// SQLite virtual-machine steps between two looks at the clock: a step is tens of
/// nanoseconds unless it calls a JSON function over a large value, so a statement runs past
/// its deadline by far less than a millisecond of steps (plus one function call).
const STEPS_BETWEEN_CHECKS: i32 = 1_000;
/// SQLite's result code for a statement stopped by its progress handler.
const SQLITE_INTERRUPT: i64 = 9;
/// PostgreSQL's SQLSTATE for a statement cancelled (here by `statement_timeout`).
const QUERY_CANCELED: &str = "57014";

/// The connections view statements run on (see the module's docs).
#[derive(Clone)]
pub(crate) enum ScanPool {
    Sqlite(SqlitePool),
    Postgres(AnyPool),
}

impl ScanPool {
    /// The pool for `url`; it connects on first use.
    pub(crate) fn open(url: &str, dialect: Dialect, acquire_timeout: Duration) -> Result<Self, RecordError> {
        let unavailable = |err: sqlx::Error| RecordError::Unavailable(err.to_string());
        Ok(match dialect {
            Dialect::Sqlite => {
                // The settings of canon's other SQLite connections that a read depends on
                // (see `configure_sqlite`), and reads only: scans never write.
                let options = SqliteConnectOptions::from_str(url)
                    .map_err(unavailable)?
                    .busy_timeout(Duration::from_secs(10))
                    .pragma("mmap_size", "1073741824")
                    .pragma("query_only", "ON");
                ScanPool::Sqlite(
                    SqlitePoolOptions::new()
                        .max_connections(SCAN_CONNECTIONS)
                        .acquire_timeout(acquire_timeout)
                        .test_before_acquire(false)
                        .connect_lazy_with(options),
                )
            }
            Dialect::Postgres => ScanPool::Postgres(
                AnyPoolOptions::new()
                    .max_connections(SCAN_CONNECTIONS)
                    .acquire_timeout(acquire_timeout)
                    .connect_lazy_with(super::super::connect_options(url)?),
            ),
        })
    }

    pub(crate) async fn close(&self) {
        match self {
            ScanPool::Sqlite(pool) => pool.close().await,
            ScanPool::Postgres(pool) => pool.close().await,
        }
    }
}

/// A row of a scan, from whichever driver ran it.
pub(super) enum ScanRow {
    Any(AnyRow),
    Sqlite(SqliteRow),
}

impl ScanRow {
    pub(super) fn get<T>(&self, column: &str) -> T
    where
        T: for<'r> Decode<'r, Any> + Type<Any> + for<'r> Decode<'r, Sqlite> + Type<Sqlite>,
    {
        match self {
            ScanRow::Any(row) => row.get(column),
            ScanRow::Sqlite(row) => row.get(column),
        }
    }
}

impl Records {
    /// Runs one view statement, stopping it once it has run for `limit`.
    pub(super) async fn scan(
        &self,
        sql: &Sql<'_>,
        text: &str,
        limit: Duration,
        workers: Workers,
    ) -> Result<Vec<ScanRow>, RecordError> {
        let mut rows = Vec::new();
        self.scan_each(sql, text, limit, workers, |row| rows.push(row)).await?;
        Ok(rows)
    }

    /// Runs one view statement as [`Records::scan`] does, handing each row to `each` as it
    /// comes: only the row at hand is held, whatever the statement returns.
    pub(super) async fn scan_each(
        &self,
        sql: &Sql<'_>,
        text: &str,
        limit: Duration,
        workers: Workers,
        mut each: impl FnMut(ScanRow) + Send,
    ) -> Result<(), RecordError> {
        let done: Result<(), sqlx::Error> = match &self.scans {
            ScanPool::Sqlite(pool) => {
                let mut conn = pool.acquire().await?;
                let deadline = Instant::now() + limit;
                // Set anew for every statement (it replaces the last one's): only scans use
                // these connections.
                conn.lock_handle()
                    .await?
                    .set_progress_handler(STEPS_BETWEEN_CHECKS, move || Instant::now() < deadline);
                let rows = sql.bind(sqlx::query::<Sqlite>(text)).fetch(&mut *conn);
                each_row(rows, |row| each(ScanRow::Sqlite(row))).await
            }
            ScanPool::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                // At least a millisecond: 0 would turn the bound off.
                let millis = limit.as_millis().clamp(1, i64::MAX as u128).to_string();
                let setup = match workers {
                    Workers::Parallel => {
                        "SELECT set_config('statement_timeout', $1, true), \
                         set_config('parallel_setup_cost', '0', true), set_config('parallel_tuple_cost', '0', true)"
                    }
                    Workers::Planner => "SELECT set_config('statement_timeout', $1, true)",
                };
                sqlx::query(setup).bind(millis).execute(&mut *tx).await?;
                let rows = sql.bind(sqlx::query::<Any>(text)).fetch(&mut *tx);
                let read = each_row(rows, |row| each(ScanRow::Any(row))).await;
                if read.is_ok() {
                    tx.commit().await?;
                }
                read
            }
        };
        done.map_err(|err| if stopped(&err) { RecordError::TimedOut(limit) } else { err.into() })
    }
}

/// Hands each row to `each` as it comes, up to the first error.
async fn each_row<R>(
    mut rows: impl Stream<Item = Result<R, sqlx::Error>> + Unpin,
    mut each: impl FnMut(R),
) -> Result<(), sqlx::Error> {
    while let Some(row) = rows.try_next().await? {
        each(row);
    }
    Ok(())
}

/// Whether the statement was stopped at its time bound.
fn stopped(err: &sqlx::Error) -> bool {
    match ErrorCode::of(err) {
        Some(ErrorCode::Sqlite(code)) => code & 0xff == SQLITE_INTERRUPT,
        Some(ErrorCode::Postgres(code)) => code == QUERY_CANCELED,
        None => false,
    }
}
