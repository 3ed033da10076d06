//! Algorithms chosen by name at run time: one serde-tagged config enum and one model enum
//! over the monomorphized models. Generics inside, enums at the edge: the CLI (and later SQL
//! and checkpoints) go through these; the per-row hot path inside each model is static.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::boost::binary::{Combiner, OgBoost, OgBoostConfig, OsBoost, OsBoostConfig};
use crate::boost::multiclass::{
    AdaBoostOlm, AdaBoostOlmConfig, BinaryBundle, BinaryBundleConfig, OneVsAll, OneVsAllConfig,
    OnlineMbbm, OnlineMbbmConfig,
};
use crate::boost::oza::{OzaBoost, OzaBoostConfig};
use crate::boost::ranking::{AdaOlmr, AdaOlmrConfig, OnlineBmr, OnlineBmrConfig};
use crate::core::{ClassId, Rng, StreamSpec};
use crate::learner::{Classifier, Config, Ranker};
use crate::scaling::{Scaled, ScaledConfig};
use crate::weak::{
    HoeffdingTree, HoeffdingTreeConfig, NaiveBayes, NaiveBayesConfig, Perceptron, PerceptronConfig,
    WeakLearner, WeakLearnerConfig,
};
use crate::{Error, Result};

/// The algorithm names the command line and configs accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// A single Hoeffding tree.
    Hoeffding,
    /// A single naive Bayes learner.
    NaiveBayes,
    /// A single perceptron.
    Perceptron,
    /// Adaboost.OLM ([JGT] Algorithm 2).
    AdaOlm,
    /// OnlineMBBM ([JGT] Algorithm 1) with exact potentials.
    Mbbm,
    /// Oza's online boosting (MOA's OzaBoost).
    Oza,
    /// One binary AdaBoost.OL per class ([JGT-App] E).
    Ova,
    /// Adaboost.OLM over bundles of binary learners ([JGT-App] E).
    AdaOva,
    /// OSBoost ([CLL], uniform votes; binary).
    #[serde(rename = "osboost")]
    OsBoost,
    /// OSBoost.OCP ([CLL] Algorithm 1; binary).
    #[serde(rename = "osboost-ocp")]
    OsBoostOcp,
    /// OSBoost.EXP ([CLL]; binary).
    #[serde(rename = "osboost-exp")]
    OsBoostExp,
    /// Online GradientBoost (Leistner et al. 2009; binary).
    #[serde(rename = "ogboost")]
    OgBoost,
    /// OnlineBMR ([JT] Algorithm 2; multi-label ranking) with exact potentials.
    Bmr,
    /// Ada.OLMR ([JT] Algorithm 3; multi-label ranking).
    #[serde(rename = "ada-olmr")]
    AdaOlmr,
}

