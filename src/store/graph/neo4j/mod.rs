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
//! A reply neo4rs cannot read (a value of a kind it does not know) leaves its connection the
//! same way, its transaction open on the server: it retires the pool too.
//! (A statement cut while the pool checks a connection, which is where a stalled server holds
//! a new statement, never reaches that state: deadpool drops a connection cut mid-check.)

use std::time::Duration;

use async_trait::async_trait;
use neo4rs::Graph;
use serde_json::Value;

mod bolt;
mod failures;

use super::liveness::{Liveness, Probe};
use super::{CypherEngine, GraphError, Params, Row};
use bolt::{row_to_json, to_bolt};
use failures::{is_transient, leaves_connection_out_of_step, map_error};

/// Indexes and uniqueness constraints, `;`-separated, each statement idempotent.
const SCHEMA: &str = include_str!("../../../../cypher/schema/neo4j.cypher");

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

    /// One run of a statement, every row drained. Dropped before it ends, or ended by a reply
    /// neo4rs cannot read, it retires its pool.
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
                // state, which the pool's RESET before its next use clears. A transaction
                // dropped while still open would keep its locks until that RESET: a cut and a
                // reply neo4rs cannot read retire the pool (closing its connections, so Neo4j
                // rolls back; see below).
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
        match &result {
            // neo4rs could not read a reply (a value of a kind it does not know): the rest of it
            // is still on the wire, and the statement's transaction, locks and all, still open.
            // Retire the pool as after a cut, and open the next one now, so that the old one's
            // connections close as soon as the statements still on them end, not at the next
            // statement (tests/api/failed_statements.rs).
            Err(error) if leaves_connection_out_of_step(error) => {
                tracing::warn!(%error, "a Neo4j reply could not be read; its connection pool is retired");
                drop(graph);
                drop(cut);
                if let Err(error) = self.current().await {
                    tracing::warn!(%error, "no new Neo4j connection pool yet; the next statement opens one");
                }
            }
            _ => cut.disarm(),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
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
}
