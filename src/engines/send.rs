//! Send: delivers the input (JSON as is; a document as [`super::document_value`]).
//!
//! Every destination goes through [`crate::egress`]: URLs must be HTTPS to public addresses
//! (unless the operator allows the private network), local folders stay in the tenant's
//! object store, credentials come from the tenant's secrets.
//!
//! - `destinationType: "webhook"`: POSTs the JSON to `webhookUrl` (30 s timeout, redirects
//!   not followed). A non-2xx answer or a network error is a `send_failed` error. Output:
//!   `{deliveryStatus: "success", destinationType, webhookOutput: {httpStatusCode,
//!   httpResponseBody}, deliveredContent}`. Only the first MiB of the receiver's answer is
//!   read and kept; past it `webhookOutput.httpResponseBodyTruncated` is `true`. When the environment has a webhook signing secret
//!   the POST carries `svc-signature`, exactly as subscription deliveries do
//!   ([`crate::signature`]).
//! - `destinationType: "object_store"` (or the SDK's `"s3"`): writes
//!   `<s3Prefix>/<ULID>.json`.
//!   - Without `s3Endpoint`, `s3Bucket` is a folder under the tenant's own folder of the
//!     object store (`CANON_OBJECT_STORE_DIR/<account>/<environment>/`, default root
//!     `<data dir>/objects`); absolute paths, URLs and `..` are refused. Output:
//!     `s3Output: {bucketName, key}` (no server path is shown).
//!   - With `s3Endpoint` (`https://host[:port]`, S3-compatible, path-style URLs
//!     `<endpoint>/<s3Bucket>/<key>`), a SigV4-signed PUT in `s3Region` (default
//!     `us-east-1`); the key pair comes from the tenant's secrets named by
//!     `s3AccessKeyIdSecret` and `s3SecretAccessKeySecret` (or server variables named by
//!     `s3AccessKeyIdEnv` / `s3SecretAccessKeyEnv` that the operator allowlisted), never from
//!     the function body, which the API shows. Output: `s3Output: {bucketName, key}, url`.
//! - `google_drive` is not supported (`unsupported`).

use super::sigv4;
use super::{invalid_config, payload_value, setting, Context, EngineError, Payload};
use crate::egress::{objects, reply};
use crate::signature;
use crate::versions::FunctionVersion;
use reqwest::Method;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(30);

pub async fn run(
    function: &FunctionVersion,
    input: &Payload,
    context: &Context,
) -> Result<Value, EngineError> {
    let text =
        |name: &str| setting(function, name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let destination = text("destinationType").unwrap_or("webhook");
    let content = payload_value(input);
    let mut output = match destination {
        "webhook" => {
            let url =
                text("webhookUrl").ok_or_else(|| invalid_config("send to a webhook needs `webhookUrl`"))?;
            webhook(url, &content, context).await?
        }
        "object_store" | "s3" => {
            let bucket =
                text("s3Bucket").ok_or_else(|| invalid_config("send to object_store needs `s3Bucket`"))?;
            let key = object_key(text("s3Prefix"))?;
            let body = serde_json::to_vec_pretty(&content).unwrap_or_default();
            match text("s3Endpoint") {
                None => write_local(bucket, &key, body, context).await?,
                Some(endpoint) => {
                    let credential = |field: &'static str| async move {
                        context
                            .secrets
                            .credential(&context.egress, &context.tenant, &function.body, field, false)
                            .await
                            .map_err(invalid_config)?
                            .ok_or_else(|| {
                                invalid_config(format!(
                                    "S3 credentials: set {field}Secret (a secret of this environment, \
                                     POST /v3/secrets)"
                                ))
                            })
                    };
                    let (key_id, secret) =
                        (credential("s3AccessKeyId").await?, credential("s3SecretAccessKey").await?);
                    let target = sigv4::Target {
                        endpoint,
                        bucket,
                        region: text("s3Region").unwrap_or("us-east-1"),
                        access_key_id: &key_id,
                        secret_access_key: &secret,
                    };
                    put_s3(&target, &key, body, context).await?
                }
            }
        }
        "google_drive" => {
            return Err(EngineError::new("unsupported", "send to google_drive is not supported"))
        }
        other => return Err(invalid_config(format!("unknown destinationType {other:?}"))),
    };
    output["deliveryStatus"] = json!("success");
    output["destinationType"] = json!(destination);
    output["deliveredContent"] = content;
    Ok(output)
}

