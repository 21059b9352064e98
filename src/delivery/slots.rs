//! The worker's send slots, shared work-conservingly: an account sends in its own share
//! ([`SENDS_PER_ACCOUNT`](super::shares::SENDS_PER_ACCOUNT)) first, and may borrow the slots
//! no other account is using; a borrowed slot is given back as soon as another account's
//! delivery waits for one, by ending the borrowed send there (its delivery goes back to the
//! outbox untried, due at once: at least once holds, and the receiver may see it twice).
//!
//! A lone tenant thus sends in all [`IN_FLIGHT`] slots, and a tenant whose receivers hang
//! still cannot keep another's deliveries waiting for its timeouts.

use super::worker::IN_FLIGHT;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// A send slot as held.
pub enum Slot<'a> {
    /// In the account's own share: kept until the send ends.
    Own(OwnedSemaphorePermit, OwnedSemaphorePermit),
    /// Borrowed: given back when another account waits ([`Slots::reclaimed`]).
    Borrowed(OwnedSemaphorePermit, Counted<'a>),
}

/// What an account has in [`Slots`]' books.
#[derive(Default)]
struct Counts {
    /// Deliveries waiting for a slot (under their own share or to borrow one).
    queued: usize,
    /// Sends in borrowed slots.
    borrowed: usize,
}

pub struct Slots {
    free: Arc<Semaphore>,
    accounts: Mutex<HashMap<String, Counts>>,
    /// Woken when a delivery waits for a slot under its own share while another account
    /// sends in borrowed ones.
    reclaim: Notify,
}

impl Default for Slots {
    fn default() -> Self {
        Self { free: Arc::new(Semaphore::new(IN_FLIGHT)), accounts: Mutex::default(), reclaim: Notify::new() }
    }
}

/// A delivery counted as queued (or, for [`Slot::Borrowed`], borrowing) until dropped, also
/// when its send is cancelled.
pub struct Counted<'a> {
    slots: &'a Slots,
    account: &'a str,
    borrowed: bool,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        let mut accounts = self.slots.accounts();
        if let Some(counts) = accounts.get_mut(self.account) {
            let n = if self.borrowed { &mut counts.borrowed } else { &mut counts.queued };
            *n = n.saturating_sub(1);
            if counts.queued == 0 && counts.borrowed == 0 {
                accounts.remove(self.account);
            }
        }
    }
}

impl Slots {
    fn accounts(&self) -> std::sync::MutexGuard<'_, HashMap<String, Counts>> {
        self.accounts.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn count<'a>(&'a self, account: &'a str, borrowed: bool) -> Counted<'a> {
        let mut accounts = self.accounts();
        let counts = match accounts.get_mut(account) {
            Some(counts) => counts,
            None => accounts.entry(account.to_string()).or_default(),
        };
        *(if borrowed { &mut counts.borrowed } else { &mut counts.queued }) += 1;
        Counted { slots: self, account, borrowed }
    }

    /// Whether a delivery of an account other than `account` waits for a slot.
    fn others_wait(&self, account: &str) -> bool {
        self.accounts().iter().any(|(other, counts)| other != account && counts.queued > 0)
    }

    /// A slot under the account's own share (`own`, a permit of it): at once when one is
    /// free, else after asking other accounts' borrowed sends to give theirs back.
    async fn own(&self, account: &str, own: OwnedSemaphorePermit) -> Slot<'_> {
        if let Ok(slot) = self.free.clone().try_acquire_owned() {
            return Slot::Own(own, slot);
        }
        let others_borrow =
            self.accounts().iter().any(|(other, counts)| other != account && counts.borrowed > 0);
        if others_borrow {
            self.reclaim.notify_waiters();
        }
        Slot::Own(own, self.free.clone().acquire_owned().await.expect("the send slots stay open"))
    }

    /// A slot for a delivery of `account`, whose share is `share`. It borrows only while no
    /// other account's delivery waits: two busy accounts each send in their own share.
    pub async fn take<'a>(&'a self, account: &'a str, share: &Arc<Semaphore>) -> Slot<'a> {
        if let Ok(own) = share.clone().try_acquire_owned() {
            if let Ok(slot) = self.free.clone().try_acquire_owned() {
                return Slot::Own(own, slot);
            }
            let _queued = self.count(account, false);
            return self.own(account, own).await;
        }
        let _queued = self.count(account, false);
        loop {
            let may_borrow = !self.others_wait(account);
            if may_borrow {
                if let Ok(slot) = self.free.clone().try_acquire_owned() {
                    return Slot::Borrowed(slot, self.count(account, true));
                }
            }
            tokio::select! {
                own = share.clone().acquire_owned() => {
                    return self.own(account, own.expect("an account's share stays open")).await;
                }
                slot = self.free.clone().acquire_owned(), if may_borrow => {
                    let slot = slot.expect("the send slots stay open");
                    if !self.others_wait(account) {
                        return Slot::Borrowed(slot, self.count(account, true));
                    }
                    // Another account waits now: the slot goes to it (the semaphore hands a
                    // freed permit to the longest waiter), and this delivery waits for its share.
                    drop(slot);
                }
            }
        }
    }

    /// Resolves when a borrowed slot of `account` must be given back: another account's
    /// delivery waits.
    pub async fn reclaimed(&self, account: &str) {
        loop {
            let notified = self.reclaim.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.others_wait(account) {
                return;
            }
            notified.await;
        }
    }
}
