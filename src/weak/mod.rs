//! Weak learners: online, weighted, each a [`crate::Classifier`].
//!
//! Boosters are generic over their learner; [`WeakLearnerConfig`] and [`WeakLearner`] are
//! the run-time choice among the learners here (`--weak`), so that any learner works under
//! any booster of [`crate::model::Model`].

pub mod adaptive;
pub mod hat;
pub mod hoeffding;
pub mod naive_bayes;
pub mod perceptron;
pub mod resampling;
pub mod stump;
mod watched;

use std::any::Any;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use adaptive::{Adaptive, AdaptiveConfig};
pub use hat::{HatConfig, HoeffdingAdaptiveTree, SwapTest};
pub use hoeffding::{HoeffdingTree, HoeffdingTreeConfig, Numerics};
pub use naive_bayes::{NaiveBayes, NaiveBayesConfig};
pub use perceptron::{Perceptron, PerceptronConfig};
pub use resampling::{ResampleMode, Resampled, ResamplingConfig};
pub use stump::{Stump, StumpConfig};

use crate::Result;
use crate::core::{ClassId, Rng, StreamSpec};
use crate::drift::DriftConfig;
use crate::learner::{Classifier, Config, Ensemble, EnsembleSummary, TwoCalls};

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
        HoeffdingAdaptive("hat"): weak::HatConfig => weak::HoeffdingAdaptiveTree, classifier {
            /// A single Hoeffding adaptive tree (HAT-ADWIN, Bifet & Gavaldà 2009), at MOA's
            /// settings: alternate subtrees where a node's error rises (`weak::hat`).
            HoeffdingAdaptive = "hat" (Single, Multiclass) => weak::HatConfig::default(),
        }
    } };
}
pub(crate) use weak_rows;

