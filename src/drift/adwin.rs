//! ADWIN2 (Bifet & Gavaldà, "Learning from time-changing data with adaptive windowing",
//! SDM 2007): a window of the most recent values, cut whenever two parts of it have means
//! that differ by more than chance allows, so that it holds the longest suffix consistent
//! with one mean.
//!
//! **The window** is an exponential histogram: buckets of 1, 2, 4, … values, each keeping
//! its values' sum and their sum of squared deviations; at most `max_buckets` buckets of a
//! size, the two oldest merged into one of twice the size when a row of sizes overflows
//! (merging adds `n₁n₂(μ₁ − μ₂)²/(n₁ + n₂)` to the squared deviations). A window of `W`
//! values so holds O(`max_buckets`·log `W`) buckets (a test checks the bound).
//!
//! **The cut** (§3.2, eq. for ε_cut): every `clock` values, each border between buckets
//! splits the window into an older part `W₀` (`n₀` values, mean `μ₀`) and a newer `W₁`;
//! with `m = 1/(n₀ − L + 1) + 1/(n₁ − L + 1)` (`L` the least part length, 5), `σ²` the
//! window's variance and `δ' = δ / ln W`,
//!
//! ```text
//! ε_cut = √(2 · m · σ² · ln(2/δ')) + (2/3) · m · ln(2/δ')
//! ```
//!
//! and `|μ₀ − μ₁| > ε_cut` drops the oldest bucket and looks again, until no border cuts.
//! The window follows any change, but a cut is reported as a drift only where the mean
//! rose ([`DriftDetector`] watches errors).
//! This is the variance-aware (Bernstein) form of the paper's bound that its ADWIN2 code
//! and MOA use; it keeps the paper's guarantees: with probability at least `1 − δ` no cut
//! while the mean is constant (false positives), and a change of the mean by more than
//! `2ε_cut` is cut (false negatives). ADWIN has no warning level.

use serde::{Deserialize, Serialize};

use super::{Change, DriftDetector, at_least, probability};
use crate::Result;

/// Parameters of [`Adwin`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdwinConfig {
    /// Confidence `δ`: the probability of a false cut while the mean is constant.
    pub delta: f64,
    /// Values between two checks for a cut (a check costs O(log W)).
    pub clock: u32,
    /// Buckets of one size before the two oldest merge (`M` of the paper).
    pub max_buckets: usize,
}

impl Default for AdwinConfig {
    /// The paper's and MOA's: δ = 0.002, a check every 32 values, M = 5.
    fn default() -> Self {
        AdwinConfig {
            delta: 0.002,
            clock: 32,
            max_buckets: 5,
        }
    }
}

impl AdwinConfig {
    pub(super) fn validate(&self) -> Result<()> {
        probability("delta", self.delta)?;
        at_least("clock", f64::from(self.clock), 1.0)?;
        at_least("max_buckets", self.max_buckets as f64, 2.0)
    }
}

/// Parts shorter than this are never cut off (MOA's `mintMinWinLength`).
const MIN_PART: u64 = 5;

/// Values summarised by one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Bucket {
    /// Sum of the values.
    total: f64,
    /// Sum of their squared deviations from their mean.
    squares: f64,
}

/// An ADWIN2 window (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Adwin {
    config: AdwinConfig,
    /// `rows[i]` holds the buckets of `2^i` values, oldest first.
    rows: Vec<Vec<Bucket>>,
    /// Values in the window.
    width: u64,
    /// Their sum.
    total: f64,
    /// Their sum of squared deviations from the window's mean.
    squares: f64,
    /// Values since the last check for a cut.
    since_check: u32,
}

impl Adwin {
    /// An empty window.
    pub fn new(config: AdwinConfig) -> Self {
        Adwin {
            config,
            rows: Vec::new(),
            width: 0,
            total: 0.0,
            squares: 0.0,
            since_check: 0,
        }
    }

    /// Values in the window.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// Buckets held: O(`max_buckets`·log `width`).
    pub fn buckets(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }

