//! Storage behind narrow interfaces: the graph (Cypher engines) and records (SQL).

pub mod graph;
pub mod records;
