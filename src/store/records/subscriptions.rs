//! Storage of subscriptions (which events go where) and of the webhook signing secret.

use super::filters::Cursor;
use super::filters::{page_rows, Filter};
use super::Owner;
use super::{RecordError, Records};
use sqlx::any::AnyRow;
use sqlx::Row;

/// A subscription as stored.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SubscriptionRow {
    pub id: String,
    pub name: String,
    pub subscription_type: String,
    pub function_id: Option<String>,
    pub collection_id: Option<String>,
    pub collection_name: Option<String>,
    pub disabled: bool,
    pub webhook_url: Option<String>,
    pub s3_bucket: Option<String>,
    pub s3_file_path: Option<String>,
    pub google_drive_folder_id: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, name, type, function_id, collection_id, collection_name, disabled, webhook_url, \
                       s3_bucket, s3_file_path, google_drive_folder_id, created_at, updated_at";

fn subscription(row: &AnyRow) -> SubscriptionRow {
    SubscriptionRow {
        id: row.get("id"),
        name: row.get("name"),
        subscription_type: row.get("type"),
        function_id: row.get("function_id"),
        collection_id: row.get("collection_id"),
        collection_name: row.get("collection_name"),
        disabled: row.get::<i64, _>("disabled") != 0,
        webhook_url: row.get("webhook_url"),
        s3_bucket: row.get("s3_bucket"),
        s3_file_path: row.get("s3_file_path"),
        google_drive_folder_id: row.get("google_drive_folder_id"),
        created_at: row.get("created_at"),
        updated_at: row.get("updated_at"),
    }
}

/// The signing secrets of an environment, sealed.
#[derive(Clone, Debug, PartialEq)]
pub struct SealedSigningSecret {
    pub sealed: String,
    pub created_at: i64,
    pub previous_sealed: Option<String>,
    pub previous_until: Option<i64>,
}

/// How many subscriptions a save may leave: in the environment, and watching one source
/// (the function, the collection, or neither: the account's entity events).
#[derive(Clone, Copy, Debug)]
pub struct SubscriptionBounds {
    pub per_environment: i64,
    pub per_source: i64,
}

#[cfg(test)]
impl SubscriptionBounds {
    pub(crate) const NONE: Self = Self { per_environment: i64::MAX, per_source: i64::MAX };
}

/// What a counted save did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SubscriptionSaved {
    Saved,
    /// Nothing written: the environment holds `per_environment` others already.
    EnvironmentFull,
    /// Nothing written: `per_source` others watch its source already.
    SourceFull,
}

impl Records {
    /// Inserts a subscription, or replaces every field of an existing one with its ID, unless
    /// that would pass `bounds`. The others are counted and the row written in one
    /// transaction no other writer of the tenant's subscriptions runs beside (see
    /// [`Records::begin_counted`]), so concurrent saves cannot pass a bound together.
    pub async fn save_subscription(
        &self,
        owner: Owner<'_>,
        s: &SubscriptionRow,
        bounds: SubscriptionBounds,
    ) -> Result<SubscriptionSaved, RecordError> {
        let mut tx = self.begin_counted("subscriptions", owner).await?;
        let others = sqlx::query(
            "SELECT COUNT(*) AS total, \
                 COALESCE(SUM(CASE WHEN COALESCE(function_id, '') = $4 AND COALESCE(collection_id, '') = $5 \
                                   THEN 1 ELSE 0 END), 0) AS same \
             FROM subscriptions WHERE account_id = $1 AND environment = $2 AND id <> $3",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(&s.id)
        .bind(s.function_id.as_deref().unwrap_or_default())
        .bind(s.collection_id.as_deref().unwrap_or_default())
        .fetch_one(&mut *tx)
        .await?;
        if others.get::<i64, _>("total") >= bounds.per_environment {
            return Ok(SubscriptionSaved::EnvironmentFull);
        }
        if others.get::<i64, _>("same") >= bounds.per_source {
            return Ok(SubscriptionSaved::SourceFull);
        }
        sqlx::query(
            "INSERT INTO subscriptions (id, account_id, environment, name, type, function_id, collection_id, \
                 collection_name, disabled, webhook_url, s3_bucket, s3_file_path, google_drive_folder_id, \
                 created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
             ON CONFLICT (id) DO UPDATE SET name = $4, type = $5, function_id = $6, collection_id = $7, \
                 collection_name = $8, disabled = $9, webhook_url = $10, s3_bucket = $11, s3_file_path = $12, \
                 google_drive_folder_id = $13, updated_at = $15",
        )
        .bind(&s.id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(&s.name)
        .bind(&s.subscription_type)
        .bind(&s.function_id)
        .bind(&s.collection_id)
        .bind(&s.collection_name)
        .bind(i64::from(s.disabled))
        .bind(&s.webhook_url)
        .bind(&s.s3_bucket)
        .bind(&s.s3_file_path)
        .bind(&s.google_drive_folder_id)
        .bind(s.created_at)
        .bind(s.updated_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(SubscriptionSaved::Saved)
    }

    pub async fn find_subscription(
        &self,
        owner: Owner<'_>,
        id: &str,
    ) -> Result<Option<SubscriptionRow>, RecordError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM subscriptions WHERE id = $1 AND account_id = $2 AND environment = $3"
        );
        let row = sqlx::query(&sql)
            .bind(id)
            .bind(owner.account_id)
            .bind(owner.environment)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(subscription))
    }

