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

/// Per-class sums of logarithms `Σ_j ln f_j` (naive Bayes log-likelihoods), with the logs of
/// positive factors taken as the log of a running product: one `ln` per class per row instead
/// of one per (feature, class), which dominated naive Bayes' cost. A product is folded into
/// its sum whenever it would leave `[1e-100, 1e100]`, so it never under- or overflows; the
/// sums are complete after [`LogSums::finish`].
pub struct LogSums<'a> {
    sums: &'a mut [f64],
    /// Pending factors, `[0, k)` entering with `+ln`, `[k, 2k)` (Gaussian normalisers
    /// `2πσ²`) with `−½ ln`.
    products: &'a mut [f64],
}

impl<'a> LogSums<'a> {
    /// Accumulates into `sums` (one per class), using `products` (twice as long) as scratch.
    pub fn new(sums: &'a mut [f64], products: &'a mut [f64]) -> Self {
        debug_assert_eq!(products.len(), 2 * sums.len());
        products.fill(1.0);
        LogSums { sums, products }
    }

    /// Number of classes.
    #[inline]
    pub fn len(&self) -> usize {
        self.sums.len()
    }

    /// Whether there is no class.
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// The sum of class `c` so far, without the pending product (finite unless `-∞`).
    #[inline]
    pub fn partial(&self, c: usize) -> f64 {
        self.sums[c]
    }

    /// Adds `v` to class `c`'s sum.
    #[inline]
    pub fn add(&mut self, c: usize, v: f64) {
        self.sums[c] += v;
    }

    /// Adds `ln factor` (`factor > 0`) to class `c`'s sum.
    #[inline]
    pub fn add_ln(&mut self, c: usize, factor: f64) {
        if let Some(folded) = Self::defer(&mut self.products[c], factor) {
            self.sums[c] += folded;
        }
    }

    /// Adds `ln N(x; mean, var)` to class `c`'s sum.
    #[inline]
    pub fn add_gaussian(&mut self, c: usize, x: f64, mean: f64, var: f64) {
        let d = x - mean;
        self.sums[c] -= 0.5 * d * d / var;
        let k = self.sums.len();
        if let Some(folded) =
            Self::defer(&mut self.products[k + c], 2.0 * std::f64::consts::PI * var)
        {
            self.sums[c] -= 0.5 * folded;
        }
    }

    /// Multiplies `factor` into `product`; returns a log to fold into the sum when the
    /// product (or the factor) would leave the safe range.
    #[inline]
    pub(crate) fn defer(product: &mut f64, factor: f64) -> Option<f64> {
        const LO: f64 = 1e-100;
        const HI: f64 = 1e100;
        if !(LO..=HI).contains(&factor) {
            return Some(factor.ln());
        }
        let p = *product * factor;
        if (LO..=HI).contains(&p) {
            *product = p;
            None
        } else {
            let folded = product.ln();
            *product = factor;
            Some(folded)
        }
    }
}

impl LogSums<'_> {
    /// Folds the pending products into the sums, which are then complete.
    pub fn finish(self) {
        let (plus, gaussian) = self.products.split_at(self.sums.len());
        for ((s, &p), &g) in self.sums.iter_mut().zip(plus).zip(gaussian) {
            // One log for both: each product lies in [1e-100, 1e100], so p/√g stays in range.
            let factor = p / g.sqrt();
            if factor != 1.0 {
                *s += factor.ln();
            }
        }
    }
}

/// Standard normal CDF `Φ(z) = ½ erfc(−z/√2)` (WEAK_LEARNERS.md §1.8), through a correct
/// double-precision `erfc`.
#[inline]
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// `Φ(z)` and `h(Φ(z))`, `h` the binary entropy in bits, by cubic Hermite interpolation in a
/// table: what a numeric split search needs of one class at one threshold, where it would
/// otherwise take an `erfc` and two logarithms.
///
/// A class `c` of weight `W_c` under a Gaussian puts `p = Φ(z)` of its weight left of a
/// threshold, and its two branch terms of the information gain, `l·log2 l + r·log2 r` with
/// `l = W_c·p`, `r = W_c·(1 − p)`, sum to `W_c·log2 W_c − W_c·h(p)`. Both `Φ` and `h∘Φ` are
/// smooth functions of `z` alone, so one table serves every class and threshold.
///
/// Nodes every 1/64 on `[−9, 9]`, each with the values and derivatives (`φ(z)` and
/// `log2((1 − Φ)/Φ)·φ(z)`) computed once from libm's `erfc` and `exp`; beyond `±9`, `Φ` is
/// 0 or 1 and `h` is 0, within 2e-18 of the exact values. The interpolation error is at most
/// `step⁴/384·max|f⁗|`; the test `interpolated_split_share_is_within_its_bound` measures it
/// against the libm forms on a grid 97 times finer than the table's, and asserts the bound
/// `SPLIT_SHARE_ERROR` on both functions.
#[inline]
pub fn interpolated_split_share(z: f64) -> (f64, f64) {
    const Z_MAX: f64 = SPLIT_SHARE_Z_MAX;
    // NaN falls here too: no weight to either side is counted for it.
    if z.is_nan() || z <= -Z_MAX {
        return (0.0, 0.0);
    }
    if z >= Z_MAX {
        return (1.0, 0.0);
    }
    let table = split_share_table();
    let u = (z + Z_MAX) * SPLIT_SHARE_PER_UNIT;
    // `u < 2·Z_MAX·PER_UNIT` here, so `i + 1` is a node.
    let i = (u as usize).min(table.len() - 2);
    let t = u - i as f64;
    let (a, b) = (&table[i], &table[i + 1]);
    let t2 = t * t;
    let t3 = t2 * t;
    let h00 = 2.0 * t3 - 3.0 * t2 + 1.0;
    let h10 = t3 - 2.0 * t2 + t;
    let h01 = -2.0 * t3 + 3.0 * t2;
    let h11 = t3 - t2;
    let step = 1.0 / SPLIT_SHARE_PER_UNIT;
    let phi = h00 * a[0] + h10 * step * a[1] + h01 * b[0] + h11 * step * b[1];
    let entropy = h00 * a[2] + h10 * step * a[3] + h01 * b[2] + h11 * step * b[3];
    (phi.clamp(0.0, 1.0), entropy.max(0.0))
}

