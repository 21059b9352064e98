//! Whether probabilities mean what they say, on labelled pairs: the reliability curve (pairs
//! binned by probability, each bin's mean probability beside the share of its pairs that
//! truly match), the Brier score and the expected calibration error. The resolution
//! benchmark prints them for every labelled set.

/// Bins of the reliability curve, equal width over 0..1.
pub const BINS: usize = 10;

/// One bin: how many pairs, their mean probability, and the share that truly match.
pub type Bin = (usize, f64, f64);

/// Brier score (mean squared error of the probability), expected calibration error (the
/// bins' |mean probability - share| weighted by their pairs) and the [`BINS`] bins, for
/// pairs given as (probability, truly a match).
pub fn reliability(scored: &[(f64, bool)]) -> (f64, f64, Vec<Bin>) {
    let mut bins = vec![(0usize, 0.0, 0.0); BINS];
    let mut brier = 0.0;
    for &(p, truth) in scored {
        let y = if truth { 1.0 } else { 0.0 };
        brier += (p - y) * (p - y);
        let bin = &mut bins[((p * BINS as f64) as usize).min(BINS - 1)];
        bin.0 += 1;
        bin.1 += p;
        bin.2 += y;
    }
    let total = scored.len().max(1) as f64;
    let mut ece = 0.0;
    for bin in bins.iter_mut().filter(|b| b.0 > 0) {
        bin.1 /= bin.0 as f64;
        bin.2 /= bin.0 as f64;
        ece += bin.0 as f64 / total * (bin.1 - bin.2).abs();
    }
    (brier / total, ece, bins)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_that_match_the_observed_shares_have_no_calibration_error() {
        // 0.9 said of ten pairs, nine true; 0.1 of ten, one true: calibrated.
        let mut scored = vec![(0.9, true); 9];
        scored.push((0.9, false));
        scored.extend(vec![(0.1, false); 9]);
        scored.push((0.1, true));
        let (brier, ece, bins) = reliability(&scored);
        assert!(ece.abs() < 1e-9, "{ece}");
        assert!((brier - 0.09).abs() < 1e-9, "{brier}");
        assert_eq!(bins[9].0, 10);
        assert!((bins[9].2 - 0.9).abs() < 1e-9);
        // Saying 0.9 of pairs that are all false is off by 0.9.
        let (brier, ece, _) = reliability(&[(0.9, false), (0.9, false)]);
        assert!((ece - 0.9).abs() < 1e-9 && (brier - 0.81).abs() < 1e-9);
    }
}
