//! Online feature scaling: a model wrapper that rescales each numeric feature with running
//! statistics of the rows it has learnt, before its model sees the row.
//!
//! \[CLL\]'s data were scaled to `[−1, 1]` (LIBSVM copies) and a perceptron's updates depend on
//! the scale of its inputs; a stream has no scaling pass, so the statistics are running ones.
//! Row `t` is scaled with the statistics of the rows learnt before it and only then added to
//! them: the transform never looks ahead, and scoring a row changes nothing. The statistics
//! are part of the model (checkpointed with it). Nominal features and missing values pass
//! through unchanged.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Result;
use crate::boost::{Knob, Tune};
use crate::core::{ClassId, Rng, StreamSpec, is_present};
use crate::learner::{Classifier, Config, EnsembleSummary, Ranker, learnable};
use crate::weak::Structure;

/// How numeric features are rescaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scaling {
    /// `2(x − min)/(max − min) − 1` with the running minimum and maximum, clipped to
    /// `[−1, 1]`; 0 while the range is empty.
    MinMax,
    /// `(x − mean)/sd` with the running mean and (population) standard deviation; 0 while the
    /// deviation is 0.
    Standardize,
}

/// Running statistics of one numeric feature (unweighted: a row counts once).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Running {
    count: f64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl Running {
    fn add(&mut self, x: f64) {
        if self.count == 0.0 {
            (self.min, self.max) = (x, x);
        }
        self.count += 1.0;
        let delta = x - self.mean;
        self.mean += delta / self.count;
        self.m2 += delta * (x - self.mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    fn scale(&self, mode: Scaling, x: f64) -> f64 {
        if self.count == 0.0 {
            return 0.0;
        }
        match mode {
            Scaling::MinMax => {
                let range = self.max - self.min;
                if range > 0.0 {
                    (2.0 * (x - self.min) / range - 1.0).clamp(-1.0, 1.0)
                } else {
                    0.0
                }
            }
            Scaling::Standardize => {
                let sd = (self.m2 / self.count).sqrt();
                if sd > 0.0 { (x - self.mean) / sd } else { 0.0 }
            }
        }
    }
}

/// A model config with scaling in front of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaledConfig<C> {
    /// The rescaling.
    pub scaling: Scaling,
    /// The model that sees the rescaled rows.
    pub model: Box<C>,
}

impl<C: fmt::Display> fmt::Display for ScaledConfig<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on {:?}-scaled features", self.model, self.scaling)
    }
}

impl<C: Config> Config for ScaledConfig<C> {
    type Model = Scaled<C::Model>;

    fn validate(&self) -> Result<()> {
        self.model.validate()
    }

    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Self::Model> {
        Ok(Scaled {
            scaling: self.scaling,
            numeric: spec.nominal_mask().iter().map(|n| !n).collect(),
            stats: vec![Running::default(); spec.n_features()],
            model: Box::new(self.model.build_with_rng(spec, rng)?),
        })
    }
}

/// The knobs are the wrapped model's.
impl<C: Tune> Tune for ScaledConfig<C> {
    fn tune(&mut self, knob: &Knob) -> bool {
        self.model.tune(knob)
    }
}

/// A model behind online feature scaling. Build it from a [`ScaledConfig`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scaled<M> {
    scaling: Scaling,
    numeric: Vec<bool>,
    stats: Vec<Running>,
    model: Box<M>,
}

impl<M> Scaled<M> {
    /// The wrapped model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The wrapped model, to change in place.
    pub fn model_mut(&mut self) -> &mut M {
        &mut self.model
    }

    /// Row `x` rescaled with the statistics so far.
    fn scaled(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .zip(&self.stats)
            .zip(&self.numeric)
            .map(|((&v, s), &numeric)| {
                if numeric && is_present(v) {
                    s.scale(self.scaling, v)
                } else {
                    v
                }
            })
            .collect()
    }

    /// Adds row `x` to the statistics.
    /// If `learnable`, has the model learn row `x` scaled with the statistics so far (`learn`),
    /// then counts `x` in them.
    fn learn_scaled(&mut self, x: &[f64], learnable: bool, learn: impl FnOnce(&mut M, &[f64])) {
        if learnable {
            let z = self.scaled(x);
            learn(&mut self.model, &z);
            self.observe(x);
        }
    }

