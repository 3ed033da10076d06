//! `streamboost replay`: a logged stream, replayed test-then-train, with a prequential report.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::boost::binary::{Combiner, OgBoostConfig, OsBoostConfig, WeakOutput};
use crate::boost::multiclass::cost::Surrogate;
use crate::boost::multiclass::{
    AdaBoostOlmConfig, BinaryBundleConfig, OnlineMbbmConfig, WeightNorm, one_vs_all,
};
use crate::boost::oza::{OzaBoostConfig, ZeroErrorPolicy};
use crate::boost::ranking::{AdaOlmrConfig, OnlineBmrConfig, RankingLoss};
use crate::boost::{ExpertSelection, VoteRule, WeightScale};
use crate::checkpoint::{self, StreamState};
use crate::columnar::{
    Encoded, Encodings, OperatorStats, Ordinal, Predictions, RankedPredictions, Table,
    encode_tables, encode_with_spec, read_csv_bytes, read_table, write_batch,
};
use crate::core::Rng;
use crate::eval::{Prequential, PrequentialReport, RankingReport, RankingSummary};
use crate::learner::Config;
use crate::model::{Algorithm, Model, ModelConfig};
use crate::scaling::{ScaledConfig, Scaling};
use crate::weak::hoeffding::Preset;
use crate::weak::{
    HoeffdingTreeConfig, NaiveBayesConfig, PerceptronConfig, ResampleMode, ResamplingConfig,
    WeakLearnerConfig,
};
use crate::{Error, Result};

/// The data set replayed when no `--input` is given: UCI Car Evaluation (1,728 rows,
/// 6 nominal features, 4 classes), rows in a fixed random order (see `data/README.md`).
const BUNDLED_NAME: &str = "data/car.csv (bundled)";
const BUNDLED_CSV: &[u8] = include_bytes!("../../data/car.csv");

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

/// OnlineMBBM's weight normalisation (`--weight-norm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WeightNormArg {
    /// `w/(k − 1)`, in [0, 1] as the theory's weights are.
    KMinusOne,
    /// `w` itself, in [0, k − 1] (the authors' code).
    Raw,
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

/// How the binary boosters read a weak learner (`--weak-output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WeakOutputArg {
    /// `±1` from the learner's most probable class.
    Sign,
    /// `p(+) − p(−)`.
    Soft,
}

impl From<WeakOutputArg> for WeakOutput {
    fn from(w: WeakOutputArg) -> Self {
        match w {
            WeakOutputArg::Sign => WeakOutput::Sign,
            WeakOutputArg::Soft => WeakOutput::Soft,
        }
    }
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

/// Oza's zero-error policy (`--oza-zero-error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ZeroErrorArg {
    /// End the vote at the first such model (MOA).
    Stop,
    /// Such models vote with weight 1 (River).
    River,
    /// Such models have weight 0; later models still vote.
    Skip,
}

impl From<ZeroErrorArg> for ZeroErrorPolicy {
    fn from(z: ZeroErrorArg) -> Self {
        match z {
            ZeroErrorArg::Stop => ZeroErrorPolicy::Stop,
            ZeroErrorArg::River => ZeroErrorPolicy::River,
            ZeroErrorArg::Skip => ZeroErrorPolicy::Skip,
        }
    }
}

/// Parameter presets of the weak learner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PresetArg {
    /// Library defaults (River's, with population variance).
    Default,
    /// The papers' experiments: per-tree random grace period, δ and τ, majority leaves.
    JgtPaper,
    /// MOA's HoeffdingTree defaults (unbiased variance, MOA's density at variance 0).
    Moa,
}

/// Expert choice of the adaptive boosters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExpertArg {
    /// Draw from Hedge's distribution (the papers).
    Sample,
    /// The expert with the largest Hedge weight.
    Best,
    /// The expert of all learners.
    Last,
}

impl From<ExpertArg> for ExpertSelection {
    fn from(e: ExpertArg) -> Self {
        match e {
            ExpertArg::Sample => ExpertSelection::Sample,
            ExpertArg::Best => ExpertSelection::Best,
            ExpertArg::Last => ExpertSelection::Last,
        }
    }
}

/// How a booster's learners vote (`--vote`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VoteArg {
    /// The class of least expected cost under the booster's cost matrix.
    ExpectedCost,
    /// The learner's most probable class.
    Argmax,
}

