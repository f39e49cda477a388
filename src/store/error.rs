use thiserror::Error;

/// A storage failure. Never the caller's fault: the API answers these with 500 `internal`.
#[derive(Debug, Error)]
pub enum StoreError {
    /// Another process holds the database (sled is single-process: stop the server first).
    #[error("the database at {path} is in use by another process, or by another store this process opened on it and still holds")]
    Locked {
        /// The database folder.
        path: String,
    },
    /// The database reported an error (I/O, corruption, a closed connection).
    #[error("storage backend failed: {0}")]
    Backend(String),
    /// A stored record could not be decoded.
    #[error("stored record {key} could not be decoded: {reason}")]
    Corrupt {
        /// Which record.
        key: String,
        /// What was wrong with it.
        reason: String,
    },
}

/// The result of a store operation.
pub type StoreResult<T> = Result<T, StoreError>;
