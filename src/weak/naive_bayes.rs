//! Online Gaussian / categorical naive Bayes with importance weights (WEAK_LEARNERS.md §2).
//!
//! Its sufficient statistics are weight sums, so the model after a stream does not depend on
//! the order of the rows ("lossless", which is why \[CLL\] used it under OzaBoost).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::hoeffding::observer::{GaussianEstimator, NominalObserver, VarianceMode};
use crate::core::math::{LogSums, softmax};
use crate::core::{ClassId, Rng, StreamSpec, is_present, nominal_code, vec_bytes};
use crate::learner::{Classifier, Config};
use crate::{Error, Result};

/// Hyper-parameters of [`NaiveBayes`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NaiveBayesConfig {
    /// Additive prior `α` of the class frequencies; with 0 an unseen class has probability 0.
    pub class_prior: f64,
    /// Share of the largest pooled feature variance added to every class variance.
    pub var_smoothing: f64,
}

impl Default for NaiveBayesConfig {
    fn default() -> Self {
        NaiveBayesConfig {
            class_prior: 0.0,
            var_smoothing: 1e-9,
        }
    }
}

impl fmt::Display for NaiveBayesConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "NaiveBayes(class prior={}, var smoothing={:e})",
            self.class_prior, self.var_smoothing
        )
    }
}

impl Config for NaiveBayesConfig {
    type Model = NaiveBayes;

    fn validate(&self) -> Result<()> {
        if !(self.class_prior >= 0.0 && self.class_prior.is_finite()) {
            return Err(Error::config("class_prior", "must be >= 0"));
        }
        if !(self.var_smoothing >= 0.0 && self.var_smoothing.is_finite()) {
            return Err(Error::config("var_smoothing", "must be >= 0"));
        }
        Ok(())
    }

    fn build_with_rng(&self, spec: &StreamSpec, _rng: &mut Rng) -> Result<NaiveBayes> {
        self.validate()?;
        let k = spec.n_classes();
        let features = spec
            .nominal_mask()
            .into_iter()
            .map(|nominal| {
                if nominal {
                    FeatureStats::Nominal(NominalObserver::new(k))
                } else {
                    FeatureStats::Numeric {
                        per_class: vec![GaussianEstimator::default(); k],
                        pooled: GaussianEstimator::default(),
                    }
                }
            })
            .collect();
        Ok(NaiveBayes {
            params: self.clone(),
            class_weights: vec![0.0; k],
            features,
        })
    }
}

/// The statistics of one feature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum FeatureStats {
    /// Weighted mean and variance per class, and over all classes (for the smoothing).
    Numeric {
        per_class: Vec<GaussianEstimator>,
        pooled: GaussianEstimator,
    },
    /// Weight per (category, class).
    Nominal(NominalObserver),
}

/// Absolute floor of a class variance, so that a class that has seen a single value of a
/// feature still has a finite density (WEAK_LEARNERS.md §2).
const VARIANCE_FLOOR: f64 = 1e-12;

/// A weighted online naive Bayes classifier. Build it from a [`NaiveBayesConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaiveBayes {
    params: NaiveBayesConfig,
    /// `n[c]`: weight of each class.
    class_weights: Vec<f64>,
    features: Vec<FeatureStats>,
}

impl NaiveBayes {
    /// Bytes its statistics hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        let features = self.features.iter().map(|f| match f {
            FeatureStats::Numeric { per_class, .. } => vec_bytes(per_class),
            FeatureStats::Nominal(o) => o.heap_bytes(),
        });
        vec_bytes(&self.class_weights) + vec_bytes(&self.features) + features.sum::<usize>()
    }

    /// Weight of each class seen so far.
    pub fn class_weights(&self) -> &[f64] {
        &self.class_weights
    }

    /// `var_smoothing · max_j σ²_pooled,j`, the variance added to every class.
    fn smoothing(&self) -> f64 {
        let widest = self
            .features
            .iter()
            .filter_map(|f| match f {
                FeatureStats::Numeric { pooled, .. } => {
                    Some(pooled.variance(VarianceMode::Population))
                }
                FeatureStats::Nominal(_) => None,
            })
            .fold(0.0, f64::max);
        self.params.var_smoothing * widest
    }
}

impl Classifier for NaiveBayes {
    fn n_classes(&self) -> usize {
        self.class_weights.len()
    }

    /// The new class has weight 0 and no values: its prior is `α/(W + kα)` (0 at the default
    /// `α = 0`, so it is not predicted until it has been learnt), and learning, which reads
    /// only the row's class, is what it would be had the class been declared and never met.
    fn add_class(&mut self) -> Result<()> {
        self.class_weights.push(0.0);
        for stats in &mut self.features {
            match stats {
                FeatureStats::Numeric { per_class, .. } => {
                    per_class.push(GaussianEstimator::default());
                }
                FeatureStats::Nominal(nominal) => nominal.add_class(),
            }
        }
        Ok(())
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        if !(weight > 0.0 && weight.is_finite()) || y >= self.class_weights.len() {
            return;
        }
        self.class_weights[y] += weight;
        for (stats, &v) in self.features.iter_mut().zip(x) {
            match stats {
                FeatureStats::Numeric { per_class, pooled } if is_present(v) => {
                    per_class[y].update(v, weight);
                    pooled.update(v, weight);
                }
                FeatureStats::Nominal(nominal) => match nominal_code(v) {
                    Some(code) => nominal.update(code, y, weight, 0.0),
                    None => nominal.update_missing(weight),
                },
                FeatureStats::Numeric { .. } => {}
            }
        }
    }

