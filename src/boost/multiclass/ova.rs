//! The one-vs-all baselines of [JGT-App] E (ALGORITHMS.md §8), built from binary learners.
//!
//! * [`OneVsAll`]: `k` binary Adaboost.OLM boosters (AdaBoost.OL), booster `j` learning
//!   "is the label `j`?"; the prediction is the class whose booster puts the most Hedge mass
//!   on experts answering yes.
//! * AdaOVA is Adaboost.OLM over [`BinaryBundle`]s: each weak learner is `k` binary
//!   learners presented as one multiclass learner.
//!
//! Binary learners use class 0 for "positive" (the label is `j`) and 1 for the rest
//! (ALGORITHMS.md §1.2).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ada_olm::{AdaBoostOlm, AdaBoostOlmConfig};
use crate::core::math::{TieBreak, argmax_tie, normalize};
use crate::core::{ClassId, ClassSet, Rng, StreamSpec};
use crate::learner::{Classifier, Config};
use crate::{Error, Result};

/// Class of a binary learner for "the label is `j`".
const POSITIVE: ClassId = 0;
/// Class of a binary learner for "the label is not `j`".
const REST: ClassId = 1;

/// The binary stream "class `j` or not" over `spec`'s features.
fn one_vs_rest(spec: &StreamSpec) -> Result<StreamSpec> {
    Ok(StreamSpec::new(
        spec.features.clone(),
        ClassSet::new(["positive", "rest"])?,
    ))
}

#[inline]
fn binary_label(y: ClassId, j: usize) -> ClassId {
    if y == j { POSITIVE } else { REST }
}

/// Hyper-parameters of [`OneVsAll`]: the binary booster every class gets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OneVsAllConfig<W> {
    /// Each class's binary booster (AdaBoost.OL, ALGORITHMS.md §7.2).
    pub booster: AdaBoostOlmConfig<W>,
}

impl<W> OneVsAllConfig<W> {
    /// `k` AdaBoost.OL boosters with the paper's defaults over the given weak learner.
    pub fn new(weak: W) -> Self {
        OneVsAllConfig {
            booster: AdaBoostOlmConfig::new(weak),
        }
    }
}

impl<W: fmt::Display> fmt::Display for OneVsAllConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OneVsAll(k x {})", self.booster)
    }
}

impl<W: Config> Config for OneVsAllConfig<W> {
    type Model = OneVsAll<W::Model>;

    fn validate(&self) -> Result<()> {
        self.booster.validate()
    }

    /// Every class's booster is built from the same seed, so all have the same learners'
    /// hyper-parameters (the authors' code); the model's own tie-breaking RNG is seeded
    /// separately.
    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Self::Model> {
        self.validate()?;
        let binary = one_vs_rest(spec)?;
        let seed = rng.next_u64();
        let boosters = (0..spec.n_classes())
            .map(|_| self.booster.build(&binary, seed))
            .collect::<Result<Vec<_>>>()?;
        Ok(OneVsAll {
            tie_break: self.booster.tie_break,
            boosters,
            rng: Rng::new(rng.next_u64()),
        })
    }
}

/// One binary Adaboost.OLM booster per class. Build it from a [`OneVsAllConfig`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OneVsAll<L> {
    tie_break: TieBreak,
    boosters: Vec<AdaBoostOlm<L>>,
    rng: Rng,
}

impl<L: Classifier> OneVsAll<L> {
    /// The boosters, booster `j` for class `j`.
    pub fn boosters(&self) -> &[AdaBoostOlm<L>] {
        &self.boosters
    }

    /// The boosters, to change in place.
    pub fn boosters_mut(&mut self) -> &mut [AdaBoostOlm<L>] {
        &mut self.boosters
    }
}

impl<L: Classifier> Classifier for OneVsAll<L> {
    fn n_classes(&self) -> usize {
        self.boosters.len()
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        for (j, b) in self.boosters.iter_mut().enumerate() {
            b.learn(x, binary_label(y, j), weight);
        }
    }

