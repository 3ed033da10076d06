//! Hyper-parameters that several algorithms share, set by one name. The command line's model
//! flags are [`Knob`]s; each config takes the ones it has through [`Tune`], implemented
//! beside its code, and says which it does not have. So a new algorithm needs no change to
//! the command line to be driven by its flags.

use super::binary::WeakOutput;
use super::multiclass::WeightNorm;
use super::multiclass::cost::Surrogate;
use super::oza::{OzaVariant, ZeroErrorPolicy};
use super::ranking::RankingLoss;
use super::{ExpertSelection, LeadMember, VoteRule, WeightScale};
use crate::drift::DriftConfig;
use crate::weak::hoeffding::Preset;
use crate::weak::{
    HatConfig, HoeffdingTreeConfig, NaiveBayesConfig, PerceptronConfig, WeakLearnerConfig,
};

/// One shared hyper-parameter and its value.
#[derive(Debug, Clone, PartialEq)]
pub enum Knob {
    /// Number of weak learners (of selectors, for online GradientBoost).
    Learners(usize),
    /// The assumed edge `γ`.
    Gamma(f64),
    /// Per-learner weight scale.
    WeightScale(WeightScale),
    /// How learners vote.
    Vote(VoteRule),
    /// Which expert an adaptive booster predicts with.
    Expert(ExpertSelection),
    /// The surrogate loss of the adaptive boosters.
    Surrogate(Surrogate),
    /// The loss of OnlineBMR's potentials.
    RankingLoss(RankingLoss),
    /// OnlineMBBM's weight normalisation.
    WeightNorm(WeightNorm),
    /// OnlineMBBM's certified pruning bound `ε`.
    EpsilonPrune(f64),
    /// How the binary boosters read their learners.
    WeakOutput(WeakOutput),
    /// MOA's or River's OzaBoost (set before [`Knob::ZeroError`]).
    OzaVariant(OzaVariant),
    /// What OzaBoost's vote does with a model of error 0 or above 1/2.
    ZeroError(ZeroErrorPolicy),
    /// A booster's weak learner.
    Weak(WeakLearnerConfig),
    /// The detector on a booster's learners' error, which replaces a learner when it
    /// drifts (`None`: never).
    Drift(Option<DriftConfig>),
    /// The tree preset of an ensemble's first member (`None`: as the rest).
    Lead(Option<Preset>),
    /// A single Hoeffding tree.
    Tree(HoeffdingTreeConfig),
    /// A single perceptron.
    Perceptron(PerceptronConfig),
}

impl Knob {
    /// The knob's name, as the command line's flag spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Knob::Learners(_) => "learners",
            Knob::Gamma(_) => "gamma",
            Knob::WeightScale(_) => "weight-scale",
            Knob::Vote(_) => "vote",
            Knob::Expert(_) => "expert",
            Knob::Surrogate(_) | Knob::RankingLoss(_) => "loss",
            Knob::WeightNorm(_) => "weight-norm",
            Knob::EpsilonPrune(_) => "epsilon-prune",
            Knob::WeakOutput(_) => "weak-output",
            Knob::OzaVariant(_) => "oza-variant",
            Knob::ZeroError(_) => "oza-zero-error",
            Knob::Weak(_) => "weak",
            Knob::Drift(_) => "drift-detector",
            Knob::Lead(_) => "lead",
            Knob::Tree(_) => "preset",
            Knob::Perceptron(_) => "perceptron-init",
        }
    }
}

/// A config whose shared hyper-parameters can be set by [`Knob`].
pub trait Tune {
    /// Sets `knob` and returns true, or returns false (changing nothing) if this config has
    /// no such knob.
    fn tune(&mut self, knob: &Knob) -> bool;
}

/// A config that one knob replaces whole: a booster's weak learner, a single tree or
/// perceptron.
macro_rules! replaced_by {
    ($($config:ty: $knob:ident),*) => {$(
        impl Tune for $config {
            fn tune(&mut self, knob: &Knob) -> bool {
                let Knob::$knob(value) = knob else {
                    return false;
                };
                *self = value.clone();
                true
            }
        }
    )*};
}

replaced_by!(HoeffdingTreeConfig: Tree, PerceptronConfig: Perceptron);

/// A booster's weak learner is replaced whole by [`Knob::Weak`], keeping its drift response
/// (the detector is the booster's choice, not the learner's), and made adaptive or not by
/// [`Knob::Drift`].
impl Tune for WeakLearnerConfig {
    fn tune(&mut self, knob: &Knob) -> bool {
        let (weak, drift) = match knob {
            Knob::Weak(weak) => (weak.clone(), weak.drift().or(self.drift()).cloned()),
            Knob::Drift(drift) => (self.clone(), drift.clone()),
            _ => return false,
        };
        *self = weak.adaptive(drift);
        true
    }
}

/// A Hoeffding adaptive tree grows its trees as [`Knob::Tree`] says.
impl Tune for HatConfig {
    fn tune(&mut self, knob: &Knob) -> bool {
        let Knob::Tree(tree) = knob else {
            return false;
        };
        self.tree = tree.clone();
        true
    }
}

/// Naive Bayes has no shared knob.
impl Tune for NaiveBayesConfig {
    fn tune(&mut self, _: &Knob) -> bool {
        false
    }
}
