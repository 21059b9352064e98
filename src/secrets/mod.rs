//! Tenant secrets: values a tenant keeps in canon (a language model's API key, S3
//! credentials) and names from function configurations (`apiKeySecret`,
//! `s3AccessKeyIdSecret`, `s3SecretAccessKeySecret`), so credentials never come from the
//! server's environment and never show in a function's body.
//!
//! One store per account and environment. A value is encrypted at rest ([`cipher`]) and
//! never returned after it is written: the API lists names and times only. Rotating
//! replaces the value under the same name (functions naming it use the new value on their
//! next run); deleting makes functions naming it fail with `invalid_config` until it exists
//! again.

pub mod cipher;
pub mod signing;

use crate::egress::Egress;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::store::records::secrets::SecretRow;
use crate::store::records::Records;
use cipher::Cipher;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use utoipa::ToSchema;

/// Longest secret value accepted (a PEM key fits easily).
pub const MAX_VALUE_BYTES: usize = 16 * 1024;
/// Longest secret name.
pub const MAX_NAME_CHARS: usize = 128;
/// Secrets one environment holds: `GET /v3/secrets` lists them all at once.
pub const MAX_SECRETS: i64 = 1_000;

#[derive(Clone)]
pub struct SecretsService {
    records: Records,
    cipher: Arc<Cipher>,
    /// How long a rotated-out webhook signing secret still signs.
    rotation_window: std::time::Duration,
    /// Opened signing secrets per environment, for the delivery workers.
    signing_cache: Arc<signing::KeyCache>,
}

/// A secret as the API shows it: never its value.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SecretInfo {
    pub name: String,
    pub created_at: String,
    pub updated_at: String,
}

impl From<SecretRow> for SecretInfo {
    fn from(row: SecretRow) -> Self {
        Self {
            name: row.name,
            created_at: ids::millis_rfc3339(row.created_at),
            updated_at: ids::millis_rfc3339(row.updated_at),
        }
    }
}

/// A secret name: letters, digits, `_`, `-` and `.`, starting with a letter or digit.
pub fn check_name(field: &str, name: &str) -> ServiceResult<()> {
    let well_formed = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if well_formed {
        Ok(())
    } else {
        Err(ServiceError::invalid_field(
            field,
            format!(
                "secret names are 1..{MAX_NAME_CHARS} letters, digits, `_`, `-` or `.`, starting with a \
                 letter or digit (got {name:?})"
            ),
        ))
    }
}

fn check_value(value: &str) -> ServiceResult<()> {
    if value.is_empty() {
        return Err(ServiceError::invalid_field("value", "must not be empty"));
    }
    if value.len() > MAX_VALUE_BYTES {
        return Err(ServiceError::invalid_field("value", format!("must be at most {MAX_VALUE_BYTES} bytes")));
    }
    Ok(())
}

/// What a sealed value is bound to: its owner and name.
fn binding(tenant: &Tenant, name: &str) -> String {
    format!("{}/{}/{name}", tenant.account_id, tenant.environment.as_str())
}

impl SecretsService {
    /// Seals a credential kept outside the secrets table (a connector's), bound to its owner
    /// and `name` so it cannot be opened under another.
    pub fn seal_for(&self, tenant: &Tenant, name: &str, value: &str) -> String {
        self.cipher.seal(&binding(tenant, name), value.as_bytes())
    }

    /// Opens what [`SecretsService::seal_for`] sealed.
    pub fn open_for(&self, tenant: &Tenant, name: &str, sealed: &str) -> ServiceResult<String> {
        let bytes = self
            .cipher
            .open(&binding(tenant, name), sealed)
            .map_err(|_| ServiceError::Internal(anyhow::anyhow!("a sealed credential cannot be opened")))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    pub fn new(records: Records, cipher: Arc<Cipher>, rotation_window: std::time::Duration) -> Self {
        Self { records, cipher, rotation_window, signing_cache: Arc::default() }
    }

    /// Stores a new secret (409 when the name exists: rotate it instead).
    pub async fn create(&self, tenant: &Tenant, name: &str, value: &str) -> ServiceResult<SecretInfo> {
        check_name("name", name)?;
        check_value(value)?;
        let now = ids::now_millis();
        let sealed = self.cipher.seal(&binding(tenant, name), value.as_bytes());
        if !self.records.insert_secret(tenant.owner(), name, &sealed, now, MAX_SECRETS).await? {
            if self.exists(tenant, name).await? {
                return Err(ServiceError::Conflict(format!(
                    "secret {name:?} already exists; rotate it with PUT /v3/secrets/{name}"
                )));
            }
            return Err(ServiceError::count_reached(
                format!(
                    "an environment holds at most {MAX_SECRETS} secrets; delete one \
                     (DELETE /v3/secrets/{{name}}) before adding another"
                ),
                "secretsPerEnvironment",
                MAX_SECRETS,
            ));
        }
        Ok(SecretRow { name: name.into(), created_at: now, updated_at: now }.into())
    }

    /// Replaces a secret's value.
    pub async fn rotate(&self, tenant: &Tenant, name: &str, value: &str) -> ServiceResult<SecretInfo> {
        check_value(value)?;
        let sealed = self.cipher.seal(&binding(tenant, name), value.as_bytes());
        if !self.records.replace_secret(tenant.owner(), name, &sealed, ids::now_millis()).await? {
            return Err(ServiceError::not_found("secret", name));
        }
        self.list(tenant)
            .await?
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| ServiceError::not_found("secret", name))
    }

