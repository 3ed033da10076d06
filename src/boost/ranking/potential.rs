//! Exact rank-loss and hinge-loss potentials of OnlineBMR through their pairwise
//! decomposition (ALGORITHMS.md §P.3).
//!
//! With `n` draws left from the baseline `u_γ^Y` (`a + γ` on relevant labels, `a` on the
//! others, `a = (1 − |Y|γ)/k`, \[JT\] §3.1), linearity of expectation splits the potential
//! into pairs: `φ_n(s) = w_Y Σ_{l∈Y, r∉Y} ψ_n(s_l − s_r)`, where `ψ_n` is the expected pair
//! loss once the lazy walk `D = X_r − X_l` is added. `D` steps +1 with probability `a` (a
//! draw of `r`), −1 with `a + γ` (a draw of `l`) and 0 otherwise, so its law depends only on
//! `(n, |Y|)`: one table per distinct `|Y|`, built in `O(N²)` the first time that size is
//! seen, replaces the Monte Carlo estimates of the authors' code.

/// The law of the pair walk `D` for one `|Y|`: pmf and tails for `n = 0..n_max`.
#[derive(Debug, Clone)]
struct WalkTable {
    /// `π_n(d)` at `n² + d + n` for `d = −n..=n` (row `n` has `2n + 1` entries).
    pmf: Vec<f64>,
    /// `TP_n(d) = P(D ≥ d)`, same layout.
    tail_p: Vec<f64>,
    /// `TM_n(d) = E[D·1(D ≥ d)]`, same layout.
    tail_m: Vec<f64>,
}

impl WalkTable {
    /// Runs the recursion `π_{n+1}(d) = a·π_n(d−1) + (a+γ)·π_n(d+1) + (1−2a−γ)·π_n(d)`.
    fn new(n_max: usize, a: f64, gamma: f64) -> Self {
        let rows = n_max + 1;
        let mut pmf = vec![0.0; rows * rows];
        pmf[0] = 1.0;
        let (up, down, stay) = (a, a + gamma, 1.0 - 2.0 * a - gamma);
        for n in 0..n_max {
            let (from, to) = (n * n, (n + 1) * (n + 1));
            for j in 0..=2 * n {
                let p = pmf[from + j];
                // d = j − n in row n is index j + 1 in row n + 1.
                pmf[to + j] += down * p;
                pmf[to + j + 1] += stay * p;
                pmf[to + j + 2] += up * p;
            }
        }
        let mut tail_p = vec![0.0; pmf.len()];
        let mut tail_m = vec![0.0; pmf.len()];
        for n in 0..rows {
            let base = n * n;
            let (mut p, mut m) = (0.0, 0.0);
            for j in (0..=2 * n).rev() {
                p += pmf[base + j];
                m += (j as f64 - n as f64) * pmf[base + j];
                tail_p[base + j] = p;
                tail_m[base + j] = m;
            }
        }
        WalkTable {
            pmf,
            tail_p,
            tail_m,
        }
    }

    /// Index of `d` in row `n`, or `None` when `|d| > n`; `below` says which side.
    #[inline]
    fn index(n: usize, d: i64) -> Result<usize, bool> {
        let n_i = n as i64;
        if d < -n_i {
            Err(true)
        } else if d > n_i {
            Err(false)
        } else {
            Ok(n * n + (d + n_i) as usize)
        }
    }

    #[inline]
    fn pmf(&self, n: usize, d: i64) -> f64 {
        Self::index(n, d).map_or(0.0, |i| self.pmf[i])
    }

    /// `P(D ≥ d)`.
    #[inline]
    fn tail_p(&self, n: usize, d: i64) -> f64 {
        match Self::index(n, d) {
            Ok(i) => self.tail_p[i],
            Err(below) => f64::from(u8::from(below)),
        }
    }

    /// `E[D·1(D ≥ d)]`.
    #[inline]
    fn tail_m(&self, n: usize, d: i64) -> f64 {
        match Self::index(n, d) {
            Ok(i) => self.tail_m[i],
            Err(true) => self.tail_m[n * n],
            Err(false) => 0.0,
        }
    }
}

use super::LabelSplit;

/// Which loss a potential is the expectation of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairLoss {
    /// `1(s_l < s_r) + ½·1(s_l = s_r)`.
    Rank,
    /// `(1 + s_r − s_l)_+`.
    Hinge,
}

/// The pair-walk tables of a booster with `n_max + 1` potentials per `|Y|` (`n = 0..=n_max`
/// draws left), for `k` labels and edge `γ`, built lazily per `|Y|` and kept.
#[derive(Debug, Clone)]
pub struct WalkTables {
    k: usize,
    gamma: f64,
    n_max: usize,
    /// Indexed by `|Y|` (`1..k`).
    tables: Vec<Option<WalkTable>>,
}

impl WalkTables {
    /// Empty tables for `k` labels, edge `gamma` and up to `n_max` draws left.
    pub fn new(k: usize, gamma: f64, n_max: usize) -> Self {
        WalkTables {
            k,
            gamma,
            n_max,
            tables: vec![None; k],
        }
    }

    /// The baseline's irrelevant-label probability `a` and the edge used for `|Y| = m`:
    /// `a = (1 − mγ)/k`; where `mγ > 1` the baseline is invalid and `γ_eff = 1/m` (so
    /// `a = 0`) is used instead (ALGORITHMS.md §5.3).
    pub fn baseline(&self, m: usize) -> (f64, f64) {
        let gamma = self.gamma.min(1.0 / m as f64);
        ((1.0 - m as f64 * gamma) / self.k as f64, gamma)
    }

