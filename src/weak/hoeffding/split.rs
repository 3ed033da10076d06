//! Split criteria, the Hoeffding bound (WEAK_LEARNERS.md §1.6–1.7), and the tests of split nodes.

use serde::{Deserialize, Serialize};

use crate::core::math::x_log2_x;
use crate::core::{is_present, nominal_code};

/// How the merit of a candidate split is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SplitCriterion {
    /// Information gain in bits (range `log2(max(C, 2))`).
    #[default]
    InfoGain,
    /// Gini impurity decrease (range 1).
    Gini,
}

impl SplitCriterion {
    /// Merit of splitting the class weights `pre` into `branches` (each a class-weight
    /// vector). `-∞` when fewer than two branches carry more than `min_branch_fraction` of
    /// the weight (MOA/River's rule), which makes the null split `[pre]` always `-∞`.
    pub fn merit<'a>(
        self, pre: &[f64], branches: impl Iterator<Item = &'a [f64]> + Clone,
        min_branch_fraction: f64,
    ) -> f64 {
        self.merit_from(self.impurity(pre), branches, min_branch_fraction)
    }

    /// The impurity of class weights `a` under this criterion (entropy in bits, or Gini).
    pub fn impurity(self, a: &[f64]) -> f64 {
        match self {
            SplitCriterion::InfoGain => entropy(a),
            SplitCriterion::Gini => gini(a),
        }
    }

    /// [`SplitCriterion::merit`] given the impurity of `pre`, which a split search over many
    /// candidates computes once. Every merit is at most that impurity (the branches'
    /// impurities are not negative), which bounds what a leaf's best split can gain.
    pub fn merit_from<'a>(
        self, pre_impurity: f64, branches: impl Iterator<Item = &'a [f64]> + Clone,
        min_branch_fraction: f64,
    ) -> f64 {
        let total: f64 = branches.clone().map(|b| b.iter().sum::<f64>()).sum();
        if total <= 0.0 {
            return f64::NEG_INFINITY;
        }
        let big = branches
            .clone()
            .filter(|b| b.iter().sum::<f64>() / total > min_branch_fraction)
            .count();
        if big < 2 {
            return f64::NEG_INFINITY;
        }
        let post: f64 = branches
            .map(|b| b.iter().sum::<f64>() / total * self.impurity(b))
            .sum();
        pre_impurity - post
    }

    /// The range `R` of the merit for the Hoeffding bound: `log2(max(C, 2))` for information
    /// gain with `C` the number of classes present at the leaf (River), 1 for Gini.
    pub fn range(self, class_weights: &[f64]) -> f64 {
        match self {
            SplitCriterion::InfoGain => {
                let present = class_weights.iter().filter(|&&w| w > 0.0).count();
                (present.max(2) as f64).log2()
            }
            SplitCriterion::Gini => 1.0,
        }
    }
}

/// Entropy in bits of a weight vector: `log2 S − (1/S) Σ a log2 a` (0 for an empty vector).
pub fn entropy(a: &[f64]) -> f64 {
    let s: f64 = a.iter().sum();
    if s <= 0.0 {
        return 0.0;
    }
    let sum_alog: f64 = a.iter().filter(|&&x| x > 0.0).map(|&x| x_log2_x(x)).sum();
    s.log2() - sum_alog / s
}

/// Gini impurity `1 − Σ (a_c/S)²` (0 for an empty vector).
pub fn gini(a: &[f64]) -> f64 {
    let s: f64 = a.iter().sum();
    if s <= 0.0 {
        return 0.0;
    }
    1.0 - a.iter().map(|&x| (x / s) * (x / s)).sum::<f64>()
}

/// Hoeffding bound `ε = sqrt(R² ln(1/δ) / (2W))`.
pub fn hoeffding_bound(range: f64, delta: f64, weight: f64) -> f64 {
    (range * range * (1.0 / delta).ln() / (2.0 * weight)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_split_is_minus_infinity() {
        let pre = [3.0, 4.0];
        let m = SplitCriterion::InfoGain.merit(&pre, std::iter::once(&pre[..]), 0.01);
        assert_eq!(m, f64::NEG_INFINITY);
    }

    /// The merit under `criterion` of splitting two-class counts `pre` into `branches`.
    fn merit(criterion: SplitCriterion, pre: [f64; 2], branches: &[[f64; 2]]) -> f64 {
        criterion.merit(&pre, branches.iter().map(|v| &v[..]), 0.01)
    }

    #[test]
    fn min_branch_rule() {
        let branches = [[100.0, 99.5], [0.0, 0.5]];
        let m = merit(SplitCriterion::InfoGain, [100.0, 100.0], &branches);
        assert_eq!(m, f64::NEG_INFINITY);
    }

    #[test]
    fn gini_of_perfect_split() {
        let m = merit(SplitCriterion::Gini, [5.0, 5.0], &[[5.0, 0.0], [0.0, 5.0]]);
        assert!((m - 0.5).abs() < 1e-15);
    }
}

/// The test of a split node. `feature` is the column index in the row. Kept to 16 bytes:
/// routing reads one [`Link`](super::node::Link) per level, so its size is what a row's descent costs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum SplitTest {
    /// `x_j ≤ threshold` → branch 0, else branch 1.
    Numeric {
        /// Column index.
        feature: u32,
        /// Threshold.
        threshold: f64,
    },
    /// One branch per category code.
    Multiway {
        /// Column index.
        feature: u32,
    },
    /// `x_j == value` → branch 0, else branch 1.
    Binary {
        /// Column index.
        feature: u32,
        /// The category code tested.
        value: u32,
    },
}

/// Where a row goes at a split node.
pub enum Branch {
    /// Into child slot `i` (which may not exist yet).
    Child(usize),
    /// The tested value is missing.
    Missing,
}

impl SplitTest {
    /// Column index the test reads.
    #[inline]
    pub fn feature(&self) -> usize {
        match *self {
            SplitTest::Numeric { feature, .. }
            | SplitTest::Multiway { feature }
            | SplitTest::Binary { feature, .. } => feature as usize,
        }
    }

    /// The branch row `x` takes.
    #[inline]
    pub fn branch(&self, x: &[f64]) -> Branch {
        let v = x[self.feature()];
        match *self {
            SplitTest::Numeric { threshold, .. } => {
                if !is_present(v) {
                    Branch::Missing
                } else {
                    Branch::Child(usize::from(v > threshold))
                }
            }
            SplitTest::Multiway { .. } => nominal_code(v).map_or(Branch::Missing, Branch::Child),
            SplitTest::Binary { value, .. } => nominal_code(v).map_or(Branch::Missing, |code| {
                Branch::Child(usize::from(code != value as usize))
            }),
        }
    }
}
