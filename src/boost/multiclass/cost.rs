//! Surrogate losses of the adaptive multiclass boosters and the cost matrices they hand to
//! weak learners (ALGORITHMS.md §3.2).
//!
//! Each surrogate has the pairwise form `L^r(s) = Σ_{l≠r} ψ(s[l] − s[r])`, so its cost matrix
//! (the gradient at `s`) is `C[r][l] = ψ'(s[l] − s[r])` for `l ≠ r` and
//! `C[r][r] = −Σ_{j≠r} C[r][j]`. [`PairwiseCosts`] keeps that matrix for a vote vector that
//! changes one coordinate at a time, so a booster pays `O(k)` derivative evaluations per
//! learner instead of `O(k²)`.

use serde::{Deserialize, Serialize};

use crate::core::Rng;
use crate::core::math::{TieBreak, sigmoid};

/// The surrogate loss of an adaptive multiclass booster: `L^r(s) = Σ_{l≠r} ψ(s[l] − s[r])`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Surrogate {
    /// `ψ(z) = ln(1 + e^z)` (\[JGT\] eq. 8 as corrected in ALGORITHMS.md E.1); `ψ' = sigmoid`.
    #[default]
    Logistic,
    /// `ψ(z) = e^z` (\[MS\] Lemma 1, \[JGT-App\] D.1, eqs. 36–38); `ψ' = exp`.
    Exponential,
    /// `ψ(z) = ((1 + z)_+)²` (\[JGT-App\] D.2, form reconstructed in ALGORITHMS.md §4);
    /// `ψ'(z) = 2(1 + z)_+`.
    SquareHinge,
}

impl Surrogate {
    /// `ψ'(z)`: the cost of predicting a label whose score exceeds the true one's by `z`.
    #[inline]
    pub fn derivative(self, z: f64) -> f64 {
        match self {
            Surrogate::Logistic => sigmoid(z),
            Surrogate::Exponential => z.exp(),
            Surrogate::SquareHinge => 2.0 * (1.0 + z).max(0.0),
        }
    }

    /// `(ψ'(z), ψ'(−z))`, the costs of a pair of labels against each other, with one
    /// exponential for the logistic surrogate (bit-identical to two [`Self::derivative`] calls).
    #[inline]
    pub fn derivative_pair(self, z: f64) -> (f64, f64) {
        match self {
            Surrogate::Logistic => {
                let e = (-z.abs()).exp();
                let (big, small) = (1.0 / (1.0 + e), e / (1.0 + e));
                if z >= 0.0 { (big, small) } else { (small, big) }
            }
            _ => (self.derivative(z), self.derivative(-z)),
        }
    }

    /// The default feasible set `[−B, B]` of a learner weight: `B = 2` for the logistic
    /// (\[JGT\] Thm. 4) and exponential (App. D.1) losses; `β = 1` for the square hinge, whose
    /// optimal value in the paper's proof is not recoverable (ALGORITHMS.md §4).
    pub fn default_alpha_bound(self) -> f64 {
        match self {
            Surrogate::Logistic | Surrogate::Exponential => 2.0,
            Surrogate::SquareHinge => 1.0,
        }
    }

    /// `G_i`, the bound on `|f'(α)|` for learner `i` (1-based) of `k` classes with
    /// `|α| ≤ bound`. For the logistic loss it is `k − 1` for every learner; the exponential
    /// and square-hinge derivatives grow with the scores, which after `i − 1` learners differ
    /// by at most `(i − 1)·bound` between two labels (ALGORITHMS.md §4).
    pub fn gradient_bound(self, i: usize, k: usize, bound: f64) -> f64 {
        let (i, pairs) = (i as f64, (k - 1) as f64);
        match self {
            Surrogate::Logistic => pairs,
            Surrogate::Exponential => pairs * (bound * i).exp(),
            Surrogate::SquareHinge => 2.0 * pairs * (1.0 + bound * (2.0 * i - 1.0)),
        }
    }

