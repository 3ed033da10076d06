//! Numeric helpers (ALGORITHMS.md §0). Algorithms use these, never the naive forms.

use serde::{Deserialize, Serialize};

use super::Rng;

/// `1/(1+e^{-z})`, evaluated without overflow for either sign of `z`.
#[inline]
pub fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// `ln(1+e^z)`, stable for large `|z|`.
#[inline]
pub fn softplus(z: f64) -> f64 {
    z.max(0.0) + (-z.abs()).exp().ln_1p()
}

/// `ln Σ e^{v_j}`, shifted by the maximum; `-∞` for an empty or all `-∞` input.
pub fn logsumexp(v: &[f64]) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// `ln N(x; mean, var)`, the Gaussian log-density (naive Bayes likelihoods).
#[inline]
pub fn gaussian_log_density(x: f64, mean: f64, var: f64) -> f64 {
    -0.5 * ((2.0 * std::f64::consts::PI * var).ln() + (x - mean) * (x - mean) / var)
}

/// Standard normal CDF `Φ(z) = ½ erfc(−z/√2)` (WEAK_LEARNERS.md §1.8), through a correct
/// double-precision `erfc`.
#[inline]
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// How ties among equal maxima (or minima) are broken (ALGORITHMS.md §0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TieBreak {
    /// Uniformly among the tied, with the model's seeded RNG (the authors' code).
    #[default]
    Random,
    /// The smallest index (deterministic; the test oracles use it).
    Lowest,
}

/// Index of the largest value, ties to the lowest index. `NaN`s never win.
#[inline]
pub fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate().skip(1) {
        if x > v[best] || v[best].is_nan() {
            best = i;
        }
    }
    best
}

/// Index of the largest value with ties broken by `tie`. With [`TieBreak::Random`] the RNG is
/// drawn only when there is a tie, so tie-free rows consume no randomness.
#[inline]
pub fn argmax_tie(v: &[f64], tie: TieBreak, rng: &mut Rng) -> usize {
    match tie {
        TieBreak::Lowest => argmax(v),
        TieBreak::Random => {
            let mut best = argmax(v);
            let top = v[best];
            let mut seen = 1usize;
            for (i, &x) in v.iter().enumerate().skip(best + 1) {
                if x == top {
                    // Reservoir sampling over the tied indices: each is kept with prob 1/seen.
                    seen += 1;
                    if rng.below(seen) == 0 {
                        best = i;
                    }
                }
            }
            best
        }
    }
}

/// Normalises `v` in place to sum 1; an all-zero (or non-finite) vector becomes uniform.
#[inline]
pub fn normalize(v: &mut [f64]) {
    let s: f64 = v.iter().sum();
    if s > 0.0 && s.is_finite() {
        v.iter_mut().for_each(|x| *x /= s);
    } else {
        let u = 1.0 / v.len() as f64;
        v.iter_mut().for_each(|x| *x = u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigmoid_is_stable_and_symmetric() {
        assert_eq!(sigmoid(0.0), 0.5);
        assert!((sigmoid(800.0) - 1.0).abs() < 1e-300);
        assert!(sigmoid(-800.0) >= 0.0 && sigmoid(-800.0) < 1e-300);
        for z in [-5.0, -0.3, 0.7, 12.0] {
            assert!((sigmoid(z) + sigmoid(-z) - 1.0).abs() < 1e-15);
        }
    }

    #[test]
    fn softplus_matches_naive_where_naive_is_safe() {
        for z in [-30.0, -1.0, 0.0, 2.5, 30.0] {
            assert!((softplus(z) - (1.0 + f64::exp(z)).ln()).abs() < 1e-12);
        }
        assert_eq!(softplus(1000.0), 1000.0);
    }

    #[test]
    fn logsumexp_handles_large_and_empty() {
        assert!((logsumexp(&[1000.0, 1000.0]) - (1000.0 + 2f64.ln())).abs() < 1e-12);
        assert_eq!(logsumexp(&[]), f64::NEG_INFINITY);
    }

    #[test]
    fn normal_cdf_known_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-16);
        assert!((normal_cdf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-15);
        assert!((normal_cdf(-8.0) - 6.220_960_574_271_785e-16).abs() < 1e-28);
    }

    #[test]
    fn random_ties_cover_all_tied_and_only_tied() {
        let mut rng = Rng::new(1);
        let v = [1.0, 3.0, 0.0, 3.0, 3.0];
        let mut hits = [0; 5];
        for _ in 0..3000 {
            hits[argmax_tie(&v, TieBreak::Random, &mut rng)] += 1;
        }
        assert_eq!(hits[0] + hits[2], 0);
        for i in [1, 3, 4] {
            assert!(hits[i] > 800, "{hits:?}");
        }
        assert_eq!(argmax_tie(&v, TieBreak::Lowest, &mut rng), 1);
    }
}