fn failed(message: impl Into<String>) -> EngineError {
    EngineError::new("send_failed", message)
}

async fn webhook(url: &str, content: &Value, context: &Context) -> Result<Value, EngineError> {
    let body = serde_json::to_vec(content).unwrap_or_default();
    let mut request = context
        .egress
        .request(Method::POST, url)
        .map_err(|reason| invalid_config(format!("webhookUrl: {reason}")))?
        .timeout(TIMEOUT)
        .header("content-type", "application/json");
    // The same wire format as subscription deliveries: signed when a secret is active.
    let signer = context.secrets.signer(&context.tenant).await.map_err(failed)?;
    if !signer.is_empty() {
        let now = chrono::Utc::now().timestamp();
        request = request.header(signature::HEADER, signer.sign(now, &body));
    }
    let response = request
        .body(body)
        .send()
        .await
        .map_err(|err| failed(format!("POST {url}: {}", crate::egress::describe(&err))))?;
    let status = response.status();
    if !status.is_success() {
        let excerpt = reply::excerpt(response, 500).await;
        return Err(failed(format!("POST {url} answered {status}: {excerpt}")));
    }
    // Only the first MiB is kept (and read): a receiver cannot make canon hold its body.
    let reply = reply::read_capped(response, reply::SEND_REPLY_CAP)
        .await
        .map_err(|err| failed(format!("reading the answer of {url}: {}", crate::egress::describe(&err))))?;
    let mut output = json!({"httpStatusCode": status.as_u16(), "httpResponseBody": reply.text()});
    if reply.truncated {
        output["httpResponseBodyTruncated"] = json!(true);
    }
    Ok(json!({ "webhookOutput": output }))
}

/// `<prefix>/<ULID>.json`, the prefix a relative folder path.
fn object_key(prefix: Option<&str>) -> Result<String, EngineError> {
    let name = format!("{}.json", ulid::Ulid::new());
    let Some(prefix) = prefix.map(|p| p.trim_matches('/')).filter(|p| !p.is_empty()) else { return Ok(name) };
    let folder =
        objects::relative_folder(prefix).map_err(|reason| invalid_config(format!("s3Prefix: {reason}")))?;
    let folder = folder.to_string_lossy().replace('\\', "/");
    Ok(if folder.is_empty() { name } else { format!("{folder}/{name}") })
}

/// Writes under the tenant's own folder of the object store, off the async workers.
async fn write_local(
    bucket: &str,
    key: &str,
    body: Vec<u8>,
    context: &Context,
) -> Result<Value, EngineError> {
    let folder =
        objects::relative_folder(bucket).map_err(|reason| invalid_config(format!("s3Bucket: {reason}")))?;
    let relative = folder.join(key);
    let root = context.egress.policy().object_store_dir.clone();
    let tenant = PathBuf::from(&context.tenant.account_id).join(context.tenant.environment.as_str());
    tokio::task::spawn_blocking(move || objects::write_new(&root, &tenant, &relative, &body))
        .await
        .map_err(|err| failed(format!("writing the object: {err}")))?
        .map_err(|err| failed(format!("writing {bucket}/{key}: {err}")))?;
    Ok(json!({"s3Output": {"bucketName": bucket, "key": key}}))
}

async fn put_s3(
    target: &sigv4::Target<'_>,
    key: &str,
    body: Vec<u8>,
    context: &Context,
) -> Result<Value, EngineError> {
    let (response, url) =
        sigv4::put_object(&context.egress, target, key, body, TIMEOUT).await.map_err(|err| match err {
            sigv4::PutError::Refused(reason) => invalid_config(format!("s3Endpoint: {reason}")),
            sigv4::PutError::Failed(reason) => failed(reason),
        })?;
    let status = response.status();
    if !status.is_success() {
        let excerpt = reply::excerpt(response, 500).await;
        return Err(failed(format!("PUT {url} answered {status}: {excerpt}")));
    }
    Ok(json!({"s3Output": {"bucketName": target.bucket, "key": key}, "url": url}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_keys_stay_relative() {
        assert!(object_key(Some("/a/b/")).unwrap().starts_with("a/b/"));
        assert!(object_key(None).unwrap().ends_with(".json"));
        assert_eq!(object_key(Some("a/../b")).unwrap_err().kind, "invalid_config");
    }
}
