//! A small, bounded, short-lived memory of values read from a store, for reads so frequent
//! that the store's round trip is most of their cost (API keys, buckets).
//!
//! A value is trusted for the memo's `trust_for`, then read again. Writes in this process
//! [`Memo::forget`] what they change, and a read that began before a forget does not store
//! what it read ([`Memo::put_if_unchanged`]), so this process never serves a value older
//! than its own last write. Other processes sharing the store see a change within
//! `trust_for`. When full, the memory is cleared: it only saves reads.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub struct Memo<K, V> {
    entries: Mutex<HashMap<K, (V, Instant)>>,
    trust_for: Duration,
    capacity: usize,
    /// Bumped by every forget: a read that saw an older revision may hold a stale value.
    revision: AtomicU64,
}

impl<K: Hash + Eq, V: Clone> Memo<K, V> {
    pub fn new(trust_for: Duration, capacity: usize) -> Self {
        Self { entries: Mutex::new(HashMap::new()), trust_for, capacity, revision: AtomicU64::new(0) }
    }

    /// The value remembered for `key`, when it was stored less than `trust_for` ago.
    pub fn get(&self, key: &K) -> Option<V> {
        let entries = self.lock();
        let (value, since) = entries.get(key)?;
        (since.elapsed() < self.trust_for).then(|| value.clone())
    }

    /// What [`Memo::put_if_unchanged`] compares: take it before reading the store.
    pub fn revision(&self) -> u64 {
        self.revision.load(Ordering::Acquire)
    }

    /// Remembers a value read from the store, unless something was forgotten since the read
    /// began (`seen`, from [`Memo::revision`]): that read may have raced a write.
    pub fn put_if_unchanged(&self, seen: u64, key: K, value: V) {
        // Checked under the lock, which every forget takes too.
        let mut entries = self.lock();
        if self.revision.load(Ordering::Acquire) != seen {
            return;
        }
        self.insert(&mut entries, key, value);
    }

    /// Remembers a value whatever was forgotten meanwhile: for keys that name the state they
    /// were read in (a write moves the reader to another key), which no forget has to guard.
    pub fn put(&self, key: K, value: V) {
        let mut entries = self.lock();
        self.insert(&mut entries, key, value);
    }

    fn insert(&self, entries: &mut HashMap<K, (V, Instant)>, key: K, value: V) {
        if entries.len() >= self.capacity {
            entries.clear();
        }
        entries.insert(key, (value, Instant::now()));
    }

    /// Drops what is remembered for `key` (a write changed it or is about to).
    pub fn forget(&self, key: &K) {
        let mut entries = self.lock();
        self.revision.fetch_add(1, Ordering::AcqRel);
        entries.remove(key);
    }

    /// Drops everything remembered (a write whose reach is not one key, or not known).
    pub fn forget_all(&self) {
        let mut entries = self.lock();
        self.revision.fetch_add(1, Ordering::AcqRel);
        entries.clear();
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, (V, Instant)>> {
        // A panic while holding the lock leaves a map that is still consistent.
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_trusted_only_for_its_time() {
        let memo = Memo::new(Duration::from_millis(30), 10);
        memo.put_if_unchanged(memo.revision(), "k", 1);
        assert_eq!(memo.get(&"k"), Some(1));
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(memo.get(&"k"), None);
    }

    #[test]
    fn a_read_that_raced_a_forget_is_not_remembered() {
        let memo = Memo::new(Duration::from_secs(60), 10);
        let seen = memo.revision();
        memo.forget(&"k");
        memo.put_if_unchanged(seen, "k", "stale");
        assert_eq!(memo.get(&"k"), None);
        memo.put_if_unchanged(memo.revision(), "k", "fresh");
        assert_eq!(memo.get(&"k"), Some("fresh"));
    }

    #[test]
    fn forgetting_everything_also_refuses_reads_that_began_before() {
        let memo = Memo::new(Duration::from_secs(60), 10);
        memo.put_if_unchanged(memo.revision(), "a", 1);
        let seen = memo.revision();
        memo.forget_all();
        assert_eq!(memo.get(&"a"), None);
        memo.put_if_unchanged(seen, "b", 2);
        assert_eq!(memo.get(&"b"), None);
    }

    #[test]
    fn a_full_memo_starts_over_instead_of_growing() {
        let memo = Memo::new(Duration::from_secs(60), 2);
        for key in 0..3 {
            memo.put_if_unchanged(memo.revision(), key, key);
        }
        assert_eq!(memo.get(&0), None);
        assert_eq!(memo.get(&2), Some(2));
        assert!(memo.lock().len() <= 2);
    }
}
