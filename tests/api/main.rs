//! One integration-test binary for the whole HTTP surface, over real HTTP and real backends.

mod auth;
mod buckets;
mod entity_types;
mod helpers;
mod jobs;
mod platform;
mod restart;