/// The weak learners, one row each: its variant and name (`--weak`, and the `learner` tag of
/// a config), its config and model types, and the config a partial JSON config that names it
/// starts from. The row derives [`WeakLearnerConfig`], [`WeakLearner`], their conversions,
/// `Display`, [`Config`] and dispatch: a new learner is its file, its `mod` line, its row
/// and its [`Structure`] (`holds_itself!` for a learner without parts).
macro_rules! weak_learners {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident($name:literal): $config:ty => $model:ty, defaults $defaults:expr;
    )+) => {
        /// The weak learner of a booster, chosen at run time.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "learner", rename_all = "kebab-case")]
        pub enum WeakLearnerConfig {
            $( $(#[doc = $doc])* #[serde(rename = $name)] $variant($config), )+
            /// Another learner fed unweighted copies of each row (ALGORITHMS.md §1.2).
            Resampled(ResamplingConfig),
            /// Another learner, replaced when its error drifts (`adaptive.rs`).
            Adaptive(AdaptiveConfig),
        }

        /// A weak learner built from a [`WeakLearnerConfig`].
        // Boosters hold a Vec of these; the tree is the common case and boxing it would add
        // an indirection to every row of every member.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, Serialize, Deserialize)]
        #[serde(tag = "learner", rename_all = "kebab-case")]
        pub enum WeakLearner {
            $( $(#[doc = $doc])* #[serde(rename = $name)] $variant($model), )+
            /// A learner fed unweighted copies of each row.
            Resampled(Resampled),
            /// A learner replaced when its error drifts.
            Adaptive(Adaptive),
        }

        impl WeakLearnerConfig {
            /// The learners' names, as `--weak` and a config's `learner` tag spell them.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// One line on each learner, in the order of [`WeakLearnerConfig::NAMES`].
            pub const ABOUT: &'static [&'static str] = &[$(concat!($($doc),*)),+];

            /// The config of learner `name` that a partial config naming it starts from.
            pub fn named(name: &str) -> Option<WeakLearnerConfig> {
                match name {
                    $($name => Some(WeakLearnerConfig::$variant($defaults)),)+
                    _ => None,
                }
            }
        }

        $(
            impl From<$config> for WeakLearnerConfig {
                fn from(c: $config) -> Self {
                    WeakLearnerConfig::$variant(c)
                }
            }
        )+

        macro_rules! dispatch_config {
            ($self:expr, $c:ident => $body:expr) => {
                match $self {
                    $(WeakLearnerConfig::$variant($c) => $body,)+
                    WeakLearnerConfig::Resampled($c) => $body,
                    WeakLearnerConfig::Adaptive($c) => $body,
                }
            };
        }

        macro_rules! dispatch {
            ($self:expr, $m:ident => $body:expr) => {
                match $self {
                    $(WeakLearner::$variant($m) => $body,)+
                    WeakLearner::Resampled($m) => $body,
                    WeakLearner::Adaptive($m) => $body,
                }
            };
        }

        impl Config for WeakLearnerConfig {
            type Model = WeakLearner;

            fn validate(&self) -> Result<()> {
                dispatch_config!(self, c => c.validate())
            }

            fn with_margin_output(&self) -> Self {
                match self {
                    $(WeakLearnerConfig::$variant(c) => c.with_margin_output().into(),)+
                    WeakLearnerConfig::Resampled(c) => {
                        WeakLearnerConfig::Resampled(c.with_margin_output())
                    }
                    WeakLearnerConfig::Adaptive(c) => {
                        WeakLearnerConfig::Adaptive(c.with_margin_output())
                    }
                }
            }

            fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<WeakLearner> {
                Ok(match self {
                    $(WeakLearnerConfig::$variant(c) => {
                        WeakLearner::$variant(c.build_with_rng(spec, rng)?)
                    })+
                    WeakLearnerConfig::Resampled(c) => {
                        WeakLearner::Resampled(c.build_with_rng(spec, rng)?)
                    }
                    WeakLearnerConfig::Adaptive(c) => {
                        WeakLearner::Adaptive(c.build_with_rng(spec, rng)?)
                    }
                })
            }
        }
    };
}

weak_learners! {
    /// A Hoeffding tree (WEAK_LEARNERS.md §1).
    Hoeffding("hoeffding"): HoeffdingTreeConfig => HoeffdingTree,
        defaults HoeffdingTreeConfig::jgt_paper();
    /// Online naive Bayes (§2).
    NaiveBayes("naive-bayes"): NaiveBayesConfig => NaiveBayes, defaults NaiveBayesConfig::default();
    /// A perceptron (§3).
    Perceptron("perceptron"): PerceptronConfig => Perceptron, defaults PerceptronConfig::default();
    /// An online decision stump: one split, chosen again every grace period (`stump.rs`).
    Stump("stump"): StumpConfig => Stump, defaults StumpConfig::default();
    /// A Hoeffding adaptive tree: alternate subtrees where a node's error rises (`hat.rs`).
    HoeffdingAdaptive("hat"): HatConfig => HoeffdingAdaptiveTree, defaults HatConfig::default();
}

/// A learner without parts holds itself.
macro_rules! holds_itself {
    ($($model:ty),*) => {$(
        impl Structure for $model {
            fn heap_bytes(&self) -> usize {
                <$model>::heap_bytes(self)
            }

            fn learners<'a, T: Any>(&'a self, out: &mut Vec<&'a T>) {
                out.extend((self as &dyn Any).downcast_ref::<T>());
            }

            fn learners_mut<'a, T: Any>(&'a mut self, out: &mut Vec<&'a mut T>) {
                out.extend((self as &mut dyn Any).downcast_mut::<T>());
            }
        }
    )*};
}

holds_itself!(HoeffdingTree, NaiveBayes, Perceptron, Stump);

impl Default for WeakLearnerConfig {
    fn default() -> Self {
        WeakLearnerConfig::Hoeffding(HoeffdingTreeConfig::default())
    }
}

impl fmt::Display for WeakLearnerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        dispatch_config!(self, c => c.fmt(f))
    }
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

    fn two_calls(&mut self) -> Option<&mut dyn TwoCalls> {
        dispatch!(self, m => m.two_calls())
    }

    fn adapted(&self) -> bool {
        dispatch!(self, m => m.adapted())
    }

    fn wake(&mut self) {
        dispatch!(self, m => m.wake())
    }
}

