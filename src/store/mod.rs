//! Storage behind narrow interfaces: the graph (Cypher engines), records (SQL) and vectors
//! (points with payload).

pub mod graph;
pub mod records;
pub mod vectors;