    /// The bound on `−C[y][y]` at `s^{i−1}` that normalises learner `i`'s weight into
    /// `(0, 1]` (\[JGT\] Alg. 2 line 14 for the logistic loss; ALGORITHMS.md §4 otherwise).
    /// The exponential bound `(k − 1)e^{B(i−1)}` overflows past `i ≈ 355` (`B = 2`): see
    /// [`Self::normalised_weight`].
    pub fn weight_bound(self, i: usize, k: usize, bound: f64) -> f64 {
        let (i, pairs) = (i as f64, (k - 1) as f64);
        match self {
            Surrogate::Logistic => pairs,
            Surrogate::Exponential => pairs * (bound * (i - 1.0)).exp(),
            Surrogate::SquareHinge => 2.0 * pairs * (1.0 + 2.0 * bound * (i - 1.0)),
        }
    }

    /// Learner `i`'s weight `−C[y][y] / bound` in `(0, 1]`, given `−C[y][y]` and
    /// [`Self::weight_bound`]; in logs when the bound has overflowed (ALGORITHMS.md §4).
    #[inline]
    pub fn normalised_weight(
        self, neg_diagonal: f64, weight_bound: f64, i: usize, k: usize, bound: f64,
    ) -> f64 {
        if weight_bound.is_finite() {
            neg_diagonal / weight_bound
        } else {
            let log_bound = ((k - 1) as f64).ln() + bound * (i as f64 - 1.0);
            (neg_diagonal.ln() - log_bound).exp()
        }
    }

    /// `f'(α)` of `f(α) = L^y(s + α e_l)` (ALGORITHMS.md §3.2; \[JGT\] eq. 10 with the sign
    /// error of its second case corrected, E.2; eq. 38 for the exponential loss):
    /// `ψ'(s[l] + α − s[y])` if `l ≠ y`, else `−Σ_{j≠y} ψ'(s[j] − s[y] − α)`.
    pub fn alpha_gradient(self, s: &[f64], y: usize, l: usize, alpha: f64) -> f64 {
        if l != y {
            self.derivative(s[l] + alpha - s[y])
        } else {
            -s.iter()
                .enumerate()
                .filter(|&(j, _)| j != y)
                .map(|(_, &sj)| self.derivative(sj - s[y] - alpha))
                .sum::<f64>()
        }
    }

    /// `−C[y][y] = Σ_{j≠y} ψ'(s[j] − s[y])` at `s`: the (unnormalised) weight of a row.
    pub fn true_label_weight(self, s: &[f64], y: usize) -> f64 {
        s.iter()
            .enumerate()
            .filter(|&(j, _)| j != y)
            .map(|(_, &sj)| self.derivative(sj - s[y]))
            .sum()
    }
}

/// The cost matrix `C` of a surrogate at a vote vector `s`, updated incrementally.
#[derive(Debug, Clone, Default)]
pub struct PairwiseCosts {
    k: usize,
    /// `c[r*k + l] = C[r][l]`, diagonal included.
    c: Vec<f64>,
}

impl PairwiseCosts {
    /// Sets `C` for the all-zero vote vector of `k` classes.
    pub fn reset(&mut self, surrogate: Surrogate, k: usize) {
        self.k = k;
        let off = surrogate.derivative(0.0);
        self.c.clear();
        self.c.resize(k * k, off);
        for r in 0..k {
            self.c[r * k + r] = -off * (k - 1) as f64;
        }
    }

    /// Updates `C` after `s[l]` changed: row `l` and column `l` (and so every diagonal entry).
    pub fn update(&mut self, surrogate: Surrogate, s: &[f64], l: usize) {
        let k = self.k;
        let mut diag = 0.0;
        for r in 0..k {
            if r == l {
                continue;
            }
            // C[r][l] = ψ'(s[l] − s[r]) and C[l][r] = ψ'(s[r] − s[l]).
            let (column, row) = surrogate.derivative_pair(s[l] - s[r]);
            let old = self.c[r * k + l];
            self.c[r * k + l] = column;
            self.c[r * k + r] += old - column;
            self.c[l * k + r] = row;
            diag -= row;
        }
        self.c[l * k + l] = diag;
    }

    /// `C[r][l]`.
    #[inline]
    pub fn get(&self, r: usize, l: usize) -> f64 {
        self.c[r * self.k + l]
    }

    /// Row `r` of `C`.
    pub fn row(&self, r: usize) -> &[f64] {
        &self.c[r * self.k..(r + 1) * self.k]
    }