impl From<VoteArg> for VoteRule {
    fn from(v: VoteArg) -> Self {
        match v {
            VoteArg::ExpectedCost => VoteRule::ExpectedCost,
            VoteArg::Argmax => VoteRule::Argmax,
        }
    }
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
    /// Algorithm: hoeffding, naive-bayes, perceptron (single learners); ada-olm, mbbm, oza,
    /// ova, ada-ova (multiclass boosters); osboost, osboost-ocp, osboost-exp, ogboost (binary
    /// boosters).
    #[arg(long, default_value = "ada-olm", value_parser = parse_algorithm)]
    pub algo: Algorithm,
    /// Number of weak learners of a booster.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub learners: usize,
    /// Weak learner of a booster.
    #[arg(long, value_enum, default_value_t = WeakKind::Hoeffding)]
    pub weak: WeakKind,
    /// Hoeffding tree parameter preset (of the tree, or of a booster's trees).
    #[arg(long, value_enum, default_value_t = PresetArg::JgtPaper)]
    pub preset: PresetArg,
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
    pub vote: Option<VoteArg>,
    /// OnlineMBBM's weight normalisation: divide by its bound k − 1, or not (the authors'
    /// code, whose experiments scaled the raw weights by 0.1·U[5, 200]).
    #[arg(long, value_enum, default_value_t = WeightNormArg::KMinusOne)]
    pub weight_norm: WeightNormArg,
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
    #[arg(long, value_enum, default_value_t = WeakOutputArg::Sign)]
    pub weak_output: WeakOutputArg,
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
    pub oza_zero_error: Option<ZeroErrorArg>,
    /// Which expert an adaptive booster predicts with.
    #[arg(long, value_enum, default_value_t = ExpertArg::Sample)]
    pub expert: ExpertArg,
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
    /// Continue from this checkpoint: its model, features, classes and encodings; the
    /// inputs are the rows that follow the ones it has seen.
    #[arg(long, value_name = "PATH", conflicts_with_all = [
        "algo", "learners", "weak", "preset", "weight_scale", "expert", "seed", "nominal",
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
    /// The model configuration these arguments describe.
    pub fn model_config(&self) -> Result<ModelConfig> {
        let model = self.unscaled_config()?;
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

    fn unscaled_config(&self) -> Result<ModelConfig> {
        let mut tree = HoeffdingTreeConfig::preset(match self.preset {
            PresetArg::Default => Preset::Default,
            PresetArg::JgtPaper => Preset::JgtPaper,
            PresetArg::Moa => Preset::Moa,
        });
        tree.feature_subset = self
            .features_per_tree
            .or((self.algo.is_ranker() && self.preset == PresetArg::JgtPaper).then_some(20));
        let perceptron = PerceptronConfig {
            init_range: self.perceptron_init,
            ..PerceptronConfig::default()
        };
        let weak = match self.weak {
            WeakKind::Hoeffding => WeakLearnerConfig::Hoeffding(tree.clone()),
            WeakKind::NaiveBayes => WeakLearnerConfig::NaiveBayes(NaiveBayesConfig::default()),
            WeakKind::Perceptron => WeakLearnerConfig::Perceptron(perceptron.clone()),
        };
        let mode = match self.resample {
            ResampleArg::None => None,
            ResampleArg::Poisson => Some(ResampleMode::Poisson),
            ResampleArg::Bernoulli => Some(ResampleMode::Bernoulli { w_max: 1.0 }),
        };
        let weak = match mode {
            None => weak,
            Some(mode) => WeakLearnerConfig::Resampled(ResamplingConfig {
                mode,
                inner: Box::new(weak),
            }),
        };
        let loss = self.loss;
        Ok(match self.algo {
            Algorithm::Hoeffding => ModelConfig::Hoeffding(tree),
            Algorithm::NaiveBayes => ModelConfig::NaiveBayes(NaiveBayesConfig::default()),
            Algorithm::Perceptron => ModelConfig::Perceptron(perceptron),
            Algorithm::AdaOlm => ModelConfig::AdaOlm(self.adaptive(weak)?),
            Algorithm::Mbbm => {
                let defaults = OnlineMbbmConfig::new(weak);
                ModelConfig::Mbbm(OnlineMbbmConfig {
                    n_learners: self.learners,
                    gamma: self.gamma,
                    weight_scale: self.weight_scale,
                    vote_rule: self.vote.map_or(defaults.vote_rule, VoteRule::from),
                    weight_norm: match self.weight_norm {
                        WeightNormArg::KMinusOne => WeightNorm::KMinusOne,
                        WeightNormArg::Raw => WeightNorm::Raw,
                    },
                    epsilon_prune: self.epsilon_prune,
                    ..defaults
                })
            }
            Algorithm::Oza => {
                let variant = match self.oza_variant {
                    OzaVariantArg::Moa => OzaBoostConfig::new(weak),
                    OzaVariantArg::River => OzaBoostConfig::river(weak),
                };
                ModelConfig::Oza(OzaBoostConfig {
                    n_learners: self.learners,
                    zero_error: self.oza_zero_error.map_or(variant.zero_error, Into::into),
                    ..variant
                })
            }
            Algorithm::Ova => ModelConfig::Ova(one_vs_all(self.adaptive(weak)?)),
            Algorithm::AdaOva => ModelConfig::AdaOva(self.adaptive(BinaryBundleConfig::new(weak))?),
            Algorithm::OsBoost | Algorithm::OsBoostOcp | Algorithm::OsBoostExp => {
                ModelConfig::OsBoost(OsBoostConfig {
                    n_learners: self.learners,
                    gamma: self.gamma,
                    combiner: match self.algo {
                        Algorithm::OsBoostOcp => Combiner::Ocp { eta0: 1.0 },
                        Algorithm::OsBoostExp => Combiner::Exp { sample: true },
                        _ => Combiner::Uniform,
                    },
                    weak_output: self.weak_output.into(),
                    weight_scale: self.weight_scale,
                    weak,
                })
            }
            Algorithm::OgBoost => ModelConfig::OgBoost(OgBoostConfig {
                n_selectors: self.learners,
                weak_output: self.weak_output.into(),
                ..OgBoostConfig::new(weak)
            }),
            Algorithm::Bmr => ModelConfig::Bmr(OnlineBmrConfig {
                n_learners: self.learners,
                gamma: self.gamma,
                loss: loss.map_or(Ok(RankingLoss::Hinge), LossArg::ranking)?,
                weight_scale: self.weight_scale,
                ..OnlineBmrConfig::new(weak)
            }),
            Algorithm::AdaOlmr => ModelConfig::AdaOlmr(AdaOlmrConfig {
                n_learners: self.learners,
                weight_scale: self.weight_scale,
                expert_selection: self.expert.into(),
                ..AdaOlmrConfig::new(weak)
            }),
        })
    }

    /// The Adaboost.OLM config of these arguments over weak learner `weak`.
    fn adaptive<W>(&self, weak: W) -> Result<AdaBoostOlmConfig<W>> {
        let defaults = AdaBoostOlmConfig::new(weak);
        Ok(AdaBoostOlmConfig {
            n_learners: self.learners,
            loss: self
                .loss
                .map_or(Ok(Surrogate::Logistic), LossArg::surrogate)?,
            weight_scale: self.weight_scale,
            expert_selection: self.expert.into(),
            vote_rule: self.vote.map_or(defaults.vote_rule, VoteRule::from),
            ..defaults
        })
    }
}

/// The JSON report: what ran, then the prequential metrics.
#[derive(Serialize)]
struct RunReport<'a, R> {
    #[serde(flatten)]
    run: &'a RunInfo<'a>,
    #[serde(flatten)]
    metrics: &'a R,
}

