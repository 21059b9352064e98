//! One integration-test binary for the whole HTTP surface, over real HTTP and real backends.

mod auth;
mod buckets;
mod calls;
mod cli;
mod collections;
mod curation;
mod engines;
mod entities;
mod entity_types;
mod functions;
mod graph;
mod graphql;
mod helpers;
mod hostile_input;
mod jobs;
mod lifecycle;
mod memory_bounds;
mod pipeline_inputs;
mod platform;
mod private_files;
mod restart;
mod review;
mod sdk;
mod security;
mod suggestions;
mod workflows;
