//! One integration-test binary for the whole HTTP surface, over real HTTP and real backends.

mod auth;
mod buckets;
mod cli;
mod collections;
mod entity_types;
mod helpers;
mod jobs;
mod lifecycle;
mod platform;
mod restart;
mod sdk;
