//! One-time graph migrations, run at start before requests are served: each is recorded done
//! by a `GraphMigration` marker, so later starts only read the marker. Several instances
//! starting at once may each run one; every migration here is safe to run twice.

use super::GraphService;
use crate::params;
use crate::store::graph::CypherEngine;
use serde_json::Value;

impl GraphService {
    /// Runs the migrations this graph has not had yet: ID keys for entities and relations
    /// created before them ([`super::id_keys`]), then the sweep of name keys whose entity is
    /// gone ([`super::orphan_keys`]).
    pub async fn migrate(&self) -> anyhow::Result<()> {
        let engine = self.engine.as_ref();
        if !done(engine, "idKey").await? {
            super::id_keys::backfill(engine).await?;
            mark_done(engine, "idKey").await?;
        }
        if !done(engine, "orphanKeys").await? {
            self.sweep_orphan_keys().await?;
            mark_done(engine, "orphanKeys").await?;
        }
        Ok(())
    }
}

async fn done(engine: &dyn CypherEngine, name: &str) -> anyhow::Result<bool> {
    let rows = engine.run(super::queries::MIGRATION_DONE, &params! { "name" => name }).await?;
    Ok(rows.first().and_then(|row| row.get("done")).and_then(Value::as_bool) == Some(true))
}

async fn mark_done(engine: &dyn CypherEngine, name: &str) -> anyhow::Result<()> {
    engine.run(super::queries::MIGRATION_MARK_DONE, &params! { "name" => name }).await?;
    Ok(())
}