    /// `ln((n[c] + α)/(W + kα)) + Σ_j ln P(x_j | c)`, normalised by log-sum-exp; uniform
    /// before the first row. Missing values are skipped. A numeric feature that some
    /// candidate class has never observed (all its values were missing) is skipped for every
    /// class: there is no density to compare, and charging only the other classes would
    /// favour the class that knows least.
    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        let k = self.class_weights.len();
        let total: f64 = self.class_weights.iter().sum();
        if total <= 0.0 {
            out.fill(1.0 / k as f64);
            return;
        }
        let alpha = self.params.class_prior;
        for (o, &n) in out.iter_mut().zip(&self.class_weights) {
            *o = if n > 0.0 || alpha > 0.0 {
                ((n + alpha) / (total + k as f64 * alpha)).ln()
            } else {
                f64::NEG_INFINITY
            };
        }
        let smoothing = self.smoothing();
        let mut products = vec![0.0; 2 * k];
        let mut logs = LogSums::new(out, &mut products);
        for (stats, &v) in self.features.iter().zip(x) {
            match stats {
                FeatureStats::Numeric { per_class, .. } if is_present(v) => {
                    let mut candidates = (0..k).filter(|&c| logs.partial(c).is_finite());
                    if candidates.any(|c| per_class[c].weight <= 0.0) {
                        continue;
                    }
                    for (c, e) in per_class.iter().enumerate() {
                        if logs.partial(c).is_finite() {
                            let var = (e.variance(VarianceMode::Population) + smoothing)
                                .max(VARIANCE_FLOOR);
                            logs.add_gaussian(c, v, e.mean, var);
                        }
                    }
                }
                FeatureStats::Nominal(nominal) => {
                    let Some(code) = nominal_code(v) else {
                        continue;
                    };
                    let n_observed = nominal.n_observed();
                    for c in 0..k {
                        if logs.partial(c).is_finite() {
                            logs.add_ln(c, nominal.likelihood(code, c, n_observed));
                        }
                    }
                }
                FeatureStats::Numeric { .. } => {}
            }
        }
        logs.finish();
        softmax(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::math::gaussian_log_density;
    use crate::core::{ClassSet, Feature};

    fn spec() -> StreamSpec {
        StreamSpec::new(
            vec![
                Feature::numeric("a"),
                Feature::nominal("b", ["u", "v", "w"]),
            ],
            ClassSet::numbered(2).unwrap(),
        )
    }

    #[test]
    fn matches_a_hand_computed_posterior() {
        let mut nb = NaiveBayesConfig::default().build(&spec(), 0).unwrap();
        // class 0: a ∈ {1, 3} (w 1 each), b = u twice; class 1: a = 10 (w 2), b = v.
        nb.learn(&[1.0, 0.0], 0, 1.0);
        nb.learn(&[3.0, 0.0], 0, 1.0);
        nb.learn(&[10.0, 1.0], 1, 2.0);
        let x = [2.0, 0.0];
        let mut p = [0.0; 2];
        nb.predict_proba(&x, &mut p);
        // The smoothing adds 1e-9 × the pooled variance of `a` (values 1, 3, 10, weights 1, 1, 2).
        let pooled_mean = (1.0 + 3.0 + 20.0) / 4.0;
        let pooled_var = ((1.0f64 - pooled_mean).powi(2)
            + (3.0f64 - pooled_mean).powi(2)
            + 2.0 * (10.0f64 - pooled_mean).powi(2))
            / 4.0;
        let s = 1e-9 * pooled_var;
        let l0 = (0.5f64).ln() + gaussian_log_density(2.0, 2.0, 1.0 + s) + (3.0f64 / 4.0).ln();
        let l1 =
            (0.5f64).ln() + gaussian_log_density(2.0, 10.0, s.max(1e-12)) + (1.0f64 / 4.0).ln();
        let p0 = 1.0 / (1.0 + (l1 - l0).exp());
        assert!((p[0] - p0).abs() < 1e-12, "{p:?} vs {p0}");
    }

    #[test]
    fn unseen_class_has_probability_zero_without_prior() {
        let k3 = StreamSpec::numeric(1, 3).unwrap();
        let mut nb = NaiveBayesConfig::default().build(&k3, 0).unwrap();
        nb.learn(&[1.0], 0, 1.0);
        nb.learn(&[2.0], 1, 1.0);
        let mut p = [0.0; 3];
        nb.predict_proba(&[1.5], &mut p);
        assert_eq!(p[2], 0.0);
        let cfg = NaiveBayesConfig {
            class_prior: 1.0,
            ..NaiveBayesConfig::default()
        };
        let mut nb = cfg.build(&k3, 0).unwrap();
        nb.learn(&[1.0], 0, 1.0);
        nb.predict_proba(&[1.0], &mut p);
        assert!(p[2] > 0.0 && (p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn statistics_do_not_depend_on_row_order() {
        let rows = [
            ([0.5, 2.0], 1),
            ([1.5, 0.0], 0),
            ([-3.0, f64::NAN], 1),
            ([2.0, 1.0], 0),
        ];
        let build = || NaiveBayesConfig::default().build(&spec(), 0).unwrap();
        let (mut a, mut b) = (build(), build());
        for (x, y) in rows {
            a.learn(&x, y, 0.7);
        }
        for (x, y) in rows.iter().rev() {
            b.learn(x, *y, 0.7);
        }
        let (mut pa, mut pb) = ([0.0; 2], [0.0; 2]);
        a.predict_proba(&[1.0, 2.0], &mut pa);
        b.predict_proba(&[1.0, 2.0], &mut pb);
        assert!((pa[0] - pb[0]).abs() < 1e-12);
    }
}
