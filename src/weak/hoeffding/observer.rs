//! Attribute observers: the per-feature, per-class statistics an active leaf keeps
//! (WEAK_LEARNERS.md §1.3, §1.8). Every count is a weight sum.

use serde::{Deserialize, Serialize};

use super::SMALL_K;
use super::split::{SplitCriterion, SplitTest, entropy};
use crate::core::math::{
    LogSums, SPLIT_SHARE_ERROR, interpolated_split_share, normal_cdf, x_log2_x,
};
use crate::core::{vec_bytes, with_scratch};

/// How the variance of a weighted Gaussian estimator is read (WEAK_LEARNERS.md §1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VarianceMode {
    /// `M2 / W`. The library default: with boosting weights in (0, 1] a class's total weight
    /// is often ≤ 1, where the unbiased form reports variance 0 for spread-out data.
    #[default]
    Population,
    /// `M2 / (W − 1)` if `W > 1`, else 0 (MOA, River).
    Unbiased,
}

/// Naive Bayes' likelihood of a numeric value under a class's Gaussian at a leaf, where the
/// Gaussian is degenerate (WEAK_LEARNERS.md §1.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GaussianLikelihood {
    /// The spec: the variance floored at `1e-9`, a density of about `1.3·10⁴` at the one
    /// value a class has shown (so with integer-valued features a class seen once at a leaf
    /// outweighs every other wherever a row repeats that value); a class with no values of
    /// the feature at the leaf (its mass inherited from the split) contributes nothing.
    #[default]
    Floored,
    /// MOA's `GaussianEstimator` and naive Bayes: at variance 0, density 1 at the value seen
    /// and 0 elsewhere; a class with no values of the feature at the leaf, density 0. A row
    /// that no class explains gets no naive Bayes vote, and the leaf votes its majority.
    Moa,
}

/// How a tree evaluates the Gaussians of its numeric features (WEAK_LEARNERS.md §1.8–1.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Numerics {
    /// As the spec writes them: `Φ` through libm's `erfc`, each `a·log2 a` of a split's
    /// branches through `log2`, and naive Bayes' Gaussian terms `(x − μ)²/σ²` by division.
    /// The split search reads `Fast`'s table only to bound each feature's best merit, with a
    /// slack that covers the table's error, and skips the features that cannot be best or
    /// second ([`Observer::merit_bounds`]): the merits it compares are these exact ones.
    #[default]
    Exact,
    /// Faster forms of the same quantities. A numeric split search reads `Φ(z)` and a class's
    /// entropy terms from one table of `z` ([`crate::core::math::interpolated_split_share`],
    /// within [`crate::core::math::SPLIT_SHARE_ERROR`] of the exact values), two logarithms
    /// per threshold instead of an `erfc` and two logarithms per class and threshold (under
    /// information gain; Gini reads the exact path). Naive Bayes (under the spec's floored
    /// likelihoods, on rows with every feature present) multiplies by each class's
    /// reciprocal variances and adds its log-normaliser, both kept per leaf and refreshed
    /// when the class learns there, instead of two divisions per feature and class: the same
    /// terms up to rounding. Not the default: it pays for trees of many classes (a leaf
    /// refreshes one class's terms per row and saves the divisions of every class), not for
    /// the default model's one-vs-rest trees of two (RESULTS.md, "Fast numerics and the
    /// default model").
    Fast,
}

/// Weighted running mean and variance of one class's values (West 1979), with min and max.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GaussianEstimator {
    /// Total weight `W_c`.
    pub weight: f64,
    /// Weighted mean `μ_c`.
    pub mean: f64,
    /// Weighted sum of squared deviations `M2_c`.
    pub m2: f64,
    /// Smallest value seen.
    pub min: f64,
    /// Largest value seen.
    pub max: f64,
}

impl GaussianEstimator {
    /// Adds value `x` with weight `w > 0`.
    #[inline]
    pub fn update(&mut self, x: f64, w: f64) {
        if self.weight == 0.0 {
            *self = GaussianEstimator {
                weight: w,
                mean: x,
                m2: 0.0,
                min: x,
                max: x,
            };
            return;
        }
        let weight = self.weight + w;
        let delta = x - self.mean;
        let mean = self.mean + (w / weight) * delta;
        self.m2 += w * delta * (x - mean);
        self.mean = mean;
        self.weight = weight;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// Variance under `mode`.
    #[inline]
    pub fn variance(&self, mode: VarianceMode) -> f64 {
        match mode {
            VarianceMode::Population if self.weight > 0.0 => (self.m2 / self.weight).max(0.0),
            VarianceMode::Unbiased if self.weight > 1.0 => (self.m2 / (self.weight - 1.0)).max(0.0),
            _ => 0.0,
        }
    }

    /// Weight of this class's values that fall at or below `threshold` under the Gaussian
    /// approximation (WEAK_LEARNERS.md §1.8; equals MOA's "less + equal" and River's `cdf·W`).
    pub fn weight_at_or_below(&self, threshold: f64, mode: VarianceMode) -> f64 {
        self.weight_at_or_below_sd(threshold, self.variance(mode).sqrt())
    }

    /// [`GaussianEstimator::weight_at_or_below`] given the standard deviation `sd` (under
    /// the variance mode in use), which a split search computes once per class.
    #[inline]
    pub fn weight_at_or_below_sd(&self, threshold: f64, sd: f64) -> f64 {
        weight_at_or_below(threshold, self.weight, self.mean, sd, self.min, self.max)
    }
}

/// The weight at or below `threshold` of a class of weight `weight` whose values have mean
/// `mean`, standard deviation `sd` and range `[min, max]` (WEAK_LEARNERS.md §1.8): none below
/// its range, all above it, else the Gaussian's share (a step at the mean if `sd` is 0).
#[inline]
fn weight_at_or_below(threshold: f64, weight: f64, mean: f64, sd: f64, min: f64, max: f64) -> f64 {
    if threshold < min {
        return 0.0;
    }
    if threshold >= max {
        return weight;
    }
    if sd > 0.0 {
        weight * normal_cdf((threshold - mean) / sd)
    } else if threshold >= mean {
        weight
    } else {
        0.0
    }
}

/// Statistics of one feature at one leaf, as a view into the leaf's [`Observers`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Observer<'a> {
    /// A numeric feature: one Gaussian estimator per class.
    Numeric(PerClass<'a>),
    /// A nominal feature: a weight per (category, class).
    Nominal(&'a NominalObserver),
    /// A feature dropped from this leaf's split search (`remove_poor_attrs`).
    Disabled,
}

/// One numeric feature's Gaussian estimators, class by class, read at a stride from a leaf's
/// block of estimators.
#[derive(Debug, Clone, Copy)]
pub struct PerClass<'a> {
    block: &'a [GaussianEstimator],
    first: usize,
    stride: usize,
    k: usize,
}

impl<'a> PerClass<'a> {
    /// The estimators of a slice, one per class.
    #[cfg(test)]
    pub fn contiguous(per_class: &'a [GaussianEstimator]) -> Self {
        PerClass {
            block: per_class,
            first: 0,
            stride: 1,
            k: per_class.len(),
        }
    }

    /// Number of classes.
    #[inline]
    pub fn len(&self) -> usize {
        self.k
    }

    /// Whether there is no class.
    pub fn is_empty(&self) -> bool {
        self.k == 0
    }

