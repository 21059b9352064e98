//! Dense embedders behind one trait: all-MiniLM-L6-v2 in process with candle (the embedded
//! default) and any OpenAI-compatible `/v1/embeddings` endpoint (`CANON_EMBEDDINGS_URL`).
//!
//! Texts longer than the model's input window are split into overlapping chunks on word
//! boundaries, and every chunk is embedded: nothing is ever truncated silently. The API's own
//! per-text limit (8,192 tokens) is enforced by the collections service.
//!
//! Tokenising and embedding are CPU work: implementations run them through [`off_runtime`],
//! on the blocking pool and at most [`BLOCKING_SLOTS`] at a time, so a long text never
//! stalls the async workers that answer requests, and the memory in flight is bounded.

pub mod minilm;
pub mod openai;

use crate::store::vectors::Space;
use async_trait::async_trait;
use std::path::Path;
use std::sync::Arc;
use tokenizers::Tokenizer;
use tokio::sync::Semaphore;

/// Tokenising or embedding tasks running at once; the others wait their turn holding only
/// their input (the model itself runs one batch at a time).
pub const BLOCKING_SLOTS: usize = 4;
static SLOTS: Semaphore = Semaphore::const_new(BLOCKING_SLOTS);

/// Runs CPU-bound embedder `work` on the blocking pool, within [`BLOCKING_SLOTS`].
pub async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> EmbedResult<T> + Send + 'static,
) -> EmbedResult<T> {
    let _slot = SLOTS.acquire().await.map_err(|_| EmbedError::Failed("embedding slots closed".into()))?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| EmbedError::Failed(format!("embedding task panicked: {err}")))?
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The embedder cannot be used (missing files, unreachable endpoint at start).
    #[error("embedder unavailable: {0}")]
    Unavailable(String),
    /// One call failed; retrying may help.
    #[error("embedding failed: {0}")]
    Failed(String),
}

pub type EmbedResult<T> = Result<T, EmbedError>;

/// Something that turns texts into dense vectors.
#[async_trait]
pub trait Embedder: Send + Sync + 'static {
    /// The vector space its vectors live in (one shared store space per model).
    fn space(&self) -> Space;
    /// Content tokens of each text (special tokens not counted).
    async fn count_tokens(&self, texts: &[String]) -> EmbedResult<Vec<usize>>;
    /// The text as pieces that each fit the model's input window (one piece when it fits).
    async fn chunk(&self, text: &str) -> EmbedResult<Vec<String>>;
    /// One unit-length vector per text, in order.
    async fn embed(&self, texts: &[String]) -> EmbedResult<Vec<Vec<f32>>>;
}

/// Counts and splits text with a Hugging Face `tokenizer.json`, or estimates four bytes per
/// token when none is configured (OpenAI-compatible endpoints without a tokenizer file).
pub enum TokenCounter {
    Tokenizer(Box<Tokenizer>),
    Estimate,
}

/// Tokens of overlap between consecutive chunks, so a sentence cut in two is still found.
const CHUNK_OVERLAP: usize = 32;
const BYTES_PER_TOKEN_ESTIMATE: usize = 4;

impl TokenCounter {
    /// Loads a tokenizer with its stored truncation and padding switched off: counting and
    /// chunking must see every token.
    pub fn from_file(path: &Path) -> EmbedResult<Self> {
        let mut tokenizer = Tokenizer::from_file(path)
            .map_err(|err| EmbedError::Unavailable(format!("cannot load {}: {err}", path.display())))?;
        tokenizer.with_truncation(None).map_err(|err| EmbedError::Unavailable(err.to_string()))?;
        tokenizer.with_padding(None);
        Ok(TokenCounter::Tokenizer(Box::new(tokenizer)))
    }

    pub fn tokenizer(&self) -> Option<&Tokenizer> {
        match self {
            TokenCounter::Tokenizer(tokenizer) => Some(tokenizer),
            TokenCounter::Estimate => None,
        }
    }

    pub fn count(&self, texts: &[String]) -> EmbedResult<Vec<usize>> {
        match self {
            // One text at a time: only one text's encoding is ever held, not a whole body's.
            TokenCounter::Tokenizer(tokenizer) => texts
                .iter()
                .map(|text| {
                    let encoding = tokenizer
                        .encode(text.as_str(), false)
                        .map_err(|err| EmbedError::Failed(format!("tokenizer: {err}")))?;
                    Ok(encoding.len())
                })
                .collect(),
            TokenCounter::Estimate => {
                Ok(texts.iter().map(|t| t.len().div_ceil(BYTES_PER_TOKEN_ESTIMATE)).collect())
            }
        }
    }

