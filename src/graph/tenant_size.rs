//! The most entities one tenant may hold ([`MAX_ENTITIES_PER_TENANT`]): the graph engine
//! holds every tenant's graph (FalkorDB in memory), so one tenant seeding without end would
//! fill what all of them share. Requests are rate-limited; this bounds the total.
//!
//! A seed checks the tenant's count before it writes: rows past the room left are rejected,
//! saying so (every row counts, as the write alone knows which rows create an entity and which
//! join one). The count is read at most once a minute per tenant ([`COUNT_TRUST`]) and grows
//! with what this instance creates meanwhile, so one instance keeps the bound exactly; several
//! instances seeding one tenant at once may each overshoot it by what the others created within
//! the minute. Deleting buckets makes room again within that minute.

use super::{queries, GraphService, Tenant};
use crate::error::ServiceResult;
use crate::params;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Entities one tenant may hold by default (`CANON_MAX_ENTITIES_PER_TENANT`).
pub const MAX_ENTITIES_PER_TENANT: u64 = 10_000_000;
/// How long a tenant's count is trusted before it is read again.
const COUNT_TRUST: Duration = Duration::from_secs(60);
/// Tenants whose count is remembered at most; past it the memory starts over.
const COUNTS_REMEMBERED: usize = 10_000;

/// Each tenant's entity count as last read, plus what this instance created since.
#[derive(Default)]
pub struct TenantSizes(Mutex<HashMap<Tenant, (u64, Instant)>>);

impl TenantSizes {
    fn known(&self, tenant: &Tenant) -> Option<u64> {
        let sizes = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        sizes.get(tenant).filter(|(_, at)| at.elapsed() < COUNT_TRUST).map(|(n, _)| *n)
    }

    fn counted(&self, tenant: &Tenant, entities: u64) {
        let mut sizes = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if sizes.len() >= COUNTS_REMEMBERED {
            sizes.clear();
        }
        sizes.insert(tenant.clone(), (entities, Instant::now()));
    }

    fn created(&self, tenant: &Tenant, entities: u64) {
        let mut sizes = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((n, _)) = sizes.get_mut(tenant) {
            *n += entities;
        }
    }
}

impl GraphService {
    /// How many entities the tenant holds and how many more it may create now.
    pub(super) async fn entity_room(&self, tenant: &Tenant) -> ServiceResult<(u64, u64)> {
        let held = match self.tenant_sizes.known(tenant) {
            Some(held) => held,
            None => {
                let rows = self.run(tenant, queries::TENANT_ENTITY_COUNT, params! {}).await?;
                let held = rows.first().and_then(|row| row.get("entities")).and_then(|n| n.as_u64());
                let held = held.unwrap_or(0);
                self.tenant_sizes.counted(tenant, held);
                held
            }
        };
        Ok((held, self.max_entities.saturating_sub(held)))
    }

    /// Adds what a seed created to the tenant's remembered count.
    pub(super) fn entities_created(&self, tenant: &Tenant, entities: u64) {
        self.tenant_sizes.created(tenant, entities);
    }

    /// Why a row past the tenant's room is rejected.
    pub(super) fn entity_bound_reason(&self, held: u64) -> String {
        format!(
            "the account holds {held} entities in this environment, the most it may hold ({}); delete buckets it no longer needs to make room",
            self.max_entities
        )
    }
}
