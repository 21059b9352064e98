//! What a function's configuration makes canon reach, checked when a version is saved (the
//! engines check again at run time, since the operator's policy or DNS may change):
//! `webhookUrl`, `s3Endpoint` and `extraConfig.llm.baseUrl` through the egress guard; a
//! local `s3Bucket` and `s3Prefix` as folders under the tenant's object store; credentials
//! named by `…Secret` (must exist) or `…Env` (must be allowlisted). See [`crate::egress`].
//!
//! Migration of the `…Env` fields of earlier versions: `apiKeyEnv`, `s3AccessKeyIdEnv` and
//! `s3SecretAccessKeyEnv` keep working only for variables the operator lists in
//! `CANON_TENANT_ENV_ALLOWLIST`; otherwise store the value with `POST /v3/secrets` and name it
//! in `apiKeySecret`, `s3AccessKeyIdSecret` or `s3SecretAccessKeySecret` (a new version). S3
//! sends no longer fall back to `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`.

use crate::egress::{objects, Egress};
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::secrets::SecretsService;
use serde_json::Value;

/// Checks a version body before it is saved.
pub async fn check(
    body: &Value,
    tenant: &Tenant,
    egress: &Egress,
    secrets: &SecretsService,
) -> ServiceResult<()> {
    let text = |value: &Value, name: &str| {
        value.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
    };
    if let Some(url) = text(body, "webhookUrl") {
        check_url(egress, "webhookUrl", &url).await?;
    }
    match text(body, "s3Endpoint") {
        Some(endpoint) => check_url(egress, "s3Endpoint", &endpoint).await?,
        None => {
            if let Some(bucket) = text(body, "s3Bucket") {
                objects::relative_folder(&bucket)
                    .map_err(|reason| ServiceError::invalid_field("s3Bucket", reason))?;
            }
        }
    }
    if let Some(prefix) = text(body, "s3Prefix") {
        objects::relative_folder(&prefix)
            .map_err(|reason| ServiceError::invalid_field("s3Prefix", reason))?;
    }
    for field in ["s3AccessKeyId", "s3SecretAccessKey"] {
        secrets.check_references(egress, tenant, body, "", field).await?;
    }
    if let Some(llm) = body.get("extraConfig").and_then(|c| c.get("llm")).filter(|l| l.is_object()) {
        if let Some(url) = text(llm, "baseUrl") {
            check_url(egress, "extraConfig.llm.baseUrl", &url).await?;
        }
        secrets.check_references(egress, tenant, llm, "extraConfig.llm.", "apiKey").await?;
    }
    Ok(())
}

async fn check_url(egress: &Egress, field: &str, url: &str) -> ServiceResult<()> {
    egress
        .check_url_resolving(url)
        .await
        .map(drop)
        .map_err(|reason| ServiceError::invalid_field(field, reason))
}