/// What ran.
#[derive(Serialize)]
struct RunInfo<'a> {
    algorithm: Algorithm,
    model: String,
    config: &'a ModelConfig,
    /// `null` when the model was loaded from a checkpoint.
    seed: Option<u64>,
    shuffle: Option<u64>,
    inputs: Vec<String>,
    /// Rows (0-based replay positions) from which the test part starts, if any.
    test_start: Option<usize>,
    encodings: &'a Encodings,
    /// The checkpoint the run continued from, and the rows that model had seen.
    resumed_from: Option<String>,
    rows_before: u64,
    /// Rows whose label is not in the model's class set (scored, not learnt).
    unknown_labels: usize,
}

/// What every replayed row does besides being scored: progress, the stream's counters and
/// the periodic checkpoint.
struct Bookkeeping<'a> {
    args: &'a ReplayArgs,
    stream: StreamState,
    unknown_label_rows: &'a [usize],
    progress: Progress,
    saved_at: Option<usize>,
}

impl Bookkeeping<'_> {
    fn after_row(
        &mut self,
        position: usize,
        row: usize,
        labelled: bool,
        model: &mut Model,
    ) -> Result<()> {
        self.progress.row(position as u64 + 1);
        self.stream.stats.rows_seen += 1;
        if labelled {
            self.stream.stats.rows_learnt += 1;
        } else if self.unknown_label_rows.binary_search(&row).is_ok() {
            self.stream.stats.unknown_labels += 1;
        }
        if let (Some(path), Some(every)) = (&self.args.save, self.args.checkpoint_every)
            && (position as u64 + 1).is_multiple_of(every)
        {
            checkpoint::save(path, model, &self.stream)?;
            self.saved_at = Some(position);
        }
        Ok(())
    }

    /// Saves the final checkpoint unless the last row already did.
    fn finish(&mut self, rows: usize, model: &mut Model) -> Result<()> {
        self.progress.finish();
        if let Some(path) = &self.args.save {
            if self.saved_at != rows.checked_sub(1) {
                checkpoint::save(path, model, &self.stream)?;
            }
            eprintln!(
                "saved    {} ({} rows seen)",
                path.display(),
                self.stream.stats.rows_seen
            );
        }
        Ok(())
    }
}