impl Algorithm {
    /// Every algorithm, in the order help texts list them.
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::Hoeffding,
        Algorithm::NaiveBayes,
        Algorithm::Perceptron,
        Algorithm::AdaOlm,
        Algorithm::Mbbm,
        Algorithm::Oza,
        Algorithm::Ova,
        Algorithm::AdaOva,
        Algorithm::OsBoost,
        Algorithm::OsBoostOcp,
        Algorithm::OsBoostExp,
        Algorithm::OgBoost,
        Algorithm::Bmr,
        Algorithm::AdaOlmr,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Hoeffding => "hoeffding",
            Algorithm::NaiveBayes => "naive-bayes",
            Algorithm::Perceptron => "perceptron",
            Algorithm::AdaOlm => "ada-olm",
            Algorithm::Mbbm => "mbbm",
            Algorithm::Oza => "oza",
            Algorithm::Ova => "ova",
            Algorithm::AdaOva => "ada-ova",
            Algorithm::OsBoost => "osboost",
            Algorithm::OsBoostOcp => "osboost-ocp",
            Algorithm::OsBoostExp => "osboost-exp",
            Algorithm::OgBoost => "ogboost",
            Algorithm::Bmr => "bmr",
            Algorithm::AdaOlmr => "ada-olmr",
        }
    }

    /// Whether the algorithm is a multi-label ranker (it learns label sets natively; the
    /// others learn them one relevant label at a time).
    pub fn is_ranker(self) -> bool {
        matches!(self, Algorithm::Bmr | Algorithm::AdaOlmr)
    }

    /// Whether the algorithm is a booster (has weak learners).
    pub fn is_booster(self) -> bool {
        !matches!(
            self,
            Algorithm::Hoeffding | Algorithm::NaiveBayes | Algorithm::Perceptron
        )
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

/// The algorithm of an OSBoost combiner.
fn osboost_algorithm(combiner: Combiner) -> Algorithm {
    match combiner {
        Combiner::Uniform => Algorithm::OsBoost,
        Combiner::Ocp { .. } => Algorithm::OsBoostOcp,
        Combiner::Exp { .. } => Algorithm::OsBoostExp,
    }
}

/// The configuration of any model, tagged by its algorithm name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "algorithm", rename_all = "kebab-case")]
pub enum ModelConfig {
    /// A single Hoeffding tree.
    Hoeffding(HoeffdingTreeConfig),
    /// A single naive Bayes learner.
    NaiveBayes(NaiveBayesConfig),
    /// A single perceptron.
    Perceptron(PerceptronConfig),
    /// Adaboost.OLM.
    AdaOlm(AdaBoostOlmConfig<WeakLearnerConfig>),
    /// OnlineMBBM.
    Mbbm(OnlineMbbmConfig<WeakLearnerConfig>),
    /// OzaBoost.
    Oza(OzaBoostConfig<WeakLearnerConfig>),
    /// One-vs-all AdaBoost.OL.
    Ova(OneVsAllConfig<WeakLearnerConfig>),
    /// Adaboost.OLM over binary bundles.
    AdaOva(AdaBoostOlmConfig<BinaryBundleConfig<WeakLearnerConfig>>),
    /// OSBoost, OSBoost.OCP or OSBoost.EXP (by its combiner).
    #[serde(rename = "osboost")]
    OsBoost(OsBoostConfig<WeakLearnerConfig>),
    /// Online GradientBoost.
    #[serde(rename = "ogboost")]
    OgBoost(OgBoostConfig<WeakLearnerConfig>),
    /// OnlineBMR.
    Bmr(OnlineBmrConfig<WeakLearnerConfig>),
    /// Ada.OLMR.
    #[serde(rename = "ada-olmr")]
    AdaOlmr(AdaOlmrConfig<WeakLearnerConfig>),
    /// Any model behind online feature scaling.
    Scaled(ScaledConfig<ModelConfig>),
}

macro_rules! dispatch_config {
    ($self:expr, $c:ident => $body:expr) => {
        match $self {
            ModelConfig::Hoeffding($c) => $body,
            ModelConfig::NaiveBayes($c) => $body,
            ModelConfig::Perceptron($c) => $body,
            ModelConfig::AdaOlm($c) => $body,
            ModelConfig::Mbbm($c) => $body,
            ModelConfig::Oza($c) => $body,
            ModelConfig::Ova($c) => $body,
            ModelConfig::AdaOva($c) => $body,
            ModelConfig::OsBoost($c) => $body,
            ModelConfig::OgBoost($c) => $body,
            ModelConfig::Bmr($c) => $body,
            ModelConfig::AdaOlmr($c) => $body,
            ModelConfig::Scaled($c) => $body,
        }
    };
}

impl ModelConfig {
    /// The algorithm this config builds.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            ModelConfig::Hoeffding(_) => Algorithm::Hoeffding,
            ModelConfig::NaiveBayes(_) => Algorithm::NaiveBayes,
            ModelConfig::Perceptron(_) => Algorithm::Perceptron,
            ModelConfig::AdaOlm(_) => Algorithm::AdaOlm,
            ModelConfig::Mbbm(_) => Algorithm::Mbbm,
            ModelConfig::Oza(_) => Algorithm::Oza,
            ModelConfig::Ova(_) => Algorithm::Ova,
            ModelConfig::AdaOva(_) => Algorithm::AdaOva,
            ModelConfig::OsBoost(c) => osboost_algorithm(c.combiner),
            ModelConfig::OgBoost(_) => Algorithm::OgBoost,
            ModelConfig::Bmr(_) => Algorithm::Bmr,
            ModelConfig::AdaOlmr(_) => Algorithm::AdaOlmr,
            ModelConfig::Scaled(c) => c.model.algorithm(),
        }
    }
}

