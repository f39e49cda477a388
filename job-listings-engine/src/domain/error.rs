use thiserror::Error;

/// Why a raw value could not become a domain value. Always the caller's fault.
///
/// It may gain fields; make one with [`DomainError::new`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field}: {reason}")]
#[non_exhaustive]
pub struct DomainError {
    /// The field or parameter that was rejected.
    pub field: &'static str,
    /// What was wrong and what is allowed, in words a client can act on.
    pub reason: String,
}

impl DomainError {
    /// A rejection of `field` with an explanation.
    pub fn new(field: &'static str, reason: impl Into<String>) -> Self {
        Self {
            field,
            reason: reason.into(),
        }
    }
}
