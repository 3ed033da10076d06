//! # streamboost
//!
//! Online boosting for stream processing: `N` online weak learners combined into a strong
//! online learner that predicts each row before its label is revealed, then learns from it.
//!
//! ## Layers
//! Each layer uses only those above it in this table; the import graph has no circles.
//!
//! | module | what | feature |
//! |---|---|---|
//! | [`core`] | rows, feature schemas, class sets, encodings, the seeded RNG, numeric helpers | always |
//! | [`learner`] | the contracts: [`Classifier`], [`Ranker`], [`Config`], [`learner::Ensemble`] | always |
//! | [`drift`] | change detectors (ADWIN, Page–Hinkley, DDM, HDDM_A) over a stream of errors or losses | always |
//! | [`weak`] | weak learners (Hoeffding tree, naive Bayes, perceptron, decision stump), one row each, and [`weak::Structure`] | always |
//! | [`boost`] | boosters, generic over their weak learner; [`boost::BoosterConfig`], [`boost::Knob`]; batch boosting of \[MS\] over a cost-sensitive weak learner ([`boost::batch`]) | always |
//! | [`scaling`] | online feature scaling in front of any model | always |
//! | [`runtime::delay`] | delayed labels: the bounded store where scored rows wait for their labels | always |
//! | [`model`] | **the algorithm catalogue**: every algorithm by name, one enum over the models | always |
//! | [`eval`] | the prequential (test-then-train) driver, metrics and reports | always |
//! | [`synth`] | seeded synthetic streams for tests and examples | always |
//! | `files` (private) | reading untrusted Parquet (no embedded Arrow schema, panics as errors); atomic file replacement; outputs checked against inputs; one process per model (lock files) | `columnar` |
//! | `checkpoint` | a model's complete state in one Parquet file, written atomically | `columnar` |
//! | `columnar` | CSV / Parquet through the Arrow readers, RecordBatch ⇄ rows, the operator | `columnar` |
//! | `runtime::cursor` | a model's place in its stream around the Arrow operator: counters, position, learning once, labels that arrive later, save and resume | `columnar` |
//! | `runtime::keyed` | one model per value of a key column within a memory budget, and its checkpoint directory | `columnar` |
//! | `runtime::live` | a model (or one per key, in a keyed checkpoint directory, held within a memory budget) bound to a checkpoint and a commit policy (rows, seconds), with its input position | `columnar` |
//! | `runtime::replay` | a logged stream replayed through a model, checkpointed by policy | `columnar` |
//! | `runtime::job` | the `run` job: a live model over a watched directory (one output per input file, exactly once) or an Arrow IPC pipe | `columnar` |
//! | `runtime::stream` | the operator over an async stream of record batches | `stream` |
//! | `sql` | DataFusion SQL functions over named models, live models among them | `sql` |
//! | `cli` | the `streamboost` command (`replay`, `run`, `train`, `inspect`, `plot`, `sql`): flags and presentation only | `cli` (default) |
//!
//! The streaming runtime ([`runtime`]: delayed labels, replay, live models, the job, async
//! streams) is one folder; its `delay` is free of Arrow, the rest needs `columnar`.
//! The specification the code cites by section (`ALGORITHMS.md §3.4`, `WEAK_LEARNERS.md
//! §1.9`) is in the repository's `docs/`.
//!
//! Algorithms never see Arrow: everything above `columnar` builds with
//! `--no-default-features`, and `sql` builds without `cli`.
//!
//! ## The catalogue, and adding an algorithm
//! [`model`] lists every algorithm once, one macro row each: its name, what it is
//! ([`model::Capabilities`]), its config and model types and its default config. The
//! [`model::Algorithm`], [`model::ModelConfig`] and [`model::Model`] enums, `--algo`'s values
//! and help, checkpoints' and reports' tags and the dispatch all derive from that row. What a
//! row cannot say lives beside the algorithm's code:
//!
//! * its config type, with its defaults and presets as constructors, implementing
//!   [`boost::BoosterConfig`] (own parameters and `assemble_over`; validation and the seeded
//!   construction of the members come from one blanket [`Config`] impl) and
//!   [`boost::Tune`] (which of the shared [`boost::Knob`]s, the command line's model flags,
//!   it takes);
//! * its model, implementing [`Classifier`] (or [`Ranker`]) and [`learner::Ensemble`]
//!   (through the `ensemble!` macro), which gives it tree access for checkpoints and an
//!   `inspect` summary.
//!
//! So a new booster is its file, a `pub mod` line, and one catalogue row (the booster's
//! file implements `assemble_over`: its members arrive checked, with their class count and
//! the booster's own generator). The contract and
//! checkpoint suites iterate the catalogue, so it is tested without being listed; a JSON
//! config naming it (`{"algorithm": "name"}`) and `--algo name` work at once.
//!
//! A batch algorithm ([`model::Role::Batch`]: AdaBoost.MM, AdaBoost.M1, AdaBoost.MH and
//! the OS strategy of \[MS\], in [`boost::batch`]) is a row like the others. It is trained
//! by [`model::ModelConfig::train_batch`] on a logged table (`streamboost train`); from
//! then on it is a [`model::Model`] that every scorer serves (checkpoints, the operator, SQL) and
//! that scores without learning ([`Classifier::learns_online`]). A fresh model of it is
//! refused where an online one would be built. Adding one touched, besides its own files
//! under `boost/batch/`: the catalogue row, the `Role::Batch` capability (once), `train`'s
//! command, and the README.
//!
//! A declarative macro rather than a descriptor trait, because the catalogue's products are
//! enums (a trait cannot add variants) with literal serde tags; the traits carry everything
//! else, so the macro stays a list.
//!
//! ## Quickstart
//! ```
//! use streamboost::prelude::*;
//!
//! let spec = StreamSpec::numeric(2, 2).unwrap();
//! let config = AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper());
//! let mut model = config.build(&spec, 42).unwrap();
//! let mut proba = [0.0; 2];
//! let mut rng = Rng::new(7);
//! let mut correct = 0;
//! for _ in 0..2000 {
//!     let x = [rng.uniform(), rng.uniform()];
//!     let y = usize::from(x[0] + x[1] > 1.0);
//!     // Test, then train: the prediction is made before the label is used.
//!     if model.learn_predict(&x, Some(y), 1.0, &mut proba) == y {
//!         correct += 1;
//!     }
//! }
//! assert!(correct > 1500);
//! ```

