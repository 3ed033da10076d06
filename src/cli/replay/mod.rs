//! `streamboost replay`: its flags, and the model config they describe. The driver replays;
//! [`crate::cli::report`] presents.

mod driver;

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

pub use driver::run;

use crate::boost::binary::WeakOutput;
use crate::boost::multiclass::cost::Surrogate;
use crate::boost::multiclass::{AdaBoostOlmConfig, BinaryBundleConfig, WeightNorm};
use crate::boost::oza::{OzaBoostConfig, ZeroErrorPolicy};
use crate::boost::ranking::RankingLoss;
use crate::boost::{ExpertSelection, VoteRule, WeightScale};
use crate::columnar::Ordinal;
use crate::model::{Algorithm, ModelConfig};
use crate::scaling::{ScaledConfig, Scaling};
use crate::weak::hoeffding::Preset;
use crate::weak::{
    HoeffdingTreeConfig, NaiveBayesConfig, PerceptronConfig, ResampleMode, ResamplingConfig,
    WeakLearnerConfig,
};
use crate::{Error, Result};

/// Weak learners `--weak` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WeakKind {
    /// Weighted Hoeffding tree (VFDT), parameters from `--preset`.
    Hoeffding,
    /// Weighted Gaussian/categorical naive Bayes.
    NaiveBayes,
    /// Weighted perceptron.
    Perceptron,
}

/// Loss of Adaboost.OLM (a surrogate) or of OnlineBMR (whose potentials it defines),
/// `--loss`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LossArg {
    /// Multiclass logistic loss (the paper's Adaboost.OLM; ada-olm's default).
    Logistic,
    /// Exponential loss ([JGT-App] D.1).
    Exp,
    /// Square hinge loss ([JGT-App] D.2).
    SquareHinge,
    /// Rank loss potentials (bmr).
    Rank,
    /// Hinge loss potentials (bmr's default, the paper's experiments).
    Hinge,
}

impl LossArg {
    /// The surrogate of Adaboost.OLM, OvA and AdaOVA.
    fn surrogate(self) -> Result<Surrogate> {
        match self {
            LossArg::Logistic => Ok(Surrogate::Logistic),
            LossArg::Exp => Ok(Surrogate::Exponential),
            LossArg::SquareHinge => Ok(Surrogate::SquareHinge),
            LossArg::Rank | LossArg::Hinge => Err(Error::config(
                "loss",
                "rank and hinge are OnlineBMR's losses (--algo bmr); ada-olm, ova and ada-ova take logistic, exp or square-hinge",
            )),
        }
    }

    /// The potential loss of OnlineBMR.
    fn ranking(self) -> Result<RankingLoss> {
        match self {
            LossArg::Rank => Ok(RankingLoss::Rank),
            LossArg::Hinge => Ok(RankingLoss::Hinge),
            _ => Err(Error::config(
                "loss",
                "OnlineBMR takes --loss rank or hinge",
            )),
        }
    }
}

/// How a booster's learners take the rows' weights (`--resample`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResampleArg {
    /// As weights.
    None,
    /// `K ~ Poisson(w)` unweighted copies.
    Poisson,
    /// One unweighted copy with probability `min(1, w)`.
    Bernoulli,
}

/// Online feature scaling (`--scale`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScaleArg {
    /// Features as they are.
    None,
    /// Running min–max to [−1, 1].
    MinMax,
    /// Running standardisation.
    Standardize,
}

/// Which OzaBoost (`--oza-variant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OzaVariantArg {
    /// MOA's OzaBoost.
    Moa,
    /// River's AdaBoostClassifier.
    River,
}

