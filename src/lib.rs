#![recursion_limit = "256"]
//! canon: turns documents into a curated knowledge graph.
//!
//! Layers, top to bottom: the transports (`api` for REST, `graphql`, `mcp`), what they share
//! (`access`: the state, the caller, limits and metrics), services (`graph` — the knowledge
//! graph with its curation —, `calls`, `collections`, `delivery`, `accuracy`, `views`, `jobs`…),
//! storage behind narrow traits (`store::graph::CypherEngine`, `store::records`,
//! `store::vectors::VectorStore`) and embedders (`embeddings::Embedder`).

/// mimalloc instead of glibc's malloc, for every binary built on this crate (the server, its
/// tests and benches): bulk seeding spent ~30 % of canon's CPU in glibc's malloc and free
/// (JSON rows, Cypher parameters), CPU the graph engine shares on small machines.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod access;
pub mod accuracy;
pub mod api;
pub mod app;
pub mod calls;
pub mod collections;
pub mod config;
pub mod confusion;
pub mod connectors;
pub mod cpu;
pub mod dashboard;
pub mod data_dir;
pub mod datasets;
pub mod delivery;
pub mod documents;
pub mod egress;
pub mod embeddings;
pub mod engines;
pub mod error;
pub mod files;
pub mod fs;
pub mod functions;
pub mod graph;
pub mod graphql;
pub mod ids;
pub mod instances;
pub mod jobs;
pub mod json_size;
pub mod keys;
pub mod mcp;
pub mod memo;
pub mod pagination;
pub mod patterns;
pub mod provision;
pub mod secrets;
pub mod shaping;
pub mod shares;
pub mod signature;
pub mod store;
pub mod text;
pub mod tokens;
pub mod versions;
pub mod views;
pub mod wire;
