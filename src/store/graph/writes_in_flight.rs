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

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// How long a silence excused by a write stays excused once that write is answered: the child
/// may stay silent a moment after answering a large write (seen once in CI: the supervisor
/// aborted a child at a 1 s hung limit just as a 2,000,000-node CREATE had been answered).
pub const AFTER_A_WRITE: std::time::Duration = std::time::Duration::from_secs(5);

/// A write that ended (answered, failed or cancelled): when it was sent and when it ended.
type Ended = (Instant, Instant);

/// Shared by the engine (which registers each write) and the supervisor (which reads it).
#[derive(Debug)]
pub struct WritesInFlight {
    next: AtomicU64,
    started: Mutex<BTreeMap<u64, Instant>>,
    /// Writes that ended within `grace`, oldest end first.
    ended: Mutex<VecDeque<Ended>>,
    /// [`AFTER_A_WRITE`] (shorter in tests).
    grace: std::time::Duration,
}

impl Default for WritesInFlight {
    fn default() -> Self {
        Self::with_grace(AFTER_A_WRITE)
    }
}

/// One registered write; dropping it (answered, failed or cancelled) removes it.
pub struct InFlight {
    register: Arc<WritesInFlight>,
    id: u64,
}

impl WritesInFlight {
    /// A register whose silences stay excused `grace` after their write ended.
    pub fn with_grace(grace: std::time::Duration) -> Self {
        Self { next: AtomicU64::new(0), started: Mutex::default(), ended: Mutex::default(), grace }
    }

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
    /// was already waiting then and has not reached its own response timeout, `limit`, or
    /// ended less than [`AFTER_A_WRITE`] ago.
    pub fn excuse_silence_since(&self, answered: Instant, limit: std::time::Duration) -> bool {
        if self.newest_sent_by(answered).is_some_and(|sent| sent.elapsed() < limit) {
            return true;
        }
        let Ok(mut ended) = self.ended.lock() else { return false };
        self.forget_older(&mut ended);
        ended.iter().any(|(sent, _)| *sent <= answered)
    }

    /// Drops the ends past the grace.
    fn forget_older(&self, ended: &mut VecDeque<Ended>) {
        while ended.front().is_some_and(|(_, at)| at.elapsed() >= self.grace) {
            ended.pop_front();
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let sent = self.register.started.lock().ok().and_then(|mut started| started.remove(&self.id));
        if let (Some(sent), Ok(mut ended)) = (sent, self.register.ended.lock()) {
            self.register.forget_older(&mut ended);
            ended.push_back((sent, Instant::now()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WritesInFlight;
    use std::sync::Arc;
    use std::time::Duration;
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

    #[test]
    fn a_silence_stays_excused_for_a_while_after_the_write_that_excused_it_ended() {
        let grace = Duration::from_secs(1);
        let register = Arc::new(WritesInFlight::with_grace(grace));
        let limit = Duration::from_secs(60);
        assert!(!register.excuse_silence_since(Instant::now(), limit), "no write: a silence is a stall");
        let write = register.begin();
        let answered = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let later = register.begin();
        assert!(register.excuse_silence_since(answered, limit), "a write sent before the silence");
        assert!(!register.excuse_silence_since(answered - Duration::from_secs(1), limit), "sent after");
        let ended = Instant::now();
        drop(write);
        drop(later);
        assert!(register.excuse_silence_since(answered, limit), "just after the write ended");
        assert!(
            !register.excuse_silence_since(answered - Duration::from_secs(1), limit),
            "a write that ended but was sent after the answer excuses nothing"
        );
        std::thread::sleep(grace.saturating_sub(ended.elapsed()) + Duration::from_millis(20));
        assert!(!register.excuse_silence_since(answered, limit), "the grace has run out");
    }
}