impl fmt::Display for ModelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        dispatch_config!(self, c => c.fmt(f))
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
    /// A single naive Bayes learner.
    NaiveBayes(NaiveBayes),
    /// A single perceptron.
    Perceptron(Perceptron),
    /// Adaboost.OLM.
    AdaOlm(AdaBoostOlm<WeakLearner>),
    /// OnlineMBBM.
    Mbbm(OnlineMbbm<WeakLearner>),
    /// OzaBoost.
    Oza(OzaBoost<WeakLearner>),
    /// One-vs-all AdaBoost.OL.
    Ova(OneVsAll<WeakLearner>),
    /// Adaboost.OLM over binary bundles.
    AdaOva(AdaBoostOlm<BinaryBundle<WeakLearner>>),
    /// OSBoost, OSBoost.OCP or OSBoost.EXP.
    #[serde(rename = "osboost")]
    OsBoost(OsBoost<WeakLearner>),
    /// Online GradientBoost.
    #[serde(rename = "ogboost")]
    OgBoost(OgBoost<WeakLearner>),
    /// OnlineBMR.
    Bmr(OnlineBmr<WeakLearner>),
    /// Ada.OLMR.
    #[serde(rename = "ada-olmr")]
    AdaOlmr(AdaOlmr<WeakLearner>),
    /// Any model behind online feature scaling.
    Scaled(Scaled<Model>),
}

impl Config for ModelConfig {
    type Model = Model;

    fn validate(&self) -> Result<()> {
        dispatch_config!(self, c => c.validate())
    }

    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Model> {
        Ok(match self {
            ModelConfig::Hoeffding(c) => Model::Hoeffding(c.build_with_rng(spec, rng)?),
            ModelConfig::NaiveBayes(c) => Model::NaiveBayes(c.build_with_rng(spec, rng)?),
            ModelConfig::Perceptron(c) => Model::Perceptron(c.build_with_rng(spec, rng)?),
            ModelConfig::AdaOlm(c) => Model::AdaOlm(c.build_with_rng(spec, rng)?),
            ModelConfig::Mbbm(c) => Model::Mbbm(c.build_with_rng(spec, rng)?),
            ModelConfig::Oza(c) => Model::Oza(c.build_with_rng(spec, rng)?),
            ModelConfig::Ova(c) => Model::Ova(c.build_with_rng(spec, rng)?),
            ModelConfig::AdaOva(c) => Model::AdaOva(c.build_with_rng(spec, rng)?),
            ModelConfig::OsBoost(c) => Model::OsBoost(c.build_with_rng(spec, rng)?),
            ModelConfig::OgBoost(c) => Model::OgBoost(c.build_with_rng(spec, rng)?),
            ModelConfig::Bmr(c) => Model::Bmr(c.build_with_rng(spec, rng)?),
            ModelConfig::AdaOlmr(c) => Model::AdaOlmr(c.build_with_rng(spec, rng)?),
            ModelConfig::Scaled(c) => Model::Scaled(c.build_with_rng(spec, rng)?),
        })
    }
}

macro_rules! dispatch {
    ($self:expr, $m:ident => $body:expr) => {
        match $self {
            Model::Hoeffding($m) => $body,
            Model::NaiveBayes($m) => $body,
            Model::Perceptron($m) => $body,
            Model::AdaOlm($m) => $body,
            Model::Mbbm($m) => $body,
            Model::Oza($m) => $body,
            Model::Ova($m) => $body,
            Model::AdaOva($m) => $body,
            Model::OsBoost($m) => $body,
            Model::OgBoost($m) => $body,
            Model::Bmr($m) => $body,
            Model::AdaOlmr($m) => $body,
            Model::Scaled($m) => $body,
        }
    };
}