    /// Class `c`'s estimator.
    #[inline]
    pub fn get(&self, c: usize) -> &'a GaussianEstimator {
        &self.block[self.first + c * self.stride]
    }

    /// The estimators in class order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = &'a GaussianEstimator> + Clone + use<'a> {
        let (block, first, stride) = (self.block, self.first, self.stride);
        (0..self.k).map(move |c| &block[first + c * stride])
    }
}

impl PartialEq for PerClass<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.k == other.k && self.iter().eq(other.iter())
    }
}

impl Serialize for PerClass<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// The owned form of an [`Observer`], as checkpoints spell it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub enum ObserverData {
    /// One estimator per class.
    Numeric(Vec<GaussianEstimator>),
    /// Weights per (category, class).
    Nominal(NominalObserver),
    /// Dropped from the split search.
    Disabled,
}

/// The numbers an estimator is stored as, in this order.
const ESTIMATOR_FIELDS: usize = 5;

impl Observer<'_> {
    /// Its kind, as the node table names it: `numeric`, `nominal` or `disabled`.
    pub fn kind(&self) -> &'static str {
        match self {
            Observer::Numeric(_) => "numeric",
            Observer::Nominal(_) => "nominal",
            Observer::Disabled => "disabled",
        }
    }

    /// Calls `f` with its numbers, flat, in runs that lie side by side in memory: per class
    /// `weight, mean, m2, min, max` for a numeric feature; `missing_weight`, then the `k`
    /// class totals, then `k` weights per category code for a nominal one; none for a
    /// disabled one. A checkpoint's writer reads them so for both its node hash and its
    /// table.
    #[inline]
    pub fn for_each_run(&self, mut f: impl FnMut(&[f64])) {
        match self {
            Observer::Numeric(per_class) => {
                for e in per_class.iter() {
                    f(&[e.weight, e.mean, e.m2, e.min, e.max]);
                }
            }
            Observer::Nominal(o) => {
                f(&[o.missing_weight]);
                f(&o.cells);
            }
            Observer::Disabled => {}
        }
    }

    /// How many numbers [`Observer::for_each_run`] gives.
    pub fn number_count(&self) -> usize {
        match self {
            Observer::Numeric(per_class) => per_class.k * ESTIMATOR_FIELDS,
            Observer::Nominal(o) => 1 + o.cells.len(),
            Observer::Disabled => 0,
        }
    }
}

impl ObserverData {
    /// The observer of kind `kind` whose numbers [`Observer::for_each_run`] gave, for a
    /// tree of `k` classes.
    pub fn unflatten(kind: &str, stats: &[f64], k: usize) -> Result<Self, String> {
        match kind {
            "numeric" if k > 0 && stats.len() == k * ESTIMATOR_FIELDS => Ok(ObserverData::Numeric(
                stats
                    .chunks_exact(ESTIMATOR_FIELDS)
                    .map(|e| GaussianEstimator {
                        weight: e[0],
                        mean: e[1],
                        m2: e[2],
                        min: e[3],
                        max: e[4],
                    })
                    .collect(),
            )),
            "nominal" if k > 0 && stats.len() > k && (stats.len() - 1).is_multiple_of(k) => {
                Ok(ObserverData::Nominal(NominalObserver::from(NominalState {
                    k,
                    cells: stats[1..].to_vec(),
                    missing_weight: stats[0],
                })))
            }
            "disabled" if stats.is_empty() => Ok(ObserverData::Disabled),
            "numeric" | "nominal" | "disabled" => Err(format!(
                "a {kind} observer of {} numbers in a tree of {k} classes",
                stats.len()
            )),
            other => Err(format!("unknown observer kind `{other}`")),
        }
    }
}

/// Where feature `j`'s statistics are in a leaf's [`Observers`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot {
    /// No value of the feature has reached the leaf: no observer.
    Unseen,
    /// Its estimators are in the numeric block.
    Numeric,
    /// This index of the nominal observers.
    Nominal(u32),
    /// Dropped from the split search.
    Disabled,
}

/// A leaf's attribute observers, one per feature the tree sees, each created on the
/// feature's first value at the leaf (WEAK_LEARNERS.md §1.3).
///
/// The Gaussian estimators of the numeric features sit in one block, class after class
/// (`block[c · d + j]` for `d` features), made on the leaf's first numeric value: a row
/// updates its class's estimators, one contiguous run, and a split search reads the block end
/// to end, instead of visiting one heap allocation per feature. A feature with no value yet
/// has estimators there but no observer (its slot says which). Checkpoints spell the
/// observers as a list with one entry per feature (null where unseen), as they always have.
#[derive(Debug, Clone, Default)]
pub struct Observers {
    slots: Vec<Slot>,
    /// The statistics, made on the leaf's first value: a leaf that has seen none, or no
    /// longer observes, holds only its slots (a leaf's size matters: a keyed model keeps
    /// thousands of trees).
    stats: Option<Box<Stats>>,
}

/// What a leaf's observers hold besides their slots.
#[derive(Debug, Clone, Default)]
struct Stats {
    /// Classes in `numeric`.
    k: usize,
    numeric: Vec<GaussianEstimator>,
    nominal: Vec<NominalObserver>,
    /// Naive Bayes' Gaussian terms under [`Numerics::Fast`]: derived from the estimators,
    /// never stored in a checkpoint, and equal to what [`Observers::class_terms`] computes
    /// from them whenever present.
    naive_bayes: Option<Box<NaiveBayesTerms>>,
}

/// The statistics of a leaf that has none.
static NO_STATS: Stats = Stats {
    k: 0,
    numeric: Vec::new(),
    nominal: Vec::new(),
    naive_bayes: None,
};

/// Per class `c`, the means and reciprocal variances `1/max(σ²_cj, 1e-9)` of its estimators
/// (both 0 where it has no weight or the feature no numeric observer) and
/// `Σ_j ln(2π·max(σ²_cj, 1e-9))` over the same features: what naive Bayes' Gaussian
/// log-likelihoods read, in 16 bytes per feature and class where the estimators take 40.
#[derive(Debug, Clone, Default)]
struct NaiveBayesTerms {
    /// `(μ_cj, 1/σ²_cj)` for `k · d` pairs, class after class.
    gaussians: Vec<[f64; 2]>,
    /// `k`.
    log_norm: Vec<f64>,
}

/// Two leaves' observers are equal when their statistics are: naive Bayes' terms are
/// derived from them (and absent from a leaf read back from a checkpoint until it learns).
impl PartialEq for Observers {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.stats(), other.stats());
        self.slots == other.slots && a.k == b.k && a.numeric == b.numeric && a.nominal == b.nominal
    }
}

impl Observers {
    /// No observer yet for any of `n_features` features.
    pub fn new(n_features: usize) -> Self {
        Observers {
            slots: vec![Slot::Unseen; n_features],
            stats: None,
        }
    }

    /// The statistics (empty if there are none yet).
    #[inline]
    fn stats(&self) -> &Stats {
        self.stats.as_deref().unwrap_or(&NO_STATS)
    }

    /// The statistics, made if there are none yet.
    #[inline]
    fn stats_mut(&mut self) -> &mut Stats {
        self.stats.get_or_insert_with(Box::default)
    }

