//! Webhook signing secrets are sealed before they reach the store: ChaCha20-Poly1305 under a
//! key the store never sees, so a copy of the database alone does not reveal them.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};

use super::{ServiceError, ServiceResult};
use crate::domain::{Subscription, WebhookSecret};
use crate::store::StoreError;

const SEALED: &str = "sealed:v1:";

/// The 32-byte key that seals webhook secrets at rest. Keep it apart from the database (the
/// bundled server keeps it in `secret.key`, readable by its owner only). `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretKey([u8; 32]);

impl SecretKey {
    /// A new random key.
    pub fn generate() -> Self {
        Self(ChaCha20Poly1305::generate_key(&mut OsRng).into())
    }

    /// A key from its 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The key's bytes, for saving it.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0
    }

    /// Reads the key kept in the file at `path`, or, when there is no such file, makes one
    /// and keeps it there (created readable and writable by its owner only on Unix, and
    /// flushed to disk before this returns). The file holds the key's 32 bytes in standard
    /// base64 and a line end, as the bundled server's `secret.key` does, so both can share a
    /// data folder. Keep the file apart from the database and back it up with it: without
    /// it, stored webhook secrets cannot be read.
    pub fn load_or_create(path: &std::path::Path) -> std::io::Result<Self> {
        use std::io::{Error, ErrorKind};
        match std::fs::read_to_string(path) {
            Ok(text) => STANDARD
                .decode(text.trim())
                .ok()
                .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
                .map(Self)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidData,
                        format!(
                            "{} is not a secret key (32 bytes in base64)",
                            path.display()
                        ),
                    )
                }),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let key = Self::generate();
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)?;
                }
                key.write_new_file(path)?;
                Ok(key)
            }
            Err(e) => Err(e),
        }
    }

    /// Keeps the key in a new file at `path` in the form [`SecretKey::load_or_create`] reads
    /// (created readable and writable by its owner only on Unix, and synced); an existing
    /// file is an error, never overwritten.
    pub(super) fn write_new_file(&self, path: &std::path::Path) -> std::io::Result<()> {
        use std::io::Write;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(path)?;
        file.write_all(format!("{}\n", STANDARD.encode(self.0)).as_bytes())?;
        file.sync_all()
    }

    fn cipher(&self) -> ChaCha20Poly1305 {
        ChaCha20Poly1305::new(Key::from_slice(&self.0))
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey([redacted])")
    }
}

fn corrupt(why: &str) -> ServiceError {
    ServiceError::Store(StoreError::Corrupt {
        key: "webhook secret".to_owned(),
        reason: why.to_owned(),
    })
}

/// The subscription as it is stored: its secret sealed when a key is configured.
pub(super) fn seal(sub: &Subscription, key: Option<&SecretKey>) -> ServiceResult<Subscription> {
    let Some(key) = key else {
        return Ok(sub.clone());
    };
    let nonce = ChaCha20Poly1305::generate_nonce(&mut OsRng);
    let sealed = key
        .cipher()
        .encrypt(&nonce, sub.secret.expose().as_bytes())
        .map_err(|_| corrupt("could not be sealed"))?;
    let mut bytes = nonce.to_vec();
    bytes.extend_from_slice(&sealed);
    let mut stored = sub.clone();
    stored.secret = WebhookSecret::new(format!("{SEALED}{}", STANDARD.encode(bytes)));
    Ok(stored)
}

/// The subscription as the service uses it: its secret opened. Secrets stored before a key was
/// configured are taken as they are (and sealed on their next write).
pub(super) fn open(mut sub: Subscription, key: Option<&SecretKey>) -> ServiceResult<Subscription> {
    let Some(sealed) = sub.secret.expose().strip_prefix(SEALED) else {
        return Ok(sub);
    };
    let key = key
        .ok_or_else(|| corrupt("is sealed, but the service was started without its secret key"))?;
    let bytes = STANDARD
        .decode(sealed)
        .map_err(|_| corrupt("is not valid base64"))?;
    if bytes.len() < 12 {
        return Err(corrupt("is too short"));
    }
    let (nonce, ciphertext) = bytes.split_at(12);
    let clear = key
        .cipher()
        .decrypt(Nonce::from_slice(nonce), ciphertext)
        .map_err(|_| {
            corrupt("does not open with this secret key: it was sealed with another one, which the service must be given")
        })?;
    let clear = String::from_utf8(clear).map_err(|_| corrupt("is not UTF-8"))?;
    sub.secret = WebhookSecret::new(clear);
    Ok(sub)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{CallbackUrl, KeyId, SubscriptionStatus, WebhookId};

    /// The first call makes the file (owner-only on Unix), later ones read the same key back,
    /// and a file that is not a key is an error rather than a new key over it.
    #[test]
    fn a_key_file_is_made_once_and_read_back() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("keys").join("secret.key");
        let made = SecretKey::load_or_create(&path).expect("made");
        assert_eq!(SecretKey::load_or_create(&path).expect("read"), made);
        let text = std::fs::read_to_string(&path).expect("the file");
        assert_eq!(text.trim_end().len(), 44, "{text:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)
                .expect("metadata")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&path, "not a key\n").expect("overwritten");
        let error = SecretKey::load_or_create(&path).expect_err("not a key");
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("not a key\n")
        );
    }

    fn sub() -> Option<Subscription> {
        Some(Subscription {
            places: Default::default(),
            id: WebhookId::new_random(),
            owner: KeyId::new_random(),
            callback_url: CallbackUrl::parse("https://hooks.example.com/x").ok()?,
            domain_filters: Vec::new(),
            remote_only: false,
            seniority: Vec::new(),
            q: None,
            company: None,
            min_confidence: None,
            event_types: crate::domain::ChangeKind::webhook_default(),
            secret: WebhookSecret::generate(),
            status: SubscriptionStatus::Active,
            disabled_reason: None,
            created_at: chrono::Utc::now(),
            last_success_at: None,
            last_failure_at: None,
            last_failure_reason: None,
            failing_since: None,
            enabled_again_at: None,
            idempotency_key: None,
            idempotency_request: None,
        })
    }

    #[test]
    fn sealed_secrets_open_only_with_their_key() {
        let Some(sub) = sub() else {
            panic!("a subscription")
        };
        let key = SecretKey::generate();
        let stored = seal(&sub, Some(&key)).ok();
        let stored = stored.unwrap_or_else(|| sub.clone());
        assert!(stored.secret.expose().starts_with(SEALED));
        assert!(!stored.secret.expose().contains(&sub.secret.expose()[6..]));
        let opened = open(stored.clone(), Some(&key)).map(|s| s.secret);
        assert_eq!(opened.ok(), Some(sub.secret.clone()));
        assert!(open(stored.clone(), Some(&SecretKey::generate())).is_err());
        assert!(open(stored, None).is_err());
        // Without a key, nothing is sealed, and clear secrets open as they are.
        let clear = seal(&sub, None).map(|s| s.secret);
        assert_eq!(clear.ok(), Some(sub.secret.clone()));
        assert_eq!(
            open(sub.clone(), Some(&key)).map(|s| s.secret).ok(),
            Some(sub.secret)
        );
        assert!(!format!("{key:?}").contains(&format!("{:?}", key.to_bytes())));
    }
}
