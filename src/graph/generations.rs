//! How often this process has changed each tenant's graph: what is memoised from a tenant's
//! data (the review counters) is keyed by the tenant's generation at the read, so any write
//! this process sends for the tenant makes it stale at once.
//!
//! Tenants share [`SLOTS`] counters by hash (memory stays bounded however many there are): a
//! write to one tenant also ages what is memoised for the others in its slot, which only costs
//! them a read. A generation is bumped once a write statement has returned, so a read that
//! began before the write finished was keyed by the generation before it and is never served.
//! Writes by other instances are not seen: what is memoised says so in its trust time.

use super::Tenant;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

const SLOTS: usize = 64;

pub struct WriteGenerations {
    slots: [AtomicU64; SLOTS],
}

impl Default for WriteGenerations {
    fn default() -> Self {
        Self { slots: std::array::from_fn(|_| AtomicU64::new(0)) }
    }
}

impl WriteGenerations {
    /// The tenant's generation now: take it before reading what is to be memoised.
    pub fn of(&self, tenant: &Tenant) -> u64 {
        self.slot(tenant).load(Ordering::Acquire)
    }

    /// Records that a write statement for `tenant` has returned (whether it succeeded or
    /// not: a failed one may still have written).
    pub fn wrote(&self, tenant: &Tenant) {
        self.slot(tenant).fetch_add(1, Ordering::AcqRel);
    }

    fn slot(&self, tenant: &Tenant) -> &AtomicU64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        tenant.hash(&mut hasher);
        &self.slots[(hasher.finish() % SLOTS as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::keys::Environment;

    #[test]
    fn a_write_ages_its_tenant_and_not_one_in_another_slot() {
        let generations = WriteGenerations::default();
        let tenant = |n: usize| Tenant { account_id: format!("acc_{n}"), environment: Environment::Sandbox };
        let other =
            (1..).map(tenant).find(|t| !std::ptr::eq(generations.slot(t), generations.slot(&tenant(0))));
        let (first, other) = (tenant(0), other.unwrap());
        let (before, other_before) = (generations.of(&first), generations.of(&other));
        generations.wrote(&first);
        assert_ne!(generations.of(&first), before);
        assert_eq!(generations.of(&other), other_before);
    }
}
