//! Dashboard tokens: HS256 JWTs carrying a user's identity, role, account and environment.
//! Only HS256 is accepted (the header's `alg` is checked, so `none` tokens are refused).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// Claims of a dashboard token.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Claims {
    /// The user (`usr_…`).
    pub sub: String,
    pub email: String,
    /// `admin` or `operator`.
    pub role: String,
    /// The account ID (`acc_…`).
    pub account: String,
    /// `production` or `sandbox`.
    pub environment: String,
    /// Expiry, seconds since the epoch.
    pub exp: i64,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TokenError {
    #[error("malformed token")]
    Malformed,
    #[error("token signature does not verify")]
    BadSignature,
    #[error("token expired")]
    Expired,
}

const HEADER: &str = r#"{"alg":"HS256","typ":"JWT"}"#;

pub fn sign(claims: &Claims, secret: &[u8]) -> String {
    let header = URL_SAFE_NO_PAD.encode(HEADER);
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap_or_default());
    let signing_input = format!("{header}.{payload}");
    let signature = URL_SAFE_NO_PAD.encode(mac(secret, signing_input.as_bytes()).finalize().into_bytes());
    format!("{signing_input}.{signature}")
}

pub fn verify(token: &str, secret: &[u8], now: i64) -> Result<Claims, TokenError> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed);
    };
    let header: serde_json::Value = decode_json(header)?;
    if header.get("alg").and_then(|a| a.as_str()) != Some("HS256") {
        return Err(TokenError::Malformed);
    }
    let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| TokenError::Malformed)?;
    let signing_input = &token[..header_len(token)];
    // verify_slice compares in constant time.
    mac(secret, signing_input.as_bytes()).verify_slice(&signature).map_err(|_| TokenError::BadSignature)?;
    let claims: Claims = decode_json(payload)?;
    if claims.exp <= now {
        return Err(TokenError::Expired);
    }
    Ok(claims)
}

fn header_len(token: &str) -> usize {
    token.rfind('.').unwrap_or(token.len())
}

fn decode_json<T: serde::de::DeserializeOwned>(part: &str) -> Result<T, TokenError> {
    let bytes = URL_SAFE_NO_PAD.decode(part).map_err(|_| TokenError::Malformed)?;
    serde_json::from_slice(&bytes).map_err(|_| TokenError::Malformed)
}

fn mac(secret: &[u8], data: &[u8]) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(data);
    mac
}

/// The signing secret: `CANON_JWT_SECRET` when set, else one generated once into the data
/// directory (so `canon users create` and `canon serve` on one data directory agree).
pub fn secret(configured: Option<&str>, data_dir: &std::path::Path) -> std::io::Result<Vec<u8>> {
    if let Some(secret) = configured.filter(|s| !s.is_empty()) {
        return Ok(secret.as_bytes().to_vec());
    }
    crate::data_dir::create(data_dir)?;
    crate::files::read_or_create_private(&data_dir.join(crate::data_dir::SECRET_FILE), || {
        use rand::RngCore;
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        hex::encode(bytes).into_bytes()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: i64) -> Claims {
        Claims {
            sub: "usr_1".into(),
            email: "a@b.c".into(),
            role: "admin".into(),
            account: "acc_1".into(),
            environment: "sandbox".into(),
            exp,
        }
    }

    #[test]
    fn a_signed_token_verifies_and_round_trips_its_claims() {
        let token = sign(&claims(2_000), b"s3cret");
        assert_eq!(verify(&token, b"s3cret", 1_000), Ok(claims(2_000)));
    }

    #[test]
    fn a_wrong_secret_an_edit_or_expiry_is_refused() {
        let token = sign(&claims(2_000), b"s3cret");
        assert_eq!(verify(&token, b"other", 1_000), Err(TokenError::BadSignature));
        assert_eq!(verify(&token, b"s3cret", 2_000), Err(TokenError::Expired));
        let (head, rest) = token.split_once('.').unwrap();
        let (_, sig) = rest.split_once('.').unwrap();
        let forged = URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(&Claims { role: "admin".into(), sub: "usr_2".into(), ..claims(2_000) })
                .unwrap(),
        );
        assert_eq!(
            verify(&format!("{head}.{forged}.{sig}"), b"s3cret", 1_000),
            Err(TokenError::BadSignature)
        );
    }

    #[test]
    fn an_unsigned_token_is_refused() {
        let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#);
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims(2_000)).unwrap());
        assert_eq!(verify(&format!("{header}.{payload}."), b"s3cret", 1_000), Err(TokenError::Malformed));
        assert_eq!(verify("not.a.token.at.all", b"s3cret", 1_000), Err(TokenError::Malformed));
    }
}
