use std::time::Duration;

use rand::Rng;

/// When failed deliveries are tried again.
///
/// The default follows the Standard Webhooks schedule: attempts right away, then after 5 s,
/// 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each delay varied by ±20 % so receivers coming back
/// up are not hit by every sender at once. After the last attempt the delivery is failed.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Delay before each retry; its length is the number of retries.
    pub delays: Vec<Duration>,
    /// Fraction by which each delay is varied at random (0.2 = ±20 %).
    pub jitter: f64,
    /// The longest `Retry-After` honoured.
    pub max_retry_after: Duration,
    /// A subscription whose deliveries have failed this long without a success is disabled.
    pub disable_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        let min = 60;
        let hour = 3_600;
        Self {
            delays: [
                5,
                5 * min,
                30 * min,
                2 * hour,
                5 * hour,
                10 * hour,
                10 * hour,
            ]
            .into_iter()
            .map(Duration::from_secs)
            .collect(),
            jitter: 0.2,
            max_retry_after: Duration::from_secs(24 * hour),
            disable_after: Duration::from_secs(5 * 24 * hour),
        }
    }
}

impl RetryPolicy {
    /// The delay before the next attempt after `attempts` failed ones, or `None` when the
    /// delivery has had all its attempts. A receiver's `Retry-After` lengthens the delay.
    pub fn next_delay(&self, attempts: u32, retry_after: Option<Duration>) -> Option<Duration> {
        let base = *self.delays.get(attempts.checked_sub(1)? as usize)?;
        let jitter = self.jitter.clamp(0.0, 1.0);
        let factor = if jitter > 0.0 {
            rand::thread_rng().gen_range(1.0 - jitter..=1.0 + jitter)
        } else {
            1.0
        };
        let delay = base.mul_f64(factor);
        Some(match retry_after {
            Some(asked) => delay.max(asked.min(self.max_retry_after)),
            None => delay,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_has_seven_retries_with_bounded_jitter() {
        let p = RetryPolicy::default();
        let first = p.next_delay(1, None).unwrap_or_default();
        assert!(first >= Duration::from_secs(4) && first <= Duration::from_secs(6));
        assert!(p.next_delay(7, None).is_some());
        assert_eq!(p.next_delay(8, None), None);
        assert_eq!(p.next_delay(0, None), None);
    }

    #[test]
    fn retry_after_lengthens_but_is_capped() {
        let p = RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::default()
        };
        assert_eq!(
            p.next_delay(1, Some(Duration::from_secs(60))),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            p.next_delay(1, Some(Duration::from_secs(10 * 24 * 3600))),
            Some(Duration::from_secs(24 * 3600))
        );
    }
}
