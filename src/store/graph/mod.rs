//! The graph store: one set of Cypher queries (in `cypher/`) run by either engine.
//!
//! Engines are thin: they only turn JSON parameters into the engine's literal form and the
//! engine's rows back into JSON. Everything else (which query, what it means) lives above
//! them, so FalkorDB and Neo4j run the same Cypher, but for the few pairs where one engine's
//! index does what the other's cannot (`review_queue.cypher` beside
//! `review_queue_ordered.cypher`: see [`CypherEngine::orders_by_index`]), and for Neo4j's
//! `USING INDEX` hints, which the FalkorDB engine drops before sending (FalkorDB has no such
//! clause; see `falkordb::without_index_hints`).

pub mod embedded;
pub mod falkordb;
pub mod index_build;
pub mod liveness;
pub mod neo4j;
pub mod replay_bound;
mod resp;
pub mod writes_in_flight;

use async_trait::async_trait;
use serde_json::{Map, Value};

/// How long the engine itself may run a read before stopping it: canon stops waiting at 60 s
/// (a stall, see `liveness`), and a read it abandoned kept running on the server, holding one
/// of its few threads, for however long it took. Under canon's wait, so the engine's own
/// "timed out" arrives first and says what happened. FalkorDB is sent it with every read
/// (writes there run to their end: the server does not stop them); Neo4j is given it as its
/// `db.transaction.timeout` (the test launcher and `compose.yaml`).
pub const READ_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(50);

/// Query parameters, by name (`$name` in the Cypher text).
pub type Params = Map<String, Value>;
/// One result row, by column alias.
pub type Row = Map<String, Value>;

/// Errors of the graph layer.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// A uniqueness constraint rejected the write (the caller decides what it means).
    #[error("constraint violation: {0}")]
    ConstraintViolation(String),
    /// The engine could not be reached.
    #[error("graph engine unavailable: {0}")]
    Unavailable(String),
    /// The engine took the query and stopped answering (stalled or deadlocked); canon
    /// stopped waiting (see `liveness`).
    #[error("graph engine not answering: {0}")]
    Stalled(String),
    /// The engine stopped a statement at its time limit (it asked for too much): FalkorDB
    /// stops reads only, Neo4j any statement.
    #[error("graph statement stopped at its time limit of {} s", .0.as_secs())]
    TimedOut(std::time::Duration),
    /// The engine rejected or failed the query.
    #[error("graph query failed: {0}")]
    Query(String),
    /// A parameter or a returned value has no representation on the other side.
    #[error("graph value conversion failed: {0}")]
    Conversion(String),
    /// A parameter holds a character the engine must never receive (the caller's input).
    #[error("parameter {parameter} holds U+{:04X} at character {position}", u32::from(*found))]
    Unsendable { parameter: String, found: char, position: usize },
}

/// The one narrow trait every graph engine implements.
#[async_trait]
pub trait CypherEngine: Send + Sync + 'static {
    /// Runs one statement (atomic on both engines) and returns its rows. The parameters are
    /// borrowed (both engines only read them): a bulk seed takes its rows back after the
    /// statement instead of copying every row for it.
    async fn run(&self, cypher: &str, params: &Params) -> Result<Vec<Row>, GraphError>;
    /// Applies this engine's schema (indexes, uniqueness constraints); idempotent.
    async fn apply_schema(&self) -> Result<(), GraphError>;
    /// Cheap reachability check for `/readyz`.
    async fn ping(&self) -> Result<(), GraphError>;
    /// What the engine is still building after a start (its indexes), shown by `/readyz`;
    /// it answers meanwhile, more slowly.
    fn building(&self) -> Option<String> {
        None
    }
    /// Whether a range index hands rows out in the indexed property's order, so a page
    /// `ORDER BY id LIMIT n` after a cursor reads about n rows (Neo4j's does). FalkorDB's range
    /// scan reads its whole range, out of order, so pages walk creation-time windows there.
    fn orders_by_index(&self) -> bool {
        false
    }
    /// Engine name as shown in `/readyz`.
    fn name(&self) -> &'static str;
}

/// Builds a [`Params`] map: `params! { "id" => id, "limit" => 50 }`.
#[macro_export]
macro_rules! params {
    ($($key:expr => $value:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut map = $crate::store::graph::Params::with_capacity(<[&str]>::len(&[$(stringify!($key)),*]));
        $( map.insert(($key).to_string(), serde_json::json!($value)); )*
        map
    }};
}