    /// The vote of a learner with class probabilities `p` (ALGORITHMS.md §1.3, `ExpectedCost`):
    /// `argmin_l Σ_r p[r] C[r][l]`; among equal costs the label with the largest `p`, then
    /// `tie`. A one-hot `p` votes its label (every row of `C` is minimal on the diagonal).
    pub fn expected_cost_vote(
        &self, p: &[f64], expected: &mut [f64], tie: TieBreak, rng: &mut Rng,
    ) -> usize {
        let k = self.k;
        if let Some(hot) = one_hot(p) {
            return hot;
        }
        expected.fill(0.0);
        for (r, &pr) in p.iter().enumerate() {
            if pr == 0.0 {
                continue;
            }
            for (e, &c) in expected.iter_mut().zip(&self.c[r * k..(r + 1) * k]) {
                *e += pr * c;
            }
        }
        least_expected_cost(expected, p, tie, rng)
    }
}

/// The label of least expected cost (ALGORITHMS.md §1.3): among equal costs the label with
/// the largest `p`, then `tie` (the RNG is drawn only on a remaining tie).
pub fn least_expected_cost(expected: &[f64], p: &[f64], tie: TieBreak, rng: &mut Rng) -> usize {
    let (mut min, mut best_p, mut choice, mut tied) = (f64::INFINITY, f64::NEG_INFINITY, 0, 0);
    for (l, (&e, &pl)) in expected.iter().zip(p).enumerate() {
        if e < min || (e == min && pl > best_p) {
            (min, best_p, choice, tied) = (e, pl, l, 1);
        } else if e == min && pl == best_p {
            tied += 1;
        }
    }
    if tied > 1 && tie == TieBreak::Random {
        // Uniform over the tied labels.
        let pick = rng.below(tied);
        choice = (0..expected.len())
            .filter(|&l| expected[l] == min && p[l] == best_p)
            .nth(pick)
            .expect("pick < tied");
    }
    choice
}

