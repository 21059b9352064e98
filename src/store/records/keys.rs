//! Accounts and API keys. Only a SHA-256 of each key's secret is stored; the plaintext is
//! shown once, at creation. Keys look like `ck_<ULID>_<64 hex>`: the ULID finds the row,
//! the secret is checked against the stored hash in constant time.

use super::{RecordError, Records};
use crate::ids;
use rand::RngCore;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::Row;
use subtle::ConstantTimeEq;

/// The two isolated environments of every account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Environment {
    Production,
    Sandbox,
}

impl Environment {
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Production => "production",
            Environment::Sandbox => "sandbox",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "production" => Some(Environment::Production),
            "sandbox" => Some(Environment::Sandbox),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Account {
    pub id: String,
    pub name: String,
}

/// A key as listed (never its secret).
#[derive(Clone, Debug, Serialize)]
pub struct KeyInfo {
    pub id: String,
    pub account_id: String,
    pub environment: Environment,
    pub name: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

/// Who a valid key speaks for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Principal {
    pub account_id: String,
    pub environment: Environment,
    pub key_id: String,
    pub key_name: String,
}

const KEY_PREFIX: &str = "ck_";
const ULID_LEN: usize = 26;
const SECRET_HEX_LEN: usize = 64;

impl Records {
    /// The account with this name, created if it does not exist yet.
    pub async fn ensure_account(&self, name: &str) -> Result<Account, RecordError> {
        sqlx::query(
            "INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
        )
        .bind(ids::new_id("acc"))
        .bind(name)
        .bind(ids::now_millis())
        .execute(&mut *self.write().await?)
        .await?;
        self.find_account(name).await?.ok_or_else(|| RecordError::Query(sqlx::Error::RowNotFound))
    }

    pub async fn find_account(&self, name: &str) -> Result<Option<Account>, RecordError> {
        let row = sqlx::query("SELECT id, name FROM accounts WHERE name = $1")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|row| Account { id: row.get("id"), name: row.get("name") }))
    }

    /// Creates a key and returns it with its plaintext, which is not stored anywhere.
    pub async fn create_key(
        &self,
        account_id: &str,
        environment: Environment,
        name: &str,
    ) -> Result<(KeyInfo, String), RecordError> {
        let ulid = ulid::Ulid::new().to_string();
        let mut secret = [0u8; SECRET_HEX_LEN / 2];
        rand::rngs::OsRng.fill_bytes(&mut secret);
        let secret = hex::encode(secret);
        let info = KeyInfo {
            id: format!("key_{ulid}"),
            account_id: account_id.to_string(),
            environment,
            name: name.to_string(),
            created_at: ids::now_millis(),
            revoked_at: None,
        };
        sqlx::query(
            "INSERT INTO api_keys (id, account_id, environment, name, secret_hash, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&info.id)
        .bind(&info.account_id)
        .bind(environment.as_str())
        .bind(&info.name)
        .bind(hash_secret(&secret))
        .bind(info.created_at)
        .execute(&mut *self.write().await?)
        .await?;
        Ok((info, format!("{KEY_PREFIX}{ulid}_{secret}")))
    }

    pub async fn list_keys(&self, account_id: &str) -> Result<Vec<KeyInfo>, RecordError> {
        let rows = sqlx::query(
            "SELECT id, account_id, environment, name, created_at, revoked_at FROM api_keys \
             WHERE account_id = $1 ORDER BY id",
        )
        .bind(account_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| KeyInfo {
                id: row.get("id"),
                account_id: row.get("account_id"),
                environment: Environment::parse(row.get("environment")).unwrap_or(Environment::Sandbox),
                name: row.get("name"),
                created_at: row.get("created_at"),
                revoked_at: row.get("revoked_at"),
            })
            .collect())
    }

    /// Revokes a key; `false` when no live key has this ID.
    pub async fn revoke_key(&self, key_id: &str) -> Result<bool, RecordError> {
        let done = sqlx::query("UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
            .bind(ids::now_millis())
            .bind(key_id)
            .execute(&mut *self.write().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The principal of a presented key, or `None` when it is malformed, unknown or revoked.
    pub async fn authenticate(&self, presented: &str) -> Result<Option<Principal>, RecordError> {
        let Some((ulid, secret)) = split_key(presented) else {
            return Ok(None);
        };
        let row = sqlx::query(
            "SELECT account_id, environment, name, secret_hash FROM api_keys \
             WHERE id = $1 AND revoked_at IS NULL",
        )
        .bind(format!("key_{ulid}"))
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let stored: String = row.get("secret_hash");
        let matches: bool = stored.as_bytes().ct_eq(hash_secret(secret).as_bytes()).into();
        let environment = Environment::parse(row.get("environment"));
        Ok(match (matches, environment) {
            (true, Some(environment)) => Some(Principal {
                account_id: row.get("account_id"),
                environment,
                key_id: format!("key_{ulid}"),
                key_name: row.get("name"),
            }),
            _ => None,
        })
    }
}

fn split_key(presented: &str) -> Option<(&str, &str)> {
    let rest = presented.strip_prefix(KEY_PREFIX)?;
    let (ulid, secret) = rest.split_once('_')?;
    let well_formed = ulid.len() == ULID_LEN
        && ulid.chars().all(|c| c.is_ascii_alphanumeric())
        && secret.len() == SECRET_HEX_LEN
        && secret.chars().all(|c| c.is_ascii_hexdigit());
    well_formed.then_some((ulid, secret))
}

fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_well_formed_key_splits_into_its_id_and_secret() {
        let key = format!("ck_{}_{}", "01JD0000000000000000000000", "a".repeat(64));
        assert_eq!(split_key(&key), Some(("01JD0000000000000000000000", "a".repeat(64).as_str())));
    }

    #[test]
    fn malformed_keys_are_refused_before_any_lookup() {
        for key in [
            "",
            "ck_",
            "ck_short_abc",
            "xx_01JD0000000000000000000000_aa",
            "ck_01JD0000000000000000000000_zz",
        ] {
            assert_eq!(split_key(key), None, "{key}");
        }
    }
}