/// Arguments of `streamboost replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Input file (CSV with header, or Parquet); repeat to replay several in order.
    /// Without it, a small bundled data set (UCI car) is replayed.
    #[arg(long = "input", value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Test file(s), replayed after the inputs: the model goes on learning test-then-train,
    /// and the report has these rows' metrics under `test` (the protocol of [JT]).
    #[arg(long = "test", value_name = "PATH", requires = "inputs")]
    pub tests: Vec<PathBuf>,
    /// Label column. A table without it but with `<COL>_<name>` 0/1 columns is a
    /// multi-label stream with those labels.
    #[arg(long, default_value = "label", value_name = "COL")]
    pub label: String,
    /// Treat this column as nominal whatever its type (repeatable).
    #[arg(long = "nominal", value_name = "COL")]
    pub nominal: Vec<String>,
    /// Treat this column as ordinal: its levels, lowest first, become the numbers 0, 1, ...
    /// (repeatable; e.g. `--ordinal safety=low,med,high`).
    #[arg(long = "ordinal", value_name = "COL=LEVELS", value_parser = parse_ordinal)]
    pub ordinal: Vec<Ordinal>,
    /// Algorithm (`streamboost algorithms` lists them with what they are).
    #[arg(long, default_value = "ada-olm", value_parser = parse_algorithm)]
    pub algo: Algorithm,
    /// Number of weak learners of a booster.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub learners: usize,
    /// Weak learner of a booster.
    #[arg(long, value_enum, default_value_t = WeakKind::Hoeffding)]
    pub weak: WeakKind,
    /// Hoeffding tree parameter preset (of the tree, or of a booster's trees).
    #[arg(long, value_enum, default_value_t = Preset::JgtPaper)]
    pub preset: Preset,
    /// Each tree sees a random subset of this many features, fixed at construction. Default:
    /// 20 for the rankers (bmr, ada-olmr) under the jgt-paper preset, as in [JT]'s
    /// experiments; all features otherwise, as in [JGT]'s.
    #[arg(long, value_name = "M")]
    pub features_per_tree: Option<usize>,
    /// Per-learner weight scale of a booster: a constant `C`, or `LO:HI` for U[LO, HI] per
    /// learner (the papers' experiments used 5:200).
    #[arg(long, default_value = "1", value_parser = parse_weight_scale, value_name = "C|LO:HI")]
    pub weight_scale: WeightScale,
    /// The assumed edge γ of OnlineMBBM (the paper's grid: 0.3, 0.1, 0.05, 0.01, 0.001) and of
    /// the OSBoost family (in (0, 1/2); the paper's experiments: 0.1).
    #[arg(long, default_value_t = 0.1, value_name = "G")]
    pub gamma: f64,
    /// How a booster's learners vote: the class of least expected cost under the booster's
    /// cost matrix (the papers' code), or their most probable class. Default: the booster's
    /// own (expected cost for Adaboost.OLM, argmax for OnlineMBBM).
    #[arg(long, value_enum)]
    pub vote: Option<VoteRule>,
    /// OnlineMBBM's weight normalisation: divide by its bound k − 1, or not (the authors'
    /// code, whose experiments scaled the raw weights by 0.1·U[5, 200]).
    #[arg(long, value_enum, default_value_t = WeightNorm::KMinusOne)]
    pub weight_norm: WeightNorm,
    /// OnlineMBBM's certified pruning bound ε (ALGORITHMS.md §P.2.8): every potential within
    /// ε of the exact one, labels that can hardly catch up treated as out of reach. 0 computes
    /// the potentials exactly.
    #[arg(long, default_value_t = 0.0, value_name = "EPS")]
    pub epsilon_prune: f64,
    /// Rescale numeric features online before the model sees them, with statistics of the
    /// rows learnt so far (never looking ahead; part of the model and its checkpoints).
    #[arg(long, value_enum, default_value_t = ScaleArg::None)]
    pub scale: ScaleArg,
    /// How the binary boosters (osboost*, ogboost) read their weak learners: the sign of the
    /// most probable class, or p(+) − p(−).
    #[arg(long, value_enum, default_value_t = WeakOutput::Sign)]
    pub weak_output: WeakOutput,
    /// Perceptrons start from weights and biases drawn from U[−R, R] (per learner, from the
    /// model's seed) instead of zeros, as [CLL]'s random initial hypotheses.
    #[arg(long, default_value_t = 0.0, value_name = "R")]
    pub perceptron_init: f64,
    /// Feed a booster's learners unweighted copies of each row instead of its weight `w`:
    /// `K ~ Poisson(w)` copies, or one copy with probability `min(1, w)` (ALGORITHMS.md §1.2).
    #[arg(long, value_enum, default_value_t = ResampleArg::None)]
    pub resample: ResampleArg,
    /// Surrogate loss of ada-olm (and of ova and ada-ova's boosters; default logistic), or
    /// the loss of bmr's potentials (rank or hinge; default hinge).
    #[arg(long, value_enum)]
    pub loss: Option<LossArg>,
    /// Which OzaBoost: MOA's (λ normalised by all rows seen; models with error 0 or above
    /// 1/2 end the vote) or River's (Oza's λ update; such models vote with weight 1).
    #[arg(long, value_enum, default_value_t = OzaVariantArg::Moa)]
    pub oza_variant: OzaVariantArg,
    /// What Oza's vote does with a model whose error is 0, undefined or above 1/2: end the
    /// vote there (MOA), give it weight 1 (River) or skip it and go on. Default: the
    /// variant's.
    #[arg(long, value_enum)]
    pub oza_zero_error: Option<ZeroErrorPolicy>,
    /// Which expert an adaptive booster predicts with.
    #[arg(long, value_enum, default_value_t = ExpertSelection::Sample)]
    pub expert: ExpertSelection,
    /// Seed of the model's random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Replay the rows in a random order drawn from this seed (the papers average over
    /// random orders); without it, rows are replayed in file order.
    #[arg(long, value_name = "SEED")]
    pub shuffle: Option<u64>,
    /// Fraction of the stream, at its end, reported separately.
    #[arg(long, default_value_t = 0.2, value_name = "F")]
    pub final_fraction: f64,
    /// Rows per point of the learning curve (default: a hundredth of the stream).
    #[arg(long, value_name = "ROWS")]
    pub window: Option<usize>,
    /// Write the report as JSON.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
    /// Write the learning curve as CSV.
    #[arg(long, value_name = "PATH")]
    pub curve: Option<PathBuf>,
    /// Write every row's prediction and class probabilities (CSV, or Parquet by extension).
    #[arg(long, value_name = "PATH")]
    pub predictions: Option<PathBuf>,
    /// The model as a JSON config (the `config` of `sql --model`): it names its algorithm and
    /// what differs from that algorithm's defaults, e.g. `{"algorithm": "ada-olm",
    /// "n_learners": 20}`. The model flags are not read with it.
    #[arg(long, value_name = "PATH", conflicts_with_all = [
        "algo", "learners", "weak", "preset", "weight_scale", "expert", "gamma", "vote", "loss",
        "oza_variant", "oza_zero_error", "weight_norm", "weak_output", "scale", "epsilon_prune",
        "features_per_tree", "perceptron_init", "resample",
    ])]
    pub config: Option<PathBuf>,
    /// Continue from this checkpoint: its model, features, classes and encodings; the
    /// inputs are the rows that follow the ones it has seen.
    #[arg(long, value_name = "PATH", conflicts_with_all = [
        "config", "algo", "learners", "weak", "preset", "weight_scale", "expert", "seed", "nominal",
        "ordinal", "label", "gamma", "vote", "loss", "oza_variant", "oza_zero_error", "weight_norm",
        "weak_output", "scale",
        "epsilon_prune",
        "features_per_tree", "perceptron_init", "resample",
    ])]
    pub load: Option<PathBuf>,
    /// Save a checkpoint here at the end (and every `--checkpoint-every` rows), atomically.
    #[arg(long, value_name = "PATH")]
    pub save: Option<PathBuf>,
    /// Also save the checkpoint after every N rows.
    #[arg(long, value_name = "N", requires = "save")]
    pub checkpoint_every: Option<u64>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

