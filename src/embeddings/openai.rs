//! Any OpenAI-compatible embeddings endpoint (`CANON_EMBEDDINGS_URL`: the full
//! `…/v1/embeddings` URL, or a base URL it is appended to), with an optional bearer key
//! (`CANON_EMBEDDINGS_API_KEY`) and model (`CANON_EMBEDDINGS_MODEL`).
//!
//! The vector dimension is learnt at start from one probe request. Token counts use the
//! tokenizer file given by `CANON_EMBEDDINGS_TOKENIZER` when set, else an estimate of four
//! bytes per token. Texts are sent in batches; errors are returned for the job queue to
//! retry with backoff.

use super::{normalize, EmbedError, EmbedResult, Embedder, TokenCounter};
use crate::egress::reply;
use crate::store::vectors::Space;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Texts per request.
const BATCH: usize = 64;
/// Content tokens per chunk (OpenAI's embedding models accept 8,191 tokens).
pub const CHUNK_TOKENS: usize = 8_000;

pub struct OpenAiEmbedder {
    client: reqwest::Client,
    url: String,
    api_key: Option<String>,
    model: String,
    dimension: usize,
    counter: Arc<TokenCounter>,
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    index: usize,
    embedding: Vec<f32>,
}

/// The endpoint for a configured URL: used as is when it names `/embeddings`.
pub fn endpoint(url: &str) -> String {
    let url = url.trim_end_matches('/');
    if url.ends_with("/embeddings") {
        url.to_string()
    } else if url.ends_with("/v1") {
        format!("{url}/embeddings")
    } else {
        format!("{url}/v1/embeddings")
    }
}

impl OpenAiEmbedder {
    /// Connects and learns the vector dimension from a probe.
    pub async fn connect(
        url: &str,
        api_key: Option<String>,
        model: &str,
        counter: TokenCounter,
    ) -> EmbedResult<Self> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|err| EmbedError::Unavailable(err.to_string()))?;
        let counter = Arc::new(counter);
        let mut embedder =
            Self { client, url: endpoint(url), api_key, model: model.to_string(), dimension: 0, counter };
        let probe = embedder
            .request(&["dimension probe".to_string()])
            .await
            .map_err(|err| EmbedError::Unavailable(format!("{}: {err}", embedder.url)))?;
        embedder.dimension = probe.first().map(Vec::len).unwrap_or(0);
        if embedder.dimension == 0 {
            return Err(EmbedError::Unavailable(format!("{} returned an empty embedding", embedder.url)));
        }
        Ok(embedder)
    }

    async fn request(&self, texts: &[String]) -> EmbedResult<Vec<Vec<f32>>> {
        let mut request = self.client.post(&self.url).json(&json!({ "model": self.model, "input": texts }));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response =
            request.send().await.map_err(|err| EmbedError::Failed(format!("embeddings request: {err}")))?;
        let status = response.status();
        if !status.is_success() {
            let body = reply::excerpt(response, 300).await;
            return Err(EmbedError::Failed(format!("embeddings endpoint answered {status}: {body}")));
        }
        let bytes = reply::read_within(response, reply::EMBEDDINGS_ANSWER_CAP)
            .await
            .map_err(|err| EmbedError::Failed(format!("embeddings response: {err}")))?;
        let mut body: Response = serde_json::from_slice(&bytes)
            .map_err(|err| EmbedError::Failed(format!("embeddings response: {err}")))?;
        if body.data.len() != texts.len() {
            return Err(EmbedError::Failed(format!(
                "asked for {} embeddings, got {}",
                texts.len(),
                body.data.len()
            )));
        }
        body.data.sort_by_key(|d| d.index);
        Ok(body
            .data
            .into_iter()
            .map(|d| {
                let mut v = d.embedding;
                normalize(&mut v);
                v
            })
            .collect())
    }
}

/// A space name from a model name: letters, digits, `-` and `_` only.
fn space_name(model: &str) -> String {
    let cleaned: String = model
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '-' })
        .collect();
    format!("openai-{cleaned}")
}

#[async_trait]
impl Embedder for OpenAiEmbedder {
    fn space(&self) -> Space {
        Space { name: format!("{}-{}", space_name(&self.model), self.dimension), dimension: self.dimension }
    }

