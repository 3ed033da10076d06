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
    HatConfig, HoeffdingTreeConfig, NaiveBayesConfig, PerceptronConfig, ResampleMode,
    ResamplingConfig, WeakLearnerConfig,
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
    /// A booster's weak learner fed unweighted copies of each row.
    Resample(ResampleMode),
    /// The detector on a booster's learners' error, which replaces a learner when it
    /// drifts (`None`: never).
    Drift(Option<DriftConfig>),
    /// The tree preset of an ensemble's first member (`None`: as the rest).
    Lead(Option<Preset>),
    /// The detector an adaptive first member wakes on the other members once it first
    /// swaps a subtree in (`None`: its swaps are the whole response).
    LeadWakes(Option<DriftConfig>),
    /// A single Hoeffding tree, or the tree a booster's learners are or hold.
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
            Knob::Resample(_) => "resample",
            Knob::Drift(_) => "drift-detector",
            Knob::Lead(_) => "lead",
            Knob::LeadWakes(_) => "lead-wakes",
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

/// A booster's weak learner is replaced whole by [`Knob::Weak`], keeping its drift detector
/// (the detector is the booster's choice, not the learner's); [`Knob::Drift`] first takes
/// away whatever drift response the learner has (a detector around it, or Hoeffding adaptive
/// trees, which become plain trees), then puts the detector it names around it;
/// [`Knob::Tree`] sets the tree inside whatever learner it is; [`Knob::Resample`] feeds it
/// copies.
impl Tune for WeakLearnerConfig {
    fn tune(&mut self, knob: &Knob) -> bool {
        match knob {
            Knob::Weak(weak) => {
                let drift = weak.drift().or(self.drift()).cloned();
                *self = weak.clone().adaptive(drift);
            }
            Knob::Drift(drift) => {
                let plain = match self.clone().adaptive(None) {
                    WeakLearnerConfig::HoeffdingAdaptive(hat) => hat.tree.into(),
                    other => other,
                };
                *self = plain.adaptive(drift.clone());
            }
            Knob::Tree(tree) => return self.set_tree(tree),
            Knob::Resample(mode) => {
                let drift = self.drift().cloned();
                let inner = Box::new(self.clone().adaptive(None));
                let resampled =
                    WeakLearnerConfig::Resampled(ResamplingConfig { mode: *mode, inner });
                *self = resampled.adaptive(drift);
            }
            _ => return false,
        }
        true
    }
}

impl WeakLearnerConfig {
    /// Sets the Hoeffding tree this learner is or holds; false for a learner without one.
    fn set_tree(&mut self, tree: &HoeffdingTreeConfig) -> bool {
        match self {
            WeakLearnerConfig::Hoeffding(t) => *t = tree.clone(),
            WeakLearnerConfig::HoeffdingAdaptive(hat) => hat.tree = tree.clone(),
            WeakLearnerConfig::Adaptive(a) => return a.inner.set_tree(tree),
            WeakLearnerConfig::Resampled(r) => return r.inner.set_tree(tree),
            _ => return false,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weak::hoeffding::Preset;

    fn hat() -> WeakLearnerConfig {
        HatConfig {
            tree: HoeffdingTreeConfig::jgt_paper_nba(),
            ..HatConfig::default()
        }
        .into()
    }

    fn tuned(mut weak: WeakLearnerConfig, knobs: &[Knob]) -> WeakLearnerConfig {
        for knob in knobs {
            assert!(weak.tune(knob), "{knob:?}");
        }
        weak
    }

    /// What each flag does to a booster's Hoeffding adaptive trees, in the order the command
    /// line gives its knobs (the drift response first).
    #[test]
    fn the_drift_response_tree_and_resampling_reach_the_learner_a_booster_has() {
        let adwin = DriftConfig::named("adwin");
        // `--drift-detector none`: no response of any kind, plain trees.
        let plain = tuned(hat(), &[Knob::Drift(None)]);
        assert_eq!(plain, HoeffdingTreeConfig::jgt_paper_nba().into());
        // `--drift-detector adwin`: the detector's response around plain trees.
        let watched = tuned(hat(), &[Knob::Drift(adwin.clone())]);
        assert_eq!(watched, plain.clone().adaptive(adwin.clone()));
        // `--drift-detector none --weak hat`: adaptive trees alone.
        assert_eq!(tuned(hat(), &[Knob::Drift(None), Knob::Weak(hat())]), hat());
        // `--drift-detector adwin --weak hoeffding`: the weak learner keeps the detector.
        let tree: WeakLearnerConfig = HoeffdingTreeConfig::moa().into();
        let kept = tuned(
            hat(),
            &[Knob::Drift(adwin.clone()), Knob::Weak(tree.clone())],
        );
        assert_eq!(kept, tree.adaptive(adwin.clone()));
        // `--preset moa`: the tree inside, whatever holds it.
        let moa = HoeffdingTreeConfig::preset(Preset::Moa);
        let WeakLearnerConfig::HoeffdingAdaptive(c) = tuned(hat(), &[Knob::Tree(moa.clone())])
        else {
            panic!("still an adaptive tree");
        };
        assert_eq!(c.tree, moa);
        let inside = tuned(watched.clone(), &[Knob::Tree(moa.clone())]);
        assert_eq!(inside, WeakLearnerConfig::from(moa).adaptive(adwin.clone()));
        // `--resample poisson`: copies fed to the learner, inside the detector's wrapper.
        let resampled = tuned(watched, &[Knob::Resample(ResampleMode::Poisson)]);
        let WeakLearnerConfig::Adaptive(a) = &resampled else {
            panic!("the detector stays outermost: {resampled:?}");
        };
        assert!(matches!(*a.inner, WeakLearnerConfig::Resampled(_)));
        // A learner without a tree has no tree to set.
        let mut bayes: WeakLearnerConfig = NaiveBayesConfig::default().into();
        assert!(!bayes.tune(&Knob::Tree(HoeffdingTreeConfig::moa())));
    }
}