fn parse_algorithm(s: &str) -> std::result::Result<Algorithm, String> {
    s.parse().map_err(|e: Error| e.to_string())
}

fn parse_ordinal(s: &str) -> std::result::Result<Ordinal, String> {
    s.parse().map_err(|e: Error| e.to_string())
}

fn parse_weight_scale(s: &str) -> std::result::Result<WeightScale, String> {
    let number = |t: &str| {
        t.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{t}` is not a number"))
    };
    let scale = match s.split_once(':') {
        Some((lo, hi)) => WeightScale::UniformRandom(number(lo)?, number(hi)?),
        None => WeightScale::Constant(number(s)?),
    };
    scale.validate().map_err(|e| e.to_string())?;
    Ok(scale)
}

impl ReplayArgs {
    /// The model configuration these arguments describe: the `--config` file, or the
    /// algorithm's defaults with the flags given laid over them.
    pub fn model_config(&self) -> Result<ModelConfig> {
        if let Some(path) = &self.config {
            return read_config(path);
        }
        let model = self.flagged_config()?;
        let scaling = match self.scale {
            ScaleArg::None => return Ok(model),
            ScaleArg::MinMax => Scaling::MinMax,
            ScaleArg::Standardize => Scaling::Standardize,
        };
        Ok(ModelConfig::Scaled(ScaledConfig {
            scaling,
            model: Box::new(model),
        }))
    }

    /// The weak learner the flags describe.
    fn weak(&self) -> WeakLearnerConfig {
        let tree = self.tree();
        let weak = match self.weak {
            WeakKind::Hoeffding => tree.into(),
            WeakKind::NaiveBayes => NaiveBayesConfig::default().into(),
            WeakKind::Perceptron => self.perceptron().into(),
        };
        let mode = match self.resample {
            ResampleArg::None => return weak,
            ResampleArg::Poisson => ResampleMode::Poisson,
            ResampleArg::Bernoulli => ResampleMode::Bernoulli { w_max: 1.0 },
        };
        WeakLearnerConfig::Resampled(ResamplingConfig {
            mode,
            inner: Box::new(weak),
        })
    }

    /// The tree of `--preset`; the rankers' trees see 20 random features under the papers'
    /// preset, as in [JT]'s experiments.
    fn tree(&self) -> HoeffdingTreeConfig {
        let paper_ranker = self.algo.is_ranker() && self.preset == Preset::JgtPaper;
        HoeffdingTreeConfig {
            feature_subset: self.features_per_tree.or(paper_ranker.then_some(20)),
            ..HoeffdingTreeConfig::preset(self.preset)
        }
    }

    fn perceptron(&self) -> PerceptronConfig {
        PerceptronConfig {
            init_range: self.perceptron_init,
            ..PerceptronConfig::default()
        }
    }

    /// The algorithm's defaults (beside its code, through the catalogue) with the flags that
    /// apply to it laid over them. An algorithm without flags of its own is configured with
    /// `--config`.
    fn flagged_config(&self) -> Result<ModelConfig> {
        let n = self.learners;
        let mut config = self.algo.default_config();
        match &mut config {
            ModelConfig::Hoeffding(c) => *c = self.tree(),
            ModelConfig::Perceptron(c) => *c = self.perceptron(),
            ModelConfig::AdaOlm(c) => self.adaptive(c, self.weak())?,
            ModelConfig::AdaOva(c) => self.adaptive(c, BinaryBundleConfig::new(self.weak()))?,
            ModelConfig::Ova(c) => {
                self.adaptive(&mut c.binary, self.weak())?;
                c.tie_break = c.binary.tie_break;
            }
            ModelConfig::Mbbm(c) => {
                (c.n_learners, c.gamma, c.weight_scale) = (n, self.gamma, self.weight_scale);
                c.vote_rule = self.vote.unwrap_or(c.vote_rule);
                (c.weight_norm, c.epsilon_prune) = (self.weight_norm, self.epsilon_prune);
                c.weak = self.weak();
            }
            ModelConfig::Oza(c) => {
                if self.oza_variant == OzaVariantArg::River {
                    *c = OzaBoostConfig::river(self.weak());
                }
                (c.n_learners, c.weak) = (n, self.weak());
                c.zero_error = self.oza_zero_error.unwrap_or(c.zero_error);
            }
            ModelConfig::OsBoost(c) => {
                (c.n_learners, c.gamma, c.weight_scale) = (n, self.gamma, self.weight_scale);
                (c.weak_output, c.weak) = (self.weak_output, self.weak());
            }
            ModelConfig::OgBoost(c) => {
                (c.n_selectors, c.weak_output, c.weak) = (n, self.weak_output, self.weak());
            }
            ModelConfig::Bmr(c) => {
                (c.n_learners, c.gamma, c.weight_scale) = (n, self.gamma, self.weight_scale);
                c.loss = self.loss.map_or(Ok(c.loss), LossArg::ranking)?;
                c.weak = self.weak();
            }
            ModelConfig::AdaOlmr(c) => {
                (c.n_learners, c.weight_scale) = (n, self.weight_scale);
                (c.expert_selection, c.weak) = (self.expert, self.weak());
            }
            ModelConfig::NaiveBayes(_) | ModelConfig::Scaled(_) => {}
        }
        Ok(config)
    }

    /// Lays the adaptive boosters' flags over `c`, over weak learner `weak`.
    fn adaptive<W>(&self, c: &mut AdaBoostOlmConfig<W>, weak: W) -> Result<()> {
        (c.n_learners, c.weight_scale, c.weak) = (self.learners, self.weight_scale, weak);
        c.loss = self.loss.map_or(Ok(c.loss), LossArg::surrogate)?;
        c.expert_selection = self.expert;
        c.vote_rule = self.vote.unwrap_or(c.vote_rule);
        Ok(())
    }
}

/// Reads a model's JSON config file (see [`ModelConfig::from_json`]).
pub fn read_config(path: &Path) -> Result<ModelConfig> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let value = serde_json::from_str(&text).map_err(|e| Error::Format {
        file: path.to_path_buf(),
        message: e.to_string(),
    })?;
    ModelConfig::from_json(value).map_err(|e| Error::Format {
        file: path.to_path_buf(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        args: ReplayArgs,
    }

    /// The flags of every recorded golden case still describe the config recorded with it.
    #[test]
    fn flags_describe_the_configs_recorded_before() {
        let cases: serde_json::Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/golden_predictions.json"
        ))
        .unwrap();
        for case in cases.as_array().unwrap() {
            let flags = case["flags"].as_array().unwrap().iter();
            let flags = flags.map(|f| f.as_str().unwrap());
            let parsed = Flags::try_parse_from(std::iter::once("replay").chain(flags)).unwrap();
            let config = serde_json::to_value(parsed.args.model_config().unwrap()).unwrap();
            assert_eq!(config, case["config"], "{}", case["name"]);
        }
    }
}
