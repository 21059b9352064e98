//! The record store: accounts, API keys, the job queue, collections and events, in PostgreSQL
//! or a SQLite file.
//!
//! One SQL text serves both databases through sqlx's `Any` driver (`$1` placeholders work
//! in both); where the dialects differ (`FOR UPDATE SKIP LOCKED`) the query says so.

pub mod account_events;
pub mod accuracy;
pub mod accuracy_runs;
pub mod audit;
mod batch;
pub mod calls;
mod checkpoints;
pub mod collections;
pub mod connectors;
pub mod datasets;
pub mod documents;
pub mod events;
pub mod filters;
mod fitting;
pub mod functions;
mod group_commit;
pub mod instances;
pub mod jobs;
mod json_params;
pub mod keys;
pub mod name_embeddings;
pub mod outbox;
mod outbox_rows;
mod outbox_sqlite;
pub mod plans;
pub mod progress;
pub mod secrets;
pub mod seed_jobs;
mod single_writer;
pub mod subscriptions;
pub mod suggestions;
pub mod traces;
pub mod users;
pub mod views;
pub mod workflows;
mod writer;

use futures::future::BoxFuture;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::{AnyPool, ConnectOptions};
use std::borrow::Cow;
use std::str::FromStr;
use std::time::Duration;
use writer::{WriteConn, WriteTx, Writer};

/// Errors of the record layer.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("record store unavailable: {0}")]
    Unavailable(String),
    #[error("record query failed: {0}")]
    Query(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// A statement bounded in time (see [`views::scan`]) ran for this long and was stopped.
    #[error("statement stopped after {0:?}")]
    TimedOut(Duration),
}

/// A database error's code, told apart by engine: a PostgreSQL SQLSTATE may be all digits
/// ("40001", "57014"), which read as a number would pass for a SQLite result code.
#[derive(Debug, PartialEq)]
pub(crate) enum ErrorCode {
    /// SQLite's extended result code (the primary code in its low byte).
    Sqlite(i64),
    /// PostgreSQL's SQLSTATE.
    Postgres(String),
}

impl ErrorCode {
    pub(crate) fn of(err: &sqlx::Error) -> Option<Self> {
        let sqlx::Error::Database(db) = err else { return None };
        if let Some(sqlite) = db.try_downcast_ref::<sqlx::sqlite::SqliteError>() {
            return sqlx::error::DatabaseError::code(sqlite)
                .and_then(|code| code.parse().ok())
                .map(ErrorCode::Sqlite);
        }
        db.code().map(|code| ErrorCode::Postgres(code.into_owned()))
    }
}

/// Whose records a query reads or writes.
#[derive(Clone, Copy, Debug)]
pub struct Owner<'a> {
    pub account_id: &'a str,
    pub environment: &'a str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Sqlite,
}

/// A connection pool to the record database.
#[derive(Clone)]
pub struct Records {
    /// Reads (and, on PostgreSQL, writes).
    pub(crate) pool: AnyPool,
    /// Writes: every statement that changes rows, and every write transaction, goes here.
    pub(crate) writer: Writer,
    /// View statements, bounded in time (see [`views::scan`]).
    scans: views::scan::ScanPool,
    pub(crate) dialect: Dialect,
    /// Where it connected, for [`Records::connect_alone`].
    url: std::sync::Arc<str>,
    /// Workflow plans a call runs (see [`plans`]).
    plans: std::sync::Arc<plans::Plans>,
}

impl Records {
    /// Connects to `url` (`postgres://…` or `sqlite://…`).
    pub async fn connect(url: &str) -> Result<Self, RecordError> {
        Self::connect_with(url, None).await
    }

    /// A pool of its own to the same database, of at most `connections`, whose connections
    /// belong to the runtime this is called on (a PostgreSQL connection is tied to the
    /// runtime it was opened in; a pool shared across runtimes would break when one stops).
    ///
    /// On SQLite it starts no checkpoint task of its own: a checkpoint copies the whole WAL,
    /// whoever wrote it, so the one started by [`Records::connect`] serves both (a second had
    /// two connections checkpointing the same file, each with its own syncs, the second mostly
    /// finding the work done or the checkpoint lock taken). Its writer keeps the backstop.
    pub async fn connect_alone(&self, connections: u32) -> Result<Self, RecordError> {
        Self::connect_with(&self.url, Some(connections)).await
    }

