//! Service settings the tests share: the library's, but for one limit.

use job_listings::service::{Quotas, RateLimit, RateLimits, ServiceConfig};

/// The library's settings, but a Developer key's monthly quota is `quota` calls.
pub fn developer_quota(quota: u64) -> ServiceConfig {
    ServiceConfig::default().quotas(Quotas::default().developer(quota))
}

/// The library's settings, but every key's rate is limited to `limit`.
pub fn rate_limited(limit: RateLimit) -> ServiceConfig {
    ServiceConfig::default().rate_limits(Some(
        RateLimits::default()
            .developer(limit)
            .agent_pro(limit)
            .enterprise(limit),
    ))
}
