//! Encryption at rest of tenant secrets: AES-256-GCM (ring), a fresh random nonce per value,
//! and the owner and name as associated data, so a sealed value copied to another tenant's
//! row or another name does not open.
//!
//! The key is `CANON_SECRETS_KEY` (64 hex characters) when set, else one generated once into
//! `<data dir>/secrets.key` (mode 0600). Losing the key loses every stored secret's value;
//! processes sharing one database must share the key.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use std::path::Path;

/// Format marker of sealed values, for a later change of algorithm or key.
const VERSION: &str = "v1.";

pub struct Cipher {
    key: LessSafeKey,
    random: SystemRandom,
}

#[derive(Debug, thiserror::Error)]
#[error("a stored secret does not decrypt with this server's key (CANON_SECRETS_KEY changed?)")]
pub struct Undecryptable;

impl Cipher {
    pub fn new(key: &[u8; 32]) -> Self {
        let key = LessSafeKey::new(UnboundKey::new(&AES_256_GCM, key).expect("a 32-byte AES-256 key"));
        Self { key, random: SystemRandom::new() }
    }

    /// The configured key, else the one in the data directory (generated when missing).
    pub fn load(configured: Option<&str>, data_dir: &Path) -> anyhow::Result<Self> {
        let text = match configured.filter(|k| !k.is_empty()) {
            Some(key) => key.trim().to_string(),
            None => crate::files::read_or_create_private(&data_dir.join("secrets.key"), || {
                let mut bytes = [0u8; 32];
                SystemRandom::new().fill(&mut bytes).expect("the system's random source");
                hex::encode(bytes).into_bytes()
            })
            .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())?,
        };
        let bytes = hex::decode(&text)
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .ok_or_else(|| anyhow::anyhow!("the secrets key must be 64 hex characters (32 bytes)"))?;
        Ok(Self::new(&bytes))
    }

    pub fn seal(&self, context: &str, plaintext: &[u8]) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        self.random.fill(&mut nonce).expect("the system's random source");
        let mut sealed = plaintext.to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(context), &mut sealed)
            .expect("AES-GCM seals any value of a sane size");
        let mut out = nonce.to_vec();
        out.extend(sealed);
        format!("{VERSION}{}", STANDARD.encode(out))
    }

    pub fn open(&self, context: &str, sealed: &str) -> Result<Vec<u8>, Undecryptable> {
        let bytes =
            sealed.strip_prefix(VERSION).and_then(|b| STANDARD.decode(b).ok()).ok_or(Undecryptable)?;
        if bytes.len() < NONCE_LEN {
            return Err(Undecryptable);
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| Undecryptable)?;
        let mut buffer = ciphertext.to_vec();
        let plain =
            self.key.open_in_place(nonce, Aad::from(context), &mut buffer).map_err(|_| Undecryptable)?;
        Ok(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_only_with_its_key_and_context() {
        let cipher = Cipher::new(&[7; 32]);
        let sealed = cipher.seal("acc_1/sandbox/openai", b"sk-live-123");
        assert!(!sealed.contains("sk-live"));
        assert_eq!(cipher.open("acc_1/sandbox/openai", &sealed).unwrap(), b"sk-live-123");
        assert!(cipher.open("acc_2/sandbox/openai", &sealed).is_err());
        assert!(Cipher::new(&[8; 32]).open("acc_1/sandbox/openai", &sealed).is_err());
        assert_ne!(cipher.seal("c", b"same"), cipher.seal("c", b"same"), "a fresh nonce each time");
    }

    #[test]
    fn the_generated_key_is_kept_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = Cipher::load(None, dir.path()).unwrap();
        let sealed = first.seal("c", b"v");
        assert_eq!(Cipher::load(None, dir.path()).unwrap().open("c", &sealed).unwrap(), b"v");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("secrets.key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(Cipher::load(Some("abc"), dir.path()).is_err());
    }
}