    pub async fn list(&self, tenant: &Tenant) -> ServiceResult<Vec<SecretInfo>> {
        Ok(self.records.list_secrets(tenant.owner()).await?.into_iter().map(SecretInfo::from).collect())
    }

    pub async fn delete(&self, tenant: &Tenant, name: &str) -> ServiceResult<()> {
        if self.records.delete_secret(tenant.owner(), name).await? {
            Ok(())
        } else {
            Err(ServiceError::not_found("secret", name))
        }
    }

    pub async fn exists(&self, tenant: &Tenant, name: &str) -> ServiceResult<bool> {
        Ok(self.records.sealed_secret(tenant.owner(), name).await?.is_some())
    }

    /// A secret's value, for the engines only.
    pub async fn reveal(&self, tenant: &Tenant, name: &str) -> Result<String, String> {
        self.reveal_if_present(tenant, name)
            .await?
            .ok_or_else(|| format!("secret {name:?} does not exist in this environment (POST /v3/secrets)"))
    }

    /// A secret's value, or `None` when the environment has no secret of that name.
    pub async fn reveal_if_present(&self, tenant: &Tenant, name: &str) -> Result<Option<String>, String> {
        let sealed = self
            .records
            .sealed_secret(tenant.owner(), name)
            .await
            .map_err(|err| format!("reading secret {name:?}: {err}"))?;
        let Some(sealed) = sealed else { return Ok(None) };
        let plain = self.cipher.open(&binding(tenant, name), &sealed).map_err(|err| err.to_string())?;
        String::from_utf8(plain).map(Some).map_err(|_| format!("secret {name:?} is not text"))
    }

    /// The credential a configuration names for `field`: `<field>Secret` (this store),
    /// `<field>Env` (an allowlisted server variable) or, when `inline` is allowed, `<field>`
    /// itself. `None` when none is given.
    pub async fn credential(
        &self,
        egress: &Egress,
        tenant: &Tenant,
        config: &Value,
        field: &str,
        inline: bool,
    ) -> Result<Option<String>, String> {
        let text =
            |name: String| config.get(&name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
        if let Some(name) = text(format!("{field}Secret")) {
            return self.reveal(tenant, name).await.map(Some);
        }
        if let Some(name) = text(format!("{field}Env")) {
            return egress.env(name).map(Some).map_err(|reason| format!("{field}Env: {reason}"));
        }
        Ok(if inline { text(field.to_string()).map(str::to_string) } else { None })
    }

    /// Checks, when a configuration is saved, the credentials it names for `field`: a
    /// `…Secret` must exist, a `…Env` must be allowlisted.
    pub async fn check_references(
        &self,
        egress: &Egress,
        tenant: &Tenant,
        config: &Value,
        path: &str,
        field: &str,
    ) -> ServiceResult<()> {
        let text = |name: &str| config.get(name).filter(|v| !v.is_null());
        let secret_field = format!("{field}Secret");
        if let Some(value) = text(&secret_field) {
            let at = format!("{path}{secret_field}");
            let name = value.as_str().ok_or_else(|| ServiceError::invalid_field(&at, "must be a string"))?;
            check_name(&at, name)?;
            if !self.exists(tenant, name).await? {
                return Err(ServiceError::invalid_field(
                    &at,
                    format!(
                        "secret {name:?} does not exist in this environment; create it with POST /v3/secrets"
                    ),
                ));
            }
        }
        let env_field = format!("{field}Env");
        if let Some(value) = text(&env_field) {
            let at = format!("{path}{env_field}");
            let name = value.as_str().ok_or_else(|| ServiceError::invalid_field(&at, "must be a string"))?;
            egress.check_env_name(name).map_err(|reason| ServiceError::invalid_field(&at, reason))?;
        }
        Ok(())
    }
}
