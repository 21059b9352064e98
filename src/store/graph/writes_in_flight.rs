//! The writes canon has sent to its embedded FalkorDB and not yet seen answered.
//!
//! A large write holds Redis' main thread while it commits, and PING waits behind it: on a
//! loaded machine a million-node CREATE left the child silent for over 30 s, and the
//! supervisor aborted it as hung, losing the write. The supervisor reads this register: a
//! silence is excused while a write that was already waiting when the child last answered
//! (so may be what holds it) is younger than [`super::falkordb::RESPONSE_TIMEOUT`]; past that the write has
//! failed with 503 on canon's side anyway. A write sent during the silence excuses nothing,
//! so a stream of new writes cannot hide a real hang. Reads use the same excuse (see
//! `liveness`): a read waiting behind a committing write is not a stalled server.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// How long a silence excused by a write stays excused once that write is answered: the child
/// may stay silent a moment after answering a large write (seen once in CI: the supervisor
/// aborted a child at a 1 s hung limit just as a 2,000,000-node CREATE had been answered).
pub const AFTER_A_WRITE: std::time::Duration = std::time::Duration::from_secs(5);

/// Shared by the engine (which registers each write) and the supervisor (which reads it).
#[derive(Debug, Default)]
pub struct WritesInFlight {
    next: AtomicU64,
    started: Mutex<BTreeMap<u64, Instant>>,
}

/// One registered write; dropping it (answered, failed or cancelled) removes it.
pub struct InFlight {
    register: Arc<WritesInFlight>,
    id: u64,
}

impl WritesInFlight {
    /// Registers a write about to be sent.
    pub fn begin(self: &Arc<Self>) -> InFlight {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut started) = self.started.lock() {
            started.insert(id, Instant::now());
        }
        InFlight { register: self.clone(), id }
    }

    /// When the newest write still waiting that was sent at or before `moment` was sent.
    pub fn newest_sent_by(&self, moment: Instant) -> Option<Instant> {
        let started = self.started.lock().ok()?;
        started.values().filter(|sent| **sent <= moment).max().copied()
    }

    /// Whether a silence that began after `answered` may be a write still committing: one that
    /// was already waiting then and has not reached its own response timeout, `limit`.
    pub fn excuse_silence_since(&self, answered: Instant, limit: std::time::Duration) -> bool {
        self.newest_sent_by(answered).is_some_and(|sent| sent.elapsed() < limit)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut started) = self.register.started.lock() {
            started.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WritesInFlight;
    use std::sync::Arc;
    use tokio::time::Instant;

    #[test]
    fn a_write_counts_until_its_guard_is_dropped_and_only_for_moments_after_it_was_sent() {
        let register = Arc::new(WritesInFlight::default());
        let before = Instant::now();
        assert!(register.newest_sent_by(Instant::now()).is_none());
        let first = register.begin();
        let second = register.begin();
        let now = Instant::now();
        let newest = register.newest_sent_by(now).unwrap();
        assert!(register.newest_sent_by(before).is_none(), "a write sent later excuses nothing earlier");
        drop(second);
        assert!(register.newest_sent_by(now).unwrap() <= newest, "the older write still counts");
        drop(first);
        assert!(register.newest_sent_by(now).is_none());
    }
}
