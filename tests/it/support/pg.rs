//! A throwaway PostgreSQL schema per test, on the server `DATABASE_URL` names (by default
//! [`DEFAULT_DATABASE_URL`]). The schema is dropped when the value is.
//!
//! The tests that need a server always compile and are ignored by default, each marked
//! `#[ignore = "needs PostgreSQL: ..."]`, so `cargo test` lists them as ignored; run them
//! with `cargo test --test it -- --ignored` once a server is there.

use job_listings::store::PgConfig;
use tokio_postgres::NoTls;

/// The server of the PostgreSQL tests when `DATABASE_URL` is not set.
pub const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// `DATABASE_URL`, or [`DEFAULT_DATABASE_URL`] when it is not set or empty.
pub fn database_url() -> String {
    std::env::var("DATABASE_URL")
        .ok()
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned())
}

/// A schema with a random name, created on the server and dropped on drop.
pub struct TestSchema {
    url: String,
    name: String,
}

impl TestSchema {
    /// Creates `jl_test_<random>` on the [`database_url`] server.
    pub async fn create() -> Self {
        let url = database_url();
        let name = format!(
            "jl_test_{}",
            &uuid::Uuid::new_v4().simple().to_string()[..16]
        );
        let (client, connection) = tokio_postgres::connect(&url, NoTls)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to the server of DATABASE_URL: {e}"));
        tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE SCHEMA {name}"))
            .await
            .expect("a fresh schema");
        Self { url, name }
    }

    /// A store configuration on this schema with `pool_size` connections.
    pub fn config(&self, pool_size: usize) -> PgConfig {
        PgConfig::new(self.url.clone())
            .pool_size(pool_size)
            .schema(self.name.clone())
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        let (url, name) = (self.url.clone(), self.name.clone());
        // Drop cannot wait on the test's runtime: drop the schema from a runtime of its own.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async {
                let (client, connection) = tokio_postgres::connect(&url, NoTls).await?;
                tokio::spawn(connection);
                client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
                    .await
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop test schema {}", self.name);
        }
    }
}