    /// Number of features (0 for a leaf that no longer observes).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the leaf observes no feature.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Whether any value has reached these observers (their statistics exist).
    pub fn has_statistics(&self) -> bool {
        self.stats.is_some()
    }

    /// Feature `j`'s estimators (the numeric block must exist).
    #[inline]
    fn per_class(&self, j: usize) -> PerClass<'_> {
        let stats = self.stats();
        PerClass {
            block: &stats.numeric,
            first: j,
            stride: self.slots.len(),
            k: stats.k,
        }
    }

    /// Feature `j`'s observer, if the feature has had a value here.
    #[inline]
    pub fn get(&self, j: usize) -> Option<Observer<'_>> {
        match self.slots[j] {
            Slot::Unseen => None,
            Slot::Numeric => Some(Observer::Numeric(self.per_class(j))),
            Slot::Nominal(i) => Some(Observer::Nominal(&self.stats().nominal[i as usize])),
            Slot::Disabled => Some(Observer::Disabled),
        }
    }

    /// Every feature's observer, `None` where unseen, in feature order.
    pub fn iter(&self) -> impl Iterator<Item = Option<Observer<'_>>> + '_ {
        (0..self.slots.len()).map(|j| self.get(j))
    }

    /// Makes the numeric block for `k` classes if there is none.
    fn numeric_block(&mut self, k: usize) {
        let d = self.slots.len();
        let stats = self.stats_mut();
        if stats.numeric.is_empty() {
            stats.k = k;
            stats.numeric = vec![GaussianEstimator::default(); k * d];
        }
        debug_assert_eq!(stats.k, k, "one class count per leaf");
    }

    /// Adds numeric value `v` of feature `j` for class `y` with weight `w`, the feature's
    /// observer made on its first value. A disabled feature learns nothing.
    #[inline]
    pub fn update_numeric(&mut self, j: usize, v: f64, y: usize, w: f64, k: usize) {
        match self.slots[j] {
            Slot::Numeric => {}
            Slot::Unseen => {
                self.numeric_block(k);
                self.slots[j] = Slot::Numeric;
            }
            Slot::Nominal(_) | Slot::Disabled => return,
        }
        let d = self.slots.len();
        self.stats_mut().numeric[y * d + j].update(v, w);
    }

    /// Adds category `code` of feature `j` for class `y` with weight `w` (see
    /// [`NominalObserver::update`]), the observer made on the feature's first value.
    #[inline]
    pub fn update_nominal(
        &mut self, j: usize, code: usize, y: usize, w: f64, prior: f64, k: usize,
    ) {
        let i = match self.slots[j] {
            Slot::Nominal(i) => i as usize,
            Slot::Unseen => {
                let nominal = &mut self.stats_mut().nominal;
                nominal.push(NominalObserver::new(k));
                let i = nominal.len() - 1;
                self.slots[j] = Slot::Nominal(u32::try_from(i).expect("features fit in u32"));
                i
            }
            Slot::Numeric | Slot::Disabled => return,
        };
        self.stats_mut().nominal[i].update(code, y, w, prior);
    }

    /// Records a missing value of nominal feature `j`, if it has an observer.
    pub fn update_missing(&mut self, j: usize, w: f64) {
        if let Slot::Nominal(i) = self.slots[j] {
            self.stats_mut().nominal[i as usize].update_missing(w);
        }
    }

    /// Drops feature `j` from the split search (its statistics stay allocated until the leaf
    /// stops observing).
    pub fn disable(&mut self, j: usize) {
        self.slots[j] = Slot::Disabled;
        if let Some(stats) = &mut self.stats {
            stats.naive_bayes = None;
        }
    }

    /// Adds a class with no weight: empty estimators, a zero per category.
    pub fn add_class(&mut self) {
        let d = self.slots.len();
        let Some(stats) = &mut self.stats else {
            return;
        };
        if !stats.numeric.is_empty() {
            stats
                .numeric
                .resize(stats.numeric.len() + d, GaussianEstimator::default());
            stats.k += 1;
        }
        for o in &mut stats.nominal {
            o.add_class();
        }
        // A class with no weight has no terms: a row of zeros.
        if let Some(nb) = &mut stats.naive_bayes {
            nb.gaussians.resize(nb.gaussians.len() + d, [0.0; 2]);
            nb.log_norm.push(0.0);
        }
    }

    /// Class `c`'s naive Bayes terms from its estimators: its means and reciprocal variances
    /// into `gaussians` (one pair per feature) and the returned `Σ_j ln(2π·max(σ²_cj, 1e-9))`,
    /// over the numeric features where `c` has weight (the spec's floored likelihoods, §1.9).
    /// The logs are taken of running products, folded as [`LogSums`] folds its own.
    fn class_terms(&self, c: usize, variance: VarianceMode, gaussians: &mut [[f64; 2]]) -> f64 {
        let d = self.slots.len();
        let numeric = &self.stats().numeric;
        let (mut log_norm, mut product) = (0.0, 1.0);
        for (j, slot) in self.slots.iter().enumerate() {
            gaussians[j] = [0.0; 2];
            if *slot != Slot::Numeric {
                continue;
            }
            let e = &numeric[c * d + j];
            if e.weight <= 0.0 {
                continue;
            }
            let var = e.variance(variance).max(1e-9);
            gaussians[j] = [e.mean, 1.0 / var];
            if let Some(folded) = LogSums::defer(&mut product, 2.0 * std::f64::consts::PI * var) {
                log_norm += folded;
            }
        }
        log_norm + product.ln()
    }

    /// Refreshes class `c`'s naive Bayes terms after it learnt (making every class's if there
    /// are none yet).
    pub fn refresh_naive_bayes(&mut self, c: usize, variance: VarianceMode) {
        let (d, k) = (self.slots.len(), self.stats().k);
        if self.stats().numeric.is_empty() {
            return;
        }
        let mut nb = self.stats_mut().naive_bayes.take().unwrap_or_default();
        let classes = if nb.log_norm.len() == k {
            c..c + 1
        } else {
            nb.gaussians = vec![[0.0; 2]; k * d];
            nb.log_norm = vec![0.0; k];
            0..k
        };
        for c in classes {
            nb.log_norm[c] = self.class_terms(c, variance, &mut nb.gaussians[c * d..(c + 1) * d]);
        }
        self.stats_mut().naive_bayes = Some(nb);
    }

    /// Adds naive Bayes' log-likelihoods of `x` (row values, feature `j` at `x[features[j]]`)
    /// to `logs`, one sum per class (WEAK_LEARNERS.md §1.9): each numeric feature present in
    /// `x` with an observer, the Gaussian log-density of each class (floored variance, or
    /// MOA's rule under `likelihood`); each nominal feature, its smoothed frequency. A class
    /// whose sum is `-∞` stays there. Feature by feature, the classes of one feature
    /// together: their sums are independent chains the processor runs side by side.
    pub fn naive_bayes_exact(
        &self, x: &[f64], features: &[usize], variance: VarianceMode,
        likelihood: GaussianLikelihood, logs: &mut LogSums<'_>,
    ) {
        let d = self.slots.len();
        let stats = self.stats();
        for (j, (&slot, &col)) in self.slots.iter().zip(features).enumerate() {
            let v = x[col];
            match slot {
                Slot::Numeric if crate::core::is_present(v) => {
                    for c in 0..logs.len() {
                        if logs.partial(c) == f64::NEG_INFINITY {
                            continue;
                        }
                        let e = &stats.numeric[c * d + j];
                        if e.weight <= 0.0 {
                            // No values of this feature for c at this leaf: nothing (the
                            // spec), or density 0 (MOA).
                            if likelihood == GaussianLikelihood::Moa {
                                logs.add(c, f64::NEG_INFINITY);
                            }
                            continue;
                        }
                        let var = e.variance(variance);
                        match likelihood {
                            GaussianLikelihood::Moa if var <= 0.0 => {
                                // ln 1 at the value seen, ln 0 elsewhere.
                                if v != e.mean {
                                    logs.add(c, f64::NEG_INFINITY);
                                }
                            }
                            _ => logs.add_gaussian(c, v, e.mean, var.max(1e-9)),
                        }
                    }
                }
                Slot::Nominal(i) => {
                    let Some(code) = crate::core::nominal_code(v) else {
                        continue;
                    };
                    let nom = &stats.nominal[i as usize];
                    let n_observed = nom.n_observed();
                    for c in 0..logs.len() {
                        if logs.partial(c) != f64::NEG_INFINITY {
                            logs.add_ln(c, nom.likelihood(code, c, n_observed));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Adds naive Bayes' Gaussian log-likelihoods of `x` (row values, feature `j` at
    /// `x[features[j]]`) to each class's `out` that is not `-∞`: for class `c`,
    /// `−½(Σ_j ln(2πσ²_cj) + Σ_j (x_j − μ_cj)²/σ²_cj)` over the numeric features where it has
    /// weight. Returns false, leaving `out` as it was, where this form does not apply: a
    /// nominal observer, or a value missing.
    pub fn naive_bayes_fast(
        &self, x: &[f64], features: &[usize], variance: VarianceMode, out: &mut [f64],
    ) -> bool {
        let stats = self.stats();
        if !stats.nominal.is_empty() || stats.numeric.is_empty() {
            return false;
        }
        if !features.iter().all(|&col| crate::core::is_present(x[col])) {
            return false;
        }
        let d = self.slots.len();
        // The row's values in feature order, on the stack for up to 256 features.
        with_scratch::<256, _>(d, |xs| {
            for (v, &col) in xs.iter_mut().zip(features) {
                *v = x[col];
            }
            self.add_gaussian_terms(xs, variance, out);
        });
        true
    }

    /// [`Observers::naive_bayes_fast`] over the row's values `xs` in feature order.
    fn add_gaussian_terms(&self, xs: &[f64], variance: VarianceMode, out: &mut [f64]) {
        let (d, stats) = (self.slots.len(), self.stats());
        let mut scratch = Vec::new();
        for (c, o) in out.iter_mut().enumerate() {
            if *o == f64::NEG_INFINITY {
                continue;
            }
            let (gaussians, log_norm) = match &stats.naive_bayes {
                Some(nb) => (&nb.gaussians[c * d..(c + 1) * d], nb.log_norm[c]),
                None => {
                    scratch.resize(d, [0.0; 2]);
                    let log_norm = self.class_terms(c, variance, &mut scratch);
                    (&scratch[..], log_norm)
                }
            };
            // Four running sums, feature `j` into sum `j mod 4`: the additions of one class
            // do not wait on each other.
            let term = |x: f64, [mean, inv_var]: [f64; 2]| {
                let dx = x - mean;
                dx * dx * inv_var
            };
            let mut acc = [0.0; 4];
            for (x4, g4) in xs.chunks_exact(4).zip(gaussians.chunks_exact(4)) {
                acc[0] += term(x4[0], g4[0]);
                acc[1] += term(x4[1], g4[1]);
                acc[2] += term(x4[2], g4[2]);
                acc[3] += term(x4[3], g4[3]);
            }
            let tail = d - d % 4;
            for (r, j) in (tail..d).enumerate() {
                acc[r] += term(xs[j], gaussians[j]);
            }
            let quadratic = (acc[0] + acc[1]) + (acc[2] + acc[3]);
            *o -= 0.5 * (log_norm + quadratic);
        }
    }

    /// The bytes these observers' statistics take, counted from their lengths: what a
    /// memory limit reads, the same for a leaf and its copy restored from a checkpoint
    /// (whose buffers' capacities and cached naive Bayes terms differ).
    pub fn state_bytes(&self) -> usize {
        let slots = self.slots.len() * std::mem::size_of::<Slot>();
        let Some(stats) = &self.stats else {
            return slots;
        };
        slots
            + std::mem::size_of::<Stats>()
            + stats.numeric.len() * std::mem::size_of::<GaussianEstimator>()
            + stats
                .nominal
                .iter()
                .map(|o| {
                    std::mem::size_of::<NominalObserver>()
                        + o.cells.len() * std::mem::size_of::<f64>()
                })
                .sum::<usize>()
    }

    /// Bytes held on the heap (by capacity).
    pub fn heap_bytes(&self) -> usize {
        let Some(stats) = &self.stats else {
            return vec_bytes(&self.slots);
        };
        let naive_bayes = stats.naive_bayes.as_ref().map_or(0, |nb| {
            std::mem::size_of::<NaiveBayesTerms>()
                + vec_bytes(&nb.gaussians)
                + vec_bytes(&nb.log_norm)
        });
        vec_bytes(&self.slots)
            + std::mem::size_of::<Stats>()
            + vec_bytes(&stats.numeric)
            + vec_bytes(&stats.nominal)
            + stats
                .nominal
                .iter()
                .map(NominalObserver::heap_bytes)
                .sum::<usize>()
            + naive_bayes
    }
}

impl Serialize for Observers {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Observers {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let data: Vec<Option<ObserverData>> = Vec::deserialize(deserializer)?;
        Observers::from_data(data).map_err(serde::de::Error::custom)
    }
}

impl Observers {
    /// A leaf's observers from their owned forms, one per feature (`None` where unseen).
    pub fn from_data(data: Vec<Option<ObserverData>>) -> Result<Self, String> {
        let mut observers = Observers::new(data.len());
        let d = data.len();
        for (j, o) in data.into_iter().enumerate() {
            observers.slots[j] = match o {
                None => Slot::Unseen,
                Some(ObserverData::Disabled) => Slot::Disabled,
                Some(ObserverData::Nominal(o)) => {
                    let nominal = &mut observers.stats_mut().nominal;
                    nominal.push(o);
                    Slot::Nominal((nominal.len() - 1) as u32)
                }
                Some(ObserverData::Numeric(per_class)) => {
                    if observers.stats().numeric.is_empty() {
                        observers.numeric_block(per_class.len());
                    } else if per_class.len() != observers.stats().k {
                        return Err(format!(
                            "observer {j} has {} classes, another {}",
                            per_class.len(),
                            observers.stats().k
                        ));
                    }
                    let numeric = &mut observers.stats_mut().numeric;
                    for (c, e) in per_class.into_iter().enumerate() {
                        numeric[c * d + j] = e;
                    }
                    Slot::Numeric
                }
            };
        }
        Ok(observers)
    }
}

/// Weight per (category code, class), stored densely in one buffer: the `k` class totals
/// first, then `k` cells per category code (`cells[k + code * k + class]`), so an update
/// touches one allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "NominalState", into = "NominalState")]
pub struct NominalObserver {
    k: usize,
    cells: Vec<f64>,
    missing_weight: f64,
    /// Number of codes with some weight (derived; naive Bayes reads it per row).
    n_observed: usize,
}

/// What a [`NominalObserver`] persists: the count of observed codes is derived from it.
#[derive(Clone, Serialize, Deserialize)]
struct NominalState {
    k: usize,
    cells: Vec<f64>,
    missing_weight: f64,
}

impl From<NominalState> for NominalObserver {
    fn from(s: NominalState) -> Self {
        let mut o = NominalObserver {
            k: s.k,
            cells: s.cells,
            missing_weight: s.missing_weight,
            n_observed: 0,
        };
        o.n_observed = o.observed().count();
        o
    }
}

impl From<NominalObserver> for NominalState {
    fn from(o: NominalObserver) -> Self {
        NominalState {
            k: o.k,
            cells: o.cells,
            missing_weight: o.missing_weight,
        }
    }
}

impl NominalObserver {
    /// Bytes its cells hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        vec_bytes(&self.cells)
    }

    /// An empty observer for `k` classes.
    pub fn new(k: usize) -> Self {
        NominalObserver {
            k,
            cells: vec![0.0; k],
            missing_weight: 0.0,
            n_observed: 0,
        }
    }

    /// Adds weight `w` to (category `code`, class `y`). A cell seen for the first time starts
    /// at `first_seen_prior` (the authors' port uses 1.0; WEAK_LEARNERS.md §1.3).
    #[inline]
    pub fn update(&mut self, code: usize, y: usize, w: f64, first_seen_prior: f64) {
        let idx = self.k + code * self.k + y;
        if idx >= self.cells.len() {
            self.cells.resize(self.k + (code + 1) * self.k, 0.0);
        }
        if self.category(code).iter().all(|&w| w == 0.0) {
            self.n_observed += 1;
        }
        let cell = &mut self.cells[idx];
        let add = if *cell == 0.0 {
            first_seen_prior + w
        } else {
            w
        };
        *cell += add;
        self.cells[y] += add;
    }

    /// Adds a class with no weight in any category: every row of `k` cells gains a zero.
    pub fn add_class(&mut self) {
        let k = self.k;
        let mut cells = Vec::with_capacity(self.cells.len() / k * (k + 1));
        for row in self.cells.chunks_exact(k) {
            cells.extend_from_slice(row);
            cells.push(0.0);
        }
        self.k = k + 1;
        self.cells = cells;
    }

    /// Records a missing value.
    pub fn update_missing(&mut self, w: f64) {
        self.missing_weight += w;
    }

    /// Number of category codes with a slot (observed or not).
    fn n_codes(&self) -> usize {
        self.cells.len() / self.k - 1
    }

    /// Class weights of category `code` (empty slice for a code never seen).
    #[inline]
    pub fn category(&self, code: usize) -> &[f64] {
        let start = self.k + code * self.k;
        if start >= self.cells.len() {
            &[]
        } else {
            &self.cells[start..start + self.k]
        }
    }

    /// Number of codes with some weight, `V_j` of the Laplace smoothing.
    #[inline]
    pub fn n_observed(&self) -> usize {
        self.n_observed
    }

    /// Codes with some weight, in increasing order.
    pub fn observed(&self) -> impl Iterator<Item = usize> + Clone + '_ {
        self.cells[self.k..]
            .chunks_exact(self.k)
            .enumerate()
            .filter(|(_, c)| c.iter().any(|&w| w > 0.0))
            .map(|(v, _)| v)
    }

    /// Total weight of class `c` over all categories.
    #[inline]
    pub fn class_total(&self, c: usize) -> f64 {
        self.cells[c]
    }

    /// `ln P(x_j = code | c)` with Laplace smoothing `(cnt + 1)/(W_c + V_j)`, `V_j` the
    /// number of categories observed here (MOA; WEAK_LEARNERS.md §1.9).
    pub fn log_likelihood(&self, code: usize, c: usize, n_observed: usize) -> f64 {
        self.likelihood(code, c, n_observed).ln()
    }

    /// `P(x_j = code | c) = (cnt + 1)/(W_c + V_j)`, of which [`Self::log_likelihood`] is the
    /// log.
    #[inline]
    pub fn likelihood(&self, code: usize, c: usize, n_observed: usize) -> f64 {
        let cnt = self.category(code).get(c).copied().unwrap_or(0.0);
        (cnt + 1.0) / (self.class_total(c) + n_observed as f64)
    }
}

/// A split proposal: the test and its merit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// The test (`None` for the null split: do not split).
    pub test: Option<SplitTest>,
    /// Merit under the split criterion.
    pub merit: f64,
    /// Position of the observer in the leaf (`None` for the null split).
    pub observer: Option<usize>,
}

/// Settings the split search needs.
pub struct SearchSettings {
    /// The criterion.
    pub criterion: SplitCriterion,
    /// Minimum fraction of weight for a branch to count.
    pub min_branch_fraction: f64,
    /// Number of Gaussian threshold candidates.
    pub n_split_points: usize,
    /// Only binary nominal splits.
    pub binary_split: bool,
    /// Variance mode of the Gaussian estimators.
    pub variance: VarianceMode,
    /// The impurity of the leaf's class weights (the same for every candidate).
    pub pre_impurity: f64,
    /// How numeric candidates are evaluated.
    pub numerics: Numerics,
}

impl Observer<'_> {
    /// The best split this feature offers, or `None` if it offers none (merits against
    /// the leaf's class weights, whose impurity `s` holds).
    pub fn best_split(&self, feature: usize, s: &SearchSettings) -> Option<(SplitTest, f64)> {
        let feature = u32::try_from(feature).expect("column indices fit in u32");
        match self {
            Observer::Disabled => None,
            Observer::Numeric(est) => best_numeric(*est, feature, s),
            Observer::Nominal(obs) => best_nominal(obs, feature, s),
        }
    }

    /// An upper bound on the merit of any split this feature offers (information gain).
    /// The branches of a split share out this observer's class totals `t` exactly, so the
    /// weighted entropy after the split is the conditional entropy `H(Y|B) = H(t) − I(Y;B)`
    /// and `I(Y;B) ≤ H(B) ≤ log2(branches)`: every merit is at most
    /// `H(pre) − max(0, H(t) − log2(branches))`, `pre` being the leaf's class weights. Under
    /// Gini, the impurity of `pre`. A margin of 1e-9 covers rounding.
    pub fn merit_bound(&self, s: &SearchSettings) -> f64 {
        const ROUNDING: f64 = 1e-9;
        let (totals, branches): (Vec<f64>, usize) = match self {
            Observer::Disabled => return f64::NEG_INFINITY,
            _ if s.criterion != SplitCriterion::InfoGain => return s.pre_impurity + ROUNDING,
            Observer::Numeric(est) => (est.iter().map(|e| e.weight).collect(), 2),
            Observer::Nominal(obs) => {
                let branches = if s.binary_split {
                    2
                } else {
                    obs.n_observed.max(2)
                };
                ((0..obs.k).map(|c| obs.class_total(c)).collect(), branches)
            }
        };
        let conditional = (entropy(&totals) - (branches as f64).log2()).max(0.0);
        s.pre_impurity - conditional + ROUNDING
    }

    /// Bounds `(lower, upper)` on the merit of the best split this feature offers (`-∞` for
    /// no bound below, or no split). Under exact information gain a numeric feature's are
    /// read from the interpolation table, with a slack that covers the table's error
    /// (`exact_merit_bounds`): within about `10⁻⁷` of its best merit, at a fraction of the
    /// cost of the exact search. Any other feature has only [`Observer::merit_bound`] above.
    pub fn merit_bounds(&self, s: &SearchSettings) -> (f64, f64) {
        match self {
            Observer::Numeric(est)
                if s.criterion == SplitCriterion::InfoGain && s.numerics == Numerics::Exact =>
            {
                exact_merit_bounds(*est, s).unwrap_or((f64::NEG_INFINITY, f64::NEG_INFINITY))
            }
            _ => (f64::NEG_INFINITY, self.merit_bound(s)),
        }
    }

    /// Class weights of each branch of `test` as this observer sees them.
    pub fn branch_weights(
        &self, test: &SplitTest, k: usize, variance: VarianceMode,
    ) -> Vec<Vec<f64>> {
        match (self, test) {
            (Observer::Numeric(est), SplitTest::Numeric { threshold, .. }) => {
                let left: Vec<f64> = est
                    .iter()
                    .map(|e| e.weight_at_or_below(*threshold, variance))
                    .collect();
                let right = est.iter().zip(&left).map(|(e, l)| e.weight - l).collect();
                vec![left, right]
            }
            (Observer::Nominal(obs), SplitTest::Multiway { .. }) => (0..obs.n_codes())
                .map(|v| obs.category(v).to_vec())
                .collect(),
            (Observer::Nominal(obs), SplitTest::Binary { value, .. }) => {
                let eq = obs.category(*value as usize).to_vec();
                let ne = (0..k).map(|c| obs.class_total(c) - eq[c]).collect();
                vec![eq, ne]
            }
            _ => unreachable!("a split test always comes from an observer of its own kind"),
        }
    }
}

/// The thresholds of a feature's numeric split search: `n` evenly spaced inside `(lo, hi)`.
fn thresholds(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
    (1..=n)
        .map(move |i| lo + (hi - lo) * i as f64 / (n + 1) as f64)
        .filter(move |&threshold| lo < threshold && threshold < hi)
}

/// The range `(lo, hi)` of the values of the classes with weight, if it holds a threshold.
fn value_range(est: PerClass<'_>) -> Option<(f64, f64)> {
    let present = est.iter().filter(|e| e.weight > 0.0);
    let lo = present.clone().map(|e| e.min).fold(f64::INFINITY, f64::min);
    let hi = present.map(|e| e.max).fold(f64::NEG_INFINITY, f64::max);
    (lo < hi).then_some((lo, hi))
}

fn best_numeric(est: PerClass<'_>, feature: u32, s: &SearchSettings) -> Option<(SplitTest, f64)> {
    let (lo, hi) = value_range(est)?;
    if s.numerics == Numerics::Fast && s.criterion == SplitCriterion::InfoGain {
        return interpolated_gains(est, s, |gains| {
            best_threshold(feature, lo, hi, s.n_split_points, |threshold| {
                let (share, gain) = gains.at(threshold);
                if share > s.min_branch_fraction {
                    gain
                } else {
                    f64::NEG_INFINITY
                }
            })
        })
        .flatten();
    }
    // Scratch for the search, on the stack for the usual class counts: a search runs for
    // every feature at every split attempt.
    let k = est.len();
    with_scratch::<{ NUMERIC_SCRATCH * SMALL_K }, _>(NUMERIC_SCRATCH * k, |scratch| {
        let [weight, mean, sd, min, max, whole, left, right] = columns(scratch, k);
        // Each class's statistics once, in columns, rather than once per threshold: besides
        // what it holds, its standard deviation under the variance mode in use, and
        // `W_c·log2 W_c`. Information gain reads `a·log2 a` of every branch weight, and a
        // class wholly on one side of a threshold puts its whole weight there, whose term is
        // then the same at every threshold: the logarithm is spared wherever a class's values
        // lie on one side.
        for (c, e) in est.iter().enumerate() {
            (weight[c], mean[c], min[c], max[c]) = (e.weight, e.mean, e.min, e.max);
            sd[c] = e.variance(s.variance).sqrt();
            whole[c] = e.weight * e.weight.log2();
        }
        best_threshold(feature, lo, hi, s.n_split_points, |threshold| {
            for c in 0..k {
                left[c] = weight_at_or_below(threshold, weight[c], mean[c], sd[c], min[c], max[c]);
                right[c] = weight[c] - left[c];
            }
            match s.criterion {
                SplitCriterion::InfoGain => info_gain_two_way(
                    s.pre_impurity,
                    [left, right],
                    weight,
                    whole,
                    s.min_branch_fraction,
                ),
                SplitCriterion::Gini => s.criterion.merit_from(
                    s.pre_impurity,
                    [&left[..], &right[..]].into_iter(),
                    s.min_branch_fraction,
                ),
            }
        })
    })
}

/// The best of the `n` thresholds evenly spaced inside `(lo, hi)` by `merit`, as a numeric
/// test of `feature`; the first of equal merits.
fn best_threshold(
    feature: u32, lo: f64, hi: f64, n: usize, mut merit: impl FnMut(f64) -> f64,
) -> Option<(SplitTest, f64)> {
    let mut best: Option<(SplitTest, f64)> = None;
    for threshold in thresholds(lo, hi, n) {
        let merit = merit(threshold);
        if best.as_ref().is_none_or(|b| merit > b.1) {
            best = Some((SplitTest::Numeric { feature, threshold }, merit));
        }
    }
    best
}

/// `scratch` cut into `M` columns of `k` values each.
fn columns<const M: usize>(scratch: &mut [f64], k: usize) -> [&mut [f64]; M] {
    let mut columns = scratch.chunks_exact_mut(k);
    std::array::from_fn(|_| columns.next().expect("one column each"))
}

/// A numeric feature's information gain at any threshold, read through
/// [`interpolated_split_share`]: the classes' statistics in columns, made once per feature.
///
/// With `p_c` the share of class `c`'s weight `W_c` left of a threshold, the branches' terms
/// `Σ_b Σ_c a·log2 a` sum to `Σ_c W_c·log2 W_c − Σ_c W_c·h(p_c)` (`h` the binary entropy in
/// bits), so the weighted entropy after the split is
/// `(L·log2 L + R·log2 R − Σ_c W_c·log2 W_c + Σ_c W_c·h(p_c)) / (L + R)`, `L` and `R` the
/// branches' weights: two logarithms per threshold, and per class one table lookup for both
/// `p_c` and `h(p_c)`. A class wholly on one side has `p_c` 0 or 1 and `h` 0, exactly.
struct InterpolatedGains<'a> {
    weight: &'a [f64],
    mean: &'a [f64],
    inv_sd: &'a [f64],
    min: &'a [f64],
    max: &'a [f64],
    whole_terms: f64,
    total: f64,
    pre_impurity: f64,
}

