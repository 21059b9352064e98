//! Statements written as one transaction, in one round trip where the store allows it.
//!
//! sqlx runs SQLite on a thread of its own, and every statement sent there is a round trip
//! (~100–150 µs on a 2-core machine: most of a quick workflow call's time went there). A
//! query of several statements goes there as one, and sqlx-sqlite binds `$N` in any of its
//! statements to the N-th argument of the query. So on SQLite a batch is sent once, as
//! `BEGIN IMMEDIATE; …; COMMIT` with each statement's parameters renumbered after the ones
//! before (batches that queued together go between one `BEGIN IMMEDIATE` and one `COMMIT`,
//! a query each: see [`group_commit`](super::group_commit)). PostgreSQL prepares one
//! statement at a time: there the statements run one by one in a transaction.

use sqlx::any::AnyArguments;
use sqlx::{Any, AnyConnection};
use std::borrow::Cow;

/// Parameters one query may number on SQLite (its limit is 32,766); a batch with more runs
/// statement by statement inside its transaction.
pub(super) const SQLITE_MAX_PARAMETERS: usize = 32_000;
/// Rows per multi-row INSERT: at 17 parameters a row, well under SQLite's 32,766 and
/// PostgreSQL's 65,535.
pub(super) const ROWS_PER_INSERT: usize = 500;

/// A value bound to a statement.
#[derive(Clone, Debug)]
pub(crate) enum Arg<'a> {
    Text(Option<Cow<'a, str>>),
    Int(Option<i64>),
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(value: &'a str) -> Self {
        Arg::Text(Some(Cow::Borrowed(value)))
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(value: &'a String) -> Self {
        Arg::Text(Some(Cow::Borrowed(value)))
    }
}

impl From<String> for Arg<'_> {
    fn from(value: String) -> Self {
        Arg::Text(Some(Cow::Owned(value)))
    }
}

impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(value: Option<&'a str>) -> Self {
        Arg::Text(value.map(Cow::Borrowed))
    }
}

impl<'a> From<&'a Option<String>> for Arg<'a> {
    fn from(value: &'a Option<String>) -> Self {
        Arg::Text(value.as_deref().map(Cow::Borrowed))
    }
}

impl From<Option<String>> for Arg<'_> {
    fn from(value: Option<String>) -> Self {
        Arg::Text(value.map(Cow::Owned))
    }
}

impl From<i64> for Arg<'_> {
    fn from(value: i64) -> Self {
        Arg::Int(Some(value))
    }
}

impl From<Option<i64>> for Arg<'_> {
    fn from(value: Option<i64>) -> Self {
        Arg::Int(value)
    }
}

/// One statement with its parameters `$1…$n`, bound to `args` in order.
#[derive(Clone, Debug)]
pub(crate) struct Statement<'a> {
    pub sql: String,
    pub args: Vec<Arg<'a>>,
}

impl<'a> Statement<'a> {
    pub fn new(sql: impl Into<String>) -> Self {
        Self { sql: sql.into(), args: Vec::new() }
    }

    /// Binds the next parameter.
    pub fn arg(mut self, value: impl Into<Arg<'a>>) -> Self {
        self.args.push(value.into());
        self
    }

    /// Binds the next parameter, in place (for statements built in a loop).
    pub fn push(&mut self, value: impl Into<Arg<'a>>) {
        self.args.push(value.into());
    }

    /// The statement as a sqlx query.
    pub fn query(&self) -> sqlx::query::Query<'_, Any, AnyArguments<'_>> {
        bind_all(sqlx::query(&self.sql), &self.args)
    }

    /// Runs it on `conn`; returns the rows it changed.
    pub async fn execute(&self, conn: &mut AnyConnection) -> Result<u64, sqlx::Error> {
        Ok(self.query().execute(conn).await?.rows_affected())
    }
}

pub(super) fn bind_all<'q>(
    mut query: sqlx::query::Query<'q, Any, AnyArguments<'q>>,
    args: &'q [Arg<'_>],
) -> sqlx::query::Query<'q, Any, AnyArguments<'q>> {
    for arg in args {
        query = match arg {
            Arg::Text(text) => query.bind(text.as_deref()),
            Arg::Int(int) => query.bind(*int),
        };
    }
    query
}

/// Statements that commit together or not at all.
#[derive(Default, Debug)]
pub(crate) struct Batch<'a> {
    pub(super) statements: Vec<Statement<'a>>,
}

impl<'a> Batch<'a> {
    pub fn add(&mut self, statement: Statement<'a>) {
        self.statements.push(statement);
    }

    pub(super) fn parameters(&self) -> usize {
        self.statements.iter().map(|s| s.args.len()).sum()
    }

    /// The batch as one query of its statements, each numbering its parameters after the
    /// ones before, and the arguments of all of them.
    pub(super) fn joined(&self) -> (String, Vec<Arg<'a>>) {
        let mut sql = String::new();
        let mut offset = 0;
        for statement in &self.statements {
            if !sql.is_empty() {
                sql.push_str(";\n");
            }
            sql.push_str(&renumbered(&statement.sql, offset));
            offset += statement.args.len();
        }
        let args = self.statements.iter().flat_map(|s| s.args.iter().cloned()).collect();
        (sql, args)
    }

    /// A copy that borrows nothing (to queue for the write connection).
    pub(super) fn to_owned(&self) -> Batch<'static> {
        let owned = |arg: &Arg<'a>| match arg {
            Arg::Text(text) => Arg::Text(text.as_ref().map(|text| Cow::Owned(text.to_string()))),
            Arg::Int(int) => Arg::Int(*int),
        };
        let statements = self
            .statements
            .iter()
            .map(|s| Statement { sql: s.sql.clone(), args: s.args.iter().map(owned).collect() })
            .collect();
        Batch { statements }
    }
}

/// `sql` with every parameter `$n` renamed `$(n + offset)`. The statements given here carry
/// no `$` in literals or identifiers.
fn renumbered(sql: &str, offset: usize) -> String {
    if offset == 0 {
        return sql.to_string();
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + offset).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::renumbered;

    #[test]
    fn parameters_are_renumbered_after_the_ones_before() {
        assert_eq!(
            renumbered("UPDATE t SET a = $1, b = $12 WHERE id = $2", 10),
            "UPDATE t SET a = $11, b = $22 WHERE id = $12"
        );
        assert_eq!(renumbered("SELECT 'x' || $3 || $3", 1), "SELECT 'x' || $4 || $4");
        assert_eq!(renumbered("SELECT $1", 0), "SELECT $1");
        assert_eq!(renumbered("no parameters", 5), "no parameters");
    }
}
