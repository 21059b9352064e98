//! A turn of the delivery outbox on SQLite: the finished attempts settled and the next due
//! rows claimed in one transaction, in two queries to SQLite's thread.

use super::json_params::{nul_free, positional_rows};
use super::outbox_rows::{
    claimed_from, due_sql, kept_on_row, log_sql, Claimed, Finished, BODIES, CARRIED, CARRIED_FROM,
};
use super::single_writer::{self, SingleWriter};
use super::{Dialect, RecordError};
use sqlx::any::{Any, AnyArguments};
use sqlx::query::Query;
use sqlx::Row;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use tokio::sync::Mutex;

/// Deliveries one settling statement takes; a turn's last one is padded with rows of NULLs,
/// which match no delivery. A fixed size keeps the turn's text to a few shapes (one per
/// number of statements), each prepared once and kept in the connection's statement cache.
/// Past ~200 rows SQLite's planner scanned the whole table instead of looking each row up.
const SETTLE_ROWS: usize = 64;
/// Parameters of a settled row, in [`settle_sql`]'s order.
const SETTLE_COLUMNS: usize = 10;

/// One settling statement: every delivery's new state, whatever its outcome, from
/// [`SETTLE_ROWS`] rows of plain positional parameters. A first attempt that delivered
/// (`kept`, nearly all of them) is kept on its delivery's own row; the others are also rows of
/// `delivery_attempts` (the turn's log statement).
///
/// Positional: a JSON array of rows (as on PostgreSQL) made SQLite turn each row back into
/// text and parse it again for every field read (~4 µs a delivery of SQLite's thread, over
/// half of all it spent on a turn); `$n` parameters made each bind look its name up in a
/// list as long as the statement's (sqlx binds by name), as slow again. Anonymous `?`
/// parameters are bound in order.
fn settle_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| {
        // SQLite finds the rows by rowid, without a walk down the ID's index; the ID must match
        // too, should the rowids have been renumbered since the claim (a VACUUM); its unary
        // `+` keeps SQLite from walking the ID's index instead.
        format!(
            "WITH r(id, status, attempts, next_at, at, kept, code, latency, excerpt, rid) AS (VALUES {}) \
             UPDATE deliveries SET status = r.status, attempts = r.attempts, next_attempt_at = r.next_at, \
                 lease_until = 0, updated_at = r.at, \
                 first_attempted_at = CASE WHEN r.kept THEN r.at ELSE first_attempted_at END, \
                 first_status_code = CASE WHEN r.kept THEN r.code ELSE first_status_code END, \
                 first_latency_ms = CASE WHEN r.kept THEN r.latency ELSE first_latency_ms END, \
                 first_response_excerpt = CASE WHEN r.kept THEN r.excerpt ELSE first_response_excerpt END \
             FROM r WHERE deliveries.rowid = r.rid AND +deliveries.id = r.id",
            positional_rows(SETTLE_COLUMNS, SETTLE_ROWS)
        )
    })
}

/// A turn on SQLite: what it settles and its statements' other parameters.
pub(super) struct Turn<'a> {
    pub finished: &'a [Finished],
    /// The attempts not kept on their delivery's row, as the log statement's JSON.
    pub logged: Option<String>,
    pub now: i64,
    pub lease_until: i64,
    pub limit: i64,
    pub skip: Option<String>,
}

