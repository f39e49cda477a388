use thiserror::Error;

/// The error a storage backend reported, kept as it was.
pub type BackendError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A storage failure. Never the caller's fault: the API answers these with 500 `internal`,
/// except [`StoreError::Unsupported`], which is no failure (the service reports it as
/// `ServiceError::Unsupported`).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Another process holds the database (sled is single-process: go through the running
    /// server's admin API, or stop it first).
    #[error("the database at {path} is in use by another process, or by another store this process opened on it and still holds")]
    Locked {
        /// The database folder.
        path: String,
    },
    /// The database reported an error (I/O, corruption, a closed connection, a refused
    /// login). The message includes what the database said, down the whole chain of causes
    /// (a pool's "db error" says nothing without the server's own message beneath it).
    #[error("{context}: {}", causes(.source.as_ref()))]
    Backend {
        /// What the store was doing.
        context: String,
        /// What the backend said.
        #[source]
        source: BackendError,
    },
    /// The store cannot do this at all: retrying will not help, and the message says what to
    /// do instead (for an online backup of PostgreSQL: `pg_dump`).
    #[error("{operation} is not supported by {store}: {advice}")]
    Unsupported {
        /// What was asked, such as "an online backup".
        operation: &'static str,
        /// Which store was asked, such as "the PostgreSQL store".
        store: &'static str,
        /// What to do instead.
        advice: &'static str,
    },
    /// A stored record could not be decoded.
    #[error("stored record {key} could not be decoded: {reason}")]
    Corrupt {
        /// Which record.
        key: String,
        /// What was wrong with it.
        reason: String,
    },
}

impl StoreError {
    /// A backend failure while doing `context`, keeping the backend's error as the source.
    pub fn backend(context: impl Into<String>, source: impl Into<BackendError>) -> Self {
        Self::Backend {
            context: context.into(),
            source: source.into(),
        }
    }
}

/// An error and its causes, `: `-separated, each said once (a wrapper often repeats its
/// cause's message).
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        let said = cause.to_string();
        if !text.ends_with(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        next = cause.source();
    }
    text
}

/// The result of a store operation.
pub type StoreResult<T> = Result<T, StoreError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Error)]
    #[error("db error")]
    struct Outer(#[source] Inner);

    #[derive(Debug, Error)]
    #[error("FATAL: database \"nope\" does not exist")]
    struct Inner;

    #[test]
    fn a_backend_error_says_every_cause_and_keeps_its_source() {
        let e = StoreError::backend("opening the pool", Outer(Inner));
        assert_eq!(
            e.to_string(),
            "opening the pool: db error: FATAL: database \"nope\" does not exist"
        );
        let source = std::error::Error::source(&e).expect("the backend's error is kept");
        assert_eq!(source.to_string(), "db error");
    }
}
