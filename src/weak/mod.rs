//! Weak learners: online, weighted, each a [`crate::Classifier`].
//!
//! Boosters are generic over their learner; [`WeakLearnerConfig`] and [`WeakLearner`] are
//! the run-time choice among the learners here (`--weak`), so that any learner works under
//! any booster of [`crate::model::Model`].

pub mod hoeffding;
pub mod naive_bayes;
pub mod perceptron;
pub mod resampling;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use hoeffding::{HoeffdingTree, HoeffdingTreeConfig, Numerics};
pub use naive_bayes::{NaiveBayes, NaiveBayesConfig};
pub use perceptron::{Perceptron, PerceptronConfig};
pub use resampling::{ResampleMode, Resampled, ResamplingConfig};

use crate::Result;
use crate::core::{ClassId, Rng, StreamSpec};
use crate::learner::{Classifier, Config, Ensemble, EnsembleSummary};

/// This family's rows of the model catalogue, handed on to the next family's macro (see
/// [`crate::model`], which invokes the chain and sees each family's module by name): a new
/// algorithm here is its file, its `mod` line and a row below.
macro_rules! weak_rows {
    ($next:ident $(, $rest:ident)*; $($rows:tt)*) => { $next! { $($rest),*; $($rows)*
        Hoeffding("hoeffding"): weak::HoeffdingTreeConfig => weak::HoeffdingTree, classifier {
            /// A single Hoeffding tree (WEAK_LEARNERS.md §1), at MOA's settings.
            // Of the three presets, `moa` is within 0.02 of the best on 6 of the 9 shared
            // multiclass sets (jgt-paper on 4): RESULTS.md, "One Hoeffding tree".
            Hoeffding = "hoeffding" (Single, Multiclass) => weak::HoeffdingTreeConfig::moa(),
        }
        NaiveBayes("naive-bayes"): weak::NaiveBayesConfig => weak::NaiveBayes, classifier {
            /// A single naive Bayes learner (WEAK_LEARNERS.md §2).
            NaiveBayes = "naive-bayes" (Single, Multiclass) => weak::NaiveBayesConfig::default(),
        }
        Perceptron("perceptron"): weak::PerceptronConfig => weak::Perceptron, classifier {
            /// A single perceptron (WEAK_LEARNERS.md §3).
            Perceptron = "perceptron" (Single, Multiclass) => weak::PerceptronConfig::default(),
        }
    } };
}
pub(crate) use weak_rows;

/// The weak learner of a booster, chosen at run time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "learner", rename_all = "kebab-case")]
pub enum WeakLearnerConfig {
    /// A Hoeffding tree (WEAK_LEARNERS.md §1).
    Hoeffding(HoeffdingTreeConfig),
    /// Online naive Bayes (§2).
    NaiveBayes(NaiveBayesConfig),
    /// A perceptron (§3).
    Perceptron(PerceptronConfig),
    /// Another learner fed unweighted copies of each row (ALGORITHMS.md §1.2).
    Resampled(ResamplingConfig),
}

impl Default for WeakLearnerConfig {
    fn default() -> Self {
        WeakLearnerConfig::Hoeffding(HoeffdingTreeConfig::default())
    }
}

impl From<HoeffdingTreeConfig> for WeakLearnerConfig {
    fn from(c: HoeffdingTreeConfig) -> Self {
        WeakLearnerConfig::Hoeffding(c)
    }
}

impl From<NaiveBayesConfig> for WeakLearnerConfig {
    fn from(c: NaiveBayesConfig) -> Self {
        WeakLearnerConfig::NaiveBayes(c)
    }
}

impl From<PerceptronConfig> for WeakLearnerConfig {
    fn from(c: PerceptronConfig) -> Self {
        WeakLearnerConfig::Perceptron(c)
    }
}