    /// Bytes the window holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        crate::core::vec_bytes(&self.rows)
            + self.rows.iter().map(crate::core::vec_bytes).sum::<usize>()
    }

    /// The window's variance.
    fn variance(&self) -> f64 {
        if self.width == 0 {
            0.0
        } else {
            self.squares / self.width as f64
        }
    }

    fn insert(&mut self, x: f64) {
        if self.width > 0 {
            // Welford: the new value against the mean of the values before it.
            let mean = self.total / self.width as f64;
            self.squares += self.width as f64 * (x - mean) * (x - mean) / (self.width + 1) as f64;
        }
        self.width += 1;
        self.total += x;
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        self.rows[0].push(Bucket {
            total: x,
            squares: 0.0,
        });
        self.compress();
    }

    /// Merges the two oldest buckets of every row that overflows into one of the next.
    fn compress(&mut self) {
        let mut level = 0;
        while level < self.rows.len() && self.rows[level].len() > self.config.max_buckets {
            let n = (1u64 << level) as f64;
            let row = &mut self.rows[level];
            let (a, b) = (row[0], row[1]);
            row.drain(..2);
            let gap = a.total / n - b.total / n;
            let merged = Bucket {
                total: a.total + b.total,
                squares: a.squares + b.squares + n * n * gap * gap / (2.0 * n),
            };
            if level + 1 == self.rows.len() {
                self.rows.push(Vec::new());
            }
            self.rows[level + 1].push(merged);
            level += 1;
        }
    }

    /// Drops the oldest bucket.
    fn drop_oldest(&mut self) {
        let level = self.rows.len() - 1;
        let bucket = self.rows[level].remove(0);
        let n = (1u64 << level) as f64;
        self.width -= 1u64 << level;
        self.total -= bucket.total;
        let rest = self.width as f64;
        if rest > 0.0 {
            let gap = bucket.total / n - self.total / rest;
            self.squares -= bucket.squares + n * rest * gap * gap / (n + rest);
        } else {
            self.squares = 0.0;
        }
        self.squares = self.squares.max(0.0);
        while self.rows.last().is_some_and(Vec::is_empty) {
            self.rows.pop();
        }
    }

    /// `ε_cut` for parts of `n0` and `n1` values (module doc).
    #[cfg(test)]
    fn epsilon(&self, n0: u64, n1: u64) -> f64 {
        self.cut_bound().epsilon(n0, n1)
    }

    /// What `ε_cut` reads of the whole window, computed once for every border a check
    /// tries.
    fn cut_bound(&self) -> CutBound {
        let w = self.width as f64;
        CutBound {
            ln: (2.0 * w.ln() / self.config.delta).ln(),
            variance: self.variance(),
        }
    }

    /// Whether some border between buckets cuts the window.
    fn cuts(&self) -> bool {
        // Values are in [0, 1]: a sum of 0 is a window of zeros (a learner never wrong), where
        // no border has a gap.
        if self.total <= 0.0 {
            return false;
        }
        let bound = self.cut_bound();
        let (mut n0, mut t0) = (0u64, 0.0);
        // Oldest first: the highest row, each row oldest first.
        for (level, row) in self.rows.iter().enumerate().rev() {
            for bucket in row {
                n0 += 1u64 << level;
                t0 += bucket.total;
                let n1 = self.width - n0;
                if n0 > MIN_PART + 1 && n1 > MIN_PART + 1 {
                    let gap = t0 / n0 as f64 - (self.total - t0) / n1 as f64;
                    if gap.abs() > bound.epsilon(n0, n1) {
                        return true;
                    }
                }
            }
        }
        false
    }
}

/// The parts of `ε_cut` that depend on the window alone.
struct CutBound {
    /// `ln(2 ln W / δ)`.
    ln: f64,
    /// The window's variance.
    variance: f64,
}

impl CutBound {
    /// `ε_cut` for parts of `n0` and `n1` values (module doc).
    fn epsilon(&self, n0: u64, n1: u64) -> f64 {
        let m = 1.0 / (n0 - MIN_PART + 1) as f64 + 1.0 / (n1 - MIN_PART + 1) as f64;
        (2.0 * m * self.variance * self.ln).sqrt() + 2.0 / 3.0 * m * self.ln
    }
}

impl DriftDetector for Adwin {
    fn update(&mut self, x: f64) -> Option<Change> {
        self.insert(x);
        self.since_check += 1;
        if self.since_check < self.config.clock || self.width <= 2 * (MIN_PART + 1) {
            return None;
        }
        self.since_check = 0;
        let before = self.mean();
        let mut changed = false;
        while self.cuts() {
            self.drop_oldest();
            changed = true;
        }
        // The window follows a fall as it does a rise; only a rise is a drift of an error
        // (as MOA's `ADWINChangeDetector` reports it): a learner whose error falls is
        // learning, not drifting.
        (changed && self.mean() > before).then_some(Change::Drift)
    }