    /// A page of subscriptions by ID, optionally only those of `function_ids`.
    pub async fn list_subscriptions(
        &self,
        owner: Owner<'_>,
        function_ids: &[String],
        cursor: &Cursor,
        limit: u32,
    ) -> Result<Vec<SubscriptionRow>, RecordError> {
        let mut filter = Filter::default();
        filter.eq("account_id", owner.account_id).eq("environment", owner.environment);
        filter.any_of("function_id", function_ids);
        let sql = filter.page_sql(COLUMNS, "subscriptions", "id", cursor, true, limit);
        let rows = filter.bind(sqlx::query(&sql)).fetch_all(&self.pool).await?;
        Ok(page_rows(rows.iter().map(subscription).collect(), cursor))
    }

    /// Deletes a subscription; its pending deliveries stop.
    pub async fn delete_subscription(&self, owner: Owner<'_>, id: &str) -> Result<bool, RecordError> {
        let mut tx = self.begin_write().await?;
        let done =
            sqlx::query("DELETE FROM subscriptions WHERE id = $1 AND account_id = $2 AND environment = $3")
                .bind(id)
                .bind(owner.account_id)
                .bind(owner.environment)
                .execute(&mut *tx)
                .await?;
        sqlx::query(
            "UPDATE deliveries SET status = 'disabled' WHERE subscription_id = $1 AND status = 'pending'",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Pauses a subscription (a receiver answered 410 Gone).
    pub async fn disable_subscription(&self, id: &str, now: i64) -> Result<(), RecordError> {
        sqlx::query("UPDATE subscriptions SET disabled = 1, updated_at = $2 WHERE id = $1")
            .bind(id)
            .bind(now)
            .execute(&mut *self.write().await?)
            .await?;
        Ok(())
    }

    pub async fn signing_secret(&self, owner: Owner<'_>) -> Result<Option<SealedSigningSecret>, RecordError> {
        let row = sqlx::query(
            "SELECT sealed, created_at, previous_sealed, previous_until FROM webhook_secrets \
             WHERE account_id = $1 AND environment = $2",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|row| SealedSigningSecret {
            sealed: row.get("sealed"),
            created_at: row.get("created_at"),
            previous_sealed: row.get("previous_sealed"),
            previous_until: row.get("previous_until"),
        }))
    }

    /// Makes `sealed` the signing secret; the one it replaces keeps signing until `previous_until`.
    pub async fn rotate_signing_secret(
        &self,
        owner: Owner<'_>,
        sealed: &str,
        now: i64,
        previous_until: i64,
    ) -> Result<(), RecordError> {
        sqlx::query(
            "INSERT INTO webhook_secrets (account_id, environment, sealed, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (account_id, environment) DO UPDATE SET previous_sealed = webhook_secrets.sealed, \
                 previous_until = $5, sealed = $3, created_at = $4",
        )
        .bind(owner.account_id)
        .bind(owner.environment)
        .bind(sealed)
        .bind(now)
        .bind(previous_until)
        .execute(&mut *self.write().await?)
        .await?;
        Ok(())
    }

    pub async fn delete_signing_secret(&self, owner: Owner<'_>) -> Result<bool, RecordError> {
        let done = sqlx::query("DELETE FROM webhook_secrets WHERE account_id = $1 AND environment = $2")
            .bind(owner.account_id)
            .bind(owner.environment)
            .execute(&mut *self.write().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// A collection's name by its ID.
    pub async fn collection_name_by_id(
        &self,
        owner: Owner<'_>,
        id: &str,
    ) -> Result<Option<String>, RecordError> {
        let row = sqlx::query(
            "SELECT name FROM collections WHERE id = $1 AND account_id = $2 AND environment = $3",
        )
        .bind(id)
        .bind(owner.account_id)
        .bind(owner.environment)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|row| row.get("name")))
    }
}