impl InterpolatedGains<'_> {
    /// At `threshold`: the smaller branch's share of the weight, and the information gain
    /// whatever that share.
    #[inline]
    fn at(&self, threshold: f64) -> (f64, f64) {
        let (mut left, mut mixed) = (0.0, 0.0);
        for c in 0..self.weight.len() {
            let w = self.weight[c];
            if threshold < self.min[c] {
                continue;
            }
            if threshold >= self.max[c] {
                left += w;
            } else if self.inv_sd[c] > 0.0 {
                let (p, h) = interpolated_split_share((threshold - self.mean[c]) * self.inv_sd[c]);
                left += w * p;
                mixed += w * h;
            } else if threshold >= self.mean[c] {
                left += w;
            }
        }
        let total = self.total;
        let right = (total - left).max(0.0);
        let post = (x_log2_x(left) + x_log2_x(right) - self.whole_terms + mixed) / total;
        ((left / total).min(right / total), self.pre_impurity - post)
    }
}

/// Calls `search` with the [`InterpolatedGains`] of `est`, unless the feature has no weight.
fn interpolated_gains<R>(
    est: PerClass<'_>, s: &SearchSettings, search: impl FnOnce(&InterpolatedGains<'_>) -> R,
) -> Option<R> {
    let k = est.len();
    with_scratch::<{ 5 * SMALL_K }, _>(5 * k, |scratch| {
        let [weight, mean, inv_sd, min, max] = columns(scratch, k);
        let (mut whole_terms, mut total) = (0.0, 0.0);
        // Only the classes with weight at the leaf: one without adds 0 to every sum (at a
        // deep leaf most classes are absent).
        let mut m = 0;
        for e in est.iter().filter(|e| e.weight > 0.0) {
            (weight[m], mean[m], min[m], max[m]) = (e.weight, e.mean, e.min, e.max);
            let sd = e.variance(s.variance).sqrt();
            inv_sd[m] = if sd > 0.0 { 1.0 / sd } else { 0.0 };
            whole_terms += x_log2_x(e.weight);
            total += e.weight;
            m += 1;
        }
        if total <= 0.0 {
            return None;
        }
        Some(search(&InterpolatedGains {
            weight: &weight[..m],
            mean: &mean[..m],
            inv_sd: &inv_sd[..m],
            min: &min[..m],
            max: &max[..m],
            whole_terms,
            total,
            pre_impurity: s.pre_impurity,
        }))
    })
}

