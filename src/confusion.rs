//! A confusion matrix and its rates: stored by the records store (accuracy runs) and
//! computed by the accuracy services, so it sits below both.

use serde_json::{json, Value};

/// A confusion matrix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub tp: i64,
    pub fp: i64,
    pub fn_: i64,
    pub tn: i64,
}

fn ratio(n: i64, d: i64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

impl Counts {
    pub fn add(&mut self, other: Counts) {
        self.tp += other.tp;
        self.fp += other.fp;
        self.fn_ += other.fn_;
        self.tn += other.tn;
    }

    pub fn total(&self) -> i64 {
        self.tp + self.fp + self.fn_ + self.tn
    }

    pub fn accuracy(&self) -> Option<f64> {
        ratio(self.tp + self.tn, self.total())
    }

    pub fn precision(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fp)
    }

    pub fn recall(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fn_)
    }

    /// Harmonic mean of precision and recall (`2TP / (2TP + FP + FN)`).
    pub fn f1(&self) -> Option<f64> {
        ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }

    /// The SDK's `Metrics` (and `FunctionMetrics`): rates are `null` with nothing to divide by.
    pub fn json(&self) -> Value {
        json!({
            "accuracy": self.accuracy(), "precision": self.precision(), "recall": self.recall(),
            "f1Score": self.f1(), "tp": self.tp, "fp": self.fp, "fn": self.fn_, "tn": self.tn,
        })
    }
}