/// The replay order: file order, or a seeded shuffle within the training part and within
/// the test part (the test rows stay after the training rows).
fn replay_order(n: usize, test_start: Option<usize>, shuffle: Option<u64>) -> Option<Vec<usize>> {
    shuffle.map(|seed| {
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = Rng::new(seed);
        let split = test_start.unwrap_or(n).min(n);
        let (train, test) = order.split_at_mut(split);
        rng.shuffle(train);
        rng.shuffle(test);
        order
    })
}

/// Runs `streamboost replay`.
pub fn run(args: &ReplayArgs) -> Result<()> {
    if args.checkpoint_every == Some(0) {
        return Err(Error::config("checkpoint_every", "must be >= 1"));
    }
    let (tables, inputs, test_start) = read_inputs(args)?;
    let evaluation = Prequential {
        final_fraction: args.final_fraction,
        window: args.window,
        weight: 1.0,
        test_start,
    };
    evaluation.validate()?;
    let (mut model, stream, encoded) = match &args.load {
        Some(path) => {
            let (model, stream) = checkpoint::load(path)?;
            let encoded = encode_with_spec(&tables, &stream.spec, &stream.label, &stream.encodings)
                .map_err(|e| checkpoint::not_fitting(path, e))?;
            eprintln!(
                "resumed  {} ({} rows seen)",
                path.display(),
                stream.stats.rows_seen
            );
            (model, stream, encoded)
        }
        None => {
            let config = args.model_config()?;
            config.validate()?;
            let encodings = Encodings {
                nominal: args.nominal.clone(),
                ordinal: args.ordinal.clone(),
            };
            let data = encode_tables(&tables, &args.label, &encodings)?;
            let model = config.build(data.spec(), args.seed)?;
            let stream = StreamState {
                config,
                spec: data.spec().clone(),
                encodings,
                label: args.label.clone(),
                stats: OperatorStats::default(),
            };
            let encoded = Encoded {
                data,
                unknown_label_rows: Vec::new(),
            };
            (model, stream, encoded)
        }
    };
    let data = &encoded.data;
    let before = stream.stats;
    let config = stream.config.clone();
    let spec = data.spec();
    let n_nominal = spec.features.iter().filter(|f| f.is_nominal()).count();
    let order = replay_order(data.len(), test_start, args.shuffle);

    eprintln!("model    {config}");
    let seed = args.load.is_none().then_some(args.seed);
    eprintln!(
        "seed     {}{}",
        seed.map_or("from the checkpoint".to_string(), |s| s.to_string()),
        args.shuffle
            .map_or(", rows in file order".to_string(), |s| format!(
                ", rows shuffled with seed {s}"
            ))
    );
    eprintln!("input    {}", inputs.join(", "));
    eprintln!(
        "stream   {} rows, {} features ({} numeric, {} nominal), {} {} [{}]",
        data.len(),
        spec.n_features(),
        spec.n_features() - n_nominal,
        n_nominal,
        spec.n_classes(),
        if spec.is_multi_label() {
            "labels"
        } else {
            "classes"
        },
        spec.classes.names().join(", ")
    );
    if let Some(t) = test_start {
        eprintln!("test     rows {t}.. ({} rows)", data.len() - t);
    }
    if !encoded.unknown_label_rows.is_empty() {
        eprintln!(
            "warning  {} rows have a label outside the model's classes: scored, not learnt",
            encoded.unknown_label_rows.len()
        );
    }

    let mut book = Bookkeeping {
        args,
        stream: StreamState {
            spec: spec.clone(),
            ..stream
        },
        unknown_label_rows: &encoded.unknown_label_rows,
        progress: Progress::new(data.len() as u64, args.quiet),
        saved_at: None,
    };
    let encodings = book.stream.encodings.clone();
    let run = RunInfo {
        algorithm: config.algorithm(),
        model: config.to_string(),
        config: &config,
        seed,
        shuffle: args.shuffle,
        inputs: inputs.clone(),
        test_start,
        encodings: &encodings,
        resumed_from: args.load.as_ref().map(|p| p.display().to_string()),
        rows_before: before.rows_seen,
        unknown_labels: encoded.unknown_label_rows.len(),
    };

    if spec.is_multi_label() {
        let labels = spec.classes.names();
        let mut predictions = args
            .predictions
            .as_ref()
            .map(|_| RankedPredictions::new(labels));
        let report = evaluation.run_ranking(&mut model, data, order.as_deref(), |row, model| {
            if let Some(p) = predictions.as_mut() {
                p.push(
                    before.rows_seen + row.row as u64,
                    row.relevant,
                    row.scores,
                    row.predicted,
                );
            }
            book.after_row(row.position, row.row, row.relevant.is_some(), model)
        })?;
        book.finish(data.len(), &mut model)?;
        print_ranking_summary(&report);
        let points = report.curve.iter();
        let points = points.map(|p| (p.rows, p.cumulative_rank_loss, p.window_rank_loss));
        let predictions = predictions.map(|p| p.to_batch()).transpose()?;
        return write_outputs(args, &run, &report, "rank_loss", points, predictions);
    }

    let class_names = spec.classes.names();
    let mut predictions = args
        .predictions
        .as_ref()
        .map(|_| Predictions::new(class_names));
    let report = evaluation.run_with(&mut model, data, order.as_deref(), |outcome, model| {
        if let Some(p) = predictions.as_mut() {
            p.rows.push(before.rows_seen + outcome.row as u64);
            p.labels.push(outcome.label.map(|y| class_names[y].clone()));
            p.predictions.push(class_names[outcome.predicted].clone());
            p.probabilities.extend_from_slice(outcome.proba);
        }
        book.after_row(
            outcome.position,
            outcome.row,
            outcome.label.is_some(),
            model,
        )
    })?;
    book.finish(data.len(), &mut model)?;
    print_summary(&report);
    let points = report.curve.iter();
    let points = points.map(|p| (p.rows, p.cumulative_accuracy, p.window_accuracy));
    let predictions = predictions.map(|p| p.to_batch()).transpose()?;
    write_outputs(args, &run, &report, "accuracy", points, predictions)
}

