//! An online decision stump: a tree of depth one whose split is chosen again as the stream
//! goes on. The weakest learner here that is still a tree, and the cheapest: a booster of
//! stumps is AdaBoost's original setting.
//!
//! **Statistics.** Per feature and class it keeps what a Hoeffding tree keeps at a leaf
//! (WEAK_LEARNERS.md §1.3): a weighted Gaussian of a numeric feature's values (Welford's
//! update, with min and max), the weight of each category of a nominal one. A row's weight
//! multiplies all it adds, so a row of weight 2 counts as the row seen twice. Missing values
//! add nothing to their feature.
//!
//! **The split.** Each time another `grace_period` of weight has been learnt, the split is
//! chosen afresh as the feature and test of the largest information gain (§1.6): a nominal
//! feature branches on its categories; a numeric one is tried at `thresholds` points evenly
//! spaced inside the range its values have shown, the weight of each class at or below a
//! threshold read from the class's Gaussian (§1.8). A split needs two branches with weight;
//! without one the stump keeps its last split (none at first).
//!
//! **Prediction.** The class weights of the branch the row falls in, read from the same
//! statistics at the time of the prediction (so a branch's distribution follows the stream
//! between choices of the split), normalised. A row with the split's feature missing, an
//! unseen category, a branch without weight, or no split yet gets the class weights of
//! every row learnt; before any, the uniform distribution.
//!
//! **Where it fits.** A numeric split names at most two classes, so on a stream of many
//! classes a stump is a learner for one-vs-all (`--algo ova`) or binary boosters, where it
//! is as accurate as a tree on some shared sets at a fraction of its cost
//! (`benchmarks/RESULTS.md`, "A decision stump as weak learner").

use std::fmt;

use serde::{Deserialize, Serialize};

use super::hoeffding::observer::{GaussianEstimator, VarianceMode};
use super::hoeffding::split::SplitCriterion;
use crate::core::{ClassId, FeatureKind, Rng, StreamSpec, is_present, nominal_code, vec_bytes};
use crate::learner::{Classifier, Config};
use crate::{Error, Result};

/// Hyper-parameters of [`Stump`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StumpConfig {
    /// Weight learnt between two choices of the split.
    pub grace_period: f64,
    /// Thresholds tried per numeric feature, evenly spaced inside its range.
    pub thresholds: usize,
}

impl Default for StumpConfig {
    fn default() -> Self {
        StumpConfig {
            grace_period: 50.0,
            thresholds: 10,
        }
    }
}

impl fmt::Display for StumpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Stump(grace period={}, thresholds={})",
            self.grace_period, self.thresholds
        )
    }
}

impl Config for StumpConfig {
    type Model = Stump;

    fn validate(&self) -> Result<()> {
        if !(self.grace_period > 0.0 && self.grace_period.is_finite()) {
            return Err(Error::config("grace_period", "must be > 0 and finite"));
        }
        if self.thresholds == 0 {
            return Err(Error::config("thresholds", "must be >= 1"));
        }
        Ok(())
    }

    fn build_with_rng(&self, spec: &StreamSpec, _rng: &mut Rng) -> Result<Stump> {
        self.validate()?;
        let k = spec.n_classes();
        let features = spec
            .features
            .iter()
            .map(|f| match f.kind {
                FeatureKind::Numeric => Stats::Numeric(vec![GaussianEstimator::default(); k]),
                FeatureKind::Nominal { .. } => Stats::Nominal(Vec::new()),
            })
            .collect();
        Ok(Stump {
            config: self.clone(),
            k,
            features,
            totals: vec![0.0; k],
            since_split: 0.0,
            split: None,
        })
    }
}

/// One feature's statistics, per class.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Stats {
    /// Each class's Gaussian of the feature's values.
    Numeric(Vec<GaussianEstimator>),
    /// Each category's class weights (`k` per category, by code).
    Nominal(Vec<Vec<f64>>),
}

/// The test at the root.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
enum Split {
    /// `x[feature] <= threshold` or not.
    Numeric { feature: usize, threshold: f64 },
    /// One branch per category of `x[feature]`.
    Nominal { feature: usize },
}

/// An online decision stump (see the module doc).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stump {
    config: StumpConfig,
    k: usize,
    features: Vec<Stats>,
    /// The class weights of every row learnt.
    totals: Vec<f64>,
    /// Weight learnt since the split was last chosen.
    since_split: f64,
    split: Option<Split>,
}