    fn mean(&self) -> f64 {
        if self.width == 0 {
            0.0
        } else {
            self.total / self.width as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bernoulli_switch, first_drift};
    use super::*;
    use crate::core::Rng;

    /// Runs of a constant mean: a false cut in fewer than a fraction `δ` of them (the paper's
    /// Theorem 3.1, part 1, which bounds the probability of any false cut by `δ`).
    #[test]
    fn no_false_alarm_on_stationary_streams_at_delta() {
        let runs = 100;
        let mut alarms = 0;
        for seed in 0..runs {
            let mut rng = Rng::new(seed);
            let values = bernoulli_switch(&mut rng, 10_000, 0.2, 0, 0.0);
            let mut adwin = Adwin::new(AdwinConfig::default());
            alarms += usize::from(first_drift(&mut adwin, &values).is_some());
        }
        let rate = alarms as f64 / runs as f64;
        assert!(
            rate <= AdwinConfig::default().delta,
            "{alarms} of {runs} runs cut"
        );
    }

    /// A jump of the mean by 0.2 is cut within the rows the bound needs: the first `n₁` with
    /// `2ε_cut(n₀, n₁) ≤ 0.2` (Theorem 3.1, part 2), plus a clock's worth.
    #[test]
    fn a_jump_of_two_tenths_is_cut_within_the_bounds_delay() {
        let (before, jump) = (5_000u64, 0.2);
        let mut bound = Adwin::new(AdwinConfig::default());
        // A window of the size it will have, with the variance of the two means mixed.
        bound.width = before;
        bound.squares = 0.2 * 0.8 * before as f64;
        let needed = (MIN_PART + 2..)
            .find(|&n1| {
                bound.width = before + n1;
                2.0 * bound.epsilon(before, n1) <= jump
            })
            .unwrap();
        for seed in 0..20 {
            let mut rng = Rng::new(100 + seed);
            let values = bernoulli_switch(&mut rng, before as usize, 0.2, 5_000, 0.4);
            let mut adwin = Adwin::new(AdwinConfig::default());
            let at = first_drift(&mut adwin, &values).map(|r| r as i64 - before as i64);
            let limit = needed as i64 + i64::from(AdwinConfig::default().clock);
            assert!(
                at.is_some_and(|d| (0..=limit).contains(&d)),
                "seed {seed}: cut at {at:?} rows after the jump, bound {limit}"
            );
        }
    }

    /// The window keeps O(M log W) buckets, and its sums agree with the values it holds.
    #[test]
    fn memory_is_logarithmic_and_the_sums_are_exact() {
        let mut adwin = Adwin::new(AdwinConfig::default());
        let mut rng = Rng::new(3);
        let values: Vec<f64> = (0..100_000).map(|_| rng.uniform()).collect();
        values.iter().for_each(|&x| _ = adwin.update(x));
        let w = adwin.width();
        let log = (w as f64).log2().ceil() as usize + 1;
        assert!(adwin.buckets() <= (AdwinConfig::default().max_buckets + 1) * log);
        let kept = &values[values.len() - w as usize..];
        let mean = kept.iter().sum::<f64>() / w as f64;
        assert!((adwin.mean() - mean).abs() < 1e-9);
        let variance = kept.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / w as f64;
        assert!(
            (adwin.variance() - variance).abs() < 1e-6,
            "{} {variance}",
            adwin.variance()
        );
    }

    /// After a cut the window holds the values since the change, about: its mean is the new
    /// concept's.
    #[test]
    fn a_fall_is_followed_and_not_reported() {
        let mut rng = Rng::new(9);
        let values = bernoulli_switch(&mut rng, 4_000, 0.5, 4_000, 0.1);
        let mut adwin = Adwin::new(AdwinConfig::default());
        assert_eq!(first_drift(&mut adwin, &values), None);
        assert!((adwin.mean() - 0.1).abs() < 0.05, "{}", adwin.mean());
    }

    #[test]
    fn after_a_cut_the_window_follows_the_new_mean() {
        let mut rng = Rng::new(8);
        let values = bernoulli_switch(&mut rng, 4_000, 0.1, 4_000, 0.5);
        let mut adwin = Adwin::new(AdwinConfig::default());
        values.iter().for_each(|&x| _ = adwin.update(x));
        assert!((adwin.mean() - 0.5).abs() < 0.05, "{}", adwin.mean());
        assert!(adwin.width() < 5_000, "{}", adwin.width());
    }
}
