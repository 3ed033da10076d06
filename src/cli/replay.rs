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
use crate::boost::oza::OzaBoostConfig;
use crate::boost::{ExpertSelection, VoteRule, WeightScale};
use crate::checkpoint::{self, StreamState};
use crate::columnar::{
    Encoded, Encodings, OperatorStats, Ordinal, Predictions, Table, encode_tables,
    encode_with_spec, read_csv_bytes, read_table, write_batch,
};
use crate::core::Rng;
use crate::eval::{Prequential, PrequentialReport};
use crate::learner::Config;
use crate::model::{Algorithm, ModelConfig};
use crate::scaling::{ScaledConfig, Scaling};
use crate::weak::hoeffding::Preset;
use crate::weak::{HoeffdingTreeConfig, NaiveBayesConfig, PerceptronConfig, WeakLearnerConfig};
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

/// Surrogate loss of Adaboost.OLM (`--loss`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LossArg {
    /// Multiclass logistic loss (the paper's Adaboost.OLM).
    Logistic,
    /// Exponential loss ([JGT-App] D.1).
    Exp,
    /// Square hinge loss ([JGT-App] D.2).
    SquareHinge,
}

impl From<LossArg> for Surrogate {
    fn from(l: LossArg) -> Self {
        match l {
            LossArg::Logistic => Surrogate::Logistic,
            LossArg::Exp => Surrogate::Exponential,
            LossArg::SquareHinge => Surrogate::SquareHinge,
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

/// Parameter presets of the weak learner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PresetArg {
    /// Library defaults (River's, with population variance).
    Default,
    /// The papers' experiments: per-tree random grace period, δ and τ, majority leaves.
    JgtPaper,
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
    /// Label column.
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
    /// Per-learner weight scale of a booster: a constant `C`, or `LO:HI` for U[LO, HI] per
    /// learner (the papers' experiments used 5:200).
    #[arg(long, default_value = "1", value_parser = parse_weight_scale, value_name = "C|LO:HI")]
    pub weight_scale: WeightScale,
    /// The assumed edge γ of OnlineMBBM (the paper's grid: 0.3, 0.1, 0.05, 0.01, 0.001) and of
    /// the OSBoost family (in (0, 1/2); the paper's experiments: 0.1).
    #[arg(long, default_value_t = 0.1, value_name = "G")]
    pub gamma: f64,
    /// How a booster's learners vote: the class of least expected cost under the booster's
    /// cost matrix (the papers' code), or their most probable class.
    #[arg(long, value_enum, default_value_t = VoteArg::ExpectedCost)]
    pub vote: VoteArg,
    /// OnlineMBBM's weight normalisation: divide by its bound k − 1, or not (the authors'
    /// code, whose experiments scaled the raw weights by 0.1·U[5, 200]).
    #[arg(long, value_enum, default_value_t = WeightNormArg::KMinusOne)]
    pub weight_norm: WeightNormArg,
    /// Rescale numeric features online before the model sees them, with statistics of the
    /// rows learnt so far (never looking ahead; part of the model and its checkpoints).
    #[arg(long, value_enum, default_value_t = ScaleArg::None)]
    pub scale: ScaleArg,
    /// How the binary boosters (osboost*, ogboost) read their weak learners: the sign of the
    /// most probable class, or p(+) − p(−).
    #[arg(long, value_enum, default_value_t = WeakOutputArg::Sign)]
    pub weak_output: WeakOutputArg,
    /// Surrogate loss of ada-olm (and of ova and ada-ova's boosters).
    #[arg(long, value_enum, default_value_t = LossArg::Logistic)]
    pub loss: LossArg,
    /// Which OzaBoost: MOA's (λ normalised by all rows seen; models with error 0 or above
    /// 1/2 end the vote) or River's (Oza's λ update; such models vote with weight 1).
    #[arg(long, value_enum, default_value_t = OzaVariantArg::Moa)]
    pub oza_variant: OzaVariantArg,
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
        "ordinal", "label", "gamma", "vote", "loss", "oza_variant", "weight_norm", "weak_output", "scale",
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
    pub fn model_config(&self) -> ModelConfig {
        let model = self.unscaled_config();
        let scaling = match self.scale {
            ScaleArg::None => return model,
            ScaleArg::MinMax => Scaling::MinMax,
            ScaleArg::Standardize => Scaling::Standardize,
        };
        ModelConfig::Scaled(ScaledConfig {
            scaling,
            model: Box::new(model),
        })
    }

    fn unscaled_config(&self) -> ModelConfig {
        let tree = HoeffdingTreeConfig::preset(match self.preset {
            PresetArg::Default => Preset::Default,
            PresetArg::JgtPaper => Preset::JgtPaper,
        });
        let weak = match self.weak {
            WeakKind::Hoeffding => WeakLearnerConfig::Hoeffding(tree.clone()),
            WeakKind::NaiveBayes => WeakLearnerConfig::NaiveBayes(NaiveBayesConfig::default()),
            WeakKind::Perceptron => WeakLearnerConfig::Perceptron(PerceptronConfig::default()),
        };
        match self.algo {
            Algorithm::Hoeffding => ModelConfig::Hoeffding(tree),
            Algorithm::NaiveBayes => ModelConfig::NaiveBayes(NaiveBayesConfig::default()),
            Algorithm::Perceptron => ModelConfig::Perceptron(PerceptronConfig::default()),
            Algorithm::AdaOlm => ModelConfig::AdaOlm(self.adaptive(weak)),
            Algorithm::Mbbm => ModelConfig::Mbbm(OnlineMbbmConfig {
                n_learners: self.learners,
                gamma: self.gamma,
                weight_scale: self.weight_scale,
                vote_rule: self.vote.into(),
                weight_norm: match self.weight_norm {
                    WeightNormArg::KMinusOne => WeightNorm::KMinusOne,
                    WeightNormArg::Raw => WeightNorm::Raw,
                },
                ..OnlineMbbmConfig::new(weak)
            }),
            Algorithm::Oza => ModelConfig::Oza(OzaBoostConfig {
                n_learners: self.learners,
                ..match self.oza_variant {
                    OzaVariantArg::Moa => OzaBoostConfig::new(weak),
                    OzaVariantArg::River => OzaBoostConfig::river(weak),
                }
            }),
            Algorithm::Ova => ModelConfig::Ova(one_vs_all(self.adaptive(weak))),
            Algorithm::AdaOva => ModelConfig::AdaOva(self.adaptive(BinaryBundleConfig::new(weak))),
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
        }
    }

    /// The Adaboost.OLM config of these arguments over weak learner `weak`.
    fn adaptive<W>(&self, weak: W) -> AdaBoostOlmConfig<W> {
        AdaBoostOlmConfig {
            n_learners: self.learners,
            loss: self.loss.into(),
            weight_scale: self.weight_scale,
            expert_selection: match self.expert {
                ExpertArg::Sample => ExpertSelection::Sample,
                ExpertArg::Best => ExpertSelection::Best,
                ExpertArg::Last => ExpertSelection::Last,
            },
            vote_rule: self.vote.into(),
            ..AdaBoostOlmConfig::new(weak)
        }
    }
}

/// The JSON report: what ran, then the prequential metrics.
#[derive(Serialize)]
struct RunReport<'a> {
    algorithm: Algorithm,
    model: String,
    config: &'a ModelConfig,
    /// `null` when the model was loaded from a checkpoint.
    seed: Option<u64>,
    shuffle: Option<u64>,
    inputs: Vec<String>,
    encodings: &'a Encodings,
    /// The checkpoint the run continued from, and the rows that model had seen.
    resumed_from: Option<String>,
    rows_before: u64,
    /// Rows whose label is not in the model's class set (scored, not learnt).
    unknown_labels: usize,
    #[serde(flatten)]
    metrics: &'a PrequentialReport,
}

/// Runs `streamboost replay`.
pub fn run(args: &ReplayArgs) -> Result<()> {
    let evaluation = Prequential {
        final_fraction: args.final_fraction,
        window: args.window,
        weight: 1.0,
    };
    evaluation.validate()?;
    if args.checkpoint_every == Some(0) {
        return Err(Error::config("checkpoint_every", "must be >= 1"));
    }

    let (tables, inputs) = read_inputs(args)?;
    let (mut model, mut stream, encoded) = match &args.load {
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
            let config = args.model_config();
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
    stream.spec = data.spec().clone();
    let before = stream.stats;
    let config = stream.config.clone();
    let spec = data.spec();
    let n_nominal = spec.features.iter().filter(|f| f.is_nominal()).count();
    let order = args.shuffle.map(|s| {
        let mut order: Vec<usize> = (0..data.len()).collect();
        Rng::new(s).shuffle(&mut order);
        order
    });

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
        "stream   {} rows, {} features ({} numeric, {} nominal), {} classes [{}]",
        data.len(),
        spec.n_features(),
        spec.n_features() - n_nominal,
        n_nominal,
        spec.n_classes(),
        spec.classes.names().join(", ")
    );
    if !encoded.unknown_label_rows.is_empty() {
        eprintln!(
            "warning  {} rows have a label outside the model's classes: scored, not learnt",
            encoded.unknown_label_rows.len()
        );
    }

    let progress = Progress::new(data.len() as u64, args.quiet);
    let class_names = spec.classes.names();
    let mut predictions = args
        .predictions
        .as_ref()
        .map(|_| Predictions::new(class_names));
    let mut saved_at = None;
    let report = evaluation.run_with(&mut model, data, order.as_deref(), |outcome, model| {
        progress.row(outcome.position as u64 + 1);
        if let Some(p) = predictions.as_mut() {
            p.rows.push(before.rows_seen + outcome.row as u64);
            p.labels.push(outcome.label.map(|y| class_names[y].clone()));
            p.predictions.push(class_names[outcome.predicted].clone());
            p.probabilities.extend_from_slice(outcome.proba);
        }
        stream.stats.rows_seen += 1;
        if outcome.label.is_some() {
            stream.stats.rows_learnt += 1;
        } else if encoded
            .unknown_label_rows
            .binary_search(&outcome.row)
            .is_ok()
        {
            stream.stats.unknown_labels += 1;
        }
        if let (Some(path), Some(every)) = (&args.save, args.checkpoint_every)
            && (outcome.position as u64 + 1).is_multiple_of(every)
        {
            checkpoint::save(path, model, &stream)?;
            saved_at = Some(outcome.position);
        }
        Ok(())
    })?;
    progress.finish();

    print_summary(&report);
    if let Some(path) = &args.save
        && saved_at != data.len().checked_sub(1)
    {
        checkpoint::save(path, &mut model, &stream)?;
    }
    if let Some(path) = &args.save {
        eprintln!(
            "saved    {} ({} rows seen)",
            path.display(),
            stream.stats.rows_seen
        );
    }
    if let Some(path) = &args.report {
        let run = RunReport {
            algorithm: config.algorithm(),
            model: config.to_string(),
            config: &config,
            seed,
            shuffle: args.shuffle,
            inputs,
            encodings: &stream.encodings,
            resumed_from: args.load.as_ref().map(|p| p.display().to_string()),
            rows_before: before.rows_seen,
            unknown_labels: encoded.unknown_label_rows.len(),
            metrics: &report,
        };
        let json = serde_json::to_string_pretty(&run).expect("reports serialize");
        write_text(path, &(json + "\n"))?;
    }
    if let Some(path) = &args.curve {
        let mut csv = String::from("rows,cumulative_accuracy,window_accuracy\n");
        let cell = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
        for p in &report.curve {
            csv += &format!(
                "{},{},{}\n",
                p.rows,
                cell(p.cumulative_accuracy),
                cell(p.window_accuracy)
            );
        }
        write_text(path, &csv)?;
    }
    if let (Some(path), Some(p)) = (&args.predictions, predictions) {
        write_batch(path, &p.to_batch()?)?;
    }
    Ok(())
}

/// The input tables and their names (the bundled data set without `--input`).
fn read_inputs(args: &ReplayArgs) -> Result<(Vec<Table>, Vec<String>)> {
    if args.inputs.is_empty() {
        let table = read_csv_bytes(Path::new(BUNDLED_NAME), BUNDLED_CSV)?;
        return Ok((vec![table], vec![BUNDLED_NAME.to_string()]));
    }
    let tables = args
        .inputs
        .iter()
        .map(|p| read_table(p))
        .collect::<Result<Vec<_>>>()?;
    let names = args
        .inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    Ok((tables, names))
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