    /// Whether rows with `m` relevant labels need the capped edge `γ_eff = 1/m`.
    pub fn is_capped(&self, m: usize) -> bool {
        m as f64 * self.gamma > 1.0
    }

    /// The pair functions for rows with `m = |Y|` relevant labels (`1 ≤ m < k`).
    pub fn pair(&mut self, m: usize) -> PairPotential<'_> {
        let (a, gamma) = self.baseline(m);
        let n_max = self.n_max;
        let table = self.tables[m].get_or_insert_with(|| WalkTable::new(n_max, a, gamma));
        PairPotential { table }
    }
}

/// `ψ_n` for one `|Y|`.
#[derive(Debug, Clone, Copy)]
pub struct PairPotential<'a> {
    table: &'a WalkTable,
}

impl PairPotential<'_> {
    /// `P(D = d)` after `n` draws.
    pub fn pmf(&self, n: usize, d: i64) -> f64 {
        self.table.pmf(n, d)
    }

    /// `ψ_n(δ)` for the score gap `δ = s_l − s_r` of a (relevant, irrelevant) pair, exact for
    /// real `δ` (§P.3): rank `P(D > δ) + ½·P(D = δ)` (a tie within
    /// [`super::TIE_EPS`] of an integer counts as that integer); hinge
    /// `E(1 + D − δ)_+ = (1 − δ)·P(D ≥ ⌊δ⌋) + E[D·1(D ≥ ⌊δ⌋)]`, since
    /// `D > δ − 1 ⇔ D ≥ ⌊δ⌋` for integer `D`.
    #[inline]
    pub fn psi(&self, loss: PairLoss, n: usize, delta: f64) -> f64 {
        let t = self.table;
        match loss {
            PairLoss::Rank => {
                let r = delta.round();
                if (delta - r).abs() <= super::TIE_EPS {
                    let r = r as i64;
                    t.tail_p(n, r + 1) + 0.5 * t.pmf(n, r)
                } else {
                    t.tail_p(n, delta.floor() as i64 + 1)
                }
            }
            PairLoss::Hinge => {
                let j = delta.floor() as i64;
                (1.0 - delta) * t.tail_p(n, j) + t.tail_m(n, j)
            }
        }
    }

    /// The potential `φ_n(s) = w_Y Σ_{l∈Y, r∉Y} ψ_n(s_l − s_r)` (0 without pairs).
    pub fn potential(&self, loss: PairLoss, n: usize, s: &[f64], split: &LabelSplit) -> f64 {
        if !split.has_pairs() {
            return 0.0;
        }
        let mut total = 0.0;
        for &l in &split.relevant {
            for &r in &split.irrelevant {
                total += self.psi(loss, n, s[l] - s[r]);
            }
        }
        total * split.pair_weight()
    }

    /// The cost vector `c[l] = φ_n(s + e_l)` (\[JT\] eq. 2) minus the common term `φ_n(s)`,
    /// which cancels in every use (§P.3): per pair `(l, r)` with gap `δ = s_l − s_r`, adding
    /// `e_l` moves the pair's term from `ψ(δ)` to `ψ(δ+1)`, adding `e_r` to `ψ(δ−1)`.
    /// `O(|Y|·|Y^c|)`.
    pub fn costs(&self, loss: PairLoss, n: usize, s: &[f64], split: &LabelSplit, c: &mut [f64]) {
        c.iter_mut().for_each(|v| *v = 0.0);
        let w = split.pair_weight();
        for &l in &split.relevant {
            let mut own = 0.0;
            for &r in &split.irrelevant {
                let delta = s[l] - s[r];
                let base = self.psi(loss, n, delta);
                own += self.psi(loss, n, delta + 1.0) - base;
                c[r] += w * (self.psi(loss, n, delta - 1.0) - base);
            }
            c[l] = w * own;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pmf_rows_sum_to_one_and_mean_is_minus_n_gamma() {
        let mut tables = WalkTables::new(6, 0.1, 30);
        let pair = tables.pair(2);
        let (a, g) = (0.8 / 6.0, 0.1);
        for n in [0usize, 1, 7, 30] {
            let (mut total, mut mean) = (0.0, 0.0);
            for d in -(n as i64)..=n as i64 {
                total += pair.pmf(n, d);
                mean += d as f64 * pair.pmf(n, d);
            }
            assert!((total - 1.0).abs() < 1e-12, "n={n}: {total}");
            assert!((mean - n as f64 * (a - (a + g))).abs() < 1e-12);
        }
    }

    #[test]
    fn hinge_is_continuous_and_rank_steps_at_integers() {
        let mut tables = WalkTables::new(5, 0.1, 10);
        let pair = tables.pair(1);
        for n in [0usize, 3, 10] {
            for d in -4..=4 {
                let d = d as f64;
                let below = pair.psi(PairLoss::Hinge, n, d - 1e-12);
                let at = pair.psi(PairLoss::Hinge, n, d);
                assert!((below - at).abs() < 1e-9, "n={n} d={d}");
                // Rank: the value at an integer is the average of the two sides.
                let left = pair.psi(PairLoss::Rank, n, d - 0.5);
                let right = pair.psi(PairLoss::Rank, n, d + 0.5);
                let mid = pair.psi(PairLoss::Rank, n, d);
                assert!((mid - 0.5 * (left + right)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn invalid_baseline_uses_gamma_one_over_m() {
        let tables = WalkTables::new(4, 0.4, 3);
        assert_eq!(tables.baseline(3), (0.0, 1.0 / 3.0));
        assert!(tables.is_capped(3) && !tables.is_capped(2));
    }
}