    /// `σ_j`, the Hedge mass of booster `j`'s experts voting "positive", normalised.
    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        let mut p = [0.0; 2];
        for (o, b) in out.iter_mut().zip(&self.boosters) {
            b.predict_proba(x, &mut p);
            *o = p[POSITIVE];
        }
        normalize(out);
    }

    /// Each booster scores the row (its class probabilities are the Hedge mass of its experts'
    /// answers, [`AdaBoostOlm::learn_predict`]) and then learns it; the prediction is
    /// `argmax_j σ_j` under the tie rule.
    fn learn_predict(
        &mut self,
        x: &[f64],
        y: Option<ClassId>,
        weight: f64,
        out: &mut [f64],
    ) -> ClassId {
        let mut p = [0.0; 2];
        for (j, (o, b)) in out.iter_mut().zip(&mut self.boosters).enumerate() {
            b.learn_predict(x, y.map(|y| binary_label(y, j)), weight, &mut p);
            *o = p[POSITIVE];
        }
        let predicted = argmax_tie(out, self.tie_break, &mut self.rng);
        normalize(out);
        predicted
    }
}

/// Hyper-parameters of a [`BinaryBundle`]: the binary learner it holds `k` of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BinaryBundleConfig<W> {
    /// The binary learners' config.
    pub binary: W,
}

impl<W: fmt::Display> fmt::Display for BinaryBundleConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BinaryBundle(k x {})", self.binary)
    }
}

impl<W: Config> Config for BinaryBundleConfig<W> {
    type Model = BinaryBundle<W::Model>;

    fn validate(&self) -> Result<()> {
        self.binary.validate()
    }

    /// The `k` binary learners share their hyper-parameters: each is built from the same
    /// state of `rng` ([JGT-App] E).
    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Self::Model> {
        self.validate()?;
        let binary = one_vs_rest(spec)?;
        let members = (0..spec.n_classes())
            .map(|_| self.binary.build_with_rng(&binary, &mut rng.clone()))
            .collect::<Result<Vec<_>>>()?;
        if members.iter().any(|m| m.n_classes() != 2) {
            return Err(Error::config("binary", "must build binary learners"));
        }
        Ok(BinaryBundle { members })
    }
}

/// `k` binary learners as one multiclass learner (ALGORITHMS.md §8, WEAK_LEARNERS.md §4):
/// `p[j] = P_j(positive | x)`, renormalised; learning teaches learner `j` "positive iff the
/// label is `j`" with the same weight.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BinaryBundle<L> {
    members: Vec<L>,
}

impl<L: Classifier> BinaryBundle<L> {
    /// The binary learners, learner `j` for class `j`.
    pub fn members(&self) -> &[L] {
        &self.members
    }

    /// The binary learners, to change in place.
    pub fn members_mut(&mut self) -> &mut [L] {
        &mut self.members
    }
}

impl<L: Classifier> Classifier for BinaryBundle<L> {
    fn n_classes(&self) -> usize {
        self.members.len()
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        for (j, m) in self.members.iter_mut().enumerate() {
            m.learn(x, binary_label(y, j), weight);
        }
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        let mut p = [0.0; 2];
        for (o, m) in out.iter_mut().zip(&self.members) {
            m.predict_proba(x, &mut p);
            *o = p[POSITIVE];
        }
        normalize(out);
    }

    fn learn_predict(
        &mut self,
        x: &[f64],
        y: Option<ClassId>,
        weight: f64,
        out: &mut [f64],
    ) -> ClassId {
        let mut p = [0.0; 2];
        for (j, (o, m)) in out.iter_mut().zip(&mut self.members).enumerate() {
            m.learn_predict(x, y.map(|y| binary_label(y, j)), weight, &mut p);
            *o = p[POSITIVE];
        }
        normalize(out);
        crate::core::math::argmax(out)
    }
}
