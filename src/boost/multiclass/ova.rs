//! The one-vs-all baselines of \[JGT-App\] E (ALGORITHMS.md §8), built from one piece: a
//! [`BinaryBundle`] of `k` two-class learners, learner `j` answering "is the label `j`?",
//! presented as one `k`-class learner with `p[j] = P_j(positive | x)`, renormalised.
//!
//! * **OvA** is a bundle of binary Adaboost.OLM boosters (AdaBoost.OL, §7.2):
//!   [`OneVsAll`]. A booster's probability of "positive" is the Hedge mass of its experts
//!   answering yes, so the bundle predicts the class `argmax_j σ_j` of §8.
//! * **AdaOVA** is Adaboost.OLM whose weak learners are bundles of binary learners.
//!
//! Binary learners use class 0 for "positive" (the label is `j`) and 1 for the rest
//! (ALGORITHMS.md §1.2). The `k` members are built from the same state of the generator, so
//! they share their hyper-parameters (the authors give all k boosters the same seed).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ada_olm::{AdaBoostOlm, AdaBoostOlmConfig};
use crate::boost::{Knob, LeadMember, Tune};
use crate::core::math::{TieBreak, argmax_tie, normalize};
use crate::core::{ClassId, ClassSet, Rng, StreamSpec};
use crate::learner::{Classifier, Config};
use crate::weak::hoeffding::Preset;
use crate::{Error, Result};

/// Class of a binary learner for "the label is `j`".
const POSITIVE: ClassId = 0;
/// Class of a binary learner for "the label is not `j`".
const REST: ClassId = 1;

#[inline]
fn binary_label(y: ClassId, j: usize) -> ClassId {
    if y == j { POSITIVE } else { REST }
}

/// OvA: one binary Adaboost.OLM per class.
pub type OneVsAll<L> = BinaryBundle<AdaBoostOlm<L>>;

/// The config of [`OneVsAll`].
pub type OneVsAllConfig<W> = BinaryBundleConfig<AdaBoostOlmConfig<W>>;

/// OvA over `booster`, with its tie rule for the final prediction.
pub fn one_vs_all<W>(booster: AdaBoostOlmConfig<W>) -> OneVsAllConfig<W> {
    BinaryBundleConfig {
        tie_break: booster.tie_break,
        binary: booster,
        multiclass: false,
    }
}

/// Hyper-parameters of a [`BinaryBundle`]: the binary learner it holds `k` of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BinaryBundleConfig<W> {
    /// The binary learners' config.
    pub binary: W,
    /// Tie rule of the bundle's own prediction.
    pub tie_break: TieBreak,
    /// One multiclass learner of `binary`'s config in place of the `k` binary ones: how
    /// AdaOVA's lead is the single tree (a bundle of `k` one-vs-rest trees is not: on
    /// balance_scale their vote trails the tree's by 0.05, RESULTS.md "Prefix experts").
    #[serde(default)]
    pub multiclass: bool,
}

impl<W> BinaryBundleConfig<W> {
    /// A bundle of `binary` learners, ties broken at random.
    pub fn new(binary: W) -> Self {
        BinaryBundleConfig {
            binary,
            tie_break: TieBreak::Random,
            multiclass: false,
        }
    }
}

impl<W: fmt::Display> fmt::Display for BinaryBundleConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OneVsAll(k x {})", self.binary)
    }
}

/// Every knob is the binary learner's (one-vs-all's boosters, AdaOVA's weak learners).
impl<W: Tune> Tune for BinaryBundleConfig<W> {
    fn tune(&mut self, knob: &Knob) -> bool {
        self.binary.tune(knob)
    }
}

/// A bundle leads with one multiclass lead learner: the single tree.
impl<W: LeadMember> LeadMember for BinaryBundleConfig<W> {
    fn with_tree_preset(&self, preset: Preset) -> Option<Self> {
        Some(BinaryBundleConfig {
            binary: self.binary.with_tree_preset(preset)?,
            tie_break: self.tie_break,
            multiclass: true,
        })
    }
}

impl<W: Config> Config for BinaryBundleConfig<W> {
    type Model = BinaryBundle<W::Model>;

    fn validate(&self) -> Result<()> {
        self.binary.validate()
    }

