//! Waited calls a process runs itself, at most [`super::INLINE_CALLS`] at once and
//! [`INLINE_CALLS_PER_TENANT`] of one account: the process-wide slots alone let one account
//! run 64 calls at once beside the 2 jobs `CANON_JOBS_PER_TENANT` allows it, each of them up to
//! its bounds of CPU. An account's further waited calls queue as jobs, where its job share
//! applies.

use crate::graph::Tenant;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Waited calls one account runs inline at once in one process.
pub const INLINE_CALLS_PER_TENANT: usize = 4;

/// Inline calls running per account.
#[derive(Default)]
pub struct InlineShares(Mutex<HashMap<Tenant, usize>>);

/// One inline call's slot: given back, to the process and the account, when dropped.
pub struct InlineTurn {
    _slot: OwnedSemaphorePermit,
    shares: Arc<InlineShares>,
    tenant: Tenant,
}

impl InlineShares {
    /// A slot for one of `tenant`'s waited calls, if the process and the account have one.
    pub fn take(self: &Arc<Self>, slots: &Arc<Semaphore>, tenant: &Tenant) -> Option<InlineTurn> {
        let mut running = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if running.get(tenant).is_some_and(|mine| *mine >= INLINE_CALLS_PER_TENANT) {
            return None;
        }
        let slot = slots.clone().try_acquire_owned().ok()?;
        *running.entry(tenant.clone()).or_default() += 1;
        Some(InlineTurn { _slot: slot, shares: self.clone(), tenant: tenant.clone() })
    }
}

impl Drop for InlineTurn {
    fn drop(&mut self) {
        let mut running = self.shares.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(mine) = running.get_mut(&self.tenant) {
            *mine -= 1;
            if *mine == 0 {
                running.remove(&self.tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::keys::Environment;

    #[test]
    fn an_account_runs_at_most_its_share_inline_and_others_take_what_is_left() {
        let slots = Arc::new(Semaphore::new(INLINE_CALLS_PER_TENANT + 1));
        let shares = Arc::new(InlineShares::default());
        let tenant = |a: &str| Tenant { account_id: a.into(), environment: Environment::Sandbox };
        let mine: Vec<InlineTurn> =
            (0..INLINE_CALLS_PER_TENANT).map(|_| shares.take(&slots, &tenant("a")).unwrap()).collect();
        assert!(shares.take(&slots, &tenant("a")).is_none(), "a's share is taken");
        let theirs = shares.take(&slots, &tenant("b")).expect("b has the last slot");
        assert!(shares.take(&slots, &tenant("c")).is_none(), "the process has none left");
        drop(mine);
        assert!(shares.take(&slots, &tenant("a")).is_some(), "given back");
        drop(theirs);
        assert!(shares.0.lock().unwrap().is_empty(), "nothing held once every turn is dropped");
    }
}