impl Turn<'_> {
    /// The turn's first query: `BEGIN IMMEDIATE`, the settling statements, the log and the
    /// claim's read (`COMMIT` instead when it claims nothing): one shape per number of
    /// settling statements, whether it claims and whether it skips accounts. The settling statements'
    /// anonymous parameters come first; the named ones after them are numbered from there.
    fn sql(&self) -> String {
        let statements = self.finished.len().div_ceil(SETTLE_ROWS);
        let first = statements * SETTLE_ROWS * SETTLE_COLUMNS;
        let named = |n: usize| first + n;
        let mut sql = String::from("BEGIN IMMEDIATE;\n");
        for _ in 0..statements {
            sql.push_str(settle_sql());
            sql.push_str(";\n");
        }
        // Always there (reading no rows when there is nothing to log, its parameter NULL): a
        // turn's text then has fewer shapes for the statement cache (100 a connection) to keep.
        sql.push_str(&log_sql(Dialect::Sqlite, named(1)));
        sql.push_str(";\n");
        if self.limit > 0 {
            let skip_at = self.skip.as_ref().map(|_| named(4));
            sql.push_str(&format!(
                "SELECT json_group_array(d.rowid) AS leased, \
                     json_group_array(json_array(d.rowid, {CARRIED})) FILTER (WHERE e.id IS NOT NULL) AS claimed, \
                     {BODIES} AS bodies \
                 FROM ({}) AS due JOIN deliveries d ON d.rowid = due.rid {CARRIED_FROM}",
                due_sql(Dialect::Sqlite, "rowid AS rid", named(2), named(3), skip_at),
            ));
        } else {
            sql.push_str("COMMIT");
        }
        sql
    }

    /// Binds every settled row (the last statement's rows padded with NULLs), then the named
    /// parameters in their order.
    fn bind<'q>(
        &'q self,
        mut query: Query<'q, Any, AnyArguments<'q>>,
        excerpts: &'q [Cow<'q, str>],
    ) -> Query<'q, Any, AnyArguments<'q>> {
        for (done, excerpt) in self.finished.iter().zip(excerpts) {
            let attempt = &done.attempt;
            let kept = kept_on_row(done);
            query = query
                .bind(done.delivery_id.as_str())
                .bind(done.status)
                .bind(done.number)
                .bind(attempt.next_retry_at.unwrap_or(attempt.at))
                .bind(attempt.at)
                .bind(i64::from(kept))
                .bind(attempt.status_code)
                .bind(attempt.latency_ms)
                .bind(attempt.response_excerpt.as_ref().map(|_| excerpt.as_ref()))
                .bind(done.row);
        }
        let padding = self.finished.len().next_multiple_of(SETTLE_ROWS) - self.finished.len();
        for _ in 0..padding * SETTLE_COLUMNS {
            query = query.bind(None::<i64>);
        }
        query.bind(self.logged.as_deref()).bind(self.now).bind(self.limit).bind(self.skip.as_deref())
    }

    /// The turn as two queries: the first ([`Turn::sql`]), then the leases and `COMMIT` (one
    /// query when it claims nothing). Each statement sent on its own was a round trip to
    /// SQLite's thread, five a turn, and a turn's rows wait for all of them (`make
    /// bench-delivery`: BEGIN alone took 0.5 ms a turn on the loaded machine).
    ///
    /// SQLite cannot aggregate what an UPDATE returns, so the claim reads the due rows first
    /// and leases them by rowid second: the transaction took the write lock when it began,
    /// so no other process writes between the two.
    pub(super) async fn run(self, single: &Arc<Mutex<SingleWriter>>) -> Result<Vec<Claimed>, RecordError> {
        let sql = self.sql();
        // An excerpt is whatever the destination answered: NULs become U+FFFD, as on
        // PostgreSQL (whose text cannot hold one).
        let excerpts: Vec<Cow<str>> = self
            .finished
            .iter()
            .map(|done| nul_free(done.attempt.response_excerpt.as_deref().unwrap_or_default()))
            .collect();
        let query = self.bind(sqlx::query(&sql), &excerpts);
        let mut writer = single_writer::take_turn(single).await?;
        writer.open = true;
        let mut rows = query.fetch_all(&mut writer.conn).await;
        let (mut claimed, mut bodies) = (None, None);
        if let (Ok(read), true) = (&rows, self.limit > 0) {
            let leased: Option<String> = read.first().and_then(|row| row.try_get("leased").ok());
            claimed = read.first().and_then(|row| row.try_get("claimed").ok());
            bodies = read.first().and_then(|row| row.try_get("bodies").ok());
            let lease = "UPDATE deliveries SET lease_until = $1, next_attempt_at = $1 \
                         WHERE rowid IN (SELECT value FROM json_each($2));\nCOMMIT";
            let leasing = sqlx::query(lease).bind(self.lease_until).bind(leased).fetch_all(&mut writer.conn);
            rows = leasing.await;
        }
        if rows.is_err() {
            // A statement failed with the transaction open.
            let _ = sqlx::query("ROLLBACK").execute(&mut writer.conn).await;
        }
        writer.open = false;
        rows?;
        claimed_from(claimed, bodies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turns_named_parameters_follow_every_settling_row_it_binds() {
        let done = Finished {
            delivery_id: "dlv_a".into(),
            row: Some(1),
            number: 1,
            attempt: Default::default(),
            status: "delivered",
        };
        let finished = vec![done; SETTLE_ROWS + 1];
        let turn = Turn {
            finished: &finished,
            logged: Some("[]".into()),
            now: 5,
            lease_until: 6,
            limit: 7,
            skip: None,
        };
        let sql = turn.sql();
        assert_eq!(sql.matches("UPDATE deliveries").count(), 2, "two settling statements");
        let first = 2 * SETTLE_ROWS * SETTLE_COLUMNS;
        assert!(
            sql.contains(&format!("json_each(${})", first + 1)),
            "the log reads the parameter after the rows"
        );
        assert!(sql.contains(&format!("LIMIT ${}", first + 3)));
        let excerpts = vec![Cow::Borrowed(""); finished.len()];
        let query = turn.bind(sqlx::query(&sql), &excerpts);
        use sqlx::Execute;
        let mut query = query;
        let arguments = query.take_arguments().unwrap().unwrap();
        assert_eq!(sqlx::Arguments::len(&arguments), first + 4);
        let nothing_logged = Turn { logged: None, ..turn };
        assert_eq!(nothing_logged.sql(), sql, "one shape whether or not attempts are logged");
    }
}
