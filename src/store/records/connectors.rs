//! Storage of connectors and of the files each has submitted.

use super::filters::Filter;
use super::Owner;
use super::{RecordError, Records};
use sqlx::any::AnyRow;
use sqlx::Row;

/// A connector as stored. The Box client secret is sealed by the secrets cipher.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ConnectorRow {
    pub id: String,
    pub account_id: String,
    pub environment: String,
    pub name: String,
    pub connector_type: String,
    pub workflow_id: String,
    pub workflow_name: String,
    pub box_client_id: Option<String>,
    pub box_client_secret: Option<String>,
    pub box_enterprise_id: Option<String>,
    pub box_folder_id: Option<String>,
    pub created_at: i64,
    /// Where in the folder the next poll reads from (items before it were read last).
    pub poll_offset: i64,
}

const COLUMNS: &str = "id, account_id, environment, name, type, workflow_id, workflow_name, box_client_id, \
                       box_client_secret, box_enterprise_id, box_folder_id, created_at, poll_offset";

fn connector(row: &AnyRow) -> ConnectorRow {
    ConnectorRow {
        id: row.get("id"),
        account_id: row.get("account_id"),
        environment: row.get("environment"),
        name: row.get("name"),
        connector_type: row.get("type"),
        workflow_id: row.get("workflow_id"),
        workflow_name: row.get("workflow_name"),
        box_client_id: row.get("box_client_id"),
        box_client_secret: row.get("box_client_secret"),
        box_enterprise_id: row.get("box_enterprise_id"),
        box_folder_id: row.get("box_folder_id"),
        created_at: row.get("created_at"),
        poll_offset: row.get("poll_offset"),
    }
}

impl Records {
    /// Writes a connector unless its tenant has `max` already; false then (counted with no
    /// other writer adding one, see [`Records::begin_counted`]).
    pub async fn insert_connector(&self, c: &ConnectorRow, max: i64) -> Result<bool, RecordError> {
        let owner = Owner { account_id: &c.account_id, environment: &c.environment };
        let mut tx = self.begin_counted("connectors", owner).await?;
        let done = sqlx::query(
            "INSERT INTO connectors (id, account_id, environment, name, type, workflow_id, workflow_name, \
                 box_client_id, box_client_secret, box_enterprise_id, box_folder_id, created_at) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 \
             WHERE (SELECT COUNT(*) FROM connectors WHERE account_id = $2 AND environment = $3) < $13",
        )
        .bind(&c.id)
        .bind(&c.account_id)
        .bind(&c.environment)
        .bind(&c.name)
        .bind(&c.connector_type)
        .bind(&c.workflow_id)
        .bind(&c.workflow_name)
        .bind(&c.box_client_id)
        .bind(&c.box_client_secret)
        .bind(&c.box_enterprise_id)
        .bind(&c.box_folder_id)
        .bind(c.created_at)
        .bind(max)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// The tenant's connectors in ID order, optionally of one workflow ID and/or name.
    pub async fn list_connectors(
        &self,
        owner: Owner<'_>,
        workflow_id: Option<&str>,
        workflow_name: Option<&str>,
    ) -> Result<Vec<ConnectorRow>, RecordError> {
        let mut filter = Filter::default();
        filter.eq("account_id", owner.account_id).eq("environment", owner.environment);
        if let Some(id) = workflow_id {
            filter.eq("workflow_id", id);
        }
        if let Some(name) = workflow_name {
            filter.eq("workflow_name", name);
        }
        let sql =
            format!("SELECT {COLUMNS} FROM connectors {} ORDER BY id LIMIT 1000", filter.where_clause());
        let rows = filter.bind(sqlx::query(&sql)).fetch_all(&self.pool).await?;
        Ok(rows.iter().map(connector).collect())
    }

    /// Every connector of a type, across tenants (the poller's work list).
    pub async fn connectors_of_type(&self, connector_type: &str) -> Result<Vec<ConnectorRow>, RecordError> {
        let sql = format!("SELECT {COLUMNS} FROM connectors WHERE type = $1 ORDER BY id");
        let rows = sqlx::query(&sql).bind(connector_type).fetch_all(&self.pool).await?;
        Ok(rows.iter().map(connector).collect())
    }

    /// Deletes a connector of the tenant; false when there was none.
    /// Records where in its folder the connector's next poll reads from.
    pub async fn set_connector_poll_offset(&self, id: &str, offset: i64) -> Result<(), RecordError> {
        sqlx::query("UPDATE connectors SET poll_offset = $2 WHERE id = $1")
            .bind(id)
            .bind(offset)
            .execute(&mut *self.write().await?)
            .await?;
        Ok(())
    }

    pub async fn delete_connector(&self, owner: Owner<'_>, id: &str) -> Result<bool, RecordError> {
        let done =
            sqlx::query("DELETE FROM connectors WHERE id = $1 AND account_id = $2 AND environment = $3")
                .bind(id)
                .bind(owner.account_id)
                .bind(owner.environment)
                .execute(&mut *self.write().await?)
                .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Which of these files the connector has claimed already.
    pub async fn claimed_connector_files(
        &self,
        connector_id: &str,
        file_ids: &[&str],
    ) -> Result<std::collections::HashSet<String>, RecordError> {
        if file_ids.is_empty() {
            return Ok(Default::default());
        }
        let sql = format!(
            "SELECT file_id FROM connector_files WHERE connector_id = $1 AND file_id IN ({})",
            super::filters::placeholders(2, file_ids.len())
        );
        let mut query = sqlx::query(&sql).bind(connector_id);
        for id in file_ids {
            query = query.bind(*id);
        }
        let rows = query.fetch_all(&self.pool).await?;
        Ok(rows.iter().map(|row| row.get("file_id")).collect())
    }

    /// Claims a file for a connector: true the first time only.
    pub async fn claim_connector_file(
        &self,
        connector_id: &str,
        file_id: &str,
        now: i64,
    ) -> Result<bool, RecordError> {
        let done = sqlx::query(
            "INSERT INTO connector_files (connector_id, file_id, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (connector_id, file_id) DO NOTHING",
        )
        .bind(connector_id)
        .bind(file_id)
        .bind(now)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Releases a claim whose call could not be made (the next poll tries again).
    pub async fn release_connector_file(&self, connector_id: &str, file_id: &str) -> Result<(), RecordError> {
        sqlx::query(
            "DELETE FROM connector_files WHERE connector_id = $1 AND file_id = $2 AND call_id IS NULL",
        )
        .bind(connector_id)
        .bind(file_id)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(())
    }

    pub async fn set_connector_file_call(
        &self,
        connector_id: &str,
        file_id: &str,
        call_id: &str,
    ) -> Result<(), RecordError> {
        sqlx::query("UPDATE connector_files SET call_id = $3 WHERE connector_id = $1 AND file_id = $2")
            .bind(connector_id)
            .bind(file_id)
            .bind(call_id)
            .execute(&mut *self.write().await?)
            .await?;
        Ok(())
    }
}

impl Records {
    /// `(id, name)` of the tenant's workflow with this ID.
    pub async fn workflow_name_by_id(
        &self,
        owner: Owner<'_>,
        id: &str,
    ) -> Result<Option<(String, String)>, RecordError> {
        let row = sqlx::query(
            "SELECT id, name FROM workflows WHERE id = $1 AND account_id = $2 AND environment = $3",
        )
        .bind(id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| (r.get("id"), r.get("name"))))
    }
}