    /// [`TokenCounter::count`] through [`off_runtime`].
    pub async fn count_off_runtime(counter: &Arc<Self>, texts: &[String]) -> EmbedResult<Vec<usize>> {
        let (counter, texts) = (counter.clone(), texts.to_vec());
        off_runtime(move || counter.count(&texts)).await
    }

    /// [`TokenCounter::chunk`] through [`off_runtime`].
    pub async fn chunk_off_runtime(
        counter: &Arc<Self>,
        text: &str,
        window: usize,
    ) -> EmbedResult<Vec<String>> {
        let (counter, text) = (counter.clone(), text.to_string());
        off_runtime(move || counter.chunk(&text, window)).await
    }

    /// Splits `text` into pieces of at most `window` content tokens, cut where a word starts,
    /// consecutive pieces overlapping by a few tokens.
    pub fn chunk(&self, text: &str, window: usize) -> EmbedResult<Vec<String>> {
        match self {
            TokenCounter::Tokenizer(tokenizer) => {
                let encoding = tokenizer
                    .encode(text, false)
                    .map_err(|err| EmbedError::Failed(format!("tokenizer: {err}")))?;
                let starts: Vec<usize> = encoding.get_offsets().iter().map(|o| o.0).collect();
                if starts.is_empty() {
                    // Nothing the tokenizer keeps (empty, white space, control characters).
                    return Ok(vec![text.to_string()]);
                }
                let ends: Vec<usize> = encoding.get_offsets().iter().map(|o| o.1).collect();
                let words = encoding.get_word_ids();
                let pieces = split_points(starts.len(), window, |i| {
                    i == 0 || words[i].is_none() || words[i] != words[i - 1]
                });
                Ok(pieces.into_iter().map(|(from, to)| slice(text, starts[from], ends[to - 1])).collect())
            }
            TokenCounter::Estimate => {
                let window_bytes = window * BYTES_PER_TOKEN_ESTIMATE;
                let chars: Vec<(usize, char)> = text.char_indices().collect();
                if chars.is_empty() {
                    return Ok(vec![String::new()]);
                }
                let pieces = split_points(chars.len(), window_bytes, |i| {
                    i == 0 || (chars[i - 1].1.is_whitespace() && !chars[i].1.is_whitespace())
                });
                Ok(pieces
                    .into_iter()
                    .map(|(from, to)| {
                        let end = chars.get(to).map_or(text.len(), |c| c.0);
                        slice(text, chars[from].0, end)
                    })
                    .collect())
            }
        }
    }
}

fn slice(text: &str, from: usize, to: usize) -> String {
    text.get(from..to).unwrap_or(text).trim().to_string()
}

/// Ranges `[from, to)` over `len` units, each at most `window` long, starting where
/// `boundary(i)` allows (falling back to a hard cut in an over-long word), overlapping by up
/// to `CHUNK_OVERLAP` units.
fn split_points(len: usize, window: usize, boundary: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
    let window = window.max(1);
    if len <= window {
        return vec![(0, len)];
    }
    let overlap = CHUNK_OVERLAP.min(window / 4);
    let mut pieces = Vec::new();
    let mut from = 0;
    loop {
        let hard_end = (from + window).min(len);
        if hard_end == len {
            pieces.push((from, len));
            return pieces;
        }
        // Cut before the last word start that keeps the piece within the window.
        let mut end = hard_end;
        while end > from + window / 2 && !boundary(end) {
            end -= 1;
        }
        if end <= from + window / 2 {
            end = hard_end;
        }
        pieces.push((from, end));
        let mut next = end.saturating_sub(overlap).max(from + 1);
        while next < end && !boundary(next) {
            next += 1;
        }
        from = next;
    }
}

/// Longest text an item's data is embedded as. Its data is at most 256 KiB, but a JSON
/// object's key paths repeat on each of its lines: a 128 KiB key over 18,700 small fields
/// made 2.4 GB of lines.
pub const ITEM_TEXT_BYTES: usize = 1 << 20;

/// Why an item's data has no text ([`text_of`] answered `None`), for the tenant.
pub fn item_text_too_long() -> String {
    format!(
        "its text (a `key.path: value` line per field) would pass {ITEM_TEXT_BYTES} bytes; use shorter \
         keys or fewer nested fields"
    )
}

