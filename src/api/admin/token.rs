//! The admin API's credential: one token per deployment, apart from every API key.

use std::fmt;

use sha2::{Digest, Sha256};

use crate::domain::{DomainError, KeyHash};

const PREFIX: &str = "jl_admin_";
/// 43 base62 characters: 256 bits of randomness.
const BODY_LEN: usize = 43;

/// The admin token: `jl_admin_` + 43 random base62 characters.
///
/// Only its SHA-256 hash ([`AdminToken::hash`]) is needed to check one: an [`AdminApi`]
/// holds the hash alone. `Debug` never shows the token; [`AdminToken::expose`] does, for
/// showing it once at creation.
///
/// [`AdminApi`]: super::AdminApi
#[derive(Clone, PartialEq, Eq)]
pub struct AdminToken {
    raw: String,
}

impl AdminToken {
    /// A new random token from the operating system's random source.
    pub fn generate() -> Self {
        Self {
            raw: format!("{PREFIX}{}", crate::domain::key::random_base62(BODY_LEN)),
        }
    }

    /// Checks the form of a token read back (from a file or the environment); says nothing
    /// about whether a server accepts it.
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        let raw = raw.trim();
        let body = raw.strip_prefix(PREFIX).ok_or_else(|| {
            DomainError::new(
                "admin_token",
                "is not an admin token: they start with jl_admin_",
            )
        })?;
        if body.len() != BODY_LEN || !body.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(DomainError::new(
                "admin_token",
                "is not an admin token: they are jl_admin_ and 43 letters and digits",
            ));
        }
        Ok(Self {
            raw: raw.to_owned(),
        })
    }

    /// The token in clear.
    pub fn expose(&self) -> &str {
        &self.raw
    }

    /// Its SHA-256 hash, the form a server keeps.
    pub fn hash(&self) -> KeyHash {
        hash_presented(self.raw.as_bytes())
    }
}

impl fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AdminToken(jl_admin_[redacted])")
    }
}

/// The hash of whatever a client presented, token or not: every presented value is hashed
/// and compared whole, so the time taken says nothing about how much of it was right.
pub(crate) fn hash_presented(raw: &[u8]) -> KeyHash {
    KeyHash(Sha256::digest(raw).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_token_parses_back_and_hashes_the_same() {
        let token = AdminToken::generate();
        assert_eq!(token.expose().len(), PREFIX.len() + BODY_LEN);
        let read = AdminToken::parse(&format!("{}\n", token.expose())).expect("its own form");
        assert!(read.hash().ct_eq(&token.hash()));
        assert_ne!(AdminToken::generate().expose(), token.expose());
    }

    #[test]
    fn other_strings_are_not_tokens_and_debug_hides_the_token() {
        assert!(AdminToken::parse("jl_live_abc").is_err());
        assert!(AdminToken::parse("jl_admin_short").is_err());
        let token = AdminToken::generate();
        assert!(!format!("{token:?}").contains(&token.expose()[PREFIX.len()..]));
    }
}