    /// The `k` members are built from the same state of `rng` and so share their
    /// hyper-parameters (\[JGT-App\] E); the bundle's own generator is drawn after.
    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Self::Model> {
        self.validate()?;
        if self.multiclass {
            return Ok(BinaryBundle {
                members: vec![self.binary.build_with_rng(spec, &mut rng.clone())?],
                newcomer: None,
                tie_break: self.tie_break,
                rng: Rng::new(rng.next_u64()),
                multiclass: true,
            });
        }
        let binary = StreamSpec::new(spec.features.clone(), ClassSet::new(["positive", "rest"])?);
        let members = (0..spec.n_classes())
            .map(|_| self.binary.build_with_rng(&binary, &mut rng.clone()))
            .collect::<Result<Vec<_>>>()?;
        if members.iter().any(|m| m.n_classes() != 2) {
            return Err(Error::config("binary", "must build binary learners"));
        }
        let newcomer = Some(self.binary.build_with_rng(&binary, &mut rng.clone())?);
        Ok(BinaryBundle {
            members,
            newcomer,
            tie_break: self.tie_break,
            rng: Rng::new(rng.next_u64()),
            multiclass: false,
        })
    }
}

/// `k` binary learners as one multiclass learner (ALGORITHMS.md §8, WEAK_LEARNERS.md §4):
/// `p[j] = P_j(positive | x)`, renormalised (uniform if all are 0); learning teaches learner
/// `j` "positive iff the label is `j`" with the same weight. A `multiclass` bundle holds one
/// multiclass learner instead, and is that learner ([`BinaryBundleConfig::multiclass`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BinaryBundle<L> {
    members: Vec<L>,
    /// A member as the bundle built it: the learner of a class that arrives later. `None`
    /// in a model saved before bundles could grow.
    #[serde(default = "no_newcomer")]
    newcomer: Option<L>,
    tie_break: TieBreak,
    rng: Rng,
    /// `members` is one multiclass learner.
    #[serde(default)]
    multiclass: bool,
}

fn no_newcomer<L>() -> Option<L> {
    None
}

// The binary learners, learner `j` for class `j`.
ensemble!(BinaryBundle<L> over members);

impl<L: Classifier + Clone> Classifier for BinaryBundle<L> {
    fn n_classes(&self) -> usize {
        match self.multiclass {
            true => self.members[0].n_classes(),
            false => self.members.len(),
        }
    }

    /// A new class gets a member as the bundle built its others, which has learnt nothing
    /// (River's `OneVsRestClassifier` clones its untrained base learner the same way): the
    /// rows before its class arrived are not replayed, so until it has learnt some "rest",
    /// its "positive" is its prior.
    fn add_class(&mut self) -> Result<()> {
        if self.multiclass {
            return self.members[0].add_class();
        }
        let newcomer = self.newcomer.clone().ok_or_else(|| {
            Error::config(
                "classes",
                "this one-vs-all model was saved before models could grow: it has no \
                 learner to give a new class",
            )
        })?;
        self.members.push(newcomer);
        Ok(())
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        if self.multiclass {
            return self.members[0].learn(x, y, weight);
        }
        for (j, m) in self.members.iter_mut().enumerate() {
            m.learn(x, binary_label(y, j), weight);
        }
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        if self.multiclass {
            return self.members[0].predict_proba(x, out);
        }
        let mut p = [0.0; 2];
        for (o, m) in out.iter_mut().zip(&self.members) {
            m.predict_proba(x, &mut p);
            *o = p[POSITIVE];
        }
        normalize(out);
    }

    /// Each member scores the row and then learns it; the prediction is the class whose
    /// member is most sure of "positive", under the tie rule.
    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        if self.multiclass {
            return self.members[0].learn_predict(x, y, weight, out);
        }
        let mut p = [0.0; 2];
        for (j, (o, m)) in out.iter_mut().zip(&mut self.members).enumerate() {
            m.learn_predict(x, y.map(|y| binary_label(y, j)), weight, &mut p);
            *o = p[POSITIVE];
        }
        let predicted = argmax_tie(out, self.tie_break, &mut self.rng);
        normalize(out);
        predicted
    }
}
