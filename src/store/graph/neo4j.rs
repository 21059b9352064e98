//! Neo4j 5 engine over Bolt (`neo4rs`): converts JSON parameters to Bolt values and Bolt rows
//! back to JSON, and keeps a Neo4j that stalls or restarts an answer (503), not a hang.
//!
//! A server that went away: a statement on a stalled Neo4j (SIGSTOP, a long GC pause) is cut
//! by [`Liveness`] once a `RETURN 1` on a session of its own goes unanswered (503 with
//! `Retry-After` within 7 s; at once while it stays silent). A killed server fails statements
//! on their dead sockets; neo4rs checks a pooled connection with one RESET before reuse, and
//! one that fails it (every one to a killed server) is dropped and replaced, so canon
//! recovers by itself when the server is back.
//!
//! A statement cut in the middle of its Bolt exchange (by that 503, by a client that hangs
//! up) may leave its connection out of step: neo4rs hands it back to the pool on drop and
//! checks it with one RESET, which reads the first reply waiting, so a cut statement's
//! leftover SUCCESS passes the check and the next statement on that connection reads the
//! RESET's reply as its own (no rows, silently). So a cut statement retires the whole pool:
//! the next statement opens a new one, and the old connections close once nothing holds them
//! (tests/api/cut_statements.rs: without it, a bucket that exists read as 404 after such cuts).
//! (A statement cut while the pool checks a connection, which is where a stalled server holds
//! a new statement, never reaches that state: deadpool drops a connection cut mid-check.)

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use neo4rs::{BoltBoolean, BoltFloat, BoltInteger, BoltList, BoltMap, BoltNull, BoltString, BoltType, Graph};
use serde_json::{Map, Number, Value};

use super::liveness::{Liveness, Probe};
use super::{CypherEngine, GraphError, Params, Row};

/// Indexes and uniqueness constraints, `;`-separated, each statement idempotent.
const SCHEMA: &str = include_str!("../../../cypher/schema/neo4j.cypher");

/// Neo4j's status code for a write rejected by a uniqueness (or other) constraint.
const CONSTRAINT_VIOLATION: &str = "Neo.ClientError.Schema.ConstraintValidationFailed";

/// Longest wait for one statement on a server that still answers its liveness probe,
/// connecting and retries included (as FalkorDB's): a statement that never ends becomes an
/// `Unavailable` error (503) instead of a request that waits forever.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest wait for `/readyz`'s ping: a stalled server must show as not ready quickly.
const PING_TIMEOUT: Duration = Duration::from_secs(5);
/// First pause before running a statement again after a transient failure; it doubles.
const FIRST_RETRY_PAUSE: Duration = Duration::from_millis(5);
/// Longest pause between two runs of a statement.
const LONGEST_RETRY_PAUSE: Duration = Duration::from_millis(500);

/// Neo4j's status code for a schema rule created concurrently by another client.
const EQUIVALENT_SCHEMA_RULE: &str = "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists";

/// A Neo4j 5 server reached over Bolt, through `neo4rs`'s connection pool.
pub struct Neo4jEngine {
    config: neo4rs::Config,
    /// The current pool, replaced after a statement was cut (see the module's docs).
    pool: std::sync::Mutex<Pool>,
    /// Ends a statement early when the server stops answering.
    liveness: Liveness,
}

/// One generation of the connection pool.
struct Pool {
    graph: Graph,
    generation: u64,
    /// A statement on it was cut mid-exchange: the next statement opens a new pool.
    retired: bool,
}

impl Neo4jEngine {
    /// Sets up the connection pool for `uri` (`bolt://host:7687`, `neo4j://…`, or `host:port`).
    ///
    /// Connections open lazily: an unreachable server shows at the first query (`ping`), while a
    /// malformed URI fails here.
    pub async fn connect(uri: &str, user: &str, password: &str) -> Result<Self, GraphError> {
        let config = neo4rs::ConfigBuilder::default()
            .uri(uri)
            .user(user)
            .password(password)
            .build()
            .map_err(map_error)?;
        let graph = Graph::connect(config.clone()).await.map_err(map_error)?;
        let probe = Neo4jProbe::new(uri, user, password)?;
        Ok(Self {
            config,
            pool: std::sync::Mutex::new(Pool { graph, generation: 0, retired: false }),
            liveness: Liveness::new(Box::new(probe), "Neo4j", true),
        })
    }