    async fn connect_with(url: &str, connections: Option<u32>) -> Result<Self, RecordError> {
        sqlx::any::install_default_drivers();
        let dialect = if url.starts_with("sqlite:") { Dialect::Sqlite } else { Dialect::Postgres };
        let readers = connections.unwrap_or(if dialect == Dialect::Sqlite { 4 } else { 16 });
        let pool = open_pool(url, dialect, readers).await?;
        // See [`writer`]: one connection in turn on SQLite, the pool on PostgreSQL.
        let writer = match dialect {
            Dialect::Sqlite => {
                let mut conn = connect_sqlite(url).await?;
                let pages = checkpoints::BACKSTOP_PAGES;
                sqlx::query(&format!("PRAGMA wal_autocheckpoint = {pages}")).execute(&mut conn).await?;
                // A statement of a batch keeps the pages it changes in a statement journal (to
                // undo that statement alone); past 64 KiB SQLite spilled it to a temporary file,
                // created and deleted every few calls. Kept in memory, no file is made.
                sqlx::query("PRAGMA temp_store = MEMORY").execute(&mut conn).await?;
                let single = single_writer::single(conn);
                if connections.is_none() {
                    checkpoints::spawn(connect_sqlite(url).await?, std::sync::Arc::downgrade(&single));
                }
                let commits = group_commit::Committer::spawn(single.clone());
                Writer::Single { conn: single, commits }
            }
            Dialect::Postgres => Writer::Pool(pool.clone()),
        };
        let scans = views::scan::ScanPool::open(url, dialect, acquire_timeout(dialect))?;
        Ok(Self { pool, writer, scans, dialect, url: url.into(), plans: plans::plans() })
    }

    /// A migrated record store on SQLite in a folder of its own, for the library's unit tests
    /// (the folder lives as long as the returned guard).
    #[cfg(test)]
    pub(crate) async fn on_sqlite_for_tests() -> (tempfile::TempDir, Records) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let url = crate::data_dir::prepare_sqlite(dir.path()).expect("a SQLite file");
        let records = Records::connect(&url).await.expect("SQLite opens");
        records.migrate().await.expect("migrations apply");
        (dir, records)
    }

    /// Applies every pending migration for this dialect.
    pub async fn migrate(&self) -> Result<(), RecordError> {
        let migrator = Migrator::new(Embedded(self.dialect)).await?;
        migrator.run(&mut *self.write().await?).await?;
        self.ensure_search_index().await?;
        Ok(())
    }

    /// Applies the migrations up to `version` only: for tests of upgrading a database that an
    /// older canon wrote.
    #[doc(hidden)]
    pub async fn migrate_through(&self, version: i64) -> Result<(), RecordError> {
        let mut migrator = Migrator::new(Embedded(self.dialect)).await?;
        let older: Vec<Migration> = migrator.iter().filter(|m| m.version <= version).cloned().collect();
        migrator.migrations = older.into();
        migrator.run(&mut *self.write().await?).await?;
        Ok(())
    }

    /// Begins a transaction that writes. On SQLite it takes the write lock up front
    /// (`BEGIN IMMEDIATE`, waiting out the busy timeout): a deferred transaction that reads
    /// first cannot upgrade to a writer while another holds the lock and fails with
    /// `database is locked` at once, busy timeout or not. PostgreSQL locks rows as it goes.
    pub(crate) async fn begin_write(&self) -> Result<WriteTx, RecordError> {
        self.writer.begin().await
    }

    /// Begins a write transaction in which the owner's rows of `table` are counted and added
    /// to by one writer at a time, so a bound on their number holds under concurrent writes.
    /// On PostgreSQL it first takes a transaction-scoped advisory lock on (table, owner):
    /// under READ COMMITTED two conditional inserts would each miss the other's row and both
    /// pass the bound, from one instance or several. SQLite has one writer already.
    pub(crate) async fn begin_counted(&self, table: &str, owner: Owner<'_>) -> Result<WriteTx, RecordError> {
        let mut tx = self.begin_write().await?;
        if self.dialect == Dialect::Postgres {
            // A collision of two keys' hashes only makes their writers take turns.
            let key = format!("{table}\u{1f}{}\u{1f}{}", owner.account_id, owner.environment);
            sqlx::query(
                "SELECT 1 AS taken FROM (SELECT pg_advisory_xact_lock(hashtextextended($1, 0))) AS turn",
            )
            .bind(key)
            .execute(&mut *tx)
            .await?;
        }
        Ok(tx)
    }

    /// Writes `batch` as one transaction (on SQLite in one round trip, see [`batch`]).
    pub(crate) async fn write_batch(&self, batch: &batch::Batch<'_>) -> Result<(), RecordError> {
        self.writer.run(batch).await
    }

    /// The connection for one write statement (see [`writer`]).
    pub(crate) async fn write(&self) -> Result<WriteConn, RecordError> {
        self.writer.acquire().await
    }

    /// Cheap reachability check for `/readyz`.
    pub async fn ping(&self) -> Result<(), RecordError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    pub fn backend_name(&self) -> &'static str {
        match self.dialect {
            Dialect::Postgres => "postgres",
            Dialect::Sqlite => "sqlite",
        }
    }

    pub async fn close(&self) {
        self.pool.close().await;
        self.scans.close().await;
        self.writer.close().await;
    }
}