/// Writes the files a replay was asked for: the JSON report (`run` and `metrics`), the
/// learning curve of `metric` and the predictions.
fn write_outputs<R: Serialize>(
    args: &ReplayArgs,
    run: &RunInfo,
    metrics: &R,
    metric: &str,
    curve: impl Iterator<Item = (u64, Option<f64>, Option<f64>)>,
    predictions: Option<arrow::record_batch::RecordBatch>,
) -> Result<()> {
    if let Some(path) = &args.report {
        write_json(path, &RunReport { run, metrics })?;
    }
    if let Some(path) = &args.curve {
        write_curve(path, metric, curve)?;
    }
    if let (Some(path), Some(batch)) = (&args.predictions, predictions) {
        write_batch(path, &batch)?;
    }
    Ok(())
}

/// Writes a learning curve as CSV: `rows,cumulative_<metric>,window_<metric>`.
fn write_curve(
    path: &Path,
    metric: &str,
    points: impl Iterator<Item = (u64, Option<f64>, Option<f64>)>,
) -> Result<()> {
    let cell = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let mut csv = format!("rows,cumulative_{metric},window_{metric}\n");
    for (rows, cumulative, window) in points {
        csv += &format!("{rows},{},{}\n", cell(cumulative), cell(window));
    }
    write_text(path, &csv)
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let json = serde_json::to_string_pretty(value).expect("reports serialize");
    write_text(path, &(json + "\n"))
}