/// The largest difference between [`interpolated_split_share`] and the libm forms of `Φ(z)`
/// and `h(Φ(z))`, over all `z` (asserted by a test on a fine grid).
pub const SPLIT_SHARE_ERROR: f64 = 1e-9;

const SPLIT_SHARE_Z_MAX: f64 = 9.0;
const SPLIT_SHARE_PER_UNIT: f64 = 64.0;

/// The nodes of [`interpolated_split_share`]: `[Φ, Φ', h∘Φ, (h∘Φ)']` at `z = −9 + i/64`.
fn split_share_table() -> &'static [[f64; 4]] {
    static TABLE: std::sync::OnceLock<Vec<[f64; 4]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let n = (2.0 * SPLIT_SHARE_Z_MAX * SPLIT_SHARE_PER_UNIT) as usize;
        (0..=n)
            .map(|i| {
                let z = -SPLIT_SHARE_Z_MAX + i as f64 / SPLIT_SHARE_PER_UNIT;
                let (p, q) = exact_split_share(z);
                let density = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
                // d h(Φ)/dz = log2((1 − Φ)/Φ)·φ, with 1 − Φ = Φ(−z) for accuracy in the tail.
                let slope = (normal_cdf(-z) / p).log2() * density;
                [p, density, q, slope]
            })
            .collect()
    })
}

/// `Φ(z)` and the binary entropy `h(Φ(z))` in bits through libm, `1 − Φ(z)` as `Φ(−z)`.
pub fn exact_split_share(z: f64) -> (f64, f64) {
    let (p, rest) = (normal_cdf(z), normal_cdf(-z));
    (p, -x_log2_x(p) - x_log2_x(rest))
}

/// `x·log2 x`, and 0 at `x ≤ 0` (its limit at 0): an entropy's term.
#[inline]
pub fn x_log2_x(x: f64) -> f64 {
    if x > 0.0 { x * x.log2() } else { 0.0 }
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

/// `v ← softmax(v)`: exponentials shifted by the maximum, then normalised (one `exp` per
/// entry, where `exp(v − logsumexp(v))` takes two and a `ln`). An all `-∞` vector becomes
/// uniform.
#[inline]
pub fn softmax(v: &mut [f64]) {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    v.iter_mut().for_each(|x| *x = (*x - m).exp());
    normalize(v);
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
    fn log_sums_equal_the_sums_of_logs() {
        let gaussians = [
            (0, 1.0, 0.5, 2.0),
            (1, -3.0, 0.0, 1e-12),
            (0, 4.0, 1.0, 1e90),
            (1, 2.0, 2.0, 1e-60),
            (0, 0.0, 0.0, 1e-60),
            (1, 7.0, 1.0, 3.5),
        ];
        let factors = [(0, 0.25), (1, 1e-80), (1, 1e-80), (0, 3.0), (1, 1e-150)];
        let (mut sums, mut products) = (vec![0.5, -1.0], vec![0.0; 4]);
        {
            let mut acc = LogSums::new(&mut sums, &mut products);
            for (&(c, x, m, v), &(c2, f)) in gaussians.iter().zip(factors.iter().cycle()) {
                acc.add_gaussian(c, x, m, v);
                acc.add_ln(c2, f);
            }
            acc.finish();
        }
        let mut want = [0.5, -1.0];
        for (&(c, x, m, v), &(c2, f)) in gaussians.iter().zip(factors.iter().cycle()) {
            want[c] += gaussian_log_density(x, m, v);
            want[c2] += f64::ln(f);
        }
        for c in 0..2 {
            assert!(
                (sums[c] - want[c]).abs() < 1e-9 * want[c].abs().max(1.0),
                "{sums:?} {want:?}"
            );
        }
    }

    /// The table's values against libm's on a grid 97 times finer than its nodes, past both
    /// ends: within the stated bound.
    #[test]
    fn interpolated_split_share_is_within_its_bound() {
        let (mut worst_p, mut worst_h) = (0.0f64, 0.0f64);
        let steps = 2 * 10 * 64 * 97;
        for i in 0..=steps {
            let z = -10.0 + 20.0 * i as f64 / steps as f64;
            let (p, h) = interpolated_split_share(z);
            let (ep, eh) = exact_split_share(z);
            worst_p = worst_p.max((p - ep).abs());
            worst_h = worst_h.max((h - eh).abs());
        }
        assert!(worst_p <= SPLIT_SHARE_ERROR, "Φ off by {worst_p:e}");
        assert!(worst_h <= SPLIT_SHARE_ERROR, "h(Φ) off by {worst_h:e}");
        assert_eq!(interpolated_split_share(0.0).0, 0.5);
        assert_eq!(interpolated_split_share(f64::NAN), (0.0, 0.0));
        eprintln!("worst: Φ {worst_p:e}, h(Φ) {worst_h:e}");
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