    /// The current pool and its generation, a new one first when the last was retired.
    async fn current(&self) -> Result<(Graph, u64), neo4rs::Error> {
        if let Some(current) =
            self.pool.lock().ok().filter(|pool| !pool.retired).map(|p| (p.graph.clone(), p.generation))
        {
            return Ok(current);
        }
        let fresh = Graph::connect(self.config.clone()).await?;
        let mut pool = self.pool.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if pool.retired {
            tracing::info!(
                generation = pool.generation + 1,
                "a new Neo4j connection pool after a statement was cut mid-exchange"
            );
            *pool = Pool { graph: fresh, generation: pool.generation + 1, retired: false };
        }
        Ok((pool.graph.clone(), pool.generation))
    }

    /// One run of a statement, every row drained. Dropped before it ends, it retires its pool.
    ///
    /// Drain every row before converting any: stopping mid-stream would leave it to chance
    /// (fetch batch size) whether the write was committed when a value fails to convert.
    async fn run_once(
        &self,
        query: neo4rs::Query,
        carried: Carried,
    ) -> Result<Vec<neo4rs::Row>, neo4rs::Error> {
        let (graph, generation) = self.current().await?;
        let cut = RetireIfCut { pool: &self.pool, generation, armed: true };
        let result = async {
            let mut raw = Vec::new();
            match carried {
                // `execute` runs an auto-commit transaction, so the statement is atomic on its own.
                Carried::Small => {
                    let mut stream = graph.execute(query).await?;
                    while let Some(row) = stream.next().await? {
                        raw.push(row);
                    }
                }
                // neo4rs's `execute` sends a deep copy of the parameters (so that it can run them
                // again itself); a transaction of its own sends them as they are. When its
                // statement (or COMMIT) fails, Neo4j rolls the transaction back there and then,
                // locks and all (tests/api/failed_statements.rs), though neo4rs cannot send a
                // ROLLBACK after a FAILURE: the connection goes back to the pool in the FAILED
                // state, which the pool's RESET before its next use clears. Only a transaction
                // dropped while still open would keep its locks until that RESET: a cut retires
                // the pool (closing its connections, so Neo4j rolls back); a client-side error
                // mid-stream (a row neo4rs cannot decode) is the one case left, never seen.
                Carried::Large => {
                    let mut transaction = graph.start_txn().await?;
                    let mut stream = transaction.execute(query).await?;
                    while let Some(row) = stream.next(transaction.handle()).await? {
                        raw.push(row);
                    }
                    transaction.commit().await?;
                }
            }
            Ok(raw)
        }
        .await;
        cut.disarm();
        result
    }
}

/// How much a statement's parameters carry, which decides how it runs ([`Neo4jEngine::run_once`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Carried {
    /// Run as an auto-commit statement, neo4rs copying the parameters: a copy of a few values
    /// costs less than the round trips a transaction of its own adds (BEGIN and COMMIT).
    Small,
    /// Run in a transaction of its own: a seed's 500 rows copied cost ~9 % of canon's CPU in a
    /// bulk seed (`make bench-graph` on Neo4j, profiled), the two round trips well under 1 % of
    /// such a statement's time.
    Large,
}

impl Carried {
    /// Lists of this many values in all, or more, make a statement's parameters large.
    const LARGE_LISTS: usize = 64;

    fn of(params: &Params) -> Self {
        let listed: usize = params.values().filter_map(Value::as_array).map(Vec::len).sum();
        if listed >= Self::LARGE_LISTS {
            Carried::Large
        } else {
            Carried::Small
        }
    }
}

/// Retires the pool of a statement dropped before its exchange ended (see the module's docs).
struct RetireIfCut<'a> {
    pool: &'a std::sync::Mutex<Pool>,
    generation: u64,
    armed: bool,
}

impl RetireIfCut<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for RetireIfCut<'_> {
    fn drop(&mut self) {
        if self.armed {
            if let Ok(mut pool) = self.pool.lock() {
                if pool.generation == self.generation {
                    pool.retired = true;
                }
            }
        }
    }
}

/// Neo4j's probe: `RETURN 1` on a pool of one connection of its own, made anew after a failure
/// (a connection cut mid-question is out of step).
struct Neo4jProbe {
    config: neo4rs::Config,
    graph: tokio::sync::Mutex<Option<Graph>>,
}

impl Neo4jProbe {
    fn new(uri: &str, user: &str, password: &str) -> Result<Self, GraphError> {
        let config = neo4rs::ConfigBuilder::default()
            .uri(uri)
            .user(user)
            .password(password)
            .max_connections(1)
            .build()
            .map_err(map_error)?;
        Ok(Self { config, graph: tokio::sync::Mutex::new(None) })
    }
}