impl fmt::Display for WeakLearnerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WeakLearnerConfig::Hoeffding(c) => c.fmt(f),
            WeakLearnerConfig::NaiveBayes(c) => c.fmt(f),
            WeakLearnerConfig::Perceptron(c) => c.fmt(f),
            WeakLearnerConfig::Resampled(c) => c.fmt(f),
        }
    }
}

impl Config for WeakLearnerConfig {
    type Model = WeakLearner;

    fn validate(&self) -> Result<()> {
        match self {
            WeakLearnerConfig::Hoeffding(c) => c.validate(),
            WeakLearnerConfig::NaiveBayes(c) => c.validate(),
            WeakLearnerConfig::Perceptron(c) => c.validate(),
            WeakLearnerConfig::Resampled(c) => c.validate(),
        }
    }

    fn with_margin_output(&self) -> Self {
        match self {
            WeakLearnerConfig::Hoeffding(c) => c.with_margin_output().into(),
            WeakLearnerConfig::NaiveBayes(c) => c.with_margin_output().into(),
            WeakLearnerConfig::Perceptron(c) => c.with_margin_output().into(),
            WeakLearnerConfig::Resampled(c) => WeakLearnerConfig::Resampled(c.with_margin_output()),
        }
    }

    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<WeakLearner> {
        Ok(match self {
            WeakLearnerConfig::Hoeffding(c) => WeakLearner::Hoeffding(c.build_with_rng(spec, rng)?),
            WeakLearnerConfig::NaiveBayes(c) => {
                WeakLearner::NaiveBayes(c.build_with_rng(spec, rng)?)
            }
            WeakLearnerConfig::Perceptron(c) => {
                WeakLearner::Perceptron(c.build_with_rng(spec, rng)?)
            }
            WeakLearnerConfig::Resampled(c) => WeakLearner::Resampled(c.build_with_rng(spec, rng)?),
        })
    }
}

/// A weak learner built from a [`WeakLearnerConfig`].
// Boosters hold a Vec of these; the tree is the common case and boxing it would add an
// indirection to every row of every member.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "learner", rename_all = "kebab-case")]
pub enum WeakLearner {
    /// A Hoeffding tree.
    Hoeffding(HoeffdingTree),
    /// Online naive Bayes.
    NaiveBayes(NaiveBayes),
    /// A perceptron.
    Perceptron(Perceptron),
    /// A learner fed unweighted copies of each row.
    Resampled(Resampled),
}

macro_rules! dispatch {
    ($self:expr, $m:ident => $body:expr) => {
        match $self {
            WeakLearner::Hoeffding($m) => $body,
            WeakLearner::NaiveBayes($m) => $body,
            WeakLearner::Perceptron($m) => $body,
            WeakLearner::Resampled($m) => $body,
        }
    };
}

impl Classifier for WeakLearner {
    #[inline]
    fn n_classes(&self) -> usize {
        dispatch!(self, m => m.n_classes())
    }

    fn add_class(&mut self) -> Result<()> {
        dispatch!(self, m => m.add_class())
    }

    #[inline]
    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        dispatch!(self, m => m.learn(x, y, weight))
    }

    #[inline]
    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        dispatch!(self, m => m.predict_proba(x, out))
    }

    #[inline]
    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        dispatch!(self, m => m.learn_predict(x, y, weight, out))
    }

    fn learns_in_two_calls(&self) -> bool {
        dispatch!(self, m => m.learns_in_two_calls())
    }

    #[inline]
    fn predict_to_learn(&mut self, x: &[f64], out: &mut [f64]) {
        dispatch!(self, m => m.predict_to_learn(x, out))
    }

    #[inline]
    fn learn_predicted(&mut self, x: &[f64], y: ClassId, weight: f64) {
        dispatch!(self, m => m.learn_predicted(x, y, weight))
    }
}

