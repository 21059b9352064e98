//! Storage of tenant secrets: sealed values by owner and name (never plaintext).

use super::Owner;
use super::{RecordError, Records};
use sqlx::Row;

/// A secret without its value.
#[derive(Clone, Debug, PartialEq)]
pub struct SecretRow {
    pub name: String,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Records {
    /// Stores a new secret unless the name is taken or the owner holds `max` already; false
    /// then (counted with no other writer adding one, see [`Records::begin_counted`]).
    pub async fn insert_secret(
        &self,
        owner: Owner<'_>,
        name: &str,
        sealed: &str,
        now: i64,
        max: i64,
    ) -> Result<bool, RecordError> {
        let mut tx = self.begin_counted("tenant_secrets", owner).await?;
        let done = sqlx::query(
            "INSERT INTO tenant_secrets (account_id, environment, name, sealed, created_at, updated_at) \
             SELECT $1, $2, $3, $4, $5, $5 \
             WHERE (SELECT COUNT(*) FROM tenant_secrets WHERE account_id = $1 AND environment = $2) < $6 \
             ON CONFLICT (account_id, environment, name) DO NOTHING",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(name)
        .bind(sealed)
        .bind(now)
        .bind(max)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Replaces a secret's value; false when there is no such secret.
    pub async fn replace_secret(
        &self,
        owner: Owner<'_>,
        name: &str,
        sealed: &str,
        now: i64,
    ) -> Result<bool, RecordError> {
        let done = sqlx::query(
            "UPDATE tenant_secrets SET sealed = $4, updated_at = $5 \
             WHERE account_id = $1 AND environment = $2 AND name = $3",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(name)
        .bind(sealed)
        .bind(now)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn delete_secret(&self, owner: Owner<'_>, name: &str) -> Result<bool, RecordError> {
        let done = sqlx::query(
            "DELETE FROM tenant_secrets WHERE account_id = $1 AND environment = $2 AND name = $3",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(name)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The environment's secrets by name (a tenant keeps tens, not thousands).
    pub async fn list_secrets(&self, owner: Owner<'_>) -> Result<Vec<SecretRow>, RecordError> {
        let rows = sqlx::query(
            "SELECT name, created_at, updated_at FROM tenant_secrets \
             WHERE account_id = $1 AND environment = $2 ORDER BY name",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(|row| SecretRow {
                name: row.get("name"),
                created_at: row.get("created_at"),
                updated_at: row.get("updated_at"),
            })
            .collect())
    }

    /// The sealed value of a secret.
    pub async fn sealed_secret(&self, owner: Owner<'_>, name: &str) -> Result<Option<String>, RecordError> {
        let row = sqlx::query(
            "SELECT sealed FROM tenant_secrets WHERE account_id = $1 AND environment = $2 AND name = $3",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|row| row.get("sealed")))
    }
}