    async fn count_tokens(&self, texts: &[String]) -> EmbedResult<Vec<usize>> {
        TokenCounter::count_off_runtime(&self.counter, texts).await
    }

    async fn chunk(&self, text: &str) -> EmbedResult<Vec<String>> {
        TokenCounter::chunk_off_runtime(&self.counter, text, CHUNK_TOKENS).await
    }

    async fn embed(&self, texts: &[String]) -> EmbedResult<Vec<Vec<f32>>> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            let batch_vectors = self.request(batch).await?;
            if let Some(bad) = batch_vectors.iter().find(|v| v.len() != self.dimension) {
                return Err(EmbedError::Failed(format!(
                    "endpoint changed dimension: {} instead of {}",
                    bad.len(),
                    self.dimension
                )));
            }
            vectors.extend(batch_vectors);
        }
        Ok(vectors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::post;
    use axum::{Json, Router};
    use serde_json::Value;
    use std::sync::{Arc, Mutex};

    /// A stand-in for the paid endpoint: 3-dimensional vectors derived from the text, answered
    /// in reverse order (clients must use `index`), recording what it was sent.
    #[derive(Clone, Default)]
    struct Stub {
        calls: Arc<Mutex<Vec<Call>>>,
    }

    /// The authorization header and body of one request.
    type Call = (Option<String>, Value);

    async fn embeddings(
        State(stub): State<Stub>,
        headers: HeaderMap,
        Json(body): Json<Value>,
    ) -> Result<Json<Value>, StatusCode> {
        let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_string);
        stub.calls.lock().unwrap().push((auth, body.clone()));
        let inputs = body["input"].as_array().ok_or(StatusCode::BAD_REQUEST)?;
        let mut data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(index, text)| {
                let len = text.as_str().unwrap_or_default().len() as f32;
                json!({ "object": "embedding", "index": index, "embedding": [len, 1.0, 0.0] })
            })
            .collect();
        data.reverse();
        Ok(Json(json!({ "object": "list", "data": data, "model": body["model"] })))
    }

    async fn stub_server() -> (String, Stub) {
        let stub = Stub::default();
        let app = Router::new().route("/v1/embeddings", post(embeddings)).with_state(stub.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (format!("http://{addr}"), stub)
    }

    #[test]
    fn endpoint_accepts_a_base_a_v1_base_or_the_full_url() {
        assert_eq!(endpoint("http://h:1"), "http://h:1/v1/embeddings");
        assert_eq!(endpoint("http://h:1/v1/"), "http://h:1/v1/embeddings");
        assert_eq!(endpoint("http://h:1/v1/embeddings"), "http://h:1/v1/embeddings");
    }

    #[tokio::test]
    async fn embeds_in_order_in_batches_with_the_key_and_model_and_learns_the_dimension() {
        let (url, stub) = stub_server().await;
        let embedder = OpenAiEmbedder::connect(
            &url,
            Some("sk-test".into()),
            "text-embedding-3-small",
            TokenCounter::Estimate,
        )
        .await
        .unwrap();
        assert_eq!(embedder.space().dimension, 3);
        assert_eq!(embedder.space().name, "openai-text-embedding-3-small-3");
        let texts: Vec<String> = (0..100).map(|i| "x".repeat(i + 1)).collect();
        let vectors = embedder.embed(&texts).await.unwrap();
        assert_eq!(vectors.len(), 100);
        for (i, v) in vectors.iter().enumerate() {
            let expected = (i + 1) as f32 / (((i + 1) * (i + 1)) as f32 + 1.0).sqrt();
            assert!((v[0] - expected).abs() < 1e-5, "vector {i} in order");
        }
        let calls = stub.calls.lock().unwrap();
        assert_eq!(calls.len(), 3, "probe + two batches of at most {BATCH}");
        assert!(calls.iter().all(|(auth, body)| auth.as_deref() == Some("Bearer sk-test")
            && body["model"] == "text-embedding-3-small"));
    }

    #[tokio::test]
    async fn an_unreachable_endpoint_is_reported_at_start() {
        let err = OpenAiEmbedder::connect("http://127.0.0.1:9", None, "m", TokenCounter::Estimate)
            .await
            .err()
            .expect("fails");
        assert!(matches!(err, EmbedError::Unavailable(_)));
    }
}
