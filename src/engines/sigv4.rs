//! AWS Signature Version 4 for one S3 request (path-style URL, payload hash signed), written
//! by hand with `hmac`/`sha2` rather than pulling in an AWS SDK.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

pub struct Credentials<'a> {
    pub access_key_id: &'a str,
    pub secret_access_key: &'a str,
    pub region: &'a str,
}

/// One request to sign. `headers` are lower-case names; `host`, `x-amz-date` and
/// `x-amz-content-sha256` must be among them.
pub struct Request<'a> {
    pub method: &'a str,
    /// URI-encoded path (`/bucket/key`).
    pub path: &'a str,
    pub query: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub payload_sha256: &'a str,
    /// `YYYYMMDDTHHMMSSZ`.
    pub amz_date: &'a str,
}

/// The `Authorization` header value.
pub fn authorization(request: &Request, credentials: &Credentials) -> String {
    let mut headers: Vec<(&str, String)> =
        request.headers.iter().map(|(name, value)| (*name, value.trim().to_string())).collect();
    headers.sort_by(|a, b| a.0.cmp(b.0));
    let canonical_headers: String = headers.iter().map(|(n, v)| format!("{n}:{v}\n")).collect();
    let signed_headers = headers.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(";");
    let canonical_request = format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        request.method,
        request.path,
        request.query,
        canonical_headers,
        signed_headers,
        request.payload_sha256
    );
    let date = &request.amz_date[..8];
    let scope = format!("{date}/{}/s3/aws4_request", credentials.region);
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{scope}\n{}",
        request.amz_date,
        hex::encode(Sha256::digest(&canonical_request))
    );
    let key = [date, credentials.region, "s3", "aws4_request"]
        .iter()
        .fold(format!("AWS4{}", credentials.secret_access_key).into_bytes(), |key, part| {
            hmac(&key, part.as_bytes())
        });
    let signature = hex::encode(hmac(&key, string_to_sign.as_bytes()));
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
        credentials.access_key_id
    )
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// Percent-encodes a key path for the canonical URI (`/` kept, RFC 3986 unreserved kept).
pub fn encode_path(path: &str) -> String {
    path.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Where an object goes: an S3-compatible endpoint (path-style URLs), a bucket, a region
/// and a key pair.
pub struct Target<'a> {
    pub endpoint: &'a str,
    pub bucket: &'a str,
    pub region: &'a str,
    pub access_key_id: &'a str,
    pub secret_access_key: &'a str,
}

#[derive(Debug)]
pub enum PutError {
    /// The egress guard refused the endpoint.
    Refused(String),
    /// The request could not be made.
    Failed(String),
}

/// A SigV4-signed `PUT <endpoint>/<bucket>/<key>` of a JSON body, through the egress guard;
/// the answer (whatever its status) and the URL.
pub async fn put_object(
    egress: &crate::egress::Egress,
    target: &Target<'_>,
    key: &str,
    body: Vec<u8>,
    timeout: std::time::Duration,
) -> Result<(reqwest::Response, String), PutError> {
    let endpoint = target.endpoint.trim_end_matches('/');
    let host = endpoint
        .split_once("://")
        .map(|(_, rest)| rest.split('/').next().unwrap_or(rest))
        .filter(|h| !h.is_empty())
        .ok_or_else(|| PutError::Refused(format!("{endpoint:?} is not an http(s) URL")))?;
    let path = encode_path(&format!("/{}/{key}", target.bucket));
    let url = format!("{endpoint}{path}");
    let payload_hash = sha256_hex(&body);
    let amz_date = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let headers =
        [("host", host), ("x-amz-content-sha256", payload_hash.as_str()), ("x-amz-date", amz_date.as_str())];
    let request = Request {
        method: "PUT",
        path: &path,
        query: "",
        headers: &headers,
        payload_sha256: &payload_hash,
        amz_date: &amz_date,
    };
    let credentials = Credentials {
        access_key_id: target.access_key_id,
        secret_access_key: target.secret_access_key,
        region: target.region,
    };
    let response = egress
        .request(reqwest::Method::PUT, &url)
        .map_err(PutError::Refused)?
        .timeout(timeout)
        .header("x-amz-content-sha256", &payload_hash)
        .header("x-amz-date", &amz_date)
        .header("authorization", authorization(&request, &credentials))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|err| PutError::Failed(format!("PUT {url}: {}", crate::egress::describe(&err))))?;
    Ok((response, url))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The "GET Object" example of the AWS S3 SigV4 documentation (header-based auth).
    #[test]
    fn matches_the_aws_documentation_example() {
        let empty = sha256_hex(b"");
        let headers = [
            ("host", "examplebucket.s3.amazonaws.com"),
            ("range", "bytes=0-9"),
            ("x-amz-content-sha256", empty.as_str()),
            ("x-amz-date", "20130524T000000Z"),
        ];
        let request = Request {
            method: "GET",
            path: "/test.txt",
            query: "",
            headers: &headers,
            payload_sha256: &empty,
            amz_date: "20130524T000000Z",
        };
        let credentials = Credentials {
            access_key_id: "AKIAIOSFODNN7EXAMPLE",
            secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            region: "us-east-1",
        };
        assert_eq!(
            authorization(&request, &credentials),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    #[test]
    fn keys_are_percent_encoded_but_slashes_kept() {
        assert_eq!(encode_path("/bucket/a b/ü.json"), "/bucket/a%20b/%C3%BC.json");
    }
}
