//! How many of something each key (an account) holds at once, each share given back when its
//! guard drops: the per-account bound beside a process-wide pool (waited calls run inline, merge
//! suggestion refreshes).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// Shares held per key; a key holding none is not kept.
pub struct Shares<K>(Arc<Mutex<HashMap<K, usize>>>);

impl<K> Default for Shares<K> {
    fn default() -> Self {
        Self(Arc::default())
    }
}

/// One share of `key`, given back when dropped (also when a wait holding it is cancelled).
pub struct Share<K: Hash + Eq> {
    held: Arc<Mutex<HashMap<K, usize>>>,
    key: K,
}

impl<K: Hash + Eq + Clone> Shares<K> {
    /// A share of `key`, unless it holds `most` already.
    pub fn take(&self, key: &K, most: usize) -> Option<Share<K>> {
        let mut held = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mine = held.entry(key.clone()).or_default();
        if *mine >= most {
            return None;
        }
        *mine += 1;
        Some(Share { held: self.0.clone(), key: key.clone() })
    }
}

impl<K: Hash + Eq> Drop for Share<K> {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(mine) = held.get_mut(&self.key) {
            *mine -= 1;
            if *mine == 0 {
                held.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_at_most_its_shares_and_gets_them_back_as_they_drop() {
        let shares = Shares::default();
        let two: Vec<Share<&str>> = (0..2).map(|_| shares.take(&"a", 2).unwrap()).collect();
        assert!(shares.take(&"a", 2).is_none());
        let other = shares.take(&"b", 2).expect("another key has its own");
        drop(two);
        assert!(shares.take(&"a", 2).is_some());
        drop(other);
        assert!(shares.0.lock().unwrap().is_empty(), "no key kept once its shares are back");
    }
}
