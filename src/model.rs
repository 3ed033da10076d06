//! The algorithm catalogue: every algorithm chosen by name at run time, in one list.
//!
//! One list, kept in parts: each family of algorithms holds its rows beside its code, in a
//! macro of its module (`multiclass_rows!` in [`crate::boost::multiclass`], …), and the
//! invocation below chains them into `catalogue!`. From each row it derives the
//! [`Algorithm`] enum (names, help text, capabilities, the default config), the serde-tagged
//! [`ModelConfig`] enum that configs, reports and checkpoints hold, the [`Model`] enum over
//! the monomorphized models, and the dispatch of [`Classifier`], [`Ranker`] and
//! [`crate::weak::Structure`] (forwarded in `dispatch.rs`). Generics inside, enums at the
//! edge: the per-row hot path of each model is static, and an enum match per row is all the
//! choice costs.
//!
//! A declarative macro rather than a descriptor trait: three of the derived items are enums
//! (a trait cannot add a variant) and serde's tags must be literals. What a row cannot say
//! lives beside each algorithm's code: its config, defaults and presets, and its
//! [`crate::learner::Ensemble`] impl (tree access and an `inspect` summary).
//!
//! Adding an algorithm to a family: write its file (config, model, `Config`, `Classifier`,
//! `Ensemble`), then add its `mod` line and one row to the family's module: two files. The contract, golden-prediction and checkpoint tests iterate
//! [`Algorithm::ALL`], so the new row is tested without being listed again.

use serde::{Deserialize, Serialize};

use crate::boost::batch::{self, Round, batch_rows};
use crate::boost::binary::{self, binary_rows};
use crate::boost::multiclass::{self, multiclass_rows};
use crate::boost::ranking::{self, ranking_rows};
use crate::boost::{self, bagging, ensemble_rows, oza};
use crate::core::Dataset;
use crate::learner::{Classifier, Ranker};
use crate::scaling::{Scaled, ScaledConfig};
use crate::weak::{self, WeakLearner, WeakLearnerConfig, weak_rows};
use crate::{Error, Result};

#[macro_use]
mod catalogue;

pub use catalogue::{Capabilities, Learns, Role, member_preset};

/// The algorithm of a catalogue name a family's row gives (the family's modules do not
/// import this one).
fn by_name(name: &str) -> Algorithm {
    name.parse().expect("a catalogue name")
}

// The catalogue: each family's rows, chained through its macro into `catalogue!`, in the
// order `Algorithm::ALL` lists them.
weak_rows! { multiclass_rows, ensemble_rows, binary_rows, ranking_rows, batch_rows, catalogue; }

impl ModelConfig {
    /// Whether a fresh model of this config can learn online: an error naming
    /// `streamboost train` for a batch algorithm, whose fresh model would predict the uniform
    /// distribution forever.
    pub fn check_fresh(&self) -> Result<()> {
        if self.algorithm().capabilities().role == Role::Batch {
            return Err(Error::config(
                "algorithm",
                format!(
                    "{} is trained in batch: `streamboost train --algo {} --input TABLE \
                     --save MODEL.parquet`, then load MODEL.parquet to score",
                    self.algorithm(),
                    self.algorithm()
                ),
            ));
        }
        Ok(())
    }

    /// Trains a batch algorithm ([`Role::Batch`]) on the labelled rows of `data`;
    /// `on_round` sees each round's report as it ends. An online algorithm is an error: it
    /// learns row by row (`replay`, the operator).
    pub fn train_batch(&self, data: &Dataset, on_round: &mut dyn FnMut(&Round)) -> Result<Model> {
        match self {
            ModelConfig::BatchBoost(c) => Ok(c.train(data, on_round)?.into()),
            other => Err(Error::config(
                "algorithm",
                format!(
                    "{} learns online, row by row: replay the table instead of training on it",
                    other.algorithm()
                ),
            )),
        }
    }
}

// Dispatch of the traits every model implements, over the enums above.
mod dispatch;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_algorithm_is_a_typed_error() {
        let err = "adaboost".parse::<Algorithm>().unwrap_err();
        assert!(matches!(err, Error::UnknownAlgorithm { .. }));
        assert!(err.to_string().contains("ada-olm"), "{err}");
        assert_eq!("ada-olm".parse::<Algorithm>().unwrap(), Algorithm::AdaOlm);
    }
}
