use std::time::Duration;

use rand::Rng;

/// When failed deliveries are tried again.
///
/// The default follows the Standard Webhooks schedule: attempts right away, then after 5 s,
/// 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each delay varied by ±20 % so receivers coming back
/// up are not hit by every sender at once. After the last attempt the delivery is failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
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

setters!(RetryPolicy {
    delays: Vec<Duration>,
    jitter: f64,
    max_retry_after: Duration,
    disable_after: Duration,
});

#[cfg(test)]
mod tests {
    use super::*;

    /// The schedule README gives, in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
    const DOCUMENTED: [u64; 7] = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

    #[test]
    fn the_schedule_is_the_documented_one_then_the_delivery_fails() {
        let exact = RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::default()
        };
        for (attempts, secs) in (1..).zip(DOCUMENTED) {
            assert_eq!(
                exact.next_delay(attempts, None),
                Some(Duration::from_secs(secs)),
                "the delay after {attempts} failed attempts"
            );
        }
        assert_eq!(exact.next_delay(8, None), None, "seven retries, no eighth");
        assert_eq!(exact.next_delay(0, None), None);
        assert_eq!(
            RetryPolicy::default().disable_after,
            Duration::from_secs(5 * 24 * 3_600),
            "a subscription failing for 5 days is disabled"
        );
    }

    #[test]
    fn each_delay_varies_by_at_most_a_fifth_and_uses_the_whole_range() {
        let p = RetryPolicy::default();
        for (attempts, secs) in (1..).zip(DOCUMENTED) {
            let base = secs as f64;
            let (mut lowest, mut highest) = (f64::MAX, 0.0_f64);
            for _ in 0..2_000 {
                let delay = p.next_delay(attempts, None).expect("a retry").as_secs_f64();
                assert!(
                    delay >= base * 0.8 - 1e-6 && delay <= base * 1.2 + 1e-6,
                    "{delay} s after {attempts} attempts is outside {base} s ± 20 %"
                );
                lowest = lowest.min(delay);
                highest = highest.max(delay);
            }
            // Each side's outer 0.02 is a twentieth of the range: 2,000 uniform draws miss it
            // with a chance of 0.95^2000 < 1e-44, so a jitter that varies less fails.
            assert!(
                lowest < base * 0.82 && highest > base * 1.18,
                "after {attempts} attempts the delays only spanned {lowest}..{highest} s"
            );
        }
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
