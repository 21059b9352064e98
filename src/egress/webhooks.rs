//! The webhook client: delivery POSTs on hyper directly, behind the same guard as every other
//! request ([`super::Egress`]): the guarded resolver ([`super::resolver::Guarded`]), no proxy,
//! no redirect followed, a timeout over the whole exchange and the reply read under a cap.
//!
//! Why not reqwest, which every other request uses: per request it parses the URL twice more
//! (its redirect policy and its response each turn the `Uri` back into a `Url`), clones its
//! client and connector, and wraps the call in retry and redirect layers that do nothing
//! here. A profile of `make bench-delivery` put those at ~4 µs of CPU a delivery, about a
//! sixth of canon's whole cost per delivery then (25–26 µs, 20.5–21.5 after); deliveries are
//! the one hot path of outbound requests.

use super::reply::body_excerpt;
use super::resolver::Guarded;
use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_TYPE, USER_AGENT};
use http::{Method, Request, Uri};
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::sync::Arc;
use std::time::Duration;

/// How long an idle connection to a receiver is kept for the next delivery (reqwest's default).
const IDLE_FOR: Duration = Duration::from_secs(90);

pub struct WebhookClient {
    client: Client<HttpsConnector<HttpConnector<Guarded>>, Full<Bytes>>,
}

/// What a destination answered (a webhook receiver, or an S3 or Drive endpoint through
/// reqwest): the status, its `Retry-After` in seconds, and an excerpt of the body (at most
/// `chars` characters of its first [`ERROR_EXCERPT_CAP`](super::reply::ERROR_EXCERPT_CAP) bytes).
#[derive(Debug)]
pub struct DestinationAnswer {
    pub status: http::StatusCode,
    pub retry_after: Option<Duration>,
    pub excerpt: String,
}

impl WebhookClient {
    /// `public_only`: whether the resolver refuses names that resolve to non-public addresses
    /// (IP literals are checked before a request is made, by [`super::Egress::check_webhook_url`]).
    /// `extra_roots`: the operator's CA ([`super::roots`]), trusted beside the public roots.
    pub fn new(
        public_only: bool,
        extra_roots: &[rustls::pki_types::CertificateDer<'static>],
    ) -> anyhow::Result<Self> {
        let mut http = HttpConnector::new_with_resolver(Guarded { public_only });
        http.enforce_http(false);
        // As reqwest does: a request is one write, with nothing to wait for.
        http.set_nodelay(true);
        let roots = super::roots::store(extra_roots)?;
        let mut tls =
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("ring supports the default TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let mut https = HttpsConnector::from((http, tls));
        if public_only {
            // The URL check refuses plain http already; the connector refuses it too.
            https.enforce_https();
        }
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(IDLE_FOR)
            .build(https);
        Ok(Self { client })
    }

    /// POSTs `body` as JSON to `url` (a URL the guard passed) with `user_agent` and `extra`
    /// headers; the whole exchange, the excerpt's read included, within `timeout`.
    pub async fn post_json(
        &self,
        url: Uri,
        user_agent: &'static str,
        extra: Option<(HeaderName, HeaderValue)>,
        body: String,
        timeout: Duration,
        chars: usize,
    ) -> Result<DestinationAnswer, String> {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(url)
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(USER_AGENT, HeaderValue::from_static(user_agent));
        if let Some((name, value)) = extra {
            request = request.header(name, value);
        }
        let request = request.body(Full::new(Bytes::from(body))).map_err(|err| err.to_string())?;
        let exchange = async {
            let response = self.client.request(request).await.map_err(|err| super::describe(&err))?;
            let (parts, body) = response.into_parts();
            // Only an excerpt is kept, so only a few KiB are read: a receiver cannot make
            // canon hold its body.
            Ok(DestinationAnswer {
                status: parts.status,
                retry_after: retry_after(&parts.headers),
                excerpt: body_excerpt(body, chars).await,
            })
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| format!("no answer within {} s", timeout.as_secs_f64()))?
    }
}

/// A `Retry-After` given in seconds (the HTTP-date form is not read).
pub fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    async fn listener() -> (TcpListener, Uri) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}/hook", listener.local_addr().unwrap()).parse().unwrap();
        (listener, uri)
    }

    /// Accepts one connection, reads its request and writes `reply`; the socket stays open.
    async fn answer_first_request(listener: TcpListener, reply: &[u8]) -> tokio::net::TcpStream {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = [0_u8; 4096];
        let _ = socket.read(&mut request).await;
        socket.write_all(reply).await.unwrap();
        socket
    }

    async fn post(uri: Uri, timeout: Duration) -> Result<DestinationAnswer, String> {
        WebhookClient::new(false, &[])
            .unwrap()
            .post_json(uri, "canon-test", None, "{}".into(), timeout, 100)
            .await
    }

    #[tokio::test]
    async fn a_receiver_that_accepts_and_never_answers_fails_the_post_at_the_timeout() {
        let (listener, uri) = listener().await;
        // Holds each connection open, reading and never writing a byte.
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        let began = std::time::Instant::now();
        let error = post(uri, Duration::from_millis(300)).await.unwrap_err();
        assert_eq!(error, "no answer within 0.3 s");
        assert!(began.elapsed() < Duration::from_secs(5), "took {:?}", began.elapsed());
    }

    #[tokio::test]
    async fn a_receiver_that_answers_slowly_in_pieces_is_cut_by_the_same_timeout() {
        let (listener, uri) = listener().await;
        // Sends the head at once, then one byte of the body every 100 ms, forever.
        tokio::spawn(async move {
            let head = "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 100000\r\n\r\n";
            let mut socket = answer_first_request(listener, head.as_bytes()).await;
            while socket.write_all(b"x").await.is_ok() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        let error = post(uri, Duration::from_millis(500)).await.unwrap_err();
        assert_eq!(error, "no answer within 0.5 s");
    }

    #[tokio::test]
    async fn a_receiver_s_status_retry_after_and_body_excerpt_come_back() {
        let (listener, uri) = listener().await;
        tokio::spawn(async move {
            let body = "slow down, please";
            let reply = format!(
                "HTTP/1.1 429 Too Many Requests\r\nretry-after: 7\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            answer_first_request(listener, reply.as_bytes()).await;
        });
        let answer = post(uri, Duration::from_secs(5)).await.unwrap();
        assert_eq!(answer.status, http::StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(answer.retry_after, Some(Duration::from_secs(7)));
        assert_eq!(answer.excerpt, "slow down, please");
    }
}
