//! Per-API-key token buckets: `burst` requests at once, refilled at `per_second`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimiter {
    pub fn new(per_second: f64, burst: u32) -> Self {
        Self {
            per_second: per_second.max(0.001),
            burst: f64::from(burst.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token for `key`, or says in how many whole seconds one will be there.
    pub fn check(&self, key: &str) -> Result<(), u64> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (tokens, last) = buckets.entry(key.to_string()).or_insert((self.burst, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * self.per_second).min(self.burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - *tokens) / self.per_second).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RateLimiter;

    #[test]
    fn a_key_may_burst_then_is_told_when_to_retry() {
        let limiter = RateLimiter::new(0.5, 2);
        assert!(limiter.check("k").is_ok());
        assert!(limiter.check("k").is_ok());
        assert_eq!(limiter.check("k"), Err(2));
        assert!(limiter.check("other").is_ok(), "keys are limited separately");
    }
}
