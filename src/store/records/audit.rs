//! Entities' curation history as stored (`entity_audit`): what a person or key did to an
//! entity, appended and never changed. Merges are not here: the graph records them.

use super::{RecordError, Records};
use crate::ids;
use serde_json::{json, Value};
use sqlx::Row;

/// Rows per INSERT: 8 values each stay far below either database's bind limit (one JSON
/// array is bound), and a 10,000-entity bulk decision is a handful of statements.
const ROWS_PER_WRITE: usize = 1_000;

/// One entry to append.
#[derive(Clone, Debug)]
pub struct NewAuditEntry {
    pub entity_id: String,
    /// `status_changed`, `synonym_added`, `suggestion_dismissed`, …
    pub kind: &'static str,
    /// A user (`usr_…`) or API key (`key_…`) ID, or `system`.
    pub actor: String,
    pub details: Value,
}

/// One stored entry.
#[derive(Clone, Debug)]
pub struct AuditEntry {
    pub id: String,
    pub entity_id: String,
    pub kind: String,
    pub actor: String,
    /// Epoch milliseconds.
    pub at: i64,
    pub details: Value,
}

impl Records {
    /// Appends entries of one tenant, all stamped now, in the order given.
    pub async fn append_audit(
        &self,
        account_id: &str,
        environment: &str,
        entries: &[NewAuditEntry],
    ) -> Result<(), RecordError> {
        if entries.is_empty() {
            return Ok(());
        }
        let now = ids::now_millis();
        let insert = format!(
            "INSERT INTO entity_audit (id, account_id, environment, entity_id, kind, actor, at, details) \
             SELECT e.value ->> 0, $2, $3, e.value ->> 1, e.value ->> 2, e.value ->> 3, $4, e.value ->> 4 \
             FROM {}",
            super::json_params::json_rows(self.dialect, 1)
        );
        let entry_ids = ids::new_ids("aud", entries.len());
        let mut tx = self.begin_write().await?;
        for (batch, batch_ids) in entries.chunks(ROWS_PER_WRITE).zip(entry_ids.chunks(ROWS_PER_WRITE)) {
            let rows: Vec<Value> = batch
                .iter()
                .zip(batch_ids)
                .map(|(entry, id)| {
                    json!([id, entry.entity_id, entry.kind, entry.actor, entry.details.to_string()])
                })
                .collect();
            let rows = super::json_params::without_nul(Value::Array(rows));
            sqlx::query(&insert)
                .bind(rows.to_string())
                .bind(account_id)
                .bind(environment)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// An entity's entries before `(at, id)` (everything when None), newest first, at most
    /// `limit`.
    pub async fn audit_of_entity(
        &self,
        account_id: &str,
        environment: &str,
        entity_id: &str,
        before: Option<(i64, &str)>,
        limit: usize,
    ) -> Result<Vec<AuditEntry>, RecordError> {
        // No cursor: every `at` is below i64::MAX, so the ID is never compared.
        let (at, id) = before.unwrap_or((i64::MAX, ""));
        let rows = sqlx::query(
            "SELECT id, entity_id, kind, actor, at, details FROM entity_audit \
             WHERE account_id = $1 AND environment = $2 AND entity_id = $3 \
             AND (at < $4 OR (at = $4 AND id < $5)) ORDER BY at DESC, id DESC LIMIT $6",
        )
        .bind(account_id)
        .bind(environment)
        .bind(entity_id)
        .bind(at)
        .bind(id)
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(entry).collect())
    }

    /// The newest `limit` entries of each of `entity_ids`, newest first within each: one
    /// index-ordered read with its own LIMIT per entity (a window over every entry would read
    /// an entity's whole history), [`MANY_ENTITIES`] of them a statement.
    pub async fn audit_of_entities(
        &self,
        account_id: &str,
        environment: &str,
        entity_ids: &[String],
        limit: usize,
    ) -> Result<Vec<AuditEntry>, RecordError> {
        let one = |n: usize| {
            format!(
                "SELECT * FROM (SELECT id, entity_id, kind, actor, at, details FROM entity_audit \
                 WHERE account_id = $1 AND environment = $2 AND entity_id = ${n} \
                 ORDER BY at DESC, id DESC LIMIT $3) AS e{n}"
            )
        };
        let mut found = Vec::new();
        for chunk in entity_ids.chunks(MANY_ENTITIES) {
            let sql = (4..4 + chunk.len()).map(one).collect::<Vec<_>>().join(" UNION ALL ");
            let mut query = sqlx::query(&sql).bind(account_id).bind(environment).bind(limit as i64);
            for id in chunk {
                query = query.bind(id);
            }
            found.extend(query.fetch_all(&self.pool).await?.iter().map(entry));
        }
        Ok(found)
    }
}

/// Most entities [`Records::audit_of_entities`] reads at once: one SELECT each in a compound
/// statement, well below SQLite's limit of 500 (`SQLITE_MAX_COMPOUND_SELECT`).
pub const MANY_ENTITIES: usize = 200;

fn entry(row: &sqlx::any::AnyRow) -> AuditEntry {
    AuditEntry {
        id: row.get("id"),
        entity_id: row.get("entity_id"),
        kind: row.get("kind"),
        actor: row.get("actor"),
        at: row.get("at"),
        details: serde_json::from_str(&row.get::<String, _>("details")).unwrap_or(Value::Null),
    }
}
