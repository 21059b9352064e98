//! The three Box REST calls a folder watch needs: a client-credentials token, a folder's
//! items (paged by offset), a file's content (Box answers with a redirect to the bytes,
//! which canon follows only as far as [`follow_box_redirect`] allows).

use crate::egress::reply;
use anyhow::Context as _;
use serde::Deserialize;
use std::time::Duration;

/// Largest file downloaded (bytes): what a call accepts.
const MAX_FILE: usize = 50 * 1024 * 1024;
/// Items per folder page (Box's maximum).
pub const PAGE: usize = 1000;

#[derive(Clone)]
pub struct BoxApi {
    base: String,
    client: reqwest::Client,
}

#[derive(Debug, Clone, Deserialize)]
pub struct BoxFile {
    pub id: String,
    pub name: String,
}

/// A page of a folder's items: its files (not folders or web links), how many items it
/// held, and how many the folder holds.
#[derive(Debug)]
pub struct FolderPage {
    pub files: Vec<BoxFile>,
    pub items: usize,
    pub total: usize,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
struct Items {
    entries: Vec<Entry>,
    #[serde(default)]
    total_count: usize,
}

impl BoxApi {
    /// `base`: `https://api.box.com` in production (`CANON_BOX_API_URL`). The URL is the
    /// operator's, not a tenant's, so it does not go through the egress guard.
    pub fn new(base: &str) -> anyhow::Result<Self> {
        let base = base.trim_end_matches('/').to_string();
        let origin = reqwest::Url::parse(&base)?.origin();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .redirect(reqwest::redirect::Policy::custom(move |attempt| follow_box_redirect(attempt, &origin)))
            .build()?;
        Ok(Self { base, client })
    }

    pub async fn token(
        &self,
        client_id: &str,
        secret: &str,
        enterprise: Option<&str>,
    ) -> anyhow::Result<String> {
        // Built before any await: the serializer is not Send.
        let body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "client_credentials")
                .append_pair("client_id", client_id)
                .append_pair("client_secret", secret);
            if let Some(enterprise) = enterprise {
                form.append_pair("box_subject_type", "enterprise").append_pair("box_subject_id", enterprise);
            }
            form.finish()
        };
        let response = self
            .client
            .post(format!("{}/oauth2/token", self.base))
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await?
            .error_for_status()
            .context("box token")?;
        let body: serde_json::Value = read_json(response).await?;
        body["access_token"].as_str().map(str::to_string).context("box token answer without access_token")
    }

    /// One page of a folder's items from `offset`, at most `limit` (and Box's 1,000).
    pub async fn folder_page(
        &self,
        token: &str,
        folder: &str,
        offset: usize,
        limit: usize,
    ) -> anyhow::Result<FolderPage> {
        let url = format!("{}/2.0/folders/{}/items", self.base, urlencode(folder));
        let response = self
            .client
            .get(url)
            .bearer_auth(token)
            .query(&[
                ("fields", "id,type,name"),
                ("limit", &limit.clamp(1, PAGE).to_string()),
                ("offset", &offset.to_string()),
            ])
            .send()
            .await?
            .error_for_status()
            .context("box folder items")?;
        let items: Items = read_json(response).await?;
        Ok(FolderPage {
            items: items.entries.len(),
            total: items.total_count,
            files: items
                .entries
                .into_iter()
                .filter(|e| e.kind == "file")
                .map(|e| BoxFile { id: e.id, name: e.name })
                .collect(),
        })
    }

    pub async fn download(&self, token: &str, file_id: &str) -> anyhow::Result<Vec<u8>> {
        let url = format!("{}/2.0/files/{}/content", self.base, urlencode(file_id));
        let response = self
            .client
            .get(url)
            .bearer_auth(token)
            .send()
            .await?
            .error_for_status()
            .context("box download")?;
        // Refused by its declared length, or as soon as more than the cap has arrived.
        reply::read_within(response, MAX_FILE).await.with_context(|| format!("box file {file_id}"))
    }
}

/// Most redirects followed for one Box request (Box sends one, to its download host).
const MAX_REDIRECTS: usize = 3;

/// Follows a redirect of Box only to Box's own origin or to an `https` URL whose host is not
/// a private or loopback address literal: the download URL is Box's, but the folder and the
/// credentials are a tenant's, so where the bytes come from is checked, not assumed.
fn follow_box_redirect(
    attempt: reqwest::redirect::Attempt<'_>,
    origin: &url::Origin,
) -> reqwest::redirect::Action {
    if attempt.previous().len() >= MAX_REDIRECTS {
        return attempt.error(format!("Box redirected more than {MAX_REDIRECTS} times"));
    }
    let url = attempt.url();
    let private_literal = match url.host() {
        Some(url::Host::Ipv4(ip)) => crate::egress::address::non_public_reason(ip.into()).is_some(),
        Some(url::Host::Ipv6(ip)) => crate::egress::address::non_public_reason(ip.into()).is_some(),
        _ => false,
    };
    if url.origin() == *origin || (url.scheme() == "https" && !private_literal) {
        attempt.follow()
    } else {
        let refused = format!("Box redirected to {url}, which is neither Box nor a public https URL");
        attempt.error(refused)
    }
}

/// A JSON answer of Box, read under [`reply::API_ANSWER_CAP`].
async fn read_json<T: serde::de::DeserializeOwned>(response: reqwest::Response) -> anyhow::Result<T> {
    let bytes = reply::read_within(response, reply::API_ANSWER_CAP).await.context("box answer")?;
    Ok(serde_json::from_slice(&bytes)?)
}

fn urlencode(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::BoxApi;
    use axum::response::Redirect;
    use axum::routing::get;

    /// A local server whose `/2.0/files/{id}/content` redirects to `target` (joined to its
    /// own address when relative) and whose `/bytes` answers the file.
    async fn box_redirecting_to(target: &'static str) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route("/2.0/files/{id}/content", get(move || async move { Redirect::to(target) }))
            .route("/bytes", get(|| async { "the file" }));
        tokio::spawn(async move { axum::serve(listener, app).await });
        base
    }

    #[tokio::test]
    async fn a_redirect_within_box_is_followed() {
        let base = box_redirecting_to("/bytes").await;
        let bytes = BoxApi::new(&base).unwrap().download("token", "f1").await.unwrap();
        assert_eq!(bytes, b"the file");
    }

    #[tokio::test]
    async fn a_redirect_to_a_private_address_is_refused() {
        let base = box_redirecting_to("http://127.0.0.1:9/secrets").await;
        let err = BoxApi::new(&base).unwrap().download("token", "f1").await.unwrap_err();
        assert!(format!("{err:#}").contains("neither Box nor a public https URL"), "{err:#}");
    }

    #[tokio::test]
    async fn a_redirect_to_a_private_https_literal_is_refused() {
        let base = box_redirecting_to("https://10.0.0.7/bytes").await;
        let err = BoxApi::new(&base).unwrap().download("token", "f1").await.unwrap_err();
        assert!(format!("{err:#}").contains("neither Box nor a public https URL"), "{err:#}");
    }
}
