//! When a failed delivery is tried again: the published schedule, with jitter.
//!
//! After the first attempt, retries follow at 10 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h,
//! 4 h, 6 h and 8 h (each ±20 % jitter), about 22 hours in all: 11 attempts, then the
//! delivery is `failed` (it can still be redelivered by hand). A `429` with `Retry-After`
//! waits what the receiver asked (at most the next day) instead of the step.

use rand::Rng;
use std::time::Duration;

const STEPS_SECONDS: [u64; 10] = [10, 30, 120, 600, 1_800, 3_600, 7_200, 14_400, 21_600, 28_800];
/// Longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    /// Multiplies every step (1 in production; tests shrink it).
    pub scale: f64,
}

impl Schedule {
    /// How long to wait after the `attempts`-th attempt failed, or `None` when it was the last.
    pub fn next_delay(&self, attempts: i64, retry_after: Option<Duration>) -> Option<Duration> {
        let step = *STEPS_SECONDS.get(usize::try_from(attempts).ok()?.checked_sub(1)?)?;
        if let Some(asked) = retry_after {
            return Some(asked.min(MAX_RETRY_AFTER).mul_f64(self.scale.min(1.0)));
        }
        let jitter = rand::thread_rng().gen_range(0.8..1.2);
        Some(Duration::from_secs_f64(step as f64 * jitter * self.scale))
    }

    /// Every attempt there is: the first and one per step.
    pub fn max_attempts() -> usize {
        STEPS_SECONDS.len() + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_spans_about_a_day_and_then_stops() {
        let schedule = Schedule { scale: 1.0 };
        let total: f64 = (1..Schedule::max_attempts() as i64)
            .map(|n| schedule.next_delay(n, None).unwrap().as_secs_f64())
            .sum();
        assert!((0.8 * 78_160.0..=1.2 * 78_160.0).contains(&total), "{total}");
        assert!(schedule.next_delay(Schedule::max_attempts() as i64, None).is_none());
        let first = schedule.next_delay(1, None).unwrap().as_secs_f64();
        assert!((8.0..=12.0).contains(&first), "{first}");
        assert_eq!(schedule.next_delay(1, Some(Duration::from_secs(90))), Some(Duration::from_secs(90)));
    }
}