impl Stump {
    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        let stats = self.features.iter().map(|s| match s {
            Stats::Numeric(g) => vec_bytes(g),
            Stats::Nominal(c) => vec_bytes(c) + c.iter().map(vec_bytes).sum::<usize>(),
        });
        vec_bytes(&self.features) + stats.sum::<usize>() + vec_bytes(&self.totals)
    }

    /// The class weights of the branch `x` falls in under the split, if it has weight.
    fn branch(&self, x: &[f64], out: &mut [f64]) -> bool {
        match (self.split, &self.features) {
            (Some(Split::Numeric { feature, threshold }), features) if is_present(x[feature]) => {
                let Stats::Numeric(classes) = &features[feature] else {
                    unreachable!("a numeric split is on a numeric feature")
                };
                let below = x[feature] <= threshold;
                for (o, g) in out.iter_mut().zip(classes) {
                    let at_or_below = g.weight_at_or_below(threshold, VarianceMode::Population);
                    *o = if below {
                        at_or_below
                    } else {
                        g.weight - at_or_below
                    };
                }
            }
            (Some(Split::Nominal { feature }), features) => {
                let Stats::Nominal(categories) = &features[feature] else {
                    unreachable!("a nominal split is on a nominal feature")
                };
                match nominal_code(x[feature]).and_then(|c| categories.get(c)) {
                    Some(weights) => out.copy_from_slice(weights),
                    None => return false,
                }
            }
            _ => return false,
        }
        out.iter().sum::<f64>() > 0.0
    }

    /// The split of the largest information gain over the statistics so far, if any splits
    /// the weight into two branches.
    fn best_split(&self) -> Option<Split> {
        let criterion = SplitCriterion::InfoGain;
        let pre = criterion.impurity(&self.totals);
        let mut best: Option<(f64, Split)> = None;
        let mut consider = |merit: f64, split: Split| {
            if merit.is_finite() && best.is_none_or(|(m, _)| merit > m) {
                best = Some((merit, split));
            }
        };
        let (mut left, mut right) = (vec![0.0; self.k], vec![0.0; self.k]);
        for (feature, stats) in self.features.iter().enumerate() {
            match stats {
                Stats::Numeric(classes) => {
                    let seen = classes.iter().filter(|g| g.weight > 0.0);
                    let lo = seen.clone().map(|g| g.min).fold(f64::INFINITY, f64::min);
                    let hi = seen.map(|g| g.max).fold(f64::NEG_INFINITY, f64::max);
                    if hi <= lo {
                        continue;
                    }
                    let n = self.config.thresholds;
                    for i in 1..=n {
                        let threshold = lo + (hi - lo) * i as f64 / (n + 1) as f64;
                        for ((l, r), g) in left.iter_mut().zip(&mut right).zip(classes) {
                            *l = g.weight_at_or_below(threshold, VarianceMode::Population);
                            *r = g.weight - *l;
                        }
                        let branches = [left.as_slice(), right.as_slice()];
                        let merit = criterion.merit_from(pre, branches.into_iter(), 0.0);
                        consider(merit, Split::Numeric { feature, threshold });
                    }
                }
                Stats::Nominal(categories) => {
                    let branches = categories.iter().map(Vec::as_slice);
                    consider(
                        criterion.merit_from(pre, branches, 0.0),
                        Split::Nominal { feature },
                    );
                }
            }
        }
        best.map(|(_, split)| split)
    }
}

impl Classifier for Stump {
    fn n_classes(&self) -> usize {
        self.k
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        if weight.is_nan() || weight <= 0.0 {
            return;
        }
        for (&v, stats) in x.iter().zip(&mut self.features) {
            if !is_present(v) {
                continue;
            }
            match stats {
                Stats::Numeric(classes) => classes[y].update(v, weight),
                Stats::Nominal(categories) => {
                    let Some(code) = nominal_code(v) else {
                        continue;
                    };
                    if categories.len() <= code {
                        categories.resize(code + 1, vec![0.0; self.k]);
                    }
                    categories[code][y] += weight;
                }
            }
        }
        self.totals[y] += weight;
        self.since_split += weight;
        if self.since_split >= self.config.grace_period {
            self.since_split = 0.0;
            self.split = self.best_split().or(self.split);
        }
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        if !self.branch(x, out) {
            out.copy_from_slice(&self.totals);
        }
        let total: f64 = out.iter().sum();
        if total > 0.0 {
            out.iter_mut().for_each(|p| *p /= total);
        } else {
            out.fill(1.0 / self.k as f64);
        }
    }

