//! One-time graph migrations, run at start: each is recorded done by a `GraphMigration`
//! marker, so later starts only read the marker. Several instances starting at once may each
//! run one; every migration here is safe to run twice.

use super::GraphService;
use crate::params;
use crate::store::graph::CypherEngine;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

impl GraphService {
    /// Runs the migrations this graph has not had yet: ID keys for entities and relations
    /// created before them ([`super::id_keys`]) before this returns (pages need them), then,
    /// in the background, the sweep of name keys whose entity is gone ([`super::orphan_keys`]).
    /// The sweep waits for the engine's indexes (a restart from a snapshot answers before
    /// they are built; its lookups by ID would scan every entity meanwhile) and is not needed
    /// to serve.
    pub async fn migrate(self: &Arc<Self>) -> anyhow::Result<()> {
        let engine = self.engine.as_ref();
        if !done(engine, "idKey").await? {
            super::id_keys::backfill(engine).await?;
            mark_done(engine, "idKey").await?;
        }
        if !done(engine, "orphanKeys").await? {
            let graph = self.clone();
            tokio::spawn(async move {
                while graph.engine.building().is_some() {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                let swept = graph.sweep_orphan_keys().await;
                let marked = match swept {
                    Ok(()) => mark_done(graph.engine.as_ref(), "orphanKeys").await,
                    Err(err) => Err(err),
                };
                if let Err(err) = marked {
                    tracing::warn!(error = %err, "the sweep of name keys whose entity is gone failed; the next start tries again");
                }
            });
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
