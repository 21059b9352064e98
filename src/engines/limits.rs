//! Bounds on decoding a tenant's file: every decoder of tenant bytes stops at one of these and
//! answers an `input_limit` error naming the limit and its value (a `422` from
//! `POST /v3/infer-schema`, a failed call from a workflow). They keep one tenant's crafted file
//! from taking the memory, stack or time every other tenant's work needs.

use super::EngineError;

/// Messages attached inside messages (message/rfc822), counted from the top message.
pub const MAX_EMAIL_DEPTH: usize = 20;
/// MIME parts of one e-mail, nested messages included.
pub const MAX_EMAIL_PARTS: usize = 1_000;
/// Text decoded from one file, attachments and pretty-printed JSON included (large enough
/// for any file the API accepts as plain text).
pub const MAX_DECODED_BYTES: usize = 32 * 1024 * 1024;
/// Cells of a CSV (rows × columns, missing cells included: each becomes a key and a value).
pub const MAX_CSV_CELLS: usize = 1_000_000;
/// Items one split makes (each an event, and a run of each node after it).
pub const MAX_SPLIT_ITEMS: usize = 10_000;

/// The error of a file past a limit: `what` says what the file has, `limit` the bound.
pub fn exceeded(what: impl std::fmt::Display, limit: impl std::fmt::Display) -> EngineError {
    EngineError::new("input_limit", format!("{what}: the limit is {limit}"))
}

/// What is left of [`MAX_DECODED_BYTES`] while one file (and its attachments) decodes.
#[derive(Debug)]
pub struct Budget {
    output_left: usize,
    /// Depth of the e-mail being decoded (an attachment typed as an e-mail that the parser
    /// kept as text is parsed again, one level below its parent).
    pub email_depth: usize,
    /// MIME parts of e-mails decoded so far from this file.
    pub email_parts: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Self { output_left: MAX_DECODED_BYTES, email_depth: 0, email_parts: 0 }
    }
}

impl Budget {
    /// Takes `bytes` of decoded text, or refuses past the limit.
    pub fn take(&mut self, bytes: usize) -> Result<(), EngineError> {
        self.output_left = self.output_left.checked_sub(bytes).ok_or_else(output_exceeded)?;
        Ok(())
    }

    /// What may still be decoded (bytes).
    pub fn left(&self) -> usize {
        self.output_left
    }
}

pub fn output_exceeded() -> EngineError {
    exceeded(
        "the decoded text of this file (attachments included) is larger than the decoded output limit",
        format!("{} MiB (decodedOutputBytes)", MAX_DECODED_BYTES / (1024 * 1024)),
    )
}

/// A writer that refuses past `left` bytes (pretty-printing JSON under the budget).
pub struct CappedWriter {
    pub bytes: Vec<u8>,
    pub left: usize,
}

impl std::io::Write for CappedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() > self.left {
            return Err(std::io::Error::other("decoded output limit"));
        }
        self.left -= buf.len();
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
