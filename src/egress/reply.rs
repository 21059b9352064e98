//! Every reply from outside canon is read under a cap: a receiver, a model or a storage API
//! answering with an endless body costs canon at most the cap in memory, never the body.
//!
//! [`read_capped`] reads chunk by chunk and stops at the cap (the rest is never read; the
//! connection is dropped). Callers choose what a truncated reply means: a send keeps its
//! first [`SEND_REPLY_CAP`] bytes and says it was truncated, a model answer over
//! [`MODEL_ANSWER_CAP`] is a failed call ([`TooLarge`] names the cap), an error body only
//! ever needs an excerpt ([`ERROR_EXCERPT_CAP`]).

/// What a send (`webhookOutput.httpResponseBody`) keeps of a receiver's reply.
pub const SEND_REPLY_CAP: usize = 1024 * 1024;
/// Largest chat-completions answer a model may give (the whole JSON document).
pub const MODEL_ANSWER_CAP: usize = 4 * 1024 * 1024;
/// Largest embeddings answer (64 texts of 3,072 numbers in JSON fit several times).
pub const EMBEDDINGS_ANSWER_CAP: usize = 32 * 1024 * 1024;
/// Largest JSON answer of a storage API (a Box token or folder page).
pub const API_ANSWER_CAP: usize = 4 * 1024 * 1024;
/// What is read of a failed reply: enough for an excerpt in an error message.
pub const ERROR_EXCERPT_CAP: usize = 4 * 1024;

/// The first bytes of a reply, and whether there were more.
#[derive(Debug, Default)]
pub struct Reply {
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

impl Reply {
    /// The bytes as text; a character the cap cut in half is dropped, other invalid UTF-8
    /// replaced.
    pub fn text(&self) -> String {
        let bytes = match std::str::from_utf8(&self.bytes) {
            Err(err) if self.truncated && err.error_len().is_none() => &self.bytes[..err.valid_up_to()],
            _ => &self.bytes[..],
        };
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// A reply longer than the cap where the whole of it is needed.
#[derive(Debug, thiserror::Error)]
#[error("the reply is larger than {} (canon reads at most that much)", describe_cap(*.cap))]
pub struct TooLarge {
    pub cap: usize,
}

/// `4 MiB`, `4 KiB` or bytes.
pub fn describe_cap(cap: usize) -> String {
    match cap {
        c if c >= 1024 * 1024 && c % (1024 * 1024) == 0 => format!("{} MiB", c / (1024 * 1024)),
        c if c >= 1024 && c % 1024 == 0 => format!("{} KiB", c / 1024),
        c => format!("{c} bytes"),
    }
}

/// Reads at most `cap` bytes of the body; `truncated` when the body was longer.
pub async fn read_capped(mut response: reqwest::Response, cap: usize) -> Result<Reply, reqwest::Error> {
    let mut reply = Reply::expecting(response.content_length(), cap);
    while let Some(chunk) = response.chunk().await? {
        if !reply.push(&chunk, cap) {
            break;
        }
    }
    Ok(reply)
}

/// [`read_capped`] for a body read through hyper (the webhook client's).
async fn read_capped_body<B>(mut body: B, cap: usize) -> Result<Reply, B::Error>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Unpin,
{
    use http_body_util::BodyExt;
    let mut reply = Reply::expecting(body.size_hint().exact(), cap);
    while let Some(frame) = body.frame().await {
        if let Ok(chunk) = frame?.into_data() {
            if !reply.push(&chunk, cap) {
                break;
            }
        }
    }
    Ok(reply)
}

impl Reply {
    /// An empty reply with room for what a body declared, within the cap.
    fn expecting(declared: Option<u64>, cap: usize) -> Self {
        // A declared length past the cap still yields the first `cap` bytes, so no early
        // exit: but the buffer never grows past what the cap allows.
        let declared = declared.and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
        Reply { bytes: Vec::with_capacity(declared.min(cap).min(64 * 1024)), truncated: false }
    }

    /// At most `chars` characters of [`Reply::text`].
    fn excerpt(&self, chars: usize) -> String {
        self.text().chars().take(chars).collect()
    }

    /// Adds a chunk within the cap; false once the cap is reached (the rest is not read).
    fn push(&mut self, chunk: &[u8], cap: usize) -> bool {
        let room = cap - self.bytes.len();
        if chunk.len() > room {
            self.bytes.extend_from_slice(&chunk[..room]);
            self.truncated = true;
            return false;
        }
        self.bytes.extend_from_slice(chunk);
        true
    }
}

/// The whole body, refused when it is longer than `cap` (by its declared length before
/// anything is read).
pub async fn read_within(response: reqwest::Response, cap: usize) -> Result<Vec<u8>, ReadError> {
    if response.content_length().is_some_and(|n| n > cap as u64) {
        return Err(ReadError::TooLarge(TooLarge { cap }));
    }
    let reply = read_capped(response, cap).await.map_err(ReadError::Network)?;
    if reply.truncated {
        return Err(ReadError::TooLarge(TooLarge { cap }));
    }
    Ok(reply.bytes)
}

/// An excerpt of a failed reply's body, for an error message (never more than `chars`).
pub async fn excerpt(response: reqwest::Response, chars: usize) -> String {
    read_capped(response, ERROR_EXCERPT_CAP).await.unwrap_or_default().excerpt(chars)
}

/// [`excerpt`] of a body read through hyper (the webhook client's).
pub async fn body_excerpt<B>(body: B, chars: usize) -> String
where
    B: hyper::body::Body<Data = bytes::Bytes> + Unpin,
{
    read_capped_body(body, ERROR_EXCERPT_CAP).await.unwrap_or_default().excerpt(chars)
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    TooLarge(TooLarge),
    #[error("reading the reply: {}", super::describe(.0))]
    Network(reqwest::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_cut_by_the_cap_is_dropped() {
        let reply = Reply { bytes: "é".as_bytes()[..1].to_vec(), truncated: true };
        assert_eq!(reply.text(), "");
        let whole = Reply { bytes: b"ok".to_vec(), truncated: false };
        assert_eq!(whole.text(), "ok");
    }

    #[test]
    fn caps_are_named_in_binary_units() {
        assert_eq!(describe_cap(MODEL_ANSWER_CAP), "4 MiB");
        assert_eq!(describe_cap(ERROR_EXCERPT_CAP), "4 KiB");
        assert_eq!(describe_cap(10), "10 bytes");
        assert_eq!(
            TooLarge { cap: MODEL_ANSWER_CAP }.to_string(),
            "the reply is larger than 4 MiB (canon reads at most that much)"
        );
    }
}