/// What any model is made of, as checkpoints and `inspect` read it: its Hoeffding trees in
/// member order (a booster's members in turn, one-vs-all's class by class) and, for a
/// booster, its ensemble in brief, and its size in memory. Every [`Ensemble`] whose members
/// have a structure has one.
pub trait Structure {
    /// Bytes the model holds on the heap, by its buffers' capacities: what a keyed model's
    /// memory budget counts. Members and their growing statistics are counted in full; a
    /// booster's own per-learner scalars (α, error rates, under a hundred bytes a member) are
    /// not.
    fn heap_bytes(&self) -> usize;

    /// Appends the model's trees to `out`, in member order.
    fn trees<'a>(&'a self, out: &mut Vec<&'a HoeffdingTree>);

    /// Appends the model's trees to `out`, in member order, to change in place.
    fn trees_mut<'a>(&'a mut self, out: &mut Vec<&'a mut HoeffdingTree>);

    /// The ensemble in brief; `None` for a single learner.
    fn ensemble(&self) -> Option<EnsembleSummary> {
        None
    }
}

impl<E: Ensemble> Structure for E
where
    E::Member: Structure,
{
    fn heap_bytes(&self) -> usize {
        let members = self.members();
        std::mem::size_of_val(members) + members.iter().map(Structure::heap_bytes).sum::<usize>()
    }

    fn trees<'a>(&'a self, out: &mut Vec<&'a HoeffdingTree>) {
        self.members().iter().for_each(|m| m.trees(out));
    }

    fn trees_mut<'a>(&'a mut self, out: &mut Vec<&'a mut HoeffdingTree>) {
        self.members_mut().iter_mut().for_each(|m| m.trees_mut(out));
    }

    fn ensemble(&self) -> Option<EnsembleSummary> {
        Some(self.summary())
    }
}

impl Structure for HoeffdingTree {
    fn heap_bytes(&self) -> usize {
        HoeffdingTree::heap_bytes(self)
    }

    fn trees<'a>(&'a self, out: &mut Vec<&'a HoeffdingTree>) {
        out.push(self);
    }

    fn trees_mut<'a>(&'a mut self, out: &mut Vec<&'a mut HoeffdingTree>) {
        out.push(self);
    }
}

/// Learners without trees.
macro_rules! treeless {
    ($($t:ty),*) => {$(
        impl Structure for $t {
            fn heap_bytes(&self) -> usize {
                <$t>::heap_bytes(self)
            }

            fn trees<'a>(&'a self, _: &mut Vec<&'a HoeffdingTree>) {}

            fn trees_mut<'a>(&'a mut self, _: &mut Vec<&'a mut HoeffdingTree>) {}
        }
    )*};
}

treeless!(NaiveBayes, Perceptron);

impl Structure for Resampled {
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<WeakLearner>() + self.inner().heap_bytes()
    }

    fn trees<'a>(&'a self, out: &mut Vec<&'a HoeffdingTree>) {
        self.inner().trees(out);
    }

    fn trees_mut<'a>(&'a mut self, out: &mut Vec<&'a mut HoeffdingTree>) {
        self.inner_mut().trees_mut(out);
    }
}

/// [`Structure`] for an enum of models, forwarded to the variant it holds by the `dispatch!`
/// macro in scope where it is used; `ensemble` too with `, ensemble`.
macro_rules! structure_by_dispatch {
    ($t:ty $(, $ensemble:ident)?) => {
        impl $crate::weak::Structure for $t {
            fn heap_bytes(&self) -> usize {
                dispatch!(self, m => m.heap_bytes())
            }

            fn trees<'a>(&'a self, out: &mut Vec<&'a $crate::weak::HoeffdingTree>) {
                dispatch!(self, m => m.trees(out))
            }

            fn trees_mut<'a>(&'a mut self, out: &mut Vec<&'a mut $crate::weak::HoeffdingTree>) {
                dispatch!(self, m => m.trees_mut(out))
            }

            $(fn $ensemble(&self) -> Option<$crate::learner::EnsembleSummary> {
                dispatch!(self, m => m.$ensemble())
            })?
        }
    };
}
pub(crate) use structure_by_dispatch;

structure_by_dispatch!(WeakLearner);
