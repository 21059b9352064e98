//! API-key authentication from memory. Every request presents a key; reading its row and
//! hashing it each time cost most of a cheap request, so a key that authenticated is
//! remembered (by the SHA-256 of the whole presented key, never the key itself) for
//! [`TRUST_FOR`].
//!
//! Revocation: keys are revoked only by `canon keys revoke`, a process of its own sharing the
//! record store (no endpoint revokes keys), so a revoked key stops working within
//! [`TRUST_FOR`] (one second) in every serving process, one or many. Unknown and malformed
//! keys are never remembered: each is read again, so a key created a moment ago works at
//! once and a flood of wrong keys cannot fill the memory.

use crate::memo::Memo;
use crate::store::records::keys::Principal;
use crate::store::records::{RecordError, Records};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// How long a key that authenticated is trusted without reading the store again.
pub const TRUST_FOR: Duration = Duration::from_secs(1);
/// Keys remembered at most (the memory is cleared when full: it only saves reads).
const CAPACITY: usize = 10_000;

pub struct KeyAuthenticator {
    records: Records,
    trusted: Memo<[u8; 32], Principal>,
}

impl KeyAuthenticator {
    pub fn new(records: Records) -> Self {
        Self { records, trusted: Memo::new(TRUST_FOR, CAPACITY) }
    }

    /// The principal of a presented key, or `None` when it is malformed, unknown or revoked.
    pub async fn authenticate(&self, presented: &str) -> Result<Option<Principal>, RecordError> {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        if let Some(principal) = self.trusted.get(&digest) {
            return Ok(Some(principal));
        }
        let seen = self.trusted.revision();
        let principal = self.records.authenticate(presented).await?;
        if let Some(principal) = &principal {
            self.trusted.put_if_unchanged(seen, digest, principal.clone());
        }
        Ok(principal)
    }
}