/// What an item's data is embedded as: a string as is; a JSON object as `key: value` lines
/// (nested objects with dotted keys), so field names carry meaning as they do in prose. `None`
/// when the text would pass [`ITEM_TEXT_BYTES`] (it stops being built there).
pub fn text_of(data: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    use std::fmt::Write as _;
    /// Starts a line for the value at `path` (`path: `, nothing for the top level's text).
    fn line(out: &mut String, path: &str, labelled: bool) {
        if !out.is_empty() {
            out.push('\n');
        }
        if labelled {
            out.push_str(path);
            out.push_str(": ");
        }
    }
    fn walk(path: &mut String, value: &Value, out: &mut String) -> bool {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    let len = path.len();
                    if len > 0 {
                        path.push('.');
                    }
                    path.push_str(key);
                    let within = walk(path, value, out);
                    path.truncate(len);
                    if !within {
                        return false;
                    }
                }
            }
            Value::Array(values) => {
                line(out, path, true);
                for (i, value) in values.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    match value {
                        Value::String(s) => out.push_str(s),
                        other => {
                            let _ = write!(out, "{other}");
                        }
                    }
                    if out.len() > ITEM_TEXT_BYTES {
                        return false;
                    }
                }
            }
            Value::Null => {}
            Value::String(s) => {
                line(out, path, !path.is_empty());
                out.push_str(s);
            }
            other => {
                line(out, path, !path.is_empty());
                let _ = write!(out, "{other}");
            }
        }
        out.len() <= ITEM_TEXT_BYTES
    }
    let mut out = String::new();
    walk(&mut String::new(), data, &mut out).then_some(out)
}

/// L2-normalises a vector in place (a zero vector stays zero).
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_short_text_is_one_piece() {
        assert_eq!(split_points(10, 20, |_| true), vec![(0, 10)]);
    }

    #[test]
    fn long_input_is_covered_by_overlapping_pieces_within_the_window() {
        let pieces = split_points(1000, 100, |i| i % 7 == 0);
        assert_eq!(pieces.first().unwrap().0, 0);
        assert_eq!(pieces.last().unwrap().1, 1000);
        for (from, to) in &pieces {
            assert!(to - from <= 100);
        }
        for pair in pieces.windows(2) {
            assert!(pair[1].0 <= pair[0].1, "no gap between {pair:?}");
            assert!(pair[1].0 > pair[0].0, "progress");
        }
    }

    #[test]
    fn estimated_chunks_cover_every_word() {
        let text = (0..500).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        let pieces = TokenCounter::Estimate.chunk(&text, 50).unwrap();
        assert!(pieces.len() > 1);
        for i in 0..500 {
            let word = format!("w{i}");
            assert!(pieces.iter().any(|p| p.split(' ').any(|w| w == word)), "{word} kept");
        }
    }

    #[test]
    fn a_text_without_tokens_is_one_piece_of_itself() {
        assert_eq!(TokenCounter::Estimate.chunk("", 50).unwrap(), vec![String::new()]);
        let path = crate::provision::source_dir().join("vendor/minilm/tokenizer.json");
        let tokenizer = Tokenizer::from_file(path).expect("the provisioned MiniLM tokenizer");
        let counter = TokenCounter::Tokenizer(Box::new(tokenizer));
        for text in ["", " ", "\u{1}\u{2}", "\u{200b}"] {
            let pieces = counter.chunk(text, 50).unwrap();
            assert!(
                !pieces.is_empty() && pieces.iter().all(|p| text.contains(p.as_str())),
                "{text:?}: {pieces:?}"
            );
        }
    }

    #[test]
    fn objects_are_embedded_as_key_value_lines() {
        let text = text_of(
            &json!({"name": "Trail shoe", "size": 42, "tags": ["red", "light"], "maker": {"country": "IT"},
                    "gone": null}),
        )
        .unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort();
        assert_eq!(lines, ["maker.country: IT", "name: Trail shoe", "size: 42", "tags: red, light"]);
        assert_eq!(text_of(&json!("plain")).as_deref(), Some("plain"));
    }

    #[test]
    fn an_object_whose_key_paths_would_repeat_past_the_bound_has_no_text() {
        // 256 KiB of data: a 128 KiB key over 10,000 small fields would be 1.3 GB of lines.
        let fields: serde_json::Map<String, serde_json::Value> =
            (0..10_000).map(|i| (format!("f{i}"), json!(0))).collect();
        let data = json!({ "k".repeat(128 * 1024): fields });
        assert_eq!(text_of(&data), None);
        let fine = json!({ "k".repeat(64): fields });
        assert!(text_of(&fine).is_some_and(|text| text.lines().count() == 10_000));
    }
}