/// The input tables then the test tables, their names, and the row where the test part
/// starts (the bundled data set without `--input`).
fn read_inputs(args: &ReplayArgs) -> Result<(Vec<Table>, Vec<String>, Option<usize>)> {
    if args.inputs.is_empty() {
        let table = read_csv_bytes(Path::new(BUNDLED_NAME), BUNDLED_CSV)?;
        return Ok((vec![table], vec![BUNDLED_NAME.to_string()], None));
    }
    let paths: Vec<&PathBuf> = args.inputs.iter().chain(&args.tests).collect();
    let tables = paths
        .iter()
        .map(|p| read_table(p))
        .collect::<Result<Vec<_>>>()?;
    let names = paths.iter().map(|p| p.display().to_string()).collect();
    let test_start = (!args.tests.is_empty())
        .then(|| tables[..args.inputs.len()].iter().map(Table::n_rows).sum());
    Ok((tables, names, test_start))
}

fn write_text(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or("n/a".to_string(), |v| format!("{v:.4}"))
}

fn print_ranking_summary(r: &RankingReport) {
    let mut out = std::io::stdout().lock();
    let line = |out: &mut std::io::StdoutLock<'_>, name: &str, m: &RankingSummary| {
        let _ = writeln!(
            out,
            "{name:<15} rank loss {}   hamming {}   one-error {}   coverage {}   avg precision {}   ({} rows)",
            fmt_opt(m.rank_loss),
            fmt_opt(m.hamming_loss),
            fmt_opt(m.one_error),
            fmt_opt(m.coverage),
            fmt_opt(m.average_precision),
            m.rows
        );
    };
    let _ = writeln!(
        out,
        "rows            {} ({} labelled)",
        r.rows, r.cumulative.rows
    );
    line(&mut out, "all", &r.cumulative);
    line(
        &mut out,
        &format!("final {:>3}%", (r.final_fraction * 100.0).round()),
        &r.last,
    );
    if let Some(test) = &r.test {
        line(&mut out, "test", test);
    }
    let _ = writeln!(
        out,
        "throughput      {:.0} rows/s ({:.3} s)",
        r.throughput.rows_per_second, r.throughput.seconds
    );
}

fn print_summary(r: &PrequentialReport) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "rows            {} ({} labelled)",
        r.rows, r.cumulative.rows
    );
    let _ = writeln!(
        out,
        "accuracy        {}   kappa {}",
        fmt_opt(r.cumulative.accuracy),
        fmt_opt(r.cumulative.kappa)
    );
    let _ = writeln!(
        out,
        "final {:>3}%      {}   kappa {}   ({} rows)",
        (r.final_fraction.fraction * 100.0).round(),
        fmt_opt(r.final_fraction.accuracy),
        fmt_opt(r.final_fraction.kappa),
        r.final_fraction.rows
    );
    if let Some(test) = &r.test {
        let _ = writeln!(
            out,
            "test            {}   kappa {}   ({} rows)",
            fmt_opt(test.accuracy),
            fmt_opt(test.kappa),
            test.rows
        );
    }
    let _ = writeln!(
        out,
        "throughput      {:.0} rows/s ({:.3} s)",
        r.throughput.rows_per_second, r.throughput.seconds
    );
    let width = r
        .per_class
        .iter()
        .map(|c| c.class.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        out,
        "{:<width$}  precision  recall      f1  support",
        "class"
    );
    for c in &r.per_class {
        let _ = writeln!(
            out,
            "{:<width$}  {:>9.4}  {:>6.4}  {:>6.4}  {:>7}",
            c.class, c.precision, c.recall, c.f1, c.support
        );
    }
}

/// A progress bar on a terminal, plain lines every 10% otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    quiet: bool,
}

impl Progress {
    fn new(total: u64, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} rows  {per_sec}  eta {eta}")
                    .expect("static template"),
            );
            bar
        });
        Progress { bar, total, quiet }
    }

    #[inline]
    fn row(&self, done: u64) {
        if let Some(bar) = &self.bar {
            if done.is_multiple_of(64) {
                bar.set_position(done);
            }
        } else if !self.quiet && self.total >= 10 && done.is_multiple_of(self.total / 10) {
            eprintln!("progress {done}/{} rows", self.total);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