/// What any model is made of, as checkpoints and `inspect` read it: its learners of any one
/// type in member order (a booster's members in turn, one-vs-all's class by class) and, for
/// a booster, its ensemble in brief, and its size in memory. Every [`Ensemble`] whose
/// members have a structure has one; every learner of the rows of `weak_learners!` holds
/// itself.
pub trait Structure {
    /// Bytes the model holds on the heap, by its buffers' capacities: what a keyed model's
    /// memory budget counts. Members and their growing statistics are counted in full; a
    /// booster's own per-learner scalars (α, error rates, under a hundred bytes a member) are
    /// not.
    fn heap_bytes(&self) -> usize;

    /// Appends the model's learners of type `T` to `out`, in member order (the Hoeffding
    /// trees whose nodes a checkpoint writes as a table, for instance).
    fn learners<'a, T: Any>(&'a self, out: &mut Vec<&'a T>);

    /// Appends the model's learners of type `T` to `out`, in member order, to change in
    /// place.
    fn learners_mut<'a, T: Any>(&'a mut self, out: &mut Vec<&'a mut T>);

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

    fn learners<'a, T: Any>(&'a self, out: &mut Vec<&'a T>) {
        self.members().iter().for_each(|m| m.learners(out));
    }

    fn learners_mut<'a, T: Any>(&'a mut self, out: &mut Vec<&'a mut T>) {
        self.members_mut()
            .iter_mut()
            .for_each(|m| m.learners_mut(out));
    }

    fn ensemble(&self) -> Option<EnsembleSummary> {
        Some(self.summary())
    }
}

impl Structure for Resampled {
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<WeakLearner>() + self.inner().heap_bytes()
    }

    fn learners<'a, T: Any>(&'a self, out: &mut Vec<&'a T>) {
        self.inner().learners(out);
    }

    fn learners_mut<'a, T: Any>(&'a mut self, out: &mut Vec<&'a mut T>) {
        self.inner_mut().learners_mut(out);
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

            fn learners<'a, T: std::any::Any>(&'a self, out: &mut Vec<&'a T>) {
                dispatch!(self, m => m.learners(out))
            }

            fn learners_mut<'a, T: std::any::Any>(&'a mut self, out: &mut Vec<&'a mut T>) {
                dispatch!(self, m => m.learners_mut(out))
            }

            $(fn $ensemble(&self) -> Option<$crate::learner::EnsembleSummary> {
                dispatch!(self, m => m.$ensemble())
            })?
        }
    };
}
pub(crate) use structure_by_dispatch;

structure_by_dispatch!(WeakLearner);

/// An adaptive learner holds itself, the learner in place and its background learner (the
/// fresh learner it starts them from is a template, not a learner of the model).
impl Structure for Adaptive {
    fn heap_bytes(&self) -> usize {
        3 * std::mem::size_of::<WeakLearner>()
            + self.inner().heap_bytes()
            + self.background().map_or(0, Structure::heap_bytes)
    }

    fn learners<'a, T: Any>(&'a self, out: &mut Vec<&'a T>) {
        out.extend((self as &dyn Any).downcast_ref::<T>());
        self.inner().learners(out);
        if let Some(background) = self.background() {
            background.learners(out);
        }
    }

    fn learners_mut<'a, T: Any>(&'a mut self, out: &mut Vec<&'a mut T>) {
        if (self as &dyn Any).is::<T>() {
            out.extend((self as &mut dyn Any).downcast_mut::<T>());
            return;
        }
        let (inner, background) = self.parts_mut();
        inner.learners_mut(out);
        if let Some(background) = background {
            background.learners_mut(out);
        }
    }
}

impl WeakLearnerConfig {
    /// This learner replaced when its error drifts (`Some`), or as it is (`None`): what
    /// `--drift-detector` does to a booster's learners. An adaptive learner is re-wrapped,
    /// never wrapped twice.
    pub fn adaptive(self, drift: Option<DriftConfig>) -> WeakLearnerConfig {
        let inner = match self {
            WeakLearnerConfig::Adaptive(c) => *c.inner,
            other => other,
        };
        match drift {
            Some(drift) => WeakLearnerConfig::Adaptive(AdaptiveConfig {
                drift,
                inner: Box::new(inner),
                asleep: false,
            }),
            None => inner,
        }
    }
}
