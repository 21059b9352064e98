//! The size of a value's JSON (compact, as `serde_json::to_string` writes it), counted as it
//! is written: nothing is allocated for it but what the caller asks to keep.

use serde::Serialize;

/// Bytes of `value`'s JSON.
pub fn json_bytes(value: &(impl Serialize + ?Sized)) -> usize {
    Measured::keeping(0).of(value).bytes
}

/// Counts what is written and keeps its first `keep` bytes.
#[derive(Default)]
pub struct Measured {
    pub bytes: usize,
    pub head: Vec<u8>,
    keep: usize,
}

impl Measured {
    pub fn keeping(keep: usize) -> Self {
        Measured { bytes: 0, head: Vec::new(), keep }
    }

    /// `value` written here. Serializing fails only for maps with keys JSON cannot name
    /// (never for a `serde_json::Value`); what was written until then is counted.
    pub fn of(mut self, value: &(impl Serialize + ?Sized)) -> Self {
        let _ = serde_json::to_writer(&mut self, value);
        self
    }
}

impl std::io::Write for Measured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.keep.saturating_sub(self.head.len()).min(buf.len());
        self.head.extend_from_slice(&buf[..room]);
        self.bytes += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_count_is_the_length_of_the_compact_text_and_the_head_its_start() {
        let value = json!({"name": "é", "list": [1, 2.5, null], "nested": {"a": "b\"c"}});
        assert_eq!(json_bytes(&value), value.to_string().len());
        let measured = Measured::keeping(5).of(&value);
        assert_eq!(measured.bytes, value.to_string().len());
        assert_eq!(measured.head, value.to_string().as_bytes()[..5]);
    }
}
