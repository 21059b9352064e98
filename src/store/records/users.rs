//! Dashboard users of an account and environment.

use super::keys::Environment;
use super::{RecordError, Records};
use crate::ids;
use serde::Serialize;
use sqlx::Row;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct User {
    pub id: String,
    pub account_id: String,
    pub environment: Environment,
    pub email: String,
    /// `admin` or `operator`.
    pub role: String,
}

impl Records {
    /// Creates a user; an existing user with that email in the environment is returned as is.
    pub async fn create_user(
        &self,
        account_id: &str,
        environment: Environment,
        email: &str,
        role: &str,
    ) -> Result<User, RecordError> {
        sqlx::query(
            "INSERT INTO users (id, account_id, environment, email, role, created_at) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (account_id, environment, email) DO NOTHING",
        )
        .bind(ids::new_id("usr"))
        .bind(account_id)
        .bind(environment.as_str())
        .bind(email)
        .bind(role)
        .bind(ids::now_millis())
        .execute(&mut *self.write().await?)
        .await?;
        let row =
            sqlx::query("SELECT id FROM users WHERE account_id = $1 AND environment = $2 AND email = $3")
                .bind(account_id)
                .bind(environment.as_str())
                .bind(email)
                .fetch_one(&self.pool)
                .await?;
        let id: String = row.get("id");
        self.find_user(&id).await?.ok_or(RecordError::Query(sqlx::Error::RowNotFound))
    }

    pub async fn find_user(&self, id: &str) -> Result<Option<User>, RecordError> {
        let row = sqlx::query("SELECT id, account_id, environment, email, role FROM users WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.and_then(|row| {
            Some(User {
                id: row.get("id"),
                account_id: row.get("account_id"),
                environment: Environment::parse(row.get("environment"))?,
                email: row.get("email"),
                role: row.get("role"),
            })
        }))
    }

    /// The role of a user who still exists in that account's environment (whose account
    /// still exists too): what a dashboard token's claims are checked against.
    pub async fn dashboard_role(
        &self,
        user_id: &str,
        account_id: &str,
        environment: Environment,
    ) -> Result<Option<String>, RecordError> {
        let row = sqlx::query(
            "SELECT u.role FROM users u JOIN accounts a ON a.id = u.account_id \
             WHERE u.id = $1 AND u.account_id = $2 AND u.environment = $3",
        )
        .bind(user_id)
        .bind(account_id)
        .bind(environment.as_str())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|row| row.get("role")))
    }
}
