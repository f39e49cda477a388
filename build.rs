//! Compiles the PostgreSQL test suites only when a database is named: `DATABASE_URL` set at
//! build time turns on `cfg(postgres_tests)`. Without it those tests do not exist, rather
//! than pass without running.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(postgres_tests)");
    println!("cargo::rerun-if-env-changed=DATABASE_URL");
    if std::env::var_os("DATABASE_URL").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=postgres_tests");
    }
}
