use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::Host;

use super::notifier::{AttemptOutcome, Notifier, WebhookRequest};
use super::policy::{is_public_ip, CallbackPolicy};

/// Timeouts of outbound webhook requests.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct HttpNotifierConfig {
    /// Time to connect; default 5 s.
    pub connect_timeout: Duration,
    /// Time for the whole request; default 15 s.
    pub request_timeout: Duration,
}

impl HttpNotifierConfig {
    /// Timeouts to connect and for the whole request; `const`, for settings kept in a
    /// constant.
    pub const fn new(connect_timeout: Duration, request_timeout: Duration) -> Self {
        Self {
            connect_timeout,
            request_timeout,
        }
    }
}

impl Default for HttpNotifierConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(15),
        }
    }
}

/// The default [`Notifier`]: one reqwest client, no redirects, no proxy, bounded time, and an
/// address policy checked on the addresses actually connected to.
#[derive(Debug, Clone)]
pub struct HttpNotifier {
    client: reqwest::Client,
    policy: CallbackPolicy,
}

/// Resolves names, then drops every address the policy refuses, so a name that resolves to a
/// private address is never connected to.
#[derive(Debug)]
struct PolicyResolver {
    allow_private: bool,
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| allow_private || is_public_ip(a.ip()))
                .collect();
            if found.is_empty() {
                return Err(format!("{host} resolves to no public address").into());
            }
            Ok(Box::new(found.into_iter()) as Addrs)
        })
    }
}

/// The HTTP client of an [`HttpNotifier`] could not be set up (its TLS backend, say).
#[derive(Debug, thiserror::Error)]
#[error("the webhook sender's HTTP client could not be set up: {0}")]
pub struct NotifierSetupError(#[from] reqwest::Error);

impl HttpNotifier {
    /// A notifier enforcing `policy` with the given timeouts.
    pub fn new(
        policy: CallbackPolicy,
        config: HttpNotifierConfig,
    ) -> Result<Self, NotifierSetupError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .user_agent(concat!("job-listings-webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(PolicyResolver {
                allow_private: policy.allow_private,
            }))
            .build()?;
        Ok(Self { client, policy })
    }

    /// IP-literal URLs never reach the resolver, so they are checked here.
    fn refuse_literal(&self, request: &WebhookRequest) -> Option<String> {
        if self.policy.allow_private {
            return None;
        }
        let ip = match request.url.url().host()? {
            Host::Ipv4(v4) => IpAddr::V4(v4),
            Host::Ipv6(v6) => IpAddr::V6(v6),
            Host::Domain(_) => return None,
        };
        (!is_public_ip(ip)).then(|| format!("refused: {ip} is not a public address"))
    }
}

#[async_trait]
impl Notifier for HttpNotifier {
    async fn send(&self, request: &WebhookRequest) -> AttemptOutcome {
        let started = Instant::now();
        let refused = self
            .policy
            .check(&request.url)
            .err()
            .map(|e| format!("refused: {}", e.reason))
            .or_else(|| self.refuse_literal(request));
        if let Some(error) = refused {
            return AttemptOutcome {
                status: None,
                retry_after: None,
                error: Some(error),
                latency: started.elapsed(),
            };
        }
        let sent = self
            .client
            .post(request.url.url().clone())
            .header("content-type", "application/json")
            .header("webhook-id", &request.id)
            .header("webhook-timestamp", request.timestamp.to_string())
            .header("webhook-signature", &request.signature)
            .body(request.body.clone())
            .send()
            .await;
        match sent {
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(parse_retry_after);
                let error = (!(200..300).contains(&status)).then(|| {
                    if (300..400).contains(&status) {
                        format!("HTTP {status}: redirects are not followed")
                    } else {
                        format!("HTTP {status}")
                    }
                });
                AttemptOutcome {
                    status: Some(status),
                    retry_after,
                    error,
                    latency: started.elapsed(),
                }
            }
            Err(e) => AttemptOutcome {
                status: None,
                retry_after: None,
                error: Some(describe(&e)),
                latency: started.elapsed(),
            },
        }
    }
}

/// `Retry-After` as delay-seconds or as an HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

fn describe(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    // The source chain says why (refused address, reset, TLS), never anything secret.
    let mut why = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        why = s.to_string();
        source = s.source();
    }
    if why.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}: {why}")
    }
}

setters!(HttpNotifierConfig {
    connect_timeout: Duration,
    request_timeout: Duration,
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_takes_seconds_and_http_dates() {
        assert_eq!(parse_retry_after(" 120 "), Some(Duration::from_secs(120)));
        let later = chrono::Utc::now() + chrono::Duration::seconds(90);
        let date = later.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
        let wait = parse_retry_after(&date).unwrap_or_default();
        assert!(
            wait > Duration::from_secs(80) && wait <= Duration::from_secs(90),
            "{wait:?}"
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
    }
}
