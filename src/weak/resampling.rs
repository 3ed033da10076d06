//! Resampling (ALGORITHMS.md §1.2; Beygelzimer et al. 2015, Lemma 1): a learner that sees
//! every row unweighted, as many times as a random count whose mean is the row's weight.
//!
//! Boosters hand their learners importance weights; a learner that cannot use weights, or
//! whose use of them is too smooth (perceptrons trained from the same start with different
//! weights stay nearly the same hypothesis), is fed `K` unweighted copies of the row instead:
//! `K ~ Poisson(w)` (mode `Poisson`, the default) or `K ~ Bernoulli(min(1, w/w_max))` (mode
//! `Bernoulli`, \[CLL\]'s filtering: the row is passed on with probability `w`). The draws come
//! from the wrapper's own seeded generator, so runs and checkpoint resumes are reproducible.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{WeakLearner, WeakLearnerConfig};
use crate::core::{ClassId, Rng, StreamSpec};
use crate::learner::{Classifier, Config};
use crate::{Error, Result};

/// How a weight becomes a number of unweighted copies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum ResampleMode {
    /// `K ~ Poisson(w)`.
    Poisson,
    /// `K ~ Bernoulli(min(1, w / w_max))`.
    Bernoulli {
        /// The weight at which a row is always passed on.
        w_max: f64,
    },
}

/// A weak learner fed through [`ResampleMode`] draws.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResamplingConfig {
    /// How weights become copies.
    pub mode: ResampleMode,
    /// The learner fed the copies.
    pub inner: Box<WeakLearnerConfig>,
}

impl fmt::Display for ResamplingConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.mode {
            ResampleMode::Poisson => write!(f, "Resampled(Poisson, {})", self.inner),
            ResampleMode::Bernoulli { w_max } => {
                write!(f, "Resampled(Bernoulli, w_max={w_max}, {})", self.inner)
            }
        }
    }
}

impl Config for ResamplingConfig {
    type Model = Resampled;

    fn validate(&self) -> Result<()> {
        if let ResampleMode::Bernoulli { w_max } = self.mode
            && !(w_max > 0.0 && w_max.is_finite())
        {
            return Err(Error::config("w_max", "must be > 0 and finite"));
        }
        self.inner.validate()
    }

    fn with_margin_output(&self) -> Self {
        ResamplingConfig {
            mode: self.mode,
            inner: Box::new(self.inner.with_margin_output()),
        }
    }

    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Resampled> {
        self.validate()?;
        let draws = Rng::new(rng.next_u64());
        Ok(Resampled {
            mode: self.mode,
            inner: Box::new(self.inner.build_with_rng(spec, rng)?),
            rng: draws,
        })
    }
}

/// A learner that sees each row `K` times unweighted; see the module docs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Resampled {
    mode: ResampleMode,
    inner: Box<WeakLearner>,
    rng: Rng,
}

impl Resampled {
    /// The learner fed the copies.
    pub fn inner(&self) -> &WeakLearner {
        &self.inner
    }

    /// The learner fed the copies, to change in place.
    pub fn inner_mut(&mut self) -> &mut WeakLearner {
        &mut self.inner
    }

    /// The number of copies of a row of weight `w` (0 for a weight that is not positive).
    fn copies(&mut self, weight: f64) -> u64 {
        if !(weight > 0.0 && weight.is_finite()) {
            return 0;
        }
        match self.mode {
            ResampleMode::Poisson => self.rng.poisson(weight),
            ResampleMode::Bernoulli { w_max } => {
                u64::from(self.rng.uniform() < (weight / w_max).min(1.0))
            }
        }
    }
}

impl Classifier for Resampled {
    fn n_classes(&self) -> usize {
        self.inner.n_classes()
    }

    fn add_class(&mut self) -> Result<()> {
        self.inner.add_class()
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        for _ in 0..self.copies(weight) {
            self.inner.learn(x, y, 1.0);
        }
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        self.inner.predict_proba(x, out);
    }

    /// The first copy goes through the inner learner's own `learn_predict` (one pass for the
    /// prediction and the update); the others through `learn`.
    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        let copies = if y.is_some() { self.copies(weight) } else { 0 };
        let Some(y) = y.filter(|_| copies > 0) else {
            return self.inner.learn_predict(x, None, 0.0, out);
        };
        let predicted = self.inner.learn_predict(x, Some(y), 1.0, out);
        for _ in 1..copies {
            self.inner.learn(x, y, 1.0);
        }
        predicted
    }

    fn adapted(&self) -> bool {
        self.inner.adapted()
    }

    fn wake(&mut self) {
        self.inner.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weak::PerceptronConfig;

    fn resampled(mode: ResampleMode) -> Resampled {
        let config = ResamplingConfig {
            mode,
            inner: Box::new(PerceptronConfig::default().into()),
        };
        config
            .build(&StreamSpec::numeric(1, 2).unwrap(), 7)
            .unwrap()
    }

    #[test]
    fn copies_have_the_weight_as_mean() {
        let mut poisson = resampled(ResampleMode::Poisson);
        let n = 20_000;
        let mean = (0..n).map(|_| poisson.copies(0.7)).sum::<u64>() as f64 / n as f64;
        assert!((mean - 0.7).abs() < 0.03, "Poisson mean {mean}");
        let mut bernoulli = resampled(ResampleMode::Bernoulli { w_max: 2.0 });
        let draws: Vec<u64> = (0..n).map(|_| bernoulli.copies(0.5)).collect();
        assert!(draws.iter().all(|&k| k <= 1));
        let mean = draws.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 0.25).abs() < 0.02, "Bernoulli mean {mean}");
        assert!(
            (0..100).all(|_| bernoulli.copies(5.0) == 1),
            "capped at probability 1"
        );
        for w in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(poisson.copies(w), 0, "weight {w}");
        }
    }

    #[test]
    fn learn_predict_predicts_before_learning_the_copies() {
        let mut model = resampled(ResampleMode::Bernoulli { w_max: 1.0 });
        let mut out = [0.0; 2];
        // Weight 1 is always one copy: the perceptron's first update (f = 0, y = −1).
        let predicted = model.learn_predict(&[1.0], Some(1), 1.0, &mut out);
        assert_eq!(predicted, 0, "scored before the update");
        assert_eq!(model.predict(&[1.0]), 1, "then learnt unweighted");
        // Weight 0 learns nothing.
        let margin = |m: &Resampled| match m.inner() {
            WeakLearner::Perceptron(p) => p.margin(&[1.0]),
            _ => unreachable!("a perceptron inside"),
        };
        let before = margin(&model);
        model.learn_predict(&[-3.0], Some(0), 0.0, &mut out);
        assert_eq!(margin(&model), before);
    }
}