    fn observe(&mut self, x: &[f64]) {
        for ((&v, s), &numeric) in x.iter().zip(&mut self.stats).zip(&self.numeric) {
            if numeric && is_present(v) {
                s.add(v);
            }
        }
    }
}

impl<M: Structure> Structure for Scaled<M> {
    fn heap_bytes(&self) -> usize {
        let own = self.numeric.capacity() + self.stats.capacity() * std::mem::size_of::<Running>();
        own + std::mem::size_of::<M>() + self.model.heap_bytes()
    }

    fn learners<'a, T: std::any::Any>(&'a self, out: &mut Vec<&'a T>) {
        self.model.learners(out);
    }

    fn learners_mut<'a, T: std::any::Any>(&'a mut self, out: &mut Vec<&'a mut T>) {
        self.model.learners_mut(out);
    }

    fn ensemble(&self) -> Option<EnsembleSummary> {
        self.model.ensemble()
    }
}

impl<M: Classifier> Classifier for Scaled<M> {
    fn n_classes(&self) -> usize {
        self.model.n_classes()
    }

    /// The scaling's statistics are over features, not classes: unchanged.
    fn add_class(&mut self) -> Result<()> {
        self.model.add_class()
    }

    fn learns_online(&self) -> bool {
        self.model.learns_online()
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        let taken = learnable(Some(y), weight, self.n_classes()).is_some();
        self.learn_scaled(x, taken, |model, z| model.learn(z, y, weight));
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        self.model.predict_proba(&self.scaled(x), out);
    }

    fn predict_proba_rows(&self, xs: &[&[f64]], proba: &mut [f64]) {
        let scaled: Vec<Vec<f64>> = xs.iter().map(|x| self.scaled(x)).collect();
        let scaled: Vec<&[f64]> = scaled.iter().map(Vec::as_slice).collect();
        self.model.predict_proba_rows(&scaled, proba);
    }

    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        let z = self.scaled(x);
        let predicted = self.model.learn_predict(&z, y, weight, out);
        if learnable(y, weight, self.n_classes()).is_some() {
            self.observe(x);
        }
        predicted
    }
}

impl<M: Ranker> Ranker for Scaled<M> {
    fn n_labels(&self) -> usize {
        self.model.n_labels()
    }

    fn learn_labels(&mut self, x: &[f64], relevant: &[bool], weight: f64) {
        let learnable = weight > 0.0 && weight.is_finite();
        self.learn_scaled(x, learnable, |model, z| {
            model.learn_labels(z, relevant, weight)
        });
    }

    fn predict_scores(&self, x: &[f64], out: &mut [f64]) {
        self.model.predict_scores(&self.scaled(x), out);
    }

    fn learn_predict_scores(
        &mut self, x: &[f64], relevant: Option<&[bool]>, weight: f64, out: &mut [f64],
    ) {
        let z = self.scaled(x);
        self.model.learn_predict_scores(&z, relevant, weight, out);
        if relevant.is_some() && weight > 0.0 && weight.is_finite() {
            self.observe(x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weak::PerceptronConfig;

    #[test]
    fn rows_are_scaled_with_the_past_only() {
        let spec = StreamSpec::numeric(1, 2).unwrap();
        for scaling in [Scaling::MinMax, Scaling::Standardize] {
            let cfg = ScaledConfig {
                scaling,
                model: Box::new(PerceptronConfig::default()),
            };
            let mut m = cfg.build(&spec, 0).unwrap();
            // Before any row: every value scales to 0.
            assert_eq!(m.scaled(&[5.0]), vec![0.0]);
            let mut out = [0.0; 2];
            m.learn_predict(&[0.0], Some(0), 1.0, &mut out);
            m.learn_predict(&[10.0], Some(1), 1.0, &mut out);
            // Scoring does not move the statistics.
            m.learn_predict(&[1000.0], None, 1.0, &mut out);
            let z = m.scaled(&[7.5])[0];
            // Min–max: 2·7.5/10 − 1; standardised: (7.5 − 5)/5. Both 0.5.
            assert_eq!(z, 0.5);
            assert!(m.scaled(&[f64::NAN])[0].is_nan());
            assert_eq!(
                m.scaled(&[-100.0])[0],
                if scaling == Scaling::MinMax {
                    -1.0
                } else {
                    -21.0
                }
            );
        }
    }
}