    fn add_class(&mut self) -> Result<()> {
        self.k += 1;
        for stats in &mut self.features {
            match stats {
                Stats::Numeric(classes) => classes.push(GaussianEstimator::default()),
                Stats::Nominal(categories) => categories.iter_mut().for_each(|c| c.push(0.0)),
            }
        }
        self.totals.push(0.0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{ClassSet, Feature};

    fn spec() -> StreamSpec {
        StreamSpec::new(
            vec![
                Feature::numeric("noise"),
                Feature::numeric("x"),
                Feature::nominal("c", ["a", "b", "c"]),
            ],
            ClassSet::new(["0", "1"]).unwrap(),
        )
    }

    fn proba(s: &Stump, x: &[f64]) -> [f64; 2] {
        let mut p = [0.0; 2];
        s.predict_proba(x, &mut p);
        p
    }

    #[test]
    fn finds_the_numeric_feature_that_decides_the_class() {
        let mut rng = Rng::new(5);
        let mut s = StumpConfig::default().build(&spec(), 1).unwrap();
        assert_eq!(proba(&s, &[0.0, 0.0, 0.0]), [0.5, 0.5]);
        for _ in 0..2000 {
            let x = [rng.uniform(), 10.0 * rng.uniform(), 0.0];
            s.learn(&x, usize::from(x[1] > 5.0), 1.0);
        }
        assert!(matches!(s.split, Some(Split::Numeric { feature: 1, .. })));
        assert!(proba(&s, &[0.5, 1.0, 0.0])[0] > 0.8);
        assert!(proba(&s, &[0.5, 9.0, 0.0])[1] > 0.8);
        // The split's feature missing: the prior, here about even.
        assert!((proba(&s, &[0.5, f64::NAN, 0.0])[0] - 0.5).abs() < 0.05);
    }

    #[test]
    fn a_nominal_feature_branches_on_its_categories() {
        let mut rng = Rng::new(6);
        let mut s = StumpConfig::default().build(&spec(), 1).unwrap();
        for _ in 0..600 {
            let c = (rng.uniform() * 3.0).floor();
            s.learn(
                &[rng.uniform(), rng.uniform(), c],
                usize::from(c == 1.0),
                1.0,
            );
        }
        assert_eq!(s.split, Some(Split::Nominal { feature: 2 }));
        assert_eq!(proba(&s, &[0.0, 0.0, 1.0]), [0.0, 1.0]);
        assert_eq!(proba(&s, &[0.0, 0.0, 2.0]), [1.0, 0.0]);
        // A category never seen: the prior.
        let p = proba(&s, &[0.0, 0.0, 7.0]);
        assert!((p[1] - 1.0 / 3.0).abs() < 0.1, "{p:?}");
    }

    #[test]
    fn a_weight_counts_as_that_many_copies() {
        let rows = [
            ([1.0, 2.0, 0.0], 0),
            ([3.0, 8.0, 1.0], 1),
            ([2.0, 7.0, 2.0], 1),
        ];
        let config = StumpConfig {
            grace_period: 3.0,
            ..StumpConfig::default()
        };
        let (mut weighted, mut copied) = (
            config.build(&spec(), 1).unwrap(),
            config.build(&spec(), 1).unwrap(),
        );
        for (x, y) in rows {
            weighted.learn(&x, y, 2.0);
            copied.learn(&x, y, 1.0);
            copied.learn(&x, y, 1.0);
        }
        for x in [[0.0, 1.0, 0.0], [0.0, 9.0, 1.0], [0.0, 5.0, 2.0]] {
            assert_eq!(proba(&weighted, &x), proba(&copied, &x));
        }
        assert_eq!(weighted.split, copied.split);
    }

    #[test]
    fn a_new_class_is_predicted_once_learnt() {
        let mut s = StumpConfig::default().build(&spec(), 1).unwrap();
        s.learn(&[0.0, 1.0, 0.0], 0, 1.0);
        s.add_class().unwrap();
        s.learn(&[0.0, 1.0, 0.0], 2, 3.0);
        let mut p = [0.0; 3];
        s.predict_proba(&[0.0, 1.0, 0.0], &mut p);
        assert_eq!(p, [0.25, 0.0, 0.75]);
    }
}
