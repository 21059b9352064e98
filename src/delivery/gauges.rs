//! What a delivery worker says of its own pace, for `make bench-delivery` (and whoever looks
//! next): how many sends were in flight as each began, and how many deliveries the worker held
//! when a claim brought more. Both fell well short of their limits when a claim's rows ran out
//! before the next claim (2026-12-04: ~42 of 64 sends, 41 rows held), which no rate alone
//! showed.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default)]
pub struct Gauges {
    sends: AtomicU64,
    in_flight: AtomicU64,
    claims: AtomicU64,
    held: AtomicU64,
}

/// The gauges' sums at one moment; [`Reading::since`] averages between two.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reading {
    sends: u64,
    in_flight: u64,
    claims: u64,
    held: u64,
}

impl Gauges {
    /// A send began with `in_flight` sends (itself included) under way.
    pub fn send_began(&self, in_flight: usize) {
        self.sends.fetch_add(1, Ordering::Relaxed);
        self.in_flight.fetch_add(in_flight as u64, Ordering::Relaxed);
    }

    /// A claim brought rows while the worker held `held` deliveries.
    pub fn claimed(&self, held: usize) {
        self.claims.fetch_add(1, Ordering::Relaxed);
        self.held.fetch_add(held as u64, Ordering::Relaxed);
    }

    pub fn read(&self) -> Reading {
        Reading {
            sends: self.sends.load(Ordering::Relaxed),
            in_flight: self.in_flight.load(Ordering::Relaxed),
            claims: self.claims.load(Ordering::Relaxed),
            held: self.held.load(Ordering::Relaxed),
        }
    }
}

impl Reading {
    /// Since `earlier`: the average sends in flight as one began, and the average deliveries
    /// held when a claim brought more (`None` without sends or claims).
    pub fn since(&self, earlier: &Reading) -> (Option<f64>, Option<f64>) {
        let average = |sum: u64, count: u64| (count > 0).then(|| sum as f64 / count as f64);
        (
            average(self.in_flight - earlier.in_flight, self.sends - earlier.sends),
            average(self.held - earlier.held, self.claims - earlier.claims),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_average_what_happened_between_them() {
        let gauges = Gauges::default();
        gauges.send_began(10);
        let before = gauges.read();
        gauges.send_began(4);
        gauges.send_began(6);
        gauges.claimed(100);
        assert_eq!(gauges.read().since(&before), (Some(5.0), Some(100.0)));
        assert_eq!(before.since(&before), (None, None));
    }
}