#[async_trait]
impl Probe for Neo4jProbe {
    async fn ask(&self) -> Result<(), String> {
        let mut graph = self.graph.lock().await;
        if graph.is_none() {
            // The pool connects at the first question (a stalled server accepts the TCP
            // connection and never greets it: Liveness bounds the whole question).
            *graph = Some(Graph::connect(self.config.clone()).await.map_err(|error| error.to_string())?);
        }
        let Some(graph) = graph.as_ref() else { return Err("no probe connection".into()) };
        let mut rows = graph.execute(neo4rs::query("RETURN 1 AS ok")).await.map_err(|e| e.to_string())?;
        while rows.next().await.map_err(|e| e.to_string())?.is_some() {}
        Ok(())
    }

    async fn forget(&self) {
        *self.graph.lock().await = None;
    }
}

#[async_trait]
impl CypherEngine for Neo4jEngine {
    async fn run(&self, cypher: &str, params: &Params) -> Result<Vec<Row>, GraphError> {
        // Each run converts the parameters afresh: a clone of converted ones cost as much, and
        // runs after the first are rare, while a seed's rows are a deep value (its copies were
        // a good part of canon's CPU per seeded row).
        let query = || -> Result<neo4rs::Query, GraphError> {
            let mut query = neo4rs::query(cypher);
            for (name, value) in params {
                query = query.param(name, to_bolt(value)?);
            }
            Ok(query)
        };
        let carried = Carried::of(params);
        let attempts = async {
            let mut pause = FIRST_RETRY_PAUSE;
            loop {
                match self.run_once(query()?, carried).await {
                    // Neo4j locks as it writes (FalkorDB runs writes one at a time): concurrent
                    // statements may deadlock, and Neo4j then fails one of them with a
                    // transient error. Its auto-commit transaction was rolled back, so running
                    // the statement again is safe; neo4rs retries only failures at RUN, while
                    // most arrive while the rows are pulled.
                    Err(error) if is_transient(&error) => {
                        tracing::debug!(%error, "transient Neo4j failure; running the statement again");
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(LONGEST_RETRY_PAUSE);
                    }
                    other => return other.map_err(map_error),
                }
            }
        };
        let bounded = async {
            match tokio::time::timeout(STATEMENT_TIMEOUT, attempts).await {
                Ok(result) => result,
                Err(_) => Err(GraphError::Unavailable(format!(
                    "Neo4j did not answer within {} s",
                    STATEMENT_TIMEOUT.as_secs()
                ))),
            }
        };
        let writes = super::index_build::writes(cypher);
        self.liveness.bound(writes, bounded).await?.iter().map(row_to_json).collect()
    }

    async fn apply_schema(&self) -> Result<(), GraphError> {
        for statement in schema_statements(SCHEMA) {
            match self.run(&statement, &Params::new()).await {
                // IF NOT EXISTS is not atomic: when two canons start on one Neo4j at once, the
                // one that loses the race is told the rule it asked for already exists.
                Err(GraphError::Query(text)) if text.contains(EQUIVALENT_SCHEMA_RULE) => {}
                other => other.map(drop)?,
            }
        }
        Ok(())
    }

    async fn ping(&self) -> Result<(), GraphError> {
        match tokio::time::timeout(PING_TIMEOUT, self.run("RETURN 1 AS ok", &Params::new())).await {
            Ok(result) => result.map(drop),
            Err(_) => Err(GraphError::Unavailable(format!(
                "Neo4j did not answer a ping within {} s",
                PING_TIMEOUT.as_secs()
            ))),
        }
    }

    fn orders_by_index(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "neo4j"
    }
}