pub mod boost;
pub mod core;
pub mod drift;
mod error;
pub mod eval;
pub mod learner;
pub mod model;
pub mod scaling;
pub mod synth;
pub mod weak;

#[cfg(feature = "columnar")]
pub mod checkpoint;
#[cfg(feature = "columnar")]
pub mod columnar;
#[cfg(feature = "columnar")]
mod files;
pub mod runtime;

#[cfg(feature = "sql")]
pub mod sql;

#[cfg(feature = "cli")]
pub mod cli;

#[cfg(feature = "serve")]
pub mod serve;

pub use error::{Error, Result};
pub use learner::{Classifier, Config, Ranker};

/// The names most programs need.
pub mod prelude {
    pub use crate::boost::multiclass::{
        AdaBoostOlm, AdaBoostOlmConfig, OneVsAll, OneVsAllConfig, OnlineMbbm, OnlineMbbmConfig,
    };
    pub use crate::boost::oza::{OzaBoost, OzaBoostConfig};
    pub use crate::core::{ClassId, ClassSet, Feature, FeatureKind, Rng, StreamSpec};
    pub use crate::eval::{Prequential, PrequentialReport};
    pub use crate::learner::{Classifier, Config};
    pub use crate::weak::{
        HoeffdingTree, HoeffdingTreeConfig, NaiveBayes, NaiveBayesConfig, Perceptron,
        PerceptronConfig, WeakLearner, WeakLearnerConfig,
    };
    pub use crate::{Error, Result};
}

/// The README's Rust code, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
