//! Standard Webhooks signatures: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed
//! by the base64 secret after its `whsec_` prefix.
//!
//! Receivers written in Rust can check a delivery with [`verify`]:
//!
//! ```
//! use job_listings::webhooks::{sign, verify};
//! let secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
//! let body = br#"{"email":"test@example.com","username":"test_user"}"#;
//! let header = sign(secret, "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk", 1649367553, body).unwrap();
//! assert_eq!(header, "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=");
//! assert!(verify(secret, "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk", 1649367553, body, &header).is_ok());
//! ```

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use thiserror::Error;

/// Why a signature was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// The secret is not `whsec_` followed by base64.
    #[error("the secret is not a whsec_ base64 secret")]
    BadSecret,
    /// No `v1,` signature in the header matched the payload.
    #[error("no signature matches the payload")]
    Mismatch,
}

fn mac(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<Vec<u8>, SignatureError> {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
        .map_err(|_| SignatureError::BadSecret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| SignatureError::BadSecret)?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(mac.finalize().into_bytes().to_vec())
}

/// The `webhook-signature` header value for a payload.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, SignatureError> {
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac(secret, id, timestamp, body)?)
    ))
}

/// Checks a `webhook-signature` header (one or more space-separated `v1,<base64>` entries)
/// against the payload. Each candidate's length is checked before the constant-time compare.
/// Checking that `timestamp` is recent is the receiver's policy, not done here.
pub fn verify(
    secret: &str,
    id: &str,
    timestamp: i64,
    body: &[u8],
    header: &str,
) -> Result<(), SignatureError> {
    let expected = mac(secret, id, timestamp, body)?;
    let matched = header
        .split_whitespace()
        .filter_map(|entry| entry.strip_prefix("v1,"))
        .filter_map(|b64| STANDARD.decode(b64).ok())
        .any(|candidate| {
            candidate.len() == expected.len() && bool::from(candidate.ct_eq(&expected))
        });
    if matched {
        Ok(())
    } else {
        Err(SignatureError::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    const ID: &str = "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk";
    const TS: i64 = 1649367553;
    const BODY: &[u8] = br#"{"email":"test@example.com","username":"test_user"}"#;
    const SIGNATURE: &str = "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=";

    #[test]
    fn signs_the_standard_webhooks_test_vector() {
        assert_eq!(sign(SECRET, ID, TS, BODY).as_deref(), Ok(SIGNATURE));
        assert_eq!(verify(SECRET, ID, TS, BODY, SIGNATURE), Ok(()));
        assert_eq!(
            verify(SECRET, ID, TS, BODY, &format!("v1,bogus {SIGNATURE}")),
            Ok(())
        );
    }

    #[test]
    fn mutated_truncated_and_empty_signatures_are_rejected() {
        let mut mutated = SIGNATURE.to_owned().into_bytes();
        mutated[5] = if mutated[5] == b'A' { b'B' } else { b'A' };
        let mutated = String::from_utf8(mutated).unwrap_or_default();
        for bad in [
            mutated.as_str(),
            &SIGNATURE[..SIGNATURE.len() - 4],
            "",
            "v1,",
            "v2,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=",
        ] {
            assert_eq!(
                verify(SECRET, ID, TS, BODY, bad),
                Err(SignatureError::Mismatch),
                "{bad}"
            );
        }
        assert!(verify(SECRET, ID, TS + 1, BODY, SIGNATURE).is_err());
        assert!(verify(SECRET, ID, TS, b"{}", SIGNATURE).is_err());
        assert_eq!(
            sign("whsec_***", ID, TS, BODY),
            Err(SignatureError::BadSecret)
        );
    }
}
