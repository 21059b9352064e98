//! Waited calls a process runs itself, at most [`super::INLINE_CALLS`] at once and
//! [`INLINE_CALLS_PER_TENANT`] of one account: the process-wide slots alone let one account
//! run 64 calls at once beside the 2 jobs `CANON_JOBS_PER_TENANT` allows it, each of them up to
//! its bounds of CPU. An account's further waited calls queue as jobs, where its job share
//! applies.

use crate::graph::Tenant;
use crate::shares::{Share, Shares};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Waited calls one account runs inline at once in one process.
pub const INLINE_CALLS_PER_TENANT: usize = 4;

/// Inline calls running per account.
pub type InlineShares = Shares<Tenant>;

/// One inline call's slot: given back, to the process and the account, when dropped.
pub struct InlineTurn {
    _share: Share<Tenant>,
    _slot: OwnedSemaphorePermit,
}

/// A slot for one of `tenant`'s waited calls, if the account and the process have one.
pub fn take(shares: &InlineShares, slots: &Arc<Semaphore>, tenant: &Tenant) -> Option<InlineTurn> {
    let share = shares.take(tenant, INLINE_CALLS_PER_TENANT)?;
    let slot = slots.clone().try_acquire_owned().ok()?;
    Some(InlineTurn { _share: share, _slot: slot })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::keys::Environment;

    #[test]
    fn an_account_runs_at_most_its_share_inline_and_others_take_what_is_left() {
        let slots = Arc::new(Semaphore::new(INLINE_CALLS_PER_TENANT + 1));
        let shares = InlineShares::default();
        let tenant = |a: &str| Tenant { account_id: a.into(), environment: Environment::Sandbox };
        let mine: Vec<InlineTurn> =
            (0..INLINE_CALLS_PER_TENANT).map(|_| take(&shares, &slots, &tenant("a")).unwrap()).collect();
        assert!(take(&shares, &slots, &tenant("a")).is_none(), "a's share is taken");
        let theirs = take(&shares, &slots, &tenant("b")).expect("b has the last slot");
        assert!(take(&shares, &slots, &tenant("c")).is_none(), "the process has none left");
        assert!(take(&shares, &slots, &tenant("c")).is_none(), "a refused call holds no share");
        drop(mine);
        assert!(take(&shares, &slots, &tenant("a")).is_some(), "given back");
        drop(theirs);
        assert_eq!(slots.available_permits(), INLINE_CALLS_PER_TENANT + 1, "every slot given back");
    }
}