fn connect_options(url: &str) -> Result<AnyConnectOptions, RecordError> {
    Ok(AnyConnectOptions::from_str(url)
        .map_err(|err| RecordError::Unavailable(err.to_string()))?
        .disable_statement_logging())
}

/// Longest wait for a connection: a free one of the pool, checked with a ping (PostgreSQL), or
/// a new one. Past it the statement fails with `PoolTimedOut`, a 503 with `Retry-After`.
/// It is what bounds a request on a PostgreSQL that went away: a stopped server refuses
/// connections (sqlx tries again until this deadline), a stalled one (SIGSTOP) never answers
/// the ping or the startup of a new connection. Under the 10 s for a 503, with room
/// for the rest of the request (README, `### Limits`). A statement already running when the
/// server stalls waits until it resumes: PostgreSQL's own `statement_timeout` cannot fire in
/// a stopped server, and a client-side cut would also end legitimate long statements.
/// SQLite keeps 10 s: a file cannot go away, and its few connections may all be busy a while.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(7);
const SQLITE_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

fn acquire_timeout(dialect: Dialect) -> Duration {
    match dialect {
        Dialect::Sqlite => SQLITE_ACQUIRE_TIMEOUT,
        Dialect::Postgres => ACQUIRE_TIMEOUT,
    }
}

/// A pool of at most `connections` to `url`, each connection set up for this service.
async fn open_pool(url: &str, dialect: Dialect, connections: u32) -> Result<AnyPool, RecordError> {
    AnyPoolOptions::new()
        .max_connections(connections)
        .acquire_timeout(acquire_timeout(dialect))
        // A SQLite connection is a file, not a socket that can hang up: the ping sqlx sends
        // before handing one out would only add a round trip to every statement. On
        // PostgreSQL it is what drops the connections a restarted server broke.
        .test_before_acquire(dialect != Dialect::Sqlite)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                if dialect == Dialect::Sqlite {
                    configure_sqlite(conn).await.map_err(|err| match err {
                        RecordError::Query(err) => err,
                        other => sqlx::Error::Protocol(other.to_string()),
                    })?;
                }
                Ok(())
            })
        })
        .connect_with(connect_options(url)?)
        .await
        .map_err(|err| RecordError::Unavailable(err.to_string()))
}

/// A SQLite connection of its own (outside the pool), set up as the pool's are.
async fn connect_sqlite(url: &str) -> Result<sqlx::AnyConnection, RecordError> {
    let mut conn =
        connect_options(url)?.connect().await.map_err(|err| RecordError::Unavailable(err.to_string()))?;
    configure_sqlite(&mut conn).await?;
    Ok(conn)
}

