//! The statistics of metrics and review: confusion-matrix rates, average precision (the
//! area under the precision-recall curve, as scikit-learn computes it), Wald and Wilson
//! intervals (as statsmodels' `proportion_confint` with `normal` and `wilson`) and sample
//! sizes with the finite-population correction. Checked against values produced by
//! `tests/fixtures/accuracy/reference.py`.

pub use crate::confusion::Counts;

/// Average precision of scores against binary labels: Σ (Rₙ − Rₙ₋₁) Pₙ over the distinct
/// scores in decreasing order (scikit-learn's `average_precision_score`). `None` without a
/// positive label.
pub fn average_precision(samples: &[(f64, bool)]) -> Option<f64> {
    let positives = samples.iter().filter(|(_, label)| *label).count();
    if positives == 0 {
        return None;
    }
    let mut sorted: Vec<(f64, bool)> = samples.to_vec();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (mut tp, mut fp, mut previous_recall, mut area) = (0usize, 0usize, 0.0, 0.0);
    let mut i = 0;
    while i < sorted.len() {
        let score = sorted[i].0;
        while i < sorted.len() && sorted[i].0 == score {
            if sorted[i].1 {
                tp += 1;
            } else {
                fp += 1;
            }
            i += 1;
        }
        let recall = tp as f64 / positives as f64;
        let precision = tp as f64 / (tp + fp) as f64;
        area += (recall - previous_recall) * precision;
        previous_recall = recall;
    }
    Some(area)
}

/// The two-sided standard-normal quantile for a confidence level in percent (95 → 1.96).
pub fn z_for_level(level_percent: f64) -> f64 {
    inverse_normal(1.0 - (1.0 - level_percent / 100.0) / 2.0)
}

/// Φ⁻¹(p) by Acklam's rational approximation (relative error < 1.2e-9).
pub fn inverse_normal(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383_577_518_672_69e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let low = 0.02425;
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < low {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - low {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Interval method of the review's rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Normal approximation, clipped to [0, 1].
    Wald,
    /// Wilson score interval.
    Wilson,
}

/// The interval of `successes / n` at `z`; `None` when `n` is 0.
pub fn interval(successes: i64, n: i64, z: f64, method: Method) -> Option<(f64, f64)> {
    if n <= 0 {
        return None;
    }
    let n = n as f64;
    let p = successes as f64 / n;
    Some(match method {
        Method::Wald => {
            let half = z * (p * (1.0 - p) / n).sqrt();
            ((p - half).clamp(0.0, 1.0), (p + half).clamp(0.0, 1.0))
        }
        Method::Wilson => {
            let z2 = z * z;
            let denominator = 1.0 + z2 / n;
            let centre = (p + z2 / (2.0 * n)) / denominator;
            let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
            (centre - half, centre + half)
        }
    })
}

/// Observations needed to estimate a rate near `p` within ±`margin` at `z`:
/// n₀ = z²·p(1−p)/margin², then, over a population of `population`, n = n₀N/(n₀ + N − 1);
/// rounded up, never more than the population.
pub fn sample_size(p: f64, margin: f64, z: f64, population: Option<i64>) -> i64 {
    let n0 = z * z * p * (1.0 - p) / (margin * margin);
    let n = match population {
        Some(population) if population > 0 => {
            let big_n = population as f64;
            n0 * big_n / (n0 + big_n - 1.0)
        }
        _ => n0,
    };
    // Floating error must not turn 385.0000001 into 386.
    let n = (n - 1e-9).ceil().max(0.0) as i64;
    match population {
        Some(population) if population > 0 => n.min(population),
        _ => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_give_the_usual_rates() {
        let counts = Counts { tp: 6, fp: 2, fn_: 2, tn: 10 };
        assert_eq!(counts.accuracy(), Some(0.8));
        assert_eq!(counts.precision(), Some(0.75));
        assert_eq!(counts.recall(), Some(0.75));
        assert_eq!(counts.f1(), Some(0.75));
        assert_eq!(Counts::default().precision(), None);
    }

    #[test]
    fn z_matches_the_normal_quantiles() {
        assert!((z_for_level(95.0) - 1.959963984540054).abs() < 1e-8);
        assert!((z_for_level(99.0) - 2.5758293035489004).abs() < 1e-8);
        assert!((z_for_level(90.0) - 1.6448536269514722).abs() < 1e-8);
    }
}
