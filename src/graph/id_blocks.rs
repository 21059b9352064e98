//! Where a tenant's entity IDs were minted, at millisecond grain: one `IdBlock` node per
//! millisecond that holds entity IDs, written by the statement that creates the entities
//! (`entity_seed.cypher`), so a millisecond without a block holds no entity.
//!
//! Pages walk IDs in windows ([`super::window`]) and FalkorDB reads every ID of a window, so a
//! page whose windows double across a quiet time (a seed job's pause, a night) lands on the
//! next burst with a window as wide as the gap, and reads the burst (seen: 110–145 ms of a
//! seed's IDs, 6–7 ms of a 14 ms review-queue page). After an empty window the walk asks the
//! blocks instead where IDs were next minted, reading blocks, not entities, and resumes
//! there with a narrow window.
//!
//! Blocks say where entities may be (an entity merged away or deleted leaves its block), and
//! where none are. Entities minted before a canon kept blocks have none: each tenant's
//! `IdBlocks` marker, created on the tenant's first use, says since when every one has its
//! block, and the walk crosses earlier ranges as before. (So a canon older than blocks must
//! not keep creating entities beside a newer one: stop old processes before starting new.)

use super::{queries, GraphService, Tenant};
use crate::error::ServiceResult;
use crate::params;
use crate::store::graph::Params;
use serde_json::Value;

/// The first probe's span (ms); each probe that finds nothing looks [`PROBE_GROWTH`] times
/// further. A probe reads the blocks in its span (one per millisecond with IDs, of every
/// tenant): ~0.2 ms for a second of them, 0.6 ms for 30 s (FalkorDB, 220,000 blocks).
const FIRST_PROBE_MS: u64 = 1_000;
const PROBE_GROWTH: u64 = 8;

/// The seed statement's block parameters for entities with these `ids` (each row's new ID:
/// a row that names an existing entity leaves a block with no entity, which costs a window).
pub fn seed_params<'a>(tenant: &Tenant, ids: impl IntoIterator<Item = &'a str>) -> Params {
    let mut blocks: Vec<u64> =
        ids.into_iter().filter_map(|id| super::id_keys::timestamp("ent", id)).collect();
    blocks.sort_unstable();
    blocks.dedup();
    params! { "blockKey" => block_key(tenant), "blocks" => blocks }
}

fn block_key(tenant: &Tenant) -> String {
    tenant.scoped_key("ent")
}

/// What an empty window of a walk learnt from the blocks.
pub(crate) enum Gap {
    /// Nothing yet: the window's end is before the tenant's blocks began.
    NotKept,
    /// The window's end is in a millisecond with IDs: the filters dropped its rows.
    Minted,
    /// No ID was minted from the window's end until this millisecond.
    NoneUntil(u64),
    /// No ID was minted from the window's end until the walk's end.
    NoneLeft,
}

impl GraphService {
    /// Since when (ms) every entity of the tenant has its block; creates the tenant's marker
    /// (since now) on its first use.
    pub(crate) async fn id_blocks_since(&self, tenant: &Tenant) -> ServiceResult<u64> {
        if let Some(since) = self.window_memo.blocks_since(tenant) {
            return Ok(since);
        }
        let now = chrono::Utc::now().timestamp_millis().max(0) as u64;
        let rows = self
            .run(tenant, queries::ID_BLOCKS_SINCE, params! { "blockKey" => block_key(tenant), "now" => now })
            .await?;
        // Two first uses at once may each create a marker: the later one is the safe one.
        let since =
            rows.iter().filter_map(|row| row.get("since").and_then(Value::as_u64)).max().unwrap_or(now);
        self.window_memo.remember_blocks_since(tenant, since);
        Ok(since)
    }

    /// Where entity IDs were next minted at or after millisecond `at_ms`, up to `end_ms`.
    pub(crate) async fn next_minted(&self, tenant: &Tenant, at_ms: u64, end_ms: u64) -> ServiceResult<Gap> {
        if at_ms < self.id_blocks_since(tenant).await? {
            return Ok(Gap::NotKept);
        }
        let (mut from, mut span) = (at_ms, FIRST_PROBE_MS);
        while from < end_ms {
            let to = from.saturating_add(span).min(end_ms);
            let rows = self
                .run(
                    tenant,
                    queries::ID_BLOCKS_NEXT,
                    params! { "blockKey" => block_key(tenant), "from" => from, "to" => to },
                )
                .await?;
            match rows.first().and_then(|row| row.get("first")).and_then(Value::as_u64) {
                Some(first) if first == at_ms => return Ok(Gap::Minted),
                Some(first) => return Ok(Gap::NoneUntil(first)),
                None => (from, span) = (to, span.saturating_mul(PROBE_GROWTH)),
            }
        }
        Ok(Gap::NoneLeft)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::keys::Environment;

    #[test]
    fn seed_blocks_are_the_distinct_milliseconds_of_the_new_ids() {
        let tenant = Tenant { account_id: "acc_1".into(), environment: Environment::Sandbox };
        let ids: Vec<String> = [7_000u64, 5_000, 7_000, 5_001]
            .iter()
            .map(|ms| format!("ent_{}", ulid::Ulid::from_parts(*ms, rand::random())))
            .collect();
        let params = seed_params(&tenant, ids.iter().map(String::as_str).chain(["not-an-id"]));
        assert_eq!(params["blocks"], serde_json::json!([5_000, 5_001, 7_000]));
        assert_ne!(
            params["blockKey"],
            seed_params(&Tenant { account_id: "acc_2".into(), ..tenant }, [])["blockKey"]
        );
    }
}
