//! all-MiniLM-L6-v2 in process with candle on the CPU, as sentence-transformers runs it: BERT,
//! mean pooling over the attention mask, L2 normalisation; input window 256 tokens.
//!
//! Texts are embedded in batches of similar length (little padding); the matrix products of
//! one batch run on every core (candle's CPU backend splits them across its thread pool), and
//! one batch runs at a time so concurrent callers do not fight over the cores (callers take
//! turns batch by batch, so a search query never waits for a whole ingestion).

use super::{normalize, off_runtime, EmbedError, EmbedResult, Embedder, TokenCounter};
use crate::store::vectors::Space;
use async_trait::async_trait;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// sentence-transformers' `max_seq_length` for this model, special tokens included.
pub const MAX_SEQUENCE: usize = 256;
/// Content tokens per chunk: the window less `[CLS]` and `[SEP]`.
pub const CHUNK_TOKENS: usize = MAX_SEQUENCE - 2;
/// Texts per forward pass.
const BATCH: usize = 32;

struct Model {
    bert: BertModel,
    device: Device,
}

/// The in-process embedder.
pub struct MiniLm {
    counter: Arc<TokenCounter>,
    model: Arc<Mutex<Model>>,
    dimension: usize,
}

impl MiniLm {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`.
    pub fn load(dir: &Path) -> EmbedResult<Self> {
        let unavailable = |what: &str, err: &dyn std::fmt::Display| {
            EmbedError::Unavailable(format!("{what} in {}: {err}", dir.display()))
        };
        let config_text = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|err| unavailable("config.json", &err))?;
        let config: Config =
            serde_json::from_str(&config_text).map_err(|err| unavailable("config.json", &err))?;
        let weights = std::fs::read(dir.join("model.safetensors"))
            .map_err(|err| unavailable("model.safetensors", &err))?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|err| unavailable("model.safetensors", &err))?;
        let bert = BertModel::load(vb, &config).map_err(|err| unavailable("BERT", &err))?;
        let counter = TokenCounter::from_file(&dir.join("tokenizer.json"))?;
        Ok(Self {
            counter: Arc::new(counter),
            model: Arc::new(Mutex::new(Model { bert, device })),
            dimension: config.hidden_size,
        })
    }

    /// The model loaded from `dir` once per process (tests and restarts in one process share
    /// it; it holds no state between calls).
    pub fn shared(dir: &Path) -> EmbedResult<Arc<Self>> {
        static LOADED: Mutex<Vec<(std::path::PathBuf, Arc<MiniLm>)>> = Mutex::new(Vec::new());
        let mut loaded =
            LOADED.lock().map_err(|_| EmbedError::Unavailable("model cache lock poisoned".into()))?;
        if let Some((_, model)) = loaded.iter().find(|(path, _)| path == dir) {
            return Ok(model.clone());
        }
        let model = Arc::new(Self::load(dir)?);
        loaded.push((dir.to_path_buf(), model.clone()));
        Ok(model)
    }

    /// The embeddings of `texts` without any of the service around them (the benchmark's
    /// baseline): tokenise, forward, pool, normalise.
    pub fn embed_blocking(&self, texts: &[String]) -> EmbedResult<Vec<Vec<f32>>> {
        embed_all(&self.counter, &self.model, texts)
    }
}

fn failed(err: impl std::fmt::Display) -> EmbedError {
    EmbedError::Failed(err.to_string())
}

fn embed_all(counter: &TokenCounter, model: &Mutex<Model>, texts: &[String]) -> EmbedResult<Vec<Vec<f32>>> {
    let tokenizer =
        counter.tokenizer().ok_or_else(|| EmbedError::Unavailable("MiniLM needs its tokenizer".into()))?;
    let encodings =
        tokenizer.encode_batch(texts.iter().map(String::as_str).collect::<Vec<_>>(), true).map_err(failed)?;
    if let Some((i, e)) = encodings.iter().enumerate().find(|(_, e)| e.len() > MAX_SEQUENCE) {
        return Err(EmbedError::Failed(format!(
            "text {i} has {} tokens, over the model's window of {MAX_SEQUENCE}; chunk it first",
            e.len()
        )));
    }
    // Similar lengths together: less padding per batch.
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| encodings[i].len());
    let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
    for batch in order.chunks(BATCH) {
        // Held per batch, not per call: a search's one-text query waits for at most one
        // batch of a large ingestion, not for all of it.
        let model = model.lock().map_err(|_| failed("model lock poisoned"))?;
        let width = batch.iter().map(|&i| encodings[i].len()).max().unwrap_or(1);
        let mut ids = Vec::with_capacity(batch.len() * width);
        let mut mask = Vec::with_capacity(batch.len() * width);
        for &i in batch {
            let e = &encodings[i];
            ids.extend_from_slice(e.get_ids());
            mask.extend(std::iter::repeat_n(1u32, e.len()));
            ids.extend(std::iter::repeat_n(0u32, width - e.len()));
            mask.extend(std::iter::repeat_n(0u32, width - e.len()));
        }
        let shape = (batch.len(), width);
        let ids = Tensor::from_vec(ids, shape, &model.device).map_err(failed)?;
        let mask = Tensor::from_vec(mask, shape, &model.device).map_err(failed)?;
        let types = ids.zeros_like().map_err(failed)?;
        let hidden = model.bert.forward(&ids, &types, Some(&mask)).map_err(failed)?;
        let pooled = mean_pool(&hidden, &mask).map_err(failed)?;
        let rows: Vec<Vec<f32>> = pooled.to_vec2().map_err(failed)?;
        for (&i, mut row) in batch.iter().zip(rows) {
            normalize(&mut row);
            vectors[i] = row;
        }
    }
    Ok(vectors)
}

/// Mean of the token vectors the mask keeps: `(batch, seq, hidden)` → `(batch, hidden)`.
fn mean_pool(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
    let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
    let counts = mask.sum(1)?.clamp(1e-9, f32::MAX)?;
    summed.broadcast_div(&counts)
}

#[async_trait]
impl Embedder for MiniLm {
    fn space(&self) -> Space {
        Space { name: "all-minilm-l6-v2".into(), dimension: self.dimension }
    }

    async fn count_tokens(&self, texts: &[String]) -> EmbedResult<Vec<usize>> {
        TokenCounter::count_off_runtime(&self.counter, texts).await
    }

    async fn chunk(&self, text: &str) -> EmbedResult<Vec<String>> {
        TokenCounter::chunk_off_runtime(&self.counter, text, CHUNK_TOKENS).await
    }

    async fn embed(&self, texts: &[String]) -> EmbedResult<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let (counter, model, texts) = (self.counter.clone(), self.model.clone(), texts.to_vec());
        off_runtime(move || embed_all(&counter, &model, &texts)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Option<MiniLm> {
        let dir = crate::provision::source_dir().join("vendor/minilm");
        dir.join("model.safetensors").is_file().then(|| MiniLm::load(&dir).expect("MiniLM loads"))
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn vectors_are_unit_length_and_paraphrases_are_closer_than_unrelated_text() {
        let Some(model) = model() else {
            eprintln!("vendor/minilm missing: run make provision");
            return;
        };
        let texts = [
            "The cat sits on the mat.",
            "A cat is sitting on a rug.",
            "Quarterly revenue grew by eight percent.",
        ]
        .map(String::from);
        let v = model.embed_blocking(&texts).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].len(), 384);
        for vector in &v {
            let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4);
        }
        assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.3);
    }

    #[test]
    fn batching_and_padding_do_not_change_a_vector() {
        let Some(model) = model() else { return };
        let short = "short text".to_string();
        let long = "a much longer text that makes the batch padded for the short one".to_string();
        let alone = model.embed_blocking(std::slice::from_ref(&short)).unwrap();
        let together = model.embed_blocking(&[long, short]).unwrap();
        assert!(cosine(&alone[0], &together[1]) > 0.9999);
    }

    #[tokio::test]
    async fn a_long_text_is_chunked_to_fit_the_window_and_never_truncated() {
        let Some(model) = model() else { return };
        let text = (0..600).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ");
        let chunks = model.chunk(&text).await.unwrap();
        assert!(chunks.len() > 1);
        let counts = model.count_tokens(&chunks).await.unwrap();
        assert!(counts.iter().all(|&n| n <= CHUNK_TOKENS), "{counts:?}");
        assert!(chunks.last().unwrap().ends_with("word599"));
        assert!(model.embed_blocking(&chunks).is_ok());
    }
}