/// Bounds `(lower, upper)` on the merit of the best split a numeric feature offers under
/// [`Numerics::Exact`] information gain, read from its [`InterpolatedGains`] (`-∞` where a
/// bound has no threshold; `None` where the feature offers no split, as the exact search
/// finds none).
///
/// The table's `Φ` and `h∘Φ` are within `δ` ([`SPLIT_SHARE_ERROR`]) of the exact values, so
/// each branch's weight is within `N·δ` of the exact one (`N` the feature's weight) and the
/// classes' `Σ W_c·h` within `N·δ`. Over `|Δ| ≤ N·δ` on `[0, N]`, `x·log2 x` moves by at most
/// `|Δ|·(log2(1/|Δ|) + |log2 N| + 2)`, so each branch's term over `N` by at most
/// `δ·(log2(1/δ) + 2·|log2 N| + 2)`. The slack is four times the sum for two branches and
/// the classes: a margin for the rounding of both computations (of order `10⁻¹⁵` per term).
/// A threshold whose smaller branch's share lies within the slack of `min_branch_fraction`
/// counts in the upper bound and not in the lower one.
fn exact_merit_bounds(est: PerClass<'_>, s: &SearchSettings) -> Option<(f64, f64)> {
    let (lo, hi) = value_range(est)?;
    interpolated_gains(est, s, |gains| {
        let delta = SPLIT_SHARE_ERROR;
        let per_branch = delta * (delta.recip().log2() + 2.0 * gains.total.log2().abs() + 2.0);
        let slack = 4.0 * (2.0 * per_branch + delta);
        let (mut lower, mut upper) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for threshold in thresholds(lo, hi, s.n_split_points) {
            let (share, gain) = gains.at(threshold);
            if share > s.min_branch_fraction - slack {
                upper = upper.max(gain + slack);
            }
            if share > s.min_branch_fraction + slack {
                lower = lower.max(gain - slack);
            }
        }
        (lower, upper)
    })
}

