//! Per-key token buckets: a short-term request rate on top of the monthly quota, so one
//! flooding key cannot starve the others. Each key has its own bucket and its own small lock;
//! no lock is shared between keys.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::domain::Plan;

/// A sustained rate and the burst allowed above it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimit {
    /// Requests per second, sustained.
    pub per_second: f64,
    /// Requests that may arrive at once after a quiet spell.
    pub burst: u32,
}

/// Rate limits per plan.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct RateLimits {
    /// Developer plan; default 10/s with bursts of 50.
    pub developer: RateLimit,
    /// Agent Pro plan; default 50/s with bursts of 200.
    pub agent_pro: RateLimit,
    /// Enterprise plan; default 200/s with bursts of 1,000.
    pub enterprise: RateLimit,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self {
            developer: RateLimit {
                per_second: 10.0,
                burst: 50,
            },
            agent_pro: RateLimit {
                per_second: 50.0,
                burst: 200,
            },
            enterprise: RateLimit {
                per_second: 200.0,
                burst: 1_000,
            },
        }
    }
}

impl RateLimits {
    /// The limit of a plan.
    pub fn of(&self, plan: Plan) -> RateLimit {
        match plan {
            Plan::Developer => self.developer,
            Plan::AgentPro => self.agent_pro,
            Plan::Enterprise => self.enterprise,
        }
    }
}

/// One key's bucket. Starts full.
#[derive(Debug, Default)]
pub(crate) struct TokenBucket {
    state: Mutex<Option<(f64, Instant)>>,
}

impl TokenBucket {
    /// Takes one token, or says how long until one is available.
    pub(crate) fn try_take(&self, limit: RateLimit, now: Instant) -> Result<(), Duration> {
        let burst = f64::from(limit.burst.max(1));
        let rate = limit.per_second.max(f64::MIN_POSITIVE);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, last) = state.get_or_insert((burst, now));
        let refill = now.saturating_duration_since(*last).as_secs_f64() * rate;
        *tokens = (*tokens + refill).min(burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / rate))
        }
    }
}

setters!(RateLimits {
    developer: RateLimit,
    agent_pro: RateLimit,
    enterprise: RateLimit,
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_refills_at_its_rate() {
        let limit = RateLimit {
            per_second: 10.0,
            burst: 3,
        };
        let bucket = TokenBucket::default();
        let t0 = Instant::now();
        assert!(bucket.try_take(limit, t0).is_ok());
        assert!(bucket.try_take(limit, t0).is_ok());
        assert!(bucket.try_take(limit, t0).is_ok());
        let wait = bucket.try_take(limit, t0).err().unwrap_or_default();
        assert!(wait > Duration::from_millis(90) && wait <= Duration::from_millis(100));
        assert!(bucket
            .try_take(limit, t0 + Duration::from_millis(100))
            .is_ok());
        assert!(bucket
            .try_take(limit, t0 + Duration::from_millis(100))
            .is_err());
        // A long pause refills only up to the burst.
        let later = t0 + Duration::from_secs(60);
        for _ in 0..3 {
            assert!(bucket.try_take(limit, later).is_ok());
        }
        assert!(bucket.try_take(limit, later).is_err());
    }
}
