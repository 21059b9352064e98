//! CPU-bound work a tenant can make long (its patterns over its documents, its schemas over
//! its outputs) run where they cannot stall the server.
//!
//! `canon serve` runs one async worker per core: a call whose engine matched patterns for
//! seconds on a worker held that worker, and two such calls held both on a 2-core machine,
//! so no other tenant's request was answered meanwhile. [`blocking`] runs such work with
//! `tokio::task::block_in_place`: the worker's other tasks move to a new worker while this
//! one blocks. Every such piece of work is bounded too (see the callers); this only keeps its
//! bound from becoming everyone's wait.

use tokio::runtime::{Handle, RuntimeFlavor};

/// Runs `work` as blocking on a multi-threaded runtime; directly elsewhere (a
/// current-thread runtime, as in some tests, cannot hand its tasks over; no runtime, as in
/// unit tests, has none to stall).
pub fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match Handle::try_current().map(|handle| handle.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}
