//! When to try again: exponential backoff with full jitter, or what the provider asked for.
//! design: llm.faults

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::error::LlmError;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The backoff ceiling of the first retry; it doubles with each one.
    pub base: Duration,
    /// The largest backoff ceiling.
    pub max: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 6,
            base: Duration::from_secs(1),
            max: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// How long to wait before attempt `attempt + 1` after `error` ended attempt `attempt`
    /// (1-based); `None` when no retry is due: not retryable, or attempts spent.
    pub fn delay(&self, attempt: u32, error: &LlmError) -> Option<Duration> {
        if !error.is_retryable() || attempt >= self.max_attempts {
            return None;
        }
        if let LlmError::Retryable {
            retry_after: Some(wait),
            ..
        } = error
        {
            return Some(*wait);
        }
        let ceiling = self
            .base
            .saturating_mul(1u32 << (attempt - 1).min(20))
            .min(self.max);
        // Full jitter: uniform in [0, ceiling].
        Some(ceiling.mul_f64(unit_random()))
    }
}

/// A number in [0, 1): xorshift over a process-wide state seeded from the clock. Jitter needs
/// spread, not cryptographic quality.
fn unit_random() -> f64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x9E37_79B9_7F4A_7C15, |d| d.as_nanos() as u64)
            | 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    (x >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_jittered_under_a_doubling_ceiling() {
        let p = RetryPolicy {
            max_attempts: 10,
            base: Duration::from_millis(100),
            max: Duration::from_millis(1000),
        };
        let e = LlmError::StreamCut;
        for attempt in 1..10 {
            let d = p.delay(attempt, &e).expect("retryable");
            let ceiling = (100u64 << (attempt - 1)).min(1000);
            assert!(d <= Duration::from_millis(ceiling), "{attempt}: {d:?}");
        }
        assert_eq!(p.delay(10, &e), None, "attempts spent");
        assert_eq!(p.delay(1, &LlmError::Auth { status: 401 }), None);
        let asked = LlmError::Retryable {
            status: 429,
            retry_after: Some(Duration::from_secs(2)),
            body: String::new(),
        };
        assert_eq!(p.delay(1, &asked), Some(Duration::from_secs(2)));
        let spread: std::collections::HashSet<_> = (0..20).map(|_| p.delay(3, &e)).collect();
        assert!(spread.len() > 10, "jitter spreads the waits");
    }
}
