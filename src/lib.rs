//! # streamboost
//!
//! Online boosting for stream processing: `N` online weak learners combined into a strong
//! online learner that predicts each row before its label is revealed, then learns from it.
//!
//! ## Layers
//! | module | what | feature |
//! |---|---|---|
//! | [`core`] | rows, feature schemas, class sets, the seeded RNG, numeric helpers | always |
//! | [`learner`] | the [`Classifier`] and [`Config`] contracts | always |
//! | [`weak`] | weak learners: the weighted Hoeffding tree | always |
//! | [`boost`] | boosters, generic over their weak learner: Adaboost.OLM, Hedge, OGD | always |
//! | [`eval`] | the prequential (test-then-train) driver, metrics and reports | always |
//! | [`model`] | algorithms chosen by name: one enum over the monomorphized models | always |
//! | [`synth`] | seeded synthetic streams for tests and examples | always |
//! | `columnar` | CSV / Parquet through the Arrow readers, RecordBatch ⇄ rows | `columnar` |
//! | `checkpoint` | a model's complete state in one Parquet file, written atomically | `columnar` |
//! | `stream` | the operator over an async stream of record batches | `stream` |
//! | `sql` | DataFusion SQL functions over named models | `sql` |
//! | `cli` | the `streamboost` command | `cli` (default) |
//!
//! Algorithms never see Arrow: everything above `columnar` builds with
//! `--no-default-features`.
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
pub mod replay;

#[cfg(feature = "stream")]
pub mod stream;

#[cfg(feature = "sql")]
pub mod sql;

#[cfg(feature = "cli")]
pub mod cli;

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