/// The settings every SQLite connection of canon runs with.
async fn configure_sqlite(conn: &mut sqlx::AnyConnection) -> Result<(), RecordError> {
    // WAL lets `canon keys` write while `canon serve` reads; the busy timeout makes
    // concurrent writers (other processes) wait instead of failing.
    sqlx::query("PRAGMA journal_mode = WAL").execute(&mut *conn).await?;
    sqlx::query("PRAGMA busy_timeout = 10000").execute(&mut *conn).await?;
    sqlx::query("PRAGMA foreign_keys = ON").execute(&mut *conn).await?;
    // In WAL mode NORMAL syncs at checkpoints, not at every commit: a crash of canon loses
    // nothing; only an OS crash or power loss can lose the last commits (SQLite's
    // recommended setting for WAL).
    sqlx::query("PRAGMA synchronous = NORMAL").execute(&mut *conn).await?;
    // Reads through a memory map instead of SQLite's page cache, which this build
    // (SQLITE_ENABLE_MEMORY_MANAGEMENT) shares between all connections behind one mutex: two
    // scans at once ran 3x slower than one (measured on views' table-data, 150 ms against
    // 45 ms).
    sqlx::query("PRAGMA mmap_size = 1073741824").execute(&mut *conn).await?;
    Ok(())
}

/// `(version, file stem, SQL)` of each migration in `migrations/`. Most SQL is portable, so
/// both dialects run the same file; a migration that cannot be has a file per dialect
/// (`<stem>.sqlite.sql`, `<stem>.postgres.sql`), given as `version => (stem)`.
macro_rules! migrations {
    ($dialect:ident; $($version:literal => $file:tt),* $(,)?) => {
        &[$(($version, migrations!(@stem $file), migrations!(@sql $dialect $file))),*]
    };
    (@stem ($file:literal)) => { $file };
    (@stem $file:literal) => { $file };
    (@sql $dialect:ident ($file:literal)) => {
        include_str!(concat!("../../../migrations/", $file, ".", stringify!($dialect), ".sql"))
    };
    (@sql $dialect:ident $file:literal) => { include_str!(concat!("../../../migrations/", $file, ".sql")) };
}

macro_rules! all_migrations {
    ($dialect:ident) => {
        migrations!($dialect;
            1 => "0001_init", 2 => "0002_seed_jobs", 3 => "0003_users", 4 => "0004_merge_suggestions",
            5 => "0005_collections", 6 => "0006_pipeline", 7 => "0007_tenant_secrets",
            8 => "0008_delivery",
            9 => "0009_accuracy",
            10 => "0010_views",
            11 => "0011_documents",
            12 => ("0012_event_outputs"),
            13 => ("0013_event_outputs_in_view_order"),
            14 => "0014_seed_job_results",
            15 => "0015_first_attempt_on_delivery",
            16 => "0016_seed_job_result_counts",
            17 => "0017_one_events_function_index",
            18 => "0018_instances",
            19 => "0019_fair_jobs",
            20 => "0020_entity_audit",
            21 => ("0021_name_embeddings"),
            22 => "0022_pending_deliveries_index",
            23 => ("0023_function_output_schemas"),
            24 => "0024_connector_poll_offset",
            25 => ("0025_call_input_summary"),
            26 => "0026_dataset_row_count",
        )
    };
}

const SQLITE_MIGRATIONS: &[(i64, &str, &str)] = all_migrations!(sqlite);
const POSTGRES_MIGRATIONS: &[(i64, &str, &str)] = all_migrations!(postgres);

/// The migrations compiled into the binary.
#[derive(Debug)]
struct Embedded(Dialect);

impl MigrationSource<'static> for Embedded {
    fn resolve(self) -> BoxFuture<'static, Result<Vec<Migration>, sqlx::error::BoxDynError>> {
        let files = match self.0 {
            Dialect::Sqlite => SQLITE_MIGRATIONS,
            Dialect::Postgres => POSTGRES_MIGRATIONS,
        };
        let migrations = files
            .iter()
            .map(|(version, name, sql)| {
                Migration::new(
                    *version,
                    Cow::Borrowed(name),
                    MigrationType::Simple,
                    Cow::Borrowed(sql),
                    false,
                )
            })
            .collect();
        Box::pin(async move { Ok(migrations) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_sqlite_error_is_read_as_sqlites_own_code() {
        let (_dir, records) = Records::on_sqlite_for_tests().await;
        let err = sqlx::query("SELECT * FROM no_such_table").execute(&records.pool).await.unwrap_err();
        // SQLITE_ERROR; a PostgreSQL SQLSTATE of digits ("40001") is never read as one.
        assert_eq!(ErrorCode::of(&err), Some(ErrorCode::Sqlite(1)));
        records.close().await;
    }
}
