//! Name keys whose entity no longer exists. A bucket's cascade delete left its entities' keys
//! behind before it removed them too (`d03b552`); they name no node, but took places in a name
//! search's `LIMIT` and counted toward a knowledge-graph search's cap. A search deletes those
//! it meets ([`super::search`]), and the first start that looks deletes them all, tenant by
//! tenant under each one's lock ([`super::migrations`]).

use super::{queries, GraphService, Tenant};
use crate::error::ServiceResult;
use crate::params;
use crate::store::records::keys::Environment;
use std::collections::BTreeMap;

/// Orphan keys' entity IDs one sweep statement reads, then deletes.
const SWEEP_BATCH: usize = 10_000;

impl GraphService {
    /// Deletes the keys of `ids` that name no entity; answers how many.
    pub(super) async fn delete_orphan_keys(&self, tenant: &Tenant, ids: &[&String]) -> ServiceResult<u64> {
        let rows = self
            .run(
                tenant,
                queries::ORPHAN_KEYS_DELETE,
                params! { "ids" => ids, "now" => crate::ids::now_rfc3339() },
            )
            .await?;
        let deleted = rows.first().and_then(|row| row.get("deleted")).and_then(|n| n.as_u64()).unwrap_or(0);
        if deleted > 0 {
            tracing::info!(deleted, "deleted name keys of entities that no longer exist");
        }
        Ok(deleted)
    }

    /// Deletes every tenant's orphan keys, a batch at a time, until a read finds none.
    pub(super) async fn sweep_orphan_keys(&self) -> anyhow::Result<()> {
        let (started, mut swept) = (std::time::Instant::now(), 0);
        loop {
            let found =
                self.engine.run(queries::ORPHAN_KEYS_FIND, &params! { "limit" => SWEEP_BATCH }).await?;
            let mut by_tenant: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
            for row in &found {
                let column = |name| super::columns::str_col(row, name);
                by_tenant
                    .entry((column("accountID"), column("environment")))
                    .or_default()
                    .push(column("entityID"));
            }
            let mut deleted = 0;
            for ((account_id, environment), ids) in &by_tenant {
                // A key of no known environment is no tenant's: nothing can read it either.
                let Some(environment) = Environment::parse(environment) else { continue };
                let tenant = Tenant { account_id: account_id.clone(), environment };
                deleted += self.delete_orphan_keys(&tenant, &ids.iter().collect::<Vec<_>>()).await?;
            }
            swept += deleted;
            // A batch all of whose keys were seeded again meanwhile deletes nothing: stop rather
            // than read it again.
            if found.len() < SWEEP_BATCH || deleted == 0 {
                let seconds = started.elapsed().as_secs_f64();
                tracing::info!(swept, seconds, "looked for name keys whose entity is gone, once");
                return Ok(());
            }
        }
    }
}
