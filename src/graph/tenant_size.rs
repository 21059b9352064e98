//! The most one tenant may hold of what grows without end: entities
//! ([`MAX_ENTITIES_PER_TENANT`]), mentions ([`MAX_MENTIONS_PER_TENANT`]) and relations
//! ([`MAX_RELATIONS_PER_TENANT`]). The graph engine holds every tenant's graph (FalkorDB in
//! memory), so one tenant writing without end would fill what all of them share. Requests are
//! rate-limited and a run links a bounded number of mentions; these bound the totals.
//!
//! A write checks the tenant's count before it runs: a seed's rows past the room left are
//! rejected, saying so (every row counts, as the write alone knows which rows create an entity
//! and which join one); a mention or relation past it is refused with a `422` (at the bound a
//! relation already recorded is not observed again either: the write alone knows whether it
//! creates one). The count is read at most once a minute per tenant ([`COUNT_TRUST`]; once
//! every ten minutes while it is under half the bound, [`FAR_COUNT_TRUST`], since counting a
//! large tenant's mentions reads them all) and grows with what this instance creates meanwhile,
//! so one instance keeps the bound exactly; several instances writing for one tenant at once may
//! each overshoot it by what the others created within that time. Deleting buckets makes room
//! again within it.

use super::{queries, GraphService, Tenant};
use crate::error::{ServiceError, ServiceResult};
use crate::params;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Entities one tenant may hold by default (`CANON_MAX_ENTITIES_PER_TENANT`).
pub const MAX_ENTITIES_PER_TENANT: u64 = 10_000_000;
/// Mentions one tenant may hold by default (`CANON_MAX_MENTIONS_PER_TENANT`).
pub const MAX_MENTIONS_PER_TENANT: u64 = 100_000_000;
/// Relations one tenant may hold by default (`CANON_MAX_RELATIONS_PER_TENANT`).
pub const MAX_RELATIONS_PER_TENANT: u64 = 100_000_000;
/// How long a tenant's count is trusted before it is read again.
const COUNT_TRUST: Duration = Duration::from_secs(60);
/// How long a count under half the bound is trusted.
const FAR_COUNT_TRUST: Duration = Duration::from_secs(600);
/// Counts remembered at most; past it the memory starts over.
const COUNTS_REMEMBERED: usize = 10_000;

/// What a tenant's bounds count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Held {
    Entities,
    Mentions,
    Relations,
}

impl Held {
    fn noun(self) -> &'static str {
        match self {
            Held::Entities => "entities",
            Held::Mentions => "mentions",
            Held::Relations => "relations",
        }
    }

    fn count_query(self) -> &'static str {
        match self {
            Held::Entities => queries::TENANT_ENTITY_COUNT,
            Held::Mentions => queries::TENANT_MENTION_COUNT,
            Held::Relations => queries::TENANT_RELATION_COUNT,
        }
    }
}

/// The most one tenant may hold of each.
#[derive(Clone, Copy, Debug)]
pub struct TenantBounds {
    pub entities: u64,
    pub mentions: u64,
    pub relations: u64,
}

impl Default for TenantBounds {
    fn default() -> Self {
        Self {
            entities: MAX_ENTITIES_PER_TENANT,
            mentions: MAX_MENTIONS_PER_TENANT,
            relations: MAX_RELATIONS_PER_TENANT,
        }
    }
}

impl TenantBounds {
    fn of(&self, held: Held) -> u64 {
        match held {
            Held::Entities => self.entities,
            Held::Mentions => self.mentions,
            Held::Relations => self.relations,
        }
    }
}

/// Each tenant's counts as last read (and when), plus what this instance created since.
#[derive(Default)]
pub struct TenantSizes(Mutex<HashMap<(Tenant, Held), (u64, Instant)>>);

impl TenantSizes {
    fn known(&self, tenant: &Tenant, held: Held, bound: u64) -> Option<u64> {
        let sizes = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (n, at) = sizes.get(&(tenant.clone(), held))?;
        let trust = if *n < bound / 2 { FAR_COUNT_TRUST } else { COUNT_TRUST };
        (at.elapsed() < trust).then_some(*n)
    }

    fn counted(&self, tenant: &Tenant, held: Held, n: u64) {
        let mut sizes = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if sizes.len() >= COUNTS_REMEMBERED {
            sizes.clear();
        }
        sizes.insert((tenant.clone(), held), (n, Instant::now()));
    }

    fn created(&self, tenant: &Tenant, held: Held, n: u64) {
        let mut sizes = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((count, _)) = sizes.get_mut(&(tenant.clone(), held)) {
            *count += n;
        }
    }
}

impl GraphService {
    /// How many of `held` the tenant holds and how many more it may create now.
    pub(super) async fn room(&self, tenant: &Tenant, held: Held) -> ServiceResult<(u64, u64)> {
        let bound = self.tenant_bounds.of(held);
        let n = match self.tenant_sizes.known(tenant, held, bound) {
            Some(n) => n,
            None => {
                let rows = self.run(tenant, held.count_query(), params! {}).await?;
                let n = rows.first().and_then(|row| row.get("held")).and_then(|n| n.as_u64()).unwrap_or(0);
                self.tenant_sizes.counted(tenant, held, n);
                n
            }
        };
        Ok((n, bound.saturating_sub(n)))
    }

    /// A `422` unless the tenant has room for one more of `held`.
    pub(super) async fn check_room(&self, tenant: &Tenant, held: Held) -> ServiceResult<()> {
        match self.room(tenant, held).await? {
            (_, room) if room > 0 => Ok(()),
            (n, _) => Err(ServiceError::Unprocessable { message: self.bound_reason(held, n), details: None }),
        }
    }

    /// Adds what a write created to the tenant's remembered count.
    pub(super) fn created(&self, tenant: &Tenant, held: Held, n: u64) {
        self.tenant_sizes.created(tenant, held, n);
    }

    /// Why a write past the tenant's bound is refused.
    pub(super) fn bound_reason(&self, held: Held, n: u64) -> String {
        format!(
            "the account holds {n} {} in this environment, the most it may hold ({}); delete buckets it no longer needs to make room",
            held.noun(),
            self.tenant_bounds.of(held)
        )
    }
}