/// Columns of a numeric split search's scratch, `k` values each: the classes' weights,
/// means, standard deviations, minima, maxima and whole-weight terms, then the left and right
/// branches.
const NUMERIC_SCRATCH: usize = 8;

/// [`SplitCriterion::merit_from`] for information gain over two branches that share out the
/// class weights `weight`, bit for bit: the same sums in the same order, with `a·log2 a` read
/// from `whole` where a branch holds a class's whole weight.
#[inline]
fn info_gain_two_way(
    pre_impurity: f64, branches: [&[f64]; 2], weight: &[f64], whole: &[f64],
    min_branch_fraction: f64,
) -> f64 {
    let sums = branches.map(|b| b.iter().sum::<f64>());
    let total: f64 = sums.iter().sum();
    if total <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if sums
        .iter()
        .filter(|&&s| s / total > min_branch_fraction)
        .count()
        < 2
    {
        return f64::NEG_INFINITY;
    }
    let entropy = |b: &[f64], s: f64| {
        if s <= 0.0 {
            return 0.0;
        }
        let sum_alog: f64 = b
            .iter()
            .zip(weight)
            .zip(whole)
            .filter(|((a, _), _)| **a > 0.0)
            .map(|((&a, &w), &whole)| if a == w { whole } else { x_log2_x(a) })
            .sum();
        s.log2() - sum_alog / s
    };
    let post: f64 = [0, 1]
        .into_iter()
        .map(|i| sums[i] / total * entropy(branches[i], sums[i]))
        .sum();
    pre_impurity - post
}

