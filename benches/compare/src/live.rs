//! What the programs that drive a running server share (`freshness`, `feed_follow`): the
//! loopback check, a job to copy as the admin API stores it, and the latency line they print.

use std::time::Duration;

use anyhow::{bail, Result};
use serde_json::Value;
use url::Url;

/// Refuses any target but this machine: load and fault runs stay on loopback.
pub fn loopback(url: &Url) -> Result<()> {
    match url.host_str() {
        Some("127.0.0.1" | "localhost" | "[::1]") => Ok(()),
        other => bail!("only loopback targets are measured, not {other:?}"),
    }
}

/// The first job a search of `base` returns, as `admin` stores it, without the fields the
/// server fills in: a template for new jobs through `PUT /admin/v1/jobs/{id}`.
pub async fn template_job(
    http: &reqwest::Client,
    base: &str,
    admin: &str,
    key: &str,
    token: &str,
) -> Result<Value> {
    let page: Value = http
        .get(format!("{base}/api/v1/jobs?per_page=1"))
        .header("x-api-key", key)
        .send()
        .await?
        .json()
        .await?;
    let Some(first) = page["data"][0]["id"].as_str() else {
        bail!("the server at --url has no job to copy: {page}");
    };
    let mut template: Value = http
        .get(format!("{admin}/admin/v1/jobs/{first}"))
        .bearer_auth(token)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    for generated in [
        "first_seen_at",
        "updated_at",
        "status",
        "company_name",
        "id",
    ] {
        template.as_object_mut().map(|o| o.remove(generated));
    }
    Ok(template)
}

/// One line of latencies: p50, p99 and max in milliseconds, and how many.
pub fn print_line(what: &str, values: &mut [Duration]) {
    values.sort();
    let at = |q: f64| {
        values
            .get(((values.len() as f64 * q).ceil() as usize).saturating_sub(1))
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{what:<22} p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  (n = {})",
        at(0.50),
        at(0.99),
        values.last().map_or(f64::NAN, |d| d.as_secs_f64() * 1e3),
        values.len()
    );
}
