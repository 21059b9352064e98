//! Refreshes one at a time per tenant, and at most [`REFRESHES_AT_ONCE`] in this process: a
//! refresh holds every candidate of the tenant (or bucket) in memory while it scores them
//! (gigabytes at millions of entities), and nothing stopped one tenant from asking for ten at
//! once, or ten tenants from each asking for one. A tenant's second refresh while its first
//! runs is a `409`; refreshes past the process's slots wait their turn, first come first served.

use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::shares::{Share, Shares};
use tokio::sync::{Semaphore, SemaphorePermit};

/// Refreshes this process runs at once.
pub const REFRESHES_AT_ONCE: usize = 2;

pub struct RefreshGate {
    running: Shares<Tenant>,
    slots: Semaphore,
}

impl Default for RefreshGate {
    fn default() -> Self {
        Self { running: Shares::default(), slots: Semaphore::new(REFRESHES_AT_ONCE) }
    }
}

/// A refresh's turn: while it is held, the tenant's other refreshes are refused.
pub struct RefreshTurn<'a> {
    _place: Share<Tenant>,
    _slot: SemaphorePermit<'a>,
}

impl RefreshGate {
    /// Waits for a slot; a `409` when the tenant's refresh is already running or waiting (its
    /// place is given back if the wait is cancelled).
    pub async fn enter(&self, tenant: &Tenant) -> ServiceResult<RefreshTurn<'_>> {
        let place = self.running.take(tenant, 1).ok_or_else(|| {
            ServiceError::Conflict(
                "a merge-suggestion refresh of this account is already running; ask again once it has answered"
                    .into(),
            )
        })?;
        let slot = self
            .slots
            .acquire()
            .await
            .map_err(|err| ServiceError::Internal(anyhow::anyhow!("refresh slots closed: {err}")))?;
        Ok(RefreshTurn { _place: place, _slot: slot })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::keys::Environment;

    fn tenant(account: &str) -> Tenant {
        Tenant { account_id: account.into(), environment: Environment::Sandbox }
    }

    #[tokio::test]
    async fn a_tenants_second_refresh_is_refused_while_its_first_runs_and_others_wait_for_a_slot() {
        let gate = RefreshGate::default();
        let first = gate.enter(&tenant("a")).await.unwrap();
        assert!(matches!(gate.enter(&tenant("a")).await, Err(ServiceError::Conflict(_))));
        let second = gate.enter(&tenant("b")).await.unwrap();
        let waiting =
            tokio::time::timeout(std::time::Duration::from_millis(50), gate.enter(&tenant("c"))).await;
        assert!(waiting.is_err(), "two slots taken: the third waits");
        drop(first);
        let third = gate.enter(&tenant("c")).await.unwrap();
        drop(second);
        let again = gate.enter(&tenant("a")).await;
        assert!(again.is_ok(), "a's first has ended, and b's slot is free");
        drop((third, again));
    }
}