fn best_nominal(
    obs: &NominalObserver, feature: u32, s: &SearchSettings,
) -> Option<(SplitTest, f64)> {
    let k = obs.k;
    let mut best: Option<(SplitTest, f64)> = None;
    if !s.binary_split {
        let merit = s.criterion.merit_from(
            s.pre_impurity,
            obs.observed().map(|v| obs.category(v)),
            s.min_branch_fraction,
        );
        best = Some((SplitTest::Multiway { feature }, merit));
    }
    let mut rest = vec![0.0; k];
    for v in obs.observed() {
        let eq = obs.category(v);
        for c in 0..k {
            rest[c] = obs.class_total(c) - eq[c];
        }
        let merit = s.criterion.merit_from(
            s.pre_impurity,
            [eq, &rest[..]].into_iter(),
            s.min_branch_fraction,
        );
        // Strictly greater: the multiway candidate, evaluated first, wins ties.
        if best.as_ref().is_none_or(|b| merit > b.1) {
            let value = u32::try_from(v).expect("category codes are below 2^16");
            best = Some((SplitTest::Binary { feature, value }, merit));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_welford_matches_direct_formula() {
        let xs = [1.0, 4.0, 2.5, -1.0, 7.0];
        let ws = [0.5, 2.0, 1.0, 0.25, 3.0];
        let mut e = GaussianEstimator::default();
        for (&x, &w) in xs.iter().zip(&ws) {
            e.update(x, w);
        }
        let sw: f64 = ws.iter().sum();
        let mean = xs.iter().zip(&ws).map(|(x, w)| x * w).sum::<f64>() / sw;
        let var = xs
            .iter()
            .zip(&ws)
            .map(|(x, w)| w * (x - mean).powi(2))
            .sum::<f64>()
            / sw;
        assert!((e.mean - mean).abs() < 1e-12);
        assert!((e.variance(VarianceMode::Population) - var).abs() < 1e-12);
        assert_eq!((e.min, e.max), (-1.0, 7.0));
    }

    #[test]
    fn nominal_prior_applies_once_per_cell() {
        let mut o = NominalObserver::new(2);
        o.update(3, 1, 0.5, 1.0);
        o.update(3, 1, 0.5, 1.0);
        assert_eq!(o.category(3), &[0.0, 2.0]);
        assert_eq!(o.class_total(1), 2.0);
        assert_eq!(o.observed().collect::<Vec<_>>(), vec![3]);
        assert!(o.category(9).is_empty());
    }

    /// The block of estimators reads back per feature as separate observers would: in JSON,
    /// one entry per feature (null where unseen), and a class added keeps every estimator.
    #[test]
    fn observers_keep_their_features_apart() {
        let mut obs = Observers::new(4);
        obs.update_numeric(2, 5.0, 1, 2.0, 3);
        obs.update_numeric(0, -1.0, 0, 1.0, 3);
        obs.update_numeric(2, 7.0, 1, 1.0, 3);
        obs.update_nominal(1, 4, 2, 1.0, 0.0, 3);
        let Some(Observer::Numeric(third)) = obs.get(2) else {
            panic!("feature 2 is numeric")
        };
        assert_eq!(third.get(1).weight, 3.0);
        assert_eq!(third.get(0).weight, 0.0);
        assert!(obs.get(3).is_none());
        let json = serde_json::to_value(&obs).unwrap();
        assert!(json[3].is_null());
        assert_eq!(json[2]["Numeric"].as_array().unwrap().len(), 3);
        assert_eq!(json[2]["Numeric"][1]["max"], 7.0);
        assert!(json[1]["Nominal"].is_object());
        let back: Observers = serde_json::from_value(json).unwrap();
        assert_eq!(back, obs);

        obs.disable(1);
        assert_eq!(obs.get(1), Some(Observer::Disabled));
        obs.add_class();
        let Some(Observer::Numeric(third)) = obs.get(2) else {
            panic!("feature 2 is numeric")
        };
        assert_eq!(third.len(), 4);
        assert_eq!((third.get(1).weight, third.get(3).weight), (3.0, 0.0));
        obs.update_numeric(3, 1.5, 3, 1.0, 4);
        let Some(Observer::Numeric(fourth)) = obs.get(3) else {
            panic!("feature 3 is numeric")
        };
        assert_eq!(fourth.get(3).mean, 1.5);
        let Some(Observer::Numeric(first)) = obs.get(0) else {
            panic!("feature 0 is numeric")
        };
        assert_eq!((first.get(0).mean, first.get(3).weight), (-1.0, 0.0));
    }

    /// The interpolated bounds hold the exact search's best merit between them, on observers
    /// made to be hard: weights from 10⁻³ to 10⁹, classes of one value (no spread), classes
    /// far apart and overlapping, and branch shares near `min_branch_fraction`. The table's
    /// error takes under a tenth of the slack (0.12% when written), and the bounds lie within
    /// 10⁻⁵ of each other, so they prune as the merits would.
    #[test]
    fn interpolated_bounds_hold_the_exact_merit() {
        let mut rng = crate::core::Rng::new(11);
        let (mut checked, mut widest, mut worst) = (0, 0.0f64, 0.0f64);
        for trial in 0..3000 {
            let k = 2 + trial % 9;
            let scale = 10f64.powi((trial % 13) as i32 - 3);
            let mut numeric = vec![GaussianEstimator::default(); k];
            let rows = 2 + (rng.uniform() * 60.0) as usize;
            for _ in 0..rows {
                let c = (rng.uniform() * k as f64) as usize;
                let w = scale * (0.01 + rng.uniform());
                // Integer values (point masses, ties) in one trial of three.
                let x = if trial % 3 == 0 {
                    (rng.uniform() * 4.0).floor() + c as f64
                } else {
                    rng.uniform() * 10.0 + 3.0 * c as f64 * rng.uniform()
                };
                numeric[c].update(x, w);
            }
            let pre: Vec<f64> = numeric.iter().map(|e| e.weight).collect();
            for min_branch_fraction in [0.0, 0.01, 0.2, 0.45] {
                for variance in [VarianceMode::Population, VarianceMode::Unbiased] {
                    let s = SearchSettings {
                        criterion: SplitCriterion::InfoGain,
                        min_branch_fraction,
                        n_split_points: 10,
                        binary_split: true,
                        variance,
                        pre_impurity: entropy(&pre),
                        numerics: Numerics::Exact,
                    };
                    let obs = Observer::Numeric(PerClass::contiguous(&numeric));
                    let (lower, upper) = obs.merit_bounds(&s);
                    let merit = obs.best_split(0, &s).map_or(f64::NEG_INFINITY, |(_, m)| m);
                    assert!(
                        lower <= merit && merit <= upper,
                        "trial {trial}: {lower} <= {merit} <= {upper}"
                    );
                    if merit.is_finite() && lower.is_finite() {
                        widest = widest.max(upper - lower);
                        // How much of its slack the interpolated lower bound used.
                        let (_, interpolated) =
                            exact_merit_bounds(PerClass::contiguous(&numeric), &s).unwrap();
                        let half = (interpolated - lower) / 2.0;
                        worst = worst.max(1.0 - (merit - lower) / half);
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000, "only {checked} finite merits");
        assert!(widest < 1e-5, "bounds {widest} apart");
        assert!(worst < 0.1, "the table's error took {worst} of the slack");
        eprintln!("{checked} merits; widest interval {widest:e}; slack used {worst:e}");
    }

    /// Every merit a feature offers is at most its bound, for numeric and nominal features,
    /// multiway and binary, whatever the leaf's own class weights.
    #[test]
    fn no_split_beats_its_merit_bound() {
        let mut rng = crate::core::Rng::new(5);
        for trial in 0..300 {
            let k = 2 + trial % 5;
            let pre: Vec<f64> = (0..k).map(|_| rng.uniform() * 50.0).collect();
            let mut numeric = vec![GaussianEstimator::default(); k];
            let mut nominal = NominalObserver::new(k);
            for _ in 0..40 {
                let c = (rng.uniform() * k as f64) as usize;
                let w = rng.uniform() * 3.0;
                numeric[c].update(rng.uniform() * 10.0 + c as f64, w);
                nominal.update((rng.uniform() * 4.0) as usize, c, w, 0.0);
            }
            for binary_split in [false, true] {
                let s = SearchSettings {
                    criterion: SplitCriterion::InfoGain,
                    min_branch_fraction: 0.01,
                    n_split_points: 10,
                    binary_split,
                    variance: VarianceMode::Population,
                    pre_impurity: entropy(&pre),
                    numerics: Numerics::Exact,
                };
                for obs in [
                    Observer::Numeric(PerClass::contiguous(&numeric)),
                    Observer::Nominal(&nominal),
                ] {
                    if let Some((_, merit)) = obs.best_split(0, &s) {
                        let bound = obs.merit_bound(&s);
                        assert!(merit <= bound, "trial {trial}: {merit} > {bound}");
                    }
                }
            }
        }
    }
}