impl Model {
    /// The algorithm of this model.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            Model::Hoeffding(_) => Algorithm::Hoeffding,
            Model::NaiveBayes(_) => Algorithm::NaiveBayes,
            Model::Perceptron(_) => Algorithm::Perceptron,
            Model::AdaOlm(_) => Algorithm::AdaOlm,
            Model::Mbbm(_) => Algorithm::Mbbm,
            Model::Oza(_) => Algorithm::Oza,
            Model::Ova(_) => Algorithm::Ova,
            Model::AdaOva(_) => Algorithm::AdaOva,
            Model::OsBoost(m) => osboost_algorithm(m.combiner()),
            Model::OgBoost(_) => Algorithm::OgBoost,
            Model::Bmr(_) => Algorithm::Bmr,
            Model::AdaOlmr(_) => Algorithm::AdaOlmr,
            Model::Scaled(m) => m.model().algorithm(),
        }
    }

    /// The weak learners of the model, in member order (boosters' members, class by class
    /// for one-vs-all, bundle by bundle for AdaOVA); empty for a single learner.
    pub fn weak_learners(&self) -> Vec<&WeakLearner> {
        match self {
            Model::Hoeffding(_) | Model::NaiveBayes(_) | Model::Perceptron(_) => Vec::new(),
            Model::AdaOlm(m) => m.learners().iter().collect(),
            Model::Mbbm(m) => m.learners().iter().collect(),
            Model::Oza(m) => m.learners().iter().collect(),
            Model::Ova(m) => m.members().iter().flat_map(|b| b.learners()).collect(),
            Model::AdaOva(m) => m.learners().iter().flat_map(|b| b.members()).collect(),
            Model::OsBoost(m) => m.learners().iter().collect(),
            Model::OgBoost(m) => m.learners().iter().collect(),
            Model::Bmr(m) => m.learners().iter().collect(),
            Model::AdaOlmr(m) => m.learners().iter().collect(),
            Model::Scaled(m) => m.model().weak_learners(),
        }
    }

    fn weak_learners_mut(&mut self) -> Vec<&mut WeakLearner> {
        match self {
            Model::Hoeffding(_) | Model::NaiveBayes(_) | Model::Perceptron(_) => Vec::new(),
            Model::AdaOlm(m) => m.learners_mut().iter_mut().collect(),
            Model::Mbbm(m) => m.learners_mut().iter_mut().collect(),
            Model::Oza(m) => m.learners_mut().iter_mut().collect(),
            Model::Ova(m) => m
                .members_mut()
                .iter_mut()
                .flat_map(|b| b.learners_mut())
                .collect(),
            Model::AdaOva(m) => m
                .learners_mut()
                .iter_mut()
                .flat_map(|b| b.members_mut())
                .collect(),
            Model::OsBoost(m) => m.learners_mut().iter_mut().collect(),
            Model::OgBoost(m) => m.learners_mut().iter_mut().collect(),
            Model::Bmr(m) => m.learners_mut().iter_mut().collect(),
            Model::AdaOlmr(m) => m.learners_mut().iter_mut().collect(),
            Model::Scaled(m) => m.model_mut().weak_learners_mut(),
        }
    }

    /// The trees of the model, in member order.
    pub fn trees(&self) -> Vec<&HoeffdingTree> {
        match self {
            Model::Hoeffding(t) => vec![t],
            Model::Scaled(m) => m.model().trees(),
            _ => self
                .weak_learners()
                .into_iter()
                .filter_map(WeakLearner::as_tree)
                .collect(),
        }
    }

    /// The trees of the model, in member order, to change in place.
    pub fn trees_mut(&mut self) -> Vec<&mut HoeffdingTree> {
        match self {
            Model::Hoeffding(t) => vec![t],
            Model::Scaled(m) => m.model_mut().trees_mut(),
            _ => self
                .weak_learners_mut()
                .into_iter()
                .filter_map(WeakLearner::as_tree_mut)
                .collect(),
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

/// Rankers learn label sets natively; every other model through
/// [`crate::boost::ranking::learn_labels_as_classifier`], its class probabilities being its
/// scores.
impl Ranker for Model {
    fn n_labels(&self) -> usize {
        self.n_classes()
    }

    fn learn_labels(&mut self, x: &[f64], relevant: &[bool], weight: f64) {
        match self {
            Model::Bmr(m) => m.learn_labels(x, relevant, weight),
            Model::AdaOlmr(m) => m.learn_labels(x, relevant, weight),
            Model::Scaled(m) => m.learn_labels(x, relevant, weight),
            _ => crate::boost::ranking::learn_labels_as_classifier(self, x, relevant, weight),
        }
    }

    fn predict_scores(&self, x: &[f64], out: &mut [f64]) {
        match self {
            Model::Bmr(m) => m.predict_scores(x, out),
            Model::AdaOlmr(m) => m.predict_scores(x, out),
            Model::Scaled(m) => m.predict_scores(x, out),
            _ => self.predict_proba(x, out),
        }
    }

    fn learn_predict_scores(
        &mut self,
        x: &[f64],
        relevant: Option<&[bool]>,
        weight: f64,
        out: &mut [f64],
    ) {
        match self {
            Model::Bmr(m) => m.learn_predict_scores(x, relevant, weight, out),
            Model::AdaOlmr(m) => m.learn_predict_scores(x, relevant, weight, out),
            Model::Scaled(m) => m.learn_predict_scores(x, relevant, weight, out),
            _ => {
                self.predict_proba(x, out);
                if let Some(relevant) = relevant {
                    self.learn_labels(x, relevant, weight);
                }
            }
        }
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
        let cfg = ModelConfig::AdaOlm(AdaBoostOlmConfig::new(
            HoeffdingTreeConfig::jgt_paper().into(),
        ));
        let json = serde_json::to_string(&cfg).unwrap();
        assert!(json.contains("\"algorithm\":\"ada-olm\""), "{json}");
        let back: ModelConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, cfg);
    }
}
