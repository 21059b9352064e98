//! The instances table: which canon processes serve this record store, and when each last
//! said it was alive.

use super::{RecordError, Records};
use sqlx::Row;

/// One canon process as it recorded itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceRow {
    pub id: String,
    /// The machine it runs on (host name and boot ID), to tell a dead process of this
    /// machine from a live one elsewhere.
    pub host: String,
    pub pid: i64,
    /// Its vector store: `embedded:<folder>` or `qdrant:<url>`.
    pub vectors: String,
    pub started_at: i64,
    pub heartbeat_at: i64,
}

impl Records {
    /// Records (or re-records) an instance.
    pub async fn register_instance(&self, row: &InstanceRow) -> Result<(), RecordError> {
        sqlx::query("DELETE FROM instances WHERE id = $1")
            .bind(&row.id)
            .execute(&mut *self.write().await?)
            .await?;
        sqlx::query(
            "INSERT INTO instances (id, host, pid, vectors, started_at, heartbeat_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&row.id)
        .bind(&row.host)
        .bind(row.pid)
        .bind(&row.vectors)
        .bind(row.started_at)
        .bind(row.heartbeat_at)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(())
    }

    /// Says the instance is alive at `now`.
    pub async fn beat_instance(&self, id: &str, now: i64) -> Result<(), RecordError> {
        sqlx::query("UPDATE instances SET heartbeat_at = $1 WHERE id = $2")
            .bind(now)
            .bind(id)
            .execute(&mut *self.write().await?)
            .await?;
        Ok(())
    }

    /// Forgets an instance (it stopped, or it is known dead).
    pub async fn remove_instance(&self, id: &str) -> Result<(), RecordError> {
        sqlx::query("DELETE FROM instances WHERE id = $1")
            .bind(id)
            .execute(&mut *self.write().await?)
            .await?;
        Ok(())
    }

    /// Instances whose last heartbeat is at or after `since`, oldest start first.
    pub async fn instances_beating_since(&self, since: i64) -> Result<Vec<InstanceRow>, RecordError> {
        let rows = sqlx::query(
            "SELECT id, host, pid, vectors, started_at, heartbeat_at FROM instances \
             WHERE heartbeat_at >= $1 ORDER BY started_at, id",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| InstanceRow {
                id: row.get("id"),
                host: row.get("host"),
                pid: row.get("pid"),
                vectors: row.get("vectors"),
                started_at: row.get("started_at"),
                heartbeat_at: row.get("heartbeat_at"),
            })
            .collect())
    }
}