/// Splits a schema file into statements: `//` comment lines go first (comments may contain `;`),
/// then the text is cut on `;` and blank chunks are dropped.
fn schema_statements(text: &str) -> Vec<String> {
    let code: Vec<&str> = text.lines().filter(|line| !line.trim_start().starts_with("//")).collect();
    code.join("\n")
        .split(';')
        .map(str::trim)
        .filter(|statement| !statement.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Converts a JSON parameter into its Bolt value.
///
/// Integers become Bolt Integers (64-bit signed; larger `u64`s are an error rather than a silent
/// float), other numbers Floats, arrays Lists and objects Maps.
pub fn to_bolt(value: &Value) -> Result<BoltType, GraphError> {
    Ok(match value {
        Value::Null => BoltType::Null(BoltNull),
        Value::Bool(flag) => BoltType::Boolean(BoltBoolean::new(*flag)),
        Value::Number(number) => number_to_bolt(number)?,
        Value::String(text) => BoltType::String(BoltString::new(text)),
        Value::Array(items) => {
            let mut list = Vec::with_capacity(items.len());
            for item in items {
                list.push(to_bolt(item)?);
            }
            BoltType::List(BoltList { value: list })
        }
        Value::Object(entries) => {
            // Sized up front: collected from an iterator of `Result`s, a map of a seed row's 17
            // keys grew and rehashed four times (neo4rs's `BoltMap` reserves nothing itself).
            let mut map = BoltMap::with_capacity(entries.len());
            for (key, item) in entries {
                map.put(BoltString::new(key), to_bolt(item)?);
            }
            BoltType::Map(map)
        }
    })
}

fn number_to_bolt(number: &Number) -> Result<BoltType, GraphError> {
    if let Some(integer) = number.as_i64() {
        return Ok(BoltType::Integer(BoltInteger::new(integer)));
    }
    if number.is_u64() {
        return Err(GraphError::Conversion(format!("integer {number} is beyond Bolt's 64-bit signed range")));
    }
    number
        .as_f64()
        .map(|float| BoltType::Float(BoltFloat::new(float)))
        .ok_or_else(|| GraphError::Conversion(format!("number {number} has no Bolt form")))
}

/// Converts a returned Bolt value into JSON.
///
/// Nodes and relationships become their property maps (the shared Cypher returns properties,
/// not identities, so both engines agree).
pub fn from_bolt(value: &BoltType) -> Result<Value, GraphError> {
    Ok(match value {
        BoltType::Null(_) => Value::Null,
        BoltType::Boolean(flag) => Value::Bool(flag.value),
        BoltType::Integer(integer) => Value::from(integer.value),
        BoltType::Float(float) => Number::from_f64(float.value)
            .map(Value::Number)
            .ok_or_else(|| GraphError::Conversion(format!("float {} has no JSON form", float.value)))?,
        BoltType::String(text) => Value::String(text.value.clone()),
        BoltType::List(items) => Value::Array(items.value.iter().map(from_bolt).collect::<Result<_, _>>()?),
        BoltType::Map(entries) => Value::Object(map_from_bolt(entries)?),
        BoltType::Node(node) => Value::Object(map_from_bolt(&node.properties)?),
        BoltType::Relation(relation) => Value::Object(map_from_bolt(&relation.properties)?),
        BoltType::UnboundedRelation(relation) => Value::Object(map_from_bolt(&relation.properties)?),
        // No JSON form both engines would agree on: fail loudly rather than invent a string one.
        other => {
            return Err(GraphError::Conversion(format!(
                "Neo4j {} values are not supported",
                kind_name(other)
            )))
        }
    })
}

fn map_from_bolt(entries: &BoltMap) -> Result<Map<String, Value>, GraphError> {
    entries.value.iter().map(|(key, item)| Ok((key.value.clone(), from_bolt(item)?))).collect()
}

fn kind_name(value: &BoltType) -> &'static str {
    match value {
        BoltType::String(_) => "string",
        BoltType::Boolean(_) => "boolean",
        BoltType::Map(_) => "map",
        BoltType::Null(_) => "null",
        BoltType::Integer(_) => "integer",
        BoltType::Float(_) => "float",
        BoltType::List(_) => "list",
        BoltType::Node(_) => "node",
        BoltType::Relation(_) | BoltType::UnboundedRelation(_) => "relationship",
        BoltType::Point2D(_) | BoltType::Point3D(_) => "point",
        BoltType::Bytes(_) => "byte array",
        BoltType::Path(_) => "path",
        BoltType::Duration(_) => "duration",
        BoltType::Date(_) => "date",
        BoltType::Time(_) => "time",
        BoltType::LocalTime(_) => "local time",
        BoltType::DateTime(_) | BoltType::DateTimeZoneId(_) => "date-time",
        BoltType::LocalDateTime(_) => "local date-time",
    }
}

/// Converts one `neo4rs` row into a JSON row keyed by column alias.
pub fn row_to_json(row: &neo4rs::Row) -> Result<Row, GraphError> {
    // neo4rs keeps the column names private; deserializing the row as a map is its public way
    // to hand back every (alias, value) pair. Its deserializer is faithful except that a point
    // makes the row unreadable (a Conversion error) and a duration comes out as the list
    // `[seconds, nanoseconds]`; the shared Cypher returns neither.
    let columns: HashMap<String, BoltType> =
        row.to_strict().map_err(|error| GraphError::Conversion(format!("unreadable Neo4j row: {error}")))?;
    columns.iter().map(|(alias, value)| Ok((alias.clone(), from_bolt(value)?))).collect()
}

fn map_error(error: neo4rs::Error) -> GraphError {
    use neo4rs::Error as E;
    match &error {
        E::Neo4j(failure) if failure.code() == CONSTRAINT_VIOLATION => {
            GraphError::ConstraintViolation(failure.message().to_owned())
        }
        E::Neo4j(failure) if is_unavailable_code(failure.code()) => {
            GraphError::Unavailable(error.to_string())
        }
        // A failure while rows are pulled (where Neo4j reports most write errors, constraint
        // violations included) reaches us only as the Debug text of Bolt's FAILURE message.
        E::UnexpectedMessage(text) => match failure_field(text, "code") {
            Some(code) => {
                let message = failure_field(text, "message").unwrap_or_else(|| text.clone());
                if code == CONSTRAINT_VIOLATION {
                    GraphError::ConstraintViolation(message)
                } else if is_unavailable_code(&code) {
                    GraphError::Unavailable(format!("{code}: {message}"))
                } else {
                    GraphError::Query(format!("{code}: {message}"))
                }
            }
            None => GraphError::Query(error.to_string()),
        },
        E::IOError { .. }
        | E::ConnectionError
        | E::UrlParseError(_)
        | E::UnsupportedScheme(_)
        | E::InvalidDnsName(_)
        | E::InvalidConfig
        | E::UnsupportedVersion(_)
        | E::AuthenticationError(_) => GraphError::Unavailable(error.to_string()),
        E::ConversionError | E::DeserializationError(_) => GraphError::Conversion(error.to_string()),
        _ => GraphError::Query(error.to_string()),
    }
}

/// Whether Neo4j failed the statement for a passing reason (a deadlock between concurrent
/// transactions, a lock wait that timed out), so the same statement may simply run again.
/// A database that is down is transient too by its code, but it is `Unavailable` instead:
/// retrying it would only hold the request until the statement timeout.
fn is_transient(error: &neo4rs::Error) -> bool {
    let code = match error {
        neo4rs::Error::Neo4j(failure) => Some(failure.code().to_owned()),
        neo4rs::Error::UnexpectedMessage(text) => failure_field(text, "code"),
        _ => None,
    };
    code.is_some_and(|code| code.starts_with("Neo.TransientError.") && !is_unavailable_code(&code))
}

/// Codes meaning the server cannot serve us now (credentials, database down), not a bad query.
fn is_unavailable_code(code: &str) -> bool {
    code.starts_with("Neo.ClientError.Security.")
        || code == "Neo.TransientError.General.DatabaseUnavailable"
        || code == "Neo.ClientError.Database.DatabaseNotFound"
}

/// Reads one string field (`code`, `message`) out of the Debug text of a Bolt FAILURE, undoing
/// Debug's escapes; `None` when the text is not such a failure.
fn failure_field(text: &str, field: &str) -> Option<String> {
    let marker = format!("BoltString {{ value: \"{field}\" }}: String(BoltString {{ value: \"");
    let start = text.find(&marker)? + marker.len();
    let mut value = String::new();
    let mut chars = text[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(value),
            '\\' => match chars.next()? {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                'r' => value.push('\r'),
                '0' => value.push('\0'),
                // `\u{…}` escapes only non-printable characters: keep them as written.
                'u' => value.push_str("\\u"),
                escaped => value.push(escaped),
            },
            c => value.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use neo4rs::{BoltNode, BoltPoint2D, BoltRelation, BoltUnboundedRelation};
    use serde_json::json;

    #[test]
    fn a_statement_carrying_many_listed_values_runs_in_a_transaction_of_its_own() {
        let params = |rows: usize, keys: usize| -> Params {
            let mut params = Params::new();
            params.insert("rows".into(), json!(vec![json!({"canonical": "Acme"}); rows]));
            params.insert("keys".into(), json!(vec!["k"; keys]));
            params.insert("accountID".into(), json!("acc_a"));
            params
        };
        assert_eq!(Carried::of(&Params::new()), Carried::Small);
        assert_eq!(Carried::of(&params(1, 10)), Carried::Small, "a page's or one entity's statement");
        assert_eq!(Carried::of(&params(40, 23)), Carried::Small, "63 values in all");
        assert_eq!(Carried::of(&params(40, 24)), Carried::Large, "64");
        assert_eq!(Carried::of(&params(500, 0)), Carried::Large, "a seed's chunk");
    }

    fn bolt_map(entries: Vec<(&str, BoltType)>) -> BoltMap {
        entries.into_iter().map(|(key, value)| (BoltString::new(key), value)).collect()
    }

    fn neo4rs_row(columns: Vec<(&str, BoltType)>) -> neo4rs::Row {
        let (fields, data): (Vec<_>, Vec<_>) =
            columns.into_iter().map(|(alias, value)| (BoltType::from(alias), value)).unzip();
        neo4rs::Row::new(BoltList::from(fields), BoltList::from(data))
    }

    /// The Debug text neo4rs gives for a FAILURE received while pulling rows.
    fn pull_failure_text(code: &str, message: &str) -> String {
        let metadata = bolt_map(vec![("code", BoltType::from(code)), ("message", BoltType::from(message))]);
        format!("unexpected response for PULL: Ok(Failure(Failure {{ metadata: {metadata:?} }}))")
    }

    #[test]
    fn scalars_convert_to_their_bolt_kinds() {
        assert_eq!(to_bolt(&json!(null)).unwrap(), BoltType::Null(BoltNull));
        assert_eq!(to_bolt(&json!(true)).unwrap(), BoltType::Boolean(BoltBoolean::new(true)));
        assert_eq!(to_bolt(&json!("héllo")).unwrap(), BoltType::String(BoltString::new("héllo")));
    }

    #[test]
    fn integers_become_bolt_integers_and_fractions_become_floats() {
        assert_eq!(to_bolt(&json!(42)).unwrap(), BoltType::Integer(BoltInteger::new(42)));
        assert_eq!(to_bolt(&json!(-7)).unwrap(), BoltType::Integer(BoltInteger::new(-7)));
        assert_eq!(to_bolt(&json!(i64::MAX as u64)).unwrap(), BoltType::Integer(BoltInteger::new(i64::MAX)));
        assert_eq!(to_bolt(&json!(2.5)).unwrap(), BoltType::Float(BoltFloat::new(2.5)));
        // JSON `1.0` is a float on the wire too; it must not be silently narrowed.
        assert_eq!(to_bolt(&json!(1.0)).unwrap(), BoltType::Float(BoltFloat::new(1.0)));
    }

    #[test]
    fn a_u64_beyond_the_signed_range_is_a_conversion_error() {
        let error = to_bolt(&json!({ "big": [u64::MAX] })).unwrap_err();
        assert!(
            matches!(&error, GraphError::Conversion(text) if text.contains(&u64::MAX.to_string())),
            "{error:?}"
        );
    }

    #[test]
    fn arrays_and_objects_become_lists_and_maps() {
        let bolt = to_bolt(&json!({ "ids": ["a", 1], "empty": {} })).unwrap();
        let expected = BoltType::Map(bolt_map(vec![
            ("ids", BoltType::List(BoltList::from(vec![BoltType::from("a"), BoltType::from(1_i64)]))),
            ("empty", BoltType::Map(BoltMap::new())),
        ]));
        assert_eq!(bolt, expected);
    }

    #[test]
    fn nested_maps_and_lists_survive_a_round_trip() {
        let value = json!({
            "name": "bucket",
            "count": 3,
            "ratio": 0.25,
            "active": false,
            "missing": null,
            "tags": ["x", "y", []],
            "nested": { "deeper": { "list": [1, 2.5, "three", null, { "k": true }] } },
        });
        assert_eq!(from_bolt(&to_bolt(&value).unwrap()).unwrap(), value);
    }

    #[test]
    fn integer_and_float_kinds_are_kept_apart_on_the_way_back() {
        let integer = from_bolt(&BoltType::Integer(BoltInteger::new(2))).unwrap();
        let float = from_bolt(&BoltType::Float(BoltFloat::new(2.0))).unwrap();
        assert!(integer.is_i64());
        assert!(float.is_f64());
        assert_eq!(from_bolt(&BoltType::Integer(BoltInteger::new(i64::MIN))).unwrap(), json!(i64::MIN));
    }

    #[test]
    fn a_non_finite_float_is_a_conversion_error() {
        let error = from_bolt(&BoltType::Float(BoltFloat::new(f64::NAN))).unwrap_err();
        assert!(matches!(error, GraphError::Conversion(_)), "{error:?}");
    }

    #[test]
    fn nodes_and_relationships_become_their_property_maps() {
        let properties = bolt_map(vec![("id", BoltType::from("b1")), ("size", BoltType::from(10_i64))]);
        let node = BoltType::Node(BoltNode::new(
            BoltInteger::new(7),
            BoltList::from(vec![BoltType::from("Bucket")]),
            properties.clone(),
        ));
        let relation = BoltType::Relation(BoltRelation {
            id: BoltInteger::new(1),
            start_node_id: BoltInteger::new(7),
            end_node_id: BoltInteger::new(8),
            typ: BoltString::new("HAS"),
            properties: properties.clone(),
        });
        let unbounded = BoltType::UnboundedRelation(BoltUnboundedRelation::new(
            BoltInteger::new(1),
            BoltString::new("HAS"),
            properties,
        ));
        let expected = json!({ "id": "b1", "size": 10 });
        assert_eq!(from_bolt(&node).unwrap(), expected);
        assert_eq!(from_bolt(&relation).unwrap(), expected);
        assert_eq!(from_bolt(&unbounded).unwrap(), expected);
    }

    #[test]
    fn unsupported_kinds_are_conversion_errors_naming_the_kind() {
        let cases = [
            (BoltType::from(vec![1_u8, 2]), "byte array"),
            (BoltType::from(std::time::Duration::from_secs(5)), "duration"),
            (
                BoltType::Point2D(BoltPoint2D {
                    sr_id: BoltInteger::new(7203),
                    x: BoltFloat::new(1.0),
                    y: BoltFloat::new(2.0),
                }),
                "point",
            ),
        ];
        for (value, kind) in cases {
            let error = from_bolt(&BoltType::List(BoltList::from(vec![value]))).unwrap_err();
            assert!(
                matches!(&error, GraphError::Conversion(text) if text.contains(kind)),
                "{kind}: {error:?}"
            );
        }
    }

    #[test]
    fn a_row_with_several_columns_becomes_a_map_by_alias() {
        let row = neo4rs_row(vec![
            ("id", BoltType::from("b1")),
            ("count", BoltType::from(3_i64)),
            ("score", BoltType::from(0.5)),
            ("tags", BoltType::List(BoltList::from(vec![BoltType::from("t")]))),
            (
                "bucket",
                BoltType::Node(BoltNode::new(
                    BoltInteger::new(1),
                    BoltList::from(vec![BoltType::from("Bucket")]),
                    bolt_map(vec![("name", BoltType::from("Main"))]),
                )),
            ),
            ("meta", BoltType::Map(bolt_map(vec![("live", BoltType::from(true))]))),
        ]);
        let expected = json!({
            "id": "b1",
            "count": 3,
            "score": 0.5,
            "tags": ["t"],
            "bucket": { "name": "Main" },
            "meta": { "live": true },
        });
        assert_eq!(Value::Object(row_to_json(&row).unwrap()), expected);
    }

    #[test]
    fn a_null_column_stays_present_as_null() {
        let row = neo4rs_row(vec![("found", BoltType::Null(BoltNull)), ("id", BoltType::from("x"))]);
        let converted = row_to_json(&row).unwrap();
        assert_eq!(converted.get("found"), Some(&Value::Null));
        assert_eq!(converted.len(), 2);
    }

    #[test]
    fn a_row_without_columns_is_an_empty_map() {
        let row = neo4rs_row(vec![]);
        assert!(row_to_json(&row).unwrap().is_empty());
    }

    #[test]
    fn a_row_holding_an_unsupported_kind_is_a_conversion_error_naming_it() {
        let date = chrono::NaiveDate::from_ymd_opt(2024, 1, 2).unwrap();
        for (value, kind) in [(BoltType::from(date), "date"), (BoltType::from(vec![1_u8, 2]), "byte array")] {
            let row = neo4rs_row(vec![("id", BoltType::from("x")), ("when", value)]);
            let error = row_to_json(&row).unwrap_err();
            assert!(
                matches!(&error, GraphError::Conversion(text) if text.contains(kind)),
                "{kind}: {error:?}"
            );
        }
    }

    #[test]
    fn a_row_holding_a_point_is_a_conversion_error() {
        let point = BoltType::Point2D(BoltPoint2D {
            sr_id: BoltInteger::new(7203),
            x: BoltFloat::new(1.0),
            y: BoltFloat::new(2.0),
        });
        let error = row_to_json(&neo4rs_row(vec![("at", point)])).unwrap_err();
        assert!(matches!(error, GraphError::Conversion(_)), "{error:?}");
    }

    #[test]
    fn a_duration_in_a_row_arrives_flattened_by_neo4rs() {
        // Pins the neo4rs 0.8 quirk documented on `row_to_json`: if this starts failing, neo4rs
        // keeps durations now and they are rejected like the other temporal kinds.
        let took = BoltType::from(std::time::Duration::from_millis(1500));
        let row = row_to_json(&neo4rs_row(vec![("took", took)])).unwrap();
        assert_eq!(row.get("took"), Some(&json!([1, 500_000_000])));
    }

    #[test]
    fn schema_statements_drop_comment_lines_and_blank_chunks() {
        let text = "// header; with a semicolon\nCREATE INDEX a IF NOT EXISTS\n  FOR (n:A) ON (n.x);\n\n// only a comment;\n;\nCREATE INDEX b FOR (n:B) ON (n.y);\n";
        assert_eq!(
            schema_statements(text),
            vec![
                "CREATE INDEX a IF NOT EXISTS\n  FOR (n:A) ON (n.x)".to_owned(),
                "CREATE INDEX b FOR (n:B) ON (n.y)".to_owned(),
            ]
        );
    }

    #[test]
    fn the_bundled_schema_splits_into_create_statements() {
        let statements = schema_statements(SCHEMA);
        assert!(!statements.is_empty());
        for statement in &statements {
            assert!(statement.starts_with("CREATE "), "{statement}");
            assert!(!statement.contains("//"), "{statement}");
        }
    }

    #[test]
    fn a_constraint_failure_while_pulling_maps_to_constraint_violation() {
        // (`neo4rs::Neo4jError`, the form a failure at RUN takes, has no public constructor.)
        let text = pull_failure_text(
            CONSTRAINT_VIOLATION,
            "Node(0) already exists with label `Bucket` and property `id` = 'b1'",
        );
        let error = map_error(neo4rs::Error::UnexpectedMessage(text));
        assert!(
            matches!(&error, GraphError::ConstraintViolation(message)
                if message == "Node(0) already exists with label `Bucket` and property `id` = 'b1'"),
            "{error:?}"
        );
    }

    #[test]
    fn a_pull_failure_message_is_unescaped() {
        let text =
            pull_failure_text("Neo.ClientError.Statement.ArithmeticError", "said \"no\"\nand C:\\ left");
        let error = map_error(neo4rs::Error::UnexpectedMessage(text));
        assert!(
            matches!(&error, GraphError::Query(message)
                if message == "Neo.ClientError.Statement.ArithmeticError: said \"no\"\nand C:\\ left"),
            "{error:?}"
        );
    }

    #[test]
    fn connection_failures_map_to_unavailable() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        for error in [
            neo4rs::Error::from(refused),
            neo4rs::Error::ConnectionError,
            neo4rs::Error::AuthenticationError("bad credentials".to_owned()),
            neo4rs::Error::UnsupportedScheme("http".to_owned()),
        ] {
            let mapped = map_error(error);
            assert!(matches!(mapped, GraphError::Unavailable(_)), "{mapped:?}");
        }
        let text = pull_failure_text("Neo.TransientError.General.DatabaseUnavailable", "database is down");
        let mapped = map_error(neo4rs::Error::UnexpectedMessage(text));
        assert!(matches!(mapped, GraphError::Unavailable(_)), "{mapped:?}");
    }

    #[test]
    fn a_deadlock_while_pulling_is_run_again_but_a_database_down_or_a_bad_query_is_not() {
        let deadlock = pull_failure_text("Neo.TransientError.Transaction.DeadlockDetected", "cycle");
        assert!(is_transient(&neo4rs::Error::UnexpectedMessage(deadlock)));
        let down = pull_failure_text("Neo.TransientError.General.DatabaseUnavailable", "down");
        assert!(!is_transient(&neo4rs::Error::UnexpectedMessage(down)));
        let syntax = pull_failure_text("Neo.ClientError.Statement.SyntaxError", "bad");
        assert!(!is_transient(&neo4rs::Error::UnexpectedMessage(syntax)));
        assert!(!is_transient(&neo4rs::Error::ConnectionError));
    }

    #[test]
    fn other_failures_map_to_query_errors() {
        let unexpected = map_error(neo4rs::Error::UnexpectedMessage("odd reply".to_owned()));
        assert!(
            matches!(&unexpected, GraphError::Query(text) if text.contains("odd reply")),
            "{unexpected:?}"
        );
        let long = map_error(neo4rs::Error::StringTooLong);
        assert!(matches!(long, GraphError::Query(_)), "{long:?}");
    }
}