/// The label of a one-hot distribution, if `p` is one.
#[inline]
pub fn one_hot(p: &[f64]) -> Option<usize> {
    let mut hot = None;
    for (l, &v) in p.iter().enumerate() {
        if v == 1.0 && hot.is_none() {
            hot = Some(l);
        } else if v != 0.0 {
            return None;
        }
    }
    hot
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Surrogate; 3] = [
        Surrogate::Logistic,
        Surrogate::Exponential,
        Surrogate::SquareHinge,
    ];

    fn direct(s: &[f64], r: usize, l: usize) -> f64 {
        direct_with(Surrogate::Logistic, s, r, l)
    }

    fn direct_with(loss: Surrogate, s: &[f64], r: usize, l: usize) -> f64 {
        let psi_prime = |z: f64| match loss {
            Surrogate::Logistic => sigmoid(z),
            Surrogate::Exponential => z.exp(),
            Surrogate::SquareHinge => 2.0 * (1.0 + z).max(0.0),
        };
        if l != r {
            psi_prime(s[l] - s[r])
        } else {
            -(0..s.len())
                .filter(|&j| j != r)
                .map(|j| psi_prime(s[j] - s[r]))
                .sum::<f64>()
        }
    }

    fn surrogate_loss(loss: Surrogate, s: &[f64], y: usize) -> f64 {
        let psi = |z: f64| match loss {
            Surrogate::Logistic => crate::core::math::softplus(z),
            Surrogate::Exponential => z.exp(),
            Surrogate::SquareHinge => (1.0 + z).max(0.0).powi(2),
        };
        (0..s.len())
            .filter(|&j| j != y)
            .map(|j| psi(s[j] - s[y]))
            .sum()
    }

    #[test]
    fn every_surrogate_keeps_its_matrix_incrementally_and_proper() {
        for loss in ALL {
            let k = 4;
            let mut s = vec![0.0; k];
            let mut c = PairwiseCosts::default();
            c.reset(loss, k);
            for (l, a) in [(2, 0.7), (0, -1.3), (2, 1.1), (3, 2.0), (1, -0.2)] {
                s[l] += a;
                c.update(loss, &s, l);
                for r in 0..k {
                    for j in 0..k {
                        let d = direct_with(loss, &s, r, j);
                        assert!(
                            (c.get(r, j) - d).abs() < 1e-12 * d.abs().max(1.0),
                            "{loss:?}"
                        );
                        // Cost rows are minimal on the true label.
                        assert!(c.get(r, r) <= c.get(r, j));
                    }
                }
            }
        }
    }

    #[test]
    fn every_surrogate_gradient_matches_finite_difference() {
        let s = [0.4, -0.3, 1.5, 0.2];
        for loss in ALL {
            for (y, l, a) in [(0, 0, 0.3), (0, 2, -0.7), (3, 1, 1.2), (2, 2, -1.5)] {
                let mut plus = s.to_vec();
                plus[l] += a + 1e-6;
                let mut minus = s.to_vec();
                minus[l] += a - 1e-6;
                let fd = (surrogate_loss(loss, &plus, y) - surrogate_loss(loss, &minus, y)) / 2e-6;
                let g = loss.alpha_gradient(&s, y, l, a);
                assert!(
                    (g - fd).abs() < 1e-6 * fd.abs().max(1.0),
                    "{loss:?}: {g} vs {fd}"
                );
            }
        }
    }

    #[test]
    fn bounds_hold_on_the_feasible_set() {
        // |f'(α)| ≤ G_i and −C[y][y] ≤ e^{log bound} for any scores reachable after i − 1
        // learners with |α| ≤ B, checked at the extreme corners.
        let k = 3;
        for loss in ALL {
            let b = loss.default_alpha_bound();
            for i in 1..6usize {
                let reach = (i - 1) as f64 * b;
                for s in [
                    [reach, 0.0, 0.0],
                    [0.0, reach, 0.0],
                    [reach / 2.0, 0.0, reach / 2.0],
                ] {
                    let bound = loss.weight_bound(i, k, b);
                    for y in 0..k {
                        assert!(loss.true_label_weight(&s, y) <= bound * (1.0 + 1e-12));
                        for l in 0..k {
                            for a in [-b, b] {
                                let g = loss.alpha_gradient(&s, y, l, a).abs();
                                assert!(g <= loss.gradient_bound(i, k, b) * (1.0 + 1e-12));
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn incremental_matrix_matches_direct() {
        let k = 5;
        let mut s = vec![0.0; k];
        let mut c = PairwiseCosts::default();
        c.reset(Surrogate::Logistic, k);
        for (l, a) in [(2, 0.7), (0, -1.3), (2, 1.1), (4, 2.0), (1, -0.2)] {
            s[l] += a;
            c.update(Surrogate::Logistic, &s, l);
            for r in 0..k {
                for j in 0..k {
                    assert!((c.get(r, j) - direct(&s, r, j)).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn rows_are_minimal_on_the_diagonal_and_bounded() {
        let s = [0.3, -1.2, 2.0, 0.0];
        let mut c = PairwiseCosts::default();
        c.reset(Surrogate::Logistic, 4);
        let mut acc = vec![0.0; 4];
        for (l, &v) in s.iter().enumerate() {
            acc[l] = v;
            c.update(Surrogate::Logistic, &acc, l);
        }
        for r in 0..4 {
            for l in 0..4 {
                assert!(c.get(r, r) <= c.get(r, l));
                assert!(c.get(r, l) <= -c.get(r, r));
            }
        }
    }

    #[test]
    fn gradient_at_zero_is_the_cost_entry() {
        // ALGORITHMS.md E.2: at α = 0 the l = y case must equal C[y][y].
        let s = [0.4, -0.3, 1.5];
        for y in 0..3 {
            let g = Surrogate::Logistic.alpha_gradient(&s, y, y, 0.0);
            assert!((g - direct(&s, y, y)).abs() < 1e-15);
            let l = (y + 1) % 3;
            assert!(
                (Surrogate::Logistic.alpha_gradient(&s, y, l, 0.0) - direct(&s, y, l)).abs()
                    < 1e-15
            );
        }
    }

    #[test]
    fn gradient_matches_finite_difference() {
        let s = [0.4, -0.3, 1.5, 0.2];
        let loss = |s: &[f64], y: usize| -> f64 {
            (0..s.len())
                .filter(|&j| j != y)
                .map(|j| crate::core::math::softplus(s[j] - s[y]))
                .sum()
        };
        for (y, l, a) in [(0, 0, 0.3), (0, 2, -0.7), (3, 1, 1.2), (2, 2, -1.5)] {
            let mut plus = s.to_vec();
            plus[l] += a + 1e-6;
            let mut minus = s.to_vec();
            minus[l] += a - 1e-6;
            let fd = (loss(&plus, y) - loss(&minus, y)) / 2e-6;
            assert!((Surrogate::Logistic.alpha_gradient(&s, y, l, a) - fd).abs() < 1e-7);
        }
    }
}
