//! Send: delivers the input (JSON as is; a document as [`super::document_value`]).
//!
//! - `destinationType: "webhook"`: POSTs the JSON to `webhookUrl` (30 s timeout). A non-2xx
//!   answer or a network error is a `send_failed` error. Output:
//!   `{deliveryStatus: "success", destinationType, webhookOutput: {httpStatusCode,
//!   httpResponseBody}, deliveredContent}`. (`webhookSigningEnabled` is not implemented.)
//! - `destinationType: "object_store"` (or the SDK's `"s3"`): writes
//!   `<s3Prefix>/<ULID>.json`.
//!   - Without `s3Endpoint`, `s3Bucket` is a local folder: `file:///abs/path`, or a relative
//!     path resolved under the data directory (no `..`); folders are created.
//!   - With `s3Endpoint` (`http(s)://host[:port]`, S3-compatible, path-style URLs
//!     `<endpoint>/<s3Bucket>/<key>`), a SigV4-signed PUT in `s3Region` (default
//!     `us-east-1`); credentials come from the environment variables named by
//!     `s3AccessKeyIdEnv` and `s3SecretAccessKeyEnv` (defaults `AWS_ACCESS_KEY_ID`,
//!     `AWS_SECRET_ACCESS_KEY`), never from the function body, which the API shows.
//!
//!   Output: `{deliveryStatus: "success", destinationType, s3Output: {bucketName, key},
//!   url, deliveredContent}`.
//! - `google_drive` is not supported (`unsupported`).

use super::sigv4::{self, Credentials};
use super::{invalid_config, payload_value, setting, Context, EngineError, Payload};
use crate::functions::model::FunctionVersion;
use serde_json::{json, Value};
use std::path::{Component, Path, PathBuf};
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
                None => write_local(bucket, &key, &body, &context.data_dir).await?,
                Some(endpoint) => {
                    let settings = S3 {
                        endpoint,
                        bucket,
                        region: text("s3Region").unwrap_or("us-east-1"),
                        key_id_env: text("s3AccessKeyIdEnv").unwrap_or("AWS_ACCESS_KEY_ID"),
                        secret_env: text("s3SecretAccessKeyEnv").unwrap_or("AWS_SECRET_ACCESS_KEY"),
                    };
                    put_s3(&settings, &key, body, context).await?
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
    let response = context
        .http
        .post(url)
        .timeout(TIMEOUT)
        .json(content)
        .send()
        .await
        .map_err(|err| failed(format!("POST {url}: {err}")))?;
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(failed(format!("POST {url} answered {status}: {}", truncate(&body, 500))));
    }
    Ok(json!({"webhookOutput": {"httpStatusCode": status.as_u16(), "httpResponseBody": body}}))
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// `<prefix>/<ULID>.json`, the prefix's slashes trimmed; `..` refused.
fn object_key(prefix: Option<&str>) -> Result<String, EngineError> {
    let name = format!("{}.json", ulid::Ulid::new());
    let Some(prefix) = prefix.map(|p| p.trim_matches('/')).filter(|p| !p.is_empty()) else { return Ok(name) };
    if prefix.split('/').any(|part| part == "..") {
        return Err(invalid_config("s3Prefix must not contain `..`"));
    }
    Ok(format!("{prefix}/{name}"))
}

/// The folder a local `s3Bucket` names.
pub fn local_folder(bucket: &str, data_dir: &Path) -> Result<PathBuf, EngineError> {
    let path = Path::new(bucket.strip_prefix("file://").unwrap_or(bucket));
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(invalid_config("a local s3Bucket must not contain `..`"));
    }
    Ok(if path.is_absolute() { path.to_path_buf() } else { data_dir.join(path) })
}

async fn write_local(bucket: &str, key: &str, body: &[u8], data_dir: &Path) -> Result<Value, EngineError> {
    let folder = local_folder(bucket, data_dir)?;
    let path = folder.join(key);
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|err| failed(format!("creating {}: {err}", parent.display())))?;
    }
    tokio::fs::write(&path, body)
        .await
        .map_err(|err| failed(format!("writing {}: {err}", path.display())))?;
    Ok(json!({
        "s3Output": {"bucketName": folder.display().to_string(), "key": key},
        "url": format!("file://{}", path.display()),
    }))
}

struct S3<'a> {
    endpoint: &'a str,
    bucket: &'a str,
    region: &'a str,
    key_id_env: &'a str,
    secret_env: &'a str,
}

async fn put_s3(s3: &S3<'_>, key: &str, body: Vec<u8>, context: &Context) -> Result<Value, EngineError> {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| invalid_config(format!("S3 credentials: environment variable {name} is not set")))
    };
    let (key_id, secret) = (env(s3.key_id_env)?, env(s3.secret_env)?);
    let endpoint = s3.endpoint.trim_end_matches('/');
    let host = endpoint
        .split_once("://")
        .map(|(_, rest)| rest.split('/').next().unwrap_or(rest))
        .filter(|h| !h.is_empty())
        .ok_or_else(|| invalid_config(format!("s3Endpoint {endpoint:?} is not an http(s) URL")))?;
    let path = sigv4::encode_path(&format!("/{}/{key}", s3.bucket));
    let url = format!("{endpoint}{path}");
    let payload_hash = sigv4::sha256_hex(&body);
    let amz_date = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let headers =
        [("host", host), ("x-amz-content-sha256", payload_hash.as_str()), ("x-amz-date", amz_date.as_str())];
    let request = sigv4::Request {
        method: "PUT",
        path: &path,
        query: "",
        headers: &headers,
        payload_sha256: &payload_hash,
        amz_date: &amz_date,
    };
    let credentials = Credentials { access_key_id: &key_id, secret_access_key: &secret, region: s3.region };
    let response = context
        .http
        .put(&url)
        .timeout(TIMEOUT)
        .header("x-amz-content-sha256", &payload_hash)
        .header("x-amz-date", &amz_date)
        .header("authorization", sigv4::authorization(&request, &credentials))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|err| failed(format!("PUT {url}: {err}")))?;
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        return Err(failed(format!("PUT {url} answered {status}: {}", truncate(&body, 500))));
    }
    Ok(json!({"s3Output": {"bucketName": s3.bucket, "key": key}, "url": url}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_folders_stay_where_they_are_told() {
        let data = Path::new("/var/canon");
        assert_eq!(local_folder("exports/out", data).unwrap(), PathBuf::from("/var/canon/exports/out"));
        assert_eq!(local_folder("file:///tmp/drop", data).unwrap(), PathBuf::from("/tmp/drop"));
        assert_eq!(local_folder("../etc", data).unwrap_err().kind, "invalid_config");
        assert!(object_key(Some("/a/b/")).unwrap().starts_with("a/b/"));
        assert_eq!(object_key(Some("a/../b")).unwrap_err().kind, "invalid_config");
    }
}
