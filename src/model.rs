//! Algorithms chosen by name at run time: one serde-tagged config enum and one model enum
//! over the monomorphized models. Generics inside, enums at the edge: the CLI (and later SQL
//! and checkpoints) go through these; the per-row hot path inside each model is static.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::boost::multiclass::{AdaBoostOlm, AdaBoostOlmConfig, OnlineMbbm, OnlineMbbmConfig};
use crate::core::{ClassId, Rng, StreamSpec};
use crate::learner::{Classifier, Config};
use crate::weak::{HoeffdingTree, HoeffdingTreeConfig};
use crate::{Error, Result};

/// The algorithm names the command line and configs accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// A single Hoeffding tree.
    Hoeffding,
    /// Adaboost.OLM ([JGT] Algorithm 2).
    AdaOlm,
    /// OnlineMBBM ([JGT] Algorithm 1) with exact potentials.
    Mbbm,
}

impl Algorithm {
    /// Every algorithm, in the order help texts list them.
    pub const ALL: &'static [Algorithm] =
        &[Algorithm::Hoeffding, Algorithm::AdaOlm, Algorithm::Mbbm];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Hoeffding => "hoeffding",
            Algorithm::AdaOlm => "ada-olm",
            Algorithm::Mbbm => "mbbm",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Algorithm::ALL
            .iter()
            .copied()
            .find(|a| a.name() == s)
            .ok_or_else(|| Error::UnknownAlgorithm {
                name: s.to_string(),
                known: Algorithm::ALL
                    .iter()
                    .map(|a| a.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// The configuration of any model, tagged by its algorithm name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "algorithm", rename_all = "kebab-case")]
pub enum ModelConfig {
    /// A single Hoeffding tree.
    Hoeffding(HoeffdingTreeConfig),
    /// Adaboost.OLM over Hoeffding trees.
    AdaOlm(AdaBoostOlmConfig<HoeffdingTreeConfig>),
    /// OnlineMBBM over Hoeffding trees.
    Mbbm(OnlineMbbmConfig<HoeffdingTreeConfig>),
}

impl ModelConfig {
    /// The algorithm this config builds.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            ModelConfig::Hoeffding(_) => Algorithm::Hoeffding,
            ModelConfig::AdaOlm(_) => Algorithm::AdaOlm,
            ModelConfig::Mbbm(_) => Algorithm::Mbbm,
        }
    }
}

impl fmt::Display for ModelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelConfig::Hoeffding(c) => c.fmt(f),
            ModelConfig::AdaOlm(c) => c.fmt(f),
            ModelConfig::Mbbm(c) => c.fmt(f),
        }
    }
}

/// Any model built from a [`ModelConfig`].
// One model per stream, never held in bulk: boxing the larger variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "algorithm", rename_all = "kebab-case")]
pub enum Model {
    /// A single Hoeffding tree.
    Hoeffding(HoeffdingTree),
    /// Adaboost.OLM over Hoeffding trees.
    AdaOlm(AdaBoostOlm<HoeffdingTree>),
    /// OnlineMBBM over Hoeffding trees.
    Mbbm(OnlineMbbm<HoeffdingTree>),
}

impl Config for ModelConfig {
    type Model = Model;

    fn validate(&self) -> Result<()> {
        match self {
            ModelConfig::Hoeffding(c) => c.validate(),
            ModelConfig::AdaOlm(c) => c.validate(),
            ModelConfig::Mbbm(c) => c.validate(),
        }
    }

    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Model> {
        Ok(match self {
            ModelConfig::Hoeffding(c) => Model::Hoeffding(c.build_with_rng(spec, rng)?),
            ModelConfig::AdaOlm(c) => Model::AdaOlm(c.build_with_rng(spec, rng)?),
            ModelConfig::Mbbm(c) => Model::Mbbm(c.build_with_rng(spec, rng)?),
        })
    }
}

macro_rules! dispatch {
    ($self:expr, $m:ident => $body:expr) => {
        match $self {
            Model::Hoeffding($m) => $body,
            Model::AdaOlm($m) => $body,
            Model::Mbbm($m) => $body,
        }
    };
}

impl Model {
    /// The algorithm of this model.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            Model::Hoeffding(_) => Algorithm::Hoeffding,
            Model::AdaOlm(_) => Algorithm::AdaOlm,
            Model::Mbbm(_) => Algorithm::Mbbm,
        }
    }

    /// The trees of the model, in member order.
    pub fn trees(&self) -> Vec<&HoeffdingTree> {
        match self {
            Model::Hoeffding(t) => vec![t],
            Model::AdaOlm(m) => m.learners().iter().collect(),
            Model::Mbbm(m) => m.learners().iter().collect(),
        }
    }

    /// The trees of the model, in member order, to change in place.
    pub fn trees_mut(&mut self) -> Vec<&mut HoeffdingTree> {
        match self {
            Model::Hoeffding(t) => vec![t],
            Model::AdaOlm(m) => m.learners_mut().iter_mut().collect(),
            Model::Mbbm(m) => m.learners_mut().iter_mut().collect(),
        }
    }
}

impl Classifier for Model {
    fn n_classes(&self) -> usize {
        dispatch!(self, m => m.n_classes())
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        dispatch!(self, m => m.learn(x, y, weight))
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        dispatch!(self, m => m.predict_proba(x, out))
    }

    fn learn_predict(
        &mut self,
        x: &[f64],
        y: Option<ClassId>,
        weight: f64,
        out: &mut [f64],
    ) -> ClassId {
        dispatch!(self, m => m.learn_predict(x, y, weight, out))
    }
}

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

    #[test]
    fn config_round_trips_through_json() {
        let cfg = ModelConfig::AdaOlm(AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper()));
        let json = serde_json::to_string(&cfg).unwrap();
        assert!(json.contains("\"algorithm\":\"ada-olm\""), "{json}");
        let back: ModelConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, cfg);
    }
}
