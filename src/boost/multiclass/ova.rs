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
//!
//! The members of a bundle are independent of each other on a row, so a bundle whose row is
//! costly (OvA's `k` boosters of 100 trees: hundreds of microseconds) and that runs on a
//! thread of rayon's pool (as `streamboost replay` and `run` do) runs them as tasks on that
//! pool (its size: the machine's cores, or `RAYON_NUM_THREADS`). Called from other threads
//! (a SQL query's, one per partition and core) it keeps to its own. Each member
//! writes its own output and draws from its own generator, so the outputs and the models
//! are the same whatever the threads; the bundle's own tie draw comes after all members.
//! Whether a row is costly is timed, on one thread, now and then (`boost::two_threads`).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ada_olm::{AdaBoostOlm, AdaBoostOlmConfig};
use crate::boost::two_threads::Pace;
use crate::boost::{Knob, LeadMember, Tune};
use crate::core::math::{TieBreak, argmax_tie, normalize};
use crate::core::{ClassId, ClassSet, Rng, StreamSpec};
use crate::learner::{Classifier, Config, TwoCalls};
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
    fn as_lead(&self, preset: Option<Preset>, adapts: bool) -> Option<Self> {
        Some(BinaryBundleConfig {
            binary: self.binary.as_lead(preset, adapts)?,
            tie_break: self.tie_break,
            multiclass: true,
        })
    }

    fn drift(&self) -> Option<&crate::drift::DriftConfig> {
        self.binary.drift()
    }

    fn asleep(&self, drift: &crate::drift::DriftConfig) -> Option<Self> {
        Some(BinaryBundleConfig {
            binary: self.binary.asleep(drift)?,
            ..self.clone()
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
                pace: Pace::default(),
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
            pace: Pace::default(),
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
    /// Whether the members' rows are costly enough for two threads.
    #[serde(skip)]
    pace: Pace,
}

/// The one-thread time of a bundle's row above which its members go to the pool's threads
/// as tasks ([`Pace`]).
const SPLIT_ABOVE: Duration = Duration::from_micros(50);

/// `each(j, member_j, out_j)` for every member: on rayon's threads, one task a member, if
/// `split` (members differ in cost, so a thread that is done takes the next member).
fn for_each_member<L: Send, O: Send>(
    members: &mut [L], outs: &mut [O], split: bool, each: &(impl Fn(usize, &mut L, &mut O) + Sync),
) {
    if split {
        use rayon::prelude::*;
        (members.par_iter_mut().zip(outs.par_iter_mut()))
            .with_max_len(1)
            .enumerate()
            .for_each(|(j, (m, o))| each(j, m, o));
    } else {
        for (j, (m, o)) in members.iter_mut().zip(outs.iter_mut()).enumerate() {
            each(j, m, o);
        }
    }
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
        let mut done = vec![(); self.members.len()];
        let members = &mut self.members;
        self.pace.run(SPLIT_ABOVE, |split| {
            for_each_member(members, &mut done, split, &|j, m, _| {
                m.learn(x, binary_label(y, j), weight)
            })
        });
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

    /// Member by member, each over all of `xs` (a booster's trees in turn inside it).
    fn predict_proba_rows(&self, xs: &[&[f64]], proba: &mut [f64]) {
        if self.multiclass {
            return self.members[0].predict_proba_rows(xs, proba);
        }
        let k = self.members.len();
        let mut p = vec![0.0; 2 * xs.len()];
        for (j, m) in self.members.iter().enumerate() {
            m.predict_proba_rows(xs, &mut p);
            for (r, pair) in p.chunks_exact(2).enumerate() {
                proba[r * k + j] = pair[POSITIVE];
            }
        }
        proba.chunks_exact_mut(k).for_each(normalize);
    }

    /// Each member scores the row and then learns it; the prediction is the class whose
    /// member is most sure of "positive", under the tie rule.
    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        if self.multiclass {
            return self.members[0].learn_predict(x, y, weight, out);
        }
        let members = &mut self.members;
        self.pace.run(SPLIT_ABOVE, |split| {
            for_each_member(members, out, split, &|j, m, o| {
                let mut p = [0.0; 2];
                m.learn_predict(x, y.map(|y| binary_label(y, j)), weight, &mut p);
                *o = p[POSITIVE];
            })
        });
        let predicted = argmax_tie(out, self.tie_break, &mut self.rng);
        normalize(out);
        predicted
    }

    /// Where every member does: AdaOVA's bundles of trees.
    fn two_calls(&mut self) -> Option<&mut dyn TwoCalls> {
        let every = self.members.iter_mut().all(|m| m.two_calls().is_some());
        every.then_some(self as &mut dyn TwoCalls)
    }

    /// Where a member has (AdaOVA's lead is a bundle of one multiclass tree).
    fn adapted(&self) -> bool {
        self.members.iter().any(Classifier::adapted)
    }

    /// Every member, and the one a new class would get.
    fn wake(&mut self) {
        self.members.iter_mut().for_each(Classifier::wake);
        self.newcomer.iter_mut().for_each(Classifier::wake);
    }
}

/// A bundle whose members all learn in two calls ([`Classifier::two_calls`]).
impl<L: Classifier> TwoCalls for BinaryBundle<L> {
    /// Each member's first call, then the bundle's tie draw that `learn_predict` makes (its
    /// generator is its own, so the draw may come before the members learn). The members
    /// stay on this thread.
    fn predict_to_learn(&mut self, x: &[f64], out: &mut [f64]) {
        if self.multiclass {
            return in_two_calls(&mut self.members[0]).predict_to_learn(x, out);
        }
        let mut p = [0.0; 2];
        for (o, m) in out.iter_mut().zip(&mut self.members) {
            in_two_calls(m).predict_to_learn(x, &mut p);
            *o = p[POSITIVE];
        }
        argmax_tie(out, self.tie_break, &mut self.rng);
        normalize(out);
    }

    fn learn_predicted(&mut self, x: &[f64], y: ClassId, weight: f64) {
        if self.multiclass {
            return in_two_calls(&mut self.members[0]).learn_predicted(x, y, weight);
        }
        for (j, m) in self.members.iter_mut().enumerate() {
            in_two_calls(m).learn_predicted(x, binary_label(y, j), weight);
        }
    }
}

/// A bundle's member in its two-call form, which a bundle in two calls has.
fn in_two_calls<L: Classifier>(member: &mut L) -> &mut dyn TwoCalls {
    member
        .two_calls()
        .expect("a bundle learns in two calls only when its members do")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weak::{HoeffdingTreeConfig, WeakLearnerConfig};

    /// AdaOVA, led by one multiclass tree, on two threads against one
    /// ([`crate::boost::two_threads::tests::two_threads_match_one`]): its bundles learn in two
    /// calls.
    #[test]
    fn ada_ova_on_two_threads_predicts_and_learns_as_on_one() {
        let bundle =
            BinaryBundleConfig::new(WeakLearnerConfig::from(HoeffdingTreeConfig::jgt_paper()));
        let config = AdaBoostOlmConfig {
            n_learners: 5,
            lead: Some(Preset::Moa),
            ..AdaBoostOlmConfig::new(bundle)
        };
        crate::boost::two_threads::tests::two_threads_match_one(config);
    }

    /// OvA's members on two threads give the outputs and the models they give on one: each
    /// member draws from its own generator, and the bundle's tie draw comes after them.
    #[test]
    fn members_on_two_threads_predict_and_learn_as_on_one() {
        let data = crate::synth::mixed(300, 0.05, 0.1, 8);
        let k = data.spec().n_classes();
        let config = one_vs_all(AdaBoostOlmConfig {
            n_learners: 5,
            ..AdaBoostOlmConfig::new(WeakLearnerConfig::from(HoeffdingTreeConfig::jgt_paper()))
        });
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let run = |split: bool| {
            let mut model = config.build(data.spec(), 3).unwrap();
            let mut out = vec![0.0; k];
            let mut outputs = Vec::new();
            pool.install(|| {
                for i in 0..data.len() {
                    // Not timed (rows is never a multiple of EVERY here): the given split.
                    model.pace = Pace {
                        rows: 1,
                        split,
                        ..Pace::default()
                    };
                    let predicted = model.learn_predict(data.row(i), data.label(i), 1.0, &mut out);
                    outputs.push((predicted, out.clone()));
                    if i % 7 == 0 {
                        model.pace = Pace {
                            rows: 1,
                            split,
                            ..Pace::default()
                        };
                        model.learn(data.row(i), (i + 1) % k, 0.5);
                    }
                }
            });
            (outputs, serde_json::to_string(&model).unwrap())
        };
        let (one, two) = (run(false), run(true));
        assert!(one.0 == two.0, "the outputs differ");
        assert!(one.1 == two.1, "the models differ");
        // Off rayon's pool (a query engine's thread), however slow the row, one thread.
        let mut model = config.build(data.spec(), 3).unwrap();
        let mut out = vec![0.0; k];
        model.learn_predict(data.row(0), data.label(0), 1.0, &mut out);
        assert!(!model.pace.split && model.pace.rows == 1);
    }
}
