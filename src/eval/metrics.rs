//! Streaming classification metrics.

use serde::{Deserialize, Serialize};

use crate::core::ClassId;

/// Counts of (true class, predicted class) pairs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfusionMatrix {
    k: usize,
    /// `counts[true * k + predicted]`.
    counts: Vec<u64>,
}

/// Precision, recall and F1 of one class (one-vs-rest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassMetrics {
    /// Class name.
    pub class: String,
    /// Rows whose true class this is.
    pub support: u64,
    /// Correct among the rows predicted as this class (0 if none were).
    pub precision: f64,
    /// Correct among the rows of this class (0 if there were none).
    pub recall: f64,
    /// Harmonic mean of precision and recall (0 if both are 0).
    pub f1: f64,
}

impl ConfusionMatrix {
    /// An empty matrix for `k` classes.
    pub fn new(k: usize) -> Self {
        ConfusionMatrix {
            k,
            counts: vec![0; k * k],
        }
    }

    /// Records one prediction.
    #[inline]
    pub fn record(&mut self, truth: ClassId, predicted: ClassId) {
        self.counts[truth * self.k + predicted] += 1;
    }

    /// Number of recorded rows.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Number of correct predictions.
    pub fn correct(&self) -> u64 {
        (0..self.k).map(|c| self.counts[c * self.k + c]).sum()
    }

    /// Fraction correct (`None` before any row).
    pub fn accuracy(&self) -> Option<f64> {
        let n = self.total();
        (n > 0).then(|| self.correct() as f64 / n as f64)
    }

    /// Cohen's kappa `(p_o − p_e)/(1 − p_e)`; `None` before any row or when chance agreement
    /// is total (`p_e = 1`), where it is undefined.
    pub fn kappa(&self) -> Option<f64> {
        let n = self.total() as f64;
        if n == 0.0 {
            return None;
        }
        let p_o = self.correct() as f64 / n;
        let p_e: f64 = (0..self.k)
            .map(|c| (self.row_total(c) as f64 / n) * (self.column_total(c) as f64 / n))
            .sum();
        (p_e < 1.0).then(|| (p_o - p_e) / (1.0 - p_e))
    }

    fn row_total(&self, c: usize) -> u64 {
        self.counts[c * self.k..(c + 1) * self.k].iter().sum()
    }

    fn column_total(&self, c: usize) -> u64 {
        (0..self.k).map(|r| self.counts[r * self.k + c]).sum()
    }

    /// Per-class precision, recall and F1, named by `class_names`.
    pub fn per_class(&self, class_names: &[String]) -> Vec<ClassMetrics> {
        (0..self.k)
            .map(|c| {
                let tp = self.counts[c * self.k + c] as f64;
                let (support, predicted) = (self.row_total(c), self.column_total(c));
                let ratio = |a: f64, b: u64| if b > 0 { a / b as f64 } else { 0.0 };
                let (precision, recall) = (ratio(tp, predicted), ratio(tp, support));
                let f1 = if precision + recall > 0.0 {
                    2.0 * precision * recall / (precision + recall)
                } else {
                    0.0
                };
                ClassMetrics {
                    class: class_names[c].clone(),
                    support,
                    precision,
                    recall,
                    f1,
                }
            })
            .collect()
    }

    /// The matrix as rows (true class) of columns (predicted class).
    pub fn to_rows(&self) -> Vec<Vec<u64>> {
        self.counts.chunks(self.k).map(<[u64]>::to_vec).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_kappa_and_f1() {
        let mut m = ConfusionMatrix::new(2);
        // 45 TN... classic example: a=20 (yes,yes), b=5, c=10, d=15.
        for _ in 0..20 {
            m.record(0, 0);
        }
        for _ in 0..5 {
            m.record(0, 1);
        }
        for _ in 0..10 {
            m.record(1, 0);
        }
        for _ in 0..15 {
            m.record(1, 1);
        }
        assert_eq!(m.accuracy(), Some(0.7));
        // p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5, kappa = 0.4.
        assert!((m.kappa().unwrap() - 0.4).abs() < 1e-12);
        let pc = m.per_class(&["a".into(), "b".into()]);
        assert!((pc[0].precision - 20.0 / 30.0).abs() < 1e-12);
        assert!((pc[0].recall - 0.8).abs() < 1e-12);
        assert_eq!(pc[1].support, 25);
    }

    #[test]
    fn kappa_undefined_when_chance_is_total() {
        let mut m = ConfusionMatrix::new(3);
        m.record(1, 1);
        assert_eq!(m.kappa(), None);
        assert_eq!(ConfusionMatrix::new(2).accuracy(), None);
    }
}
