//! The model flags of every command that builds a model: `--algo`, `--config FILE`, and the
//! shared hyper-parameters as [`Knob`]s. A flag that is not given leaves the algorithm's
//! default (which lives beside its code, through the catalogue); a flag the algorithm has no
//! knob for is an error naming both, never silently ignored.

use std::path::{Path, PathBuf};

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};

use crate::boost::binary::WeakOutput;
use crate::boost::multiclass::WeightNorm;
use crate::boost::multiclass::cost::Surrogate;
use crate::boost::oza::{OzaVariant, ZeroErrorPolicy};
use crate::boost::ranking::RankingLoss;
use crate::boost::{ExpertSelection, Knob, Tune, VoteRule, WeightScale};
use crate::drift::DriftConfig;
use crate::model::{Algorithm, ModelConfig, member_preset};
use crate::scaling::{ScaledConfig, Scaling};
use crate::weak::hoeffding::Preset;
use crate::weak::{
    HatConfig, HoeffdingTreeConfig, Numerics, PerceptronConfig, ResampleMode, ResamplingConfig,
    WeakLearnerConfig,
};
use crate::{Error, Result};

/// `--weak`'s values: the weak learners' rows, with their help.
fn weak_parser() -> PossibleValuesParser {
    let rows = WeakLearnerConfig::NAMES
        .iter()
        .zip(WeakLearnerConfig::ABOUT);
    PossibleValuesParser::new(rows.map(|(name, about)| PossibleValue::new(name).help(about.trim())))
}

/// `--loss`: a surrogate of the adaptive boosters, or the loss of OnlineBMR's potentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LossArg {
    /// Multiclass logistic loss (the paper's Adaboost.OLM; ada-olm's default).
    Logistic,
    /// Exponential loss (\[JGT-App\] D.1).
    Exp,
    /// Square hinge loss (\[JGT-App\] D.2).
    SquareHinge,
    /// Rank loss potentials (bmr).
    Rank,
    /// Hinge loss potentials (bmr's default, the paper's experiments).
    Hinge,
}

impl LossArg {
    fn knob(self) -> Knob {
        match self {
            LossArg::Logistic => Knob::Surrogate(Surrogate::Logistic),
            LossArg::Exp => Knob::Surrogate(Surrogate::Exponential),
            LossArg::SquareHinge => Knob::Surrogate(Surrogate::SquareHinge),
            LossArg::Rank => Knob::RankingLoss(RankingLoss::Rank),
            LossArg::Hinge => Knob::RankingLoss(RankingLoss::Hinge),
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

/// `--lead`'s value: a tree preset for an adaptive booster's first member, or none (the
/// first member as the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lead(pub Option<Preset>);

/// `--drift-detector`: a detector at its paper's defaults, or `none`.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftArg(pub Option<DriftConfig>);

/// `--drift-detector`'s values: `none`, then the detectors.
fn drift_parser() -> impl TypedValueParser<Value = DriftArg> {
    let none = PossibleValue::new("none").help("Learners are never replaced");
    let names = DriftConfig::NAMES.iter().map(|&n| PossibleValue::new(n));
    PossibleValuesParser::new(std::iter::once(none).chain(names))
        .map(|name| DriftArg(DriftConfig::named(&name)))
}

/// `--lead`'s values: `none`, then the tree presets with their help.
fn lead_parser() -> impl TypedValueParser<Value = Lead> {
    let none = PossibleValue::new("none").help("Every member as `--weak`/`--preset` say");
    let presets = Preset::value_variants()
        .iter()
        .filter_map(ValueEnum::to_possible_value);
    PossibleValuesParser::new(std::iter::once(none).chain(presets))
        .map(|name| Lead(Preset::from_str(&name, false).ok()))
}

/// A paper's experimental protocol: the model flags its experiments set, for the algorithms
/// the paper ran (`--protocol`). A flag given beside it wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// \[JGT\] (NeurIPS 2017): 100 jgt-paper trees, weight scales U\[5, 200\] per learner
    /// (ada-olm, ova, ada-ova); OnlineMBBM as the authors' code runs it (raw weights scaled by
    /// 0.1·U\[5, 200\], expected-cost votes); Oza's boosting (their OLB) and the single tree
    /// as they are.
    Jgt17,
    /// \[CLL\] (ICML 2012): features rescaled online (min–max), the learners fed Poisson
    /// copies of each row, trees at the library's default preset; for osboost*, ogboost,
    /// oza and the single perceptron and naive Bayes.
    Cll12,
    /// \[JT\] (AISTATS 2018): 100 jgt-paper trees over 20 random features each, weight
    /// scales U\[3, 10\] (ada-olmr, bmr with hinge potentials).
    Jt18,
}

impl Protocol {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Jgt17 => "jgt17",
            Protocol::Cll12 => "cll12",
            Protocol::Jt18 => "jt18",
        }
    }

    /// Sets in `flags` what this protocol sets for their algorithm and they do not.
    fn apply(self, flags: &mut ModelFlags) -> Result<()> {
        use Algorithm::*;
        let scale = |lo, hi| Some(WeightScale::UniformRandom(lo, hi));
        let algo = flags.algo;
        match (self, algo) {
            (Protocol::Jgt17, AdaOlm | Ova | AdaOva) => {
                flags.weight_scale = flags.weight_scale.or(scale(5.0, 200.0));
                flags.lead = flags.lead.or(Some(Lead(None)));
            }
            (Protocol::Jgt17, Mbbm) => {
                flags.weight_scale = flags.weight_scale.or(scale(0.5, 20.0));
                flags.weight_norm = flags.weight_norm.or(Some(WeightNorm::Raw));
                flags.vote = flags.vote.or(Some(VoteRule::ExpectedCost));
                flags.all_members_vote();
            }
            (Protocol::Jgt17, Oza | Hoeffding) => {}
            (Protocol::Cll12, OsBoost | OsBoostOcp | OsBoostExp | OgBoost | Oza) => {
                flags.scale = flags.scale.or(Some(ScaleArg::MinMax));
                flags.resample = flags.resample.or(Some(ResampleArg::Poisson));
                flags.preset = flags.preset.or(Some(Preset::Default));
            }
            (Protocol::Cll12, Perceptron | NaiveBayes) => {
                flags.scale = flags.scale.or(Some(ScaleArg::MinMax));
            }
            (Protocol::Jt18, AdaOlmr | Bmr) => {
                flags.weight_scale = flags.weight_scale.or(scale(3.0, 10.0));
            }
            _ => {
                return Err(Error::config(
                    "protocol",
                    format!("{algo} is not among the algorithms of {}", self.name()),
                ));
            }
        }
        // The papers assume a stationary stream: no learner is replaced.
        if algo.is_booster() {
            flags.drift_detector = flags.drift_detector.clone().or(Some(DriftArg(None)));
        }
        // The papers' OLB and Oza's boosting are MOA's OzaBoost, its stop rule included.
        if algo == Oza {
            flags.oza_variant = flags.oza_variant.or(Some(OzaVariant::Moa));
            flags.all_members_vote();
        }
        if matches!(self, Protocol::Jgt17 | Protocol::Jt18) && algo.is_booster() {
            flags.learners = flags.learners.or(Some(100));
            flags.preset = flags.preset.or(Some(Preset::JgtPaper));
        }
        if (self, algo) == (Protocol::Jgt17, Hoeffding) {
            flags.preset = flags.preset.or(Some(Preset::JgtPaper));
        }
        Ok(())
    }
}

/// The flags that describe a model.
#[derive(Debug, Clone, Args)]
pub struct ModelFlags {
    /// Algorithm; each runs at its own defaults, which the flags below change. Default: ova,
    /// the strongest of the measured defaults across the shared sets (RESULTS.md).
    #[arg(long, default_value = "ova", value_parser = algorithm_parser())]
    pub algo: Algorithm,
    /// Run a paper's protocol: the settings its experiments used for this algorithm (a flag
    /// given as well wins). Each RESULTS.md table's command is `--algo X --protocol P`.
    #[arg(long, value_enum)]
    pub protocol: Option<Protocol>,
    /// The model as a JSON config (the `config` of `sql --model`): its algorithm and what
    /// differs from that algorithm's defaults, e.g. `{"algorithm": "ada-olm", "n_learners":
    /// 20}`; or a file holding one under `config`, such as a `--report`, to run a reported
    /// model again. The other model flags are not read with it.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Number of weak learners of a booster.
    #[arg(long, value_name = "N")]
    pub learners: Option<usize>,
    /// The first member of ada-olm, ova's boosters, ada-ova (one multiclass tree in place of
    /// a bundle), mbbm, oza and oza-bag when their members are trees: a tree of this preset,
    /// or `none` (as the rest). A booster that predicts with the best of its prefixes keeps
    /// near that one tree where the ensemble adds nothing. Default: moa, as a Hoeffding
    /// adaptive tree unless `--drift-detector` is given (RESULTS.md, "A lead tree", "Prefix
    /// experts" and "The default response: an adaptive lead"); none under `--protocol`.
    /// `--weak`/`--preset` set the others.
    #[arg(long, value_name = "PRESET|none", value_parser = lead_parser())]
    pub lead: Option<Lead>,
    /// Weak learner of a booster (default: a tree of the jgt-paper-nba preset for the
    /// multiclass ensembles, jgt-paper for the others).
    #[arg(long, value_name = "LEARNER", value_parser = weak_parser())]
    pub weak: Option<String>,
    /// Hoeffding tree parameter preset (of the tree, or of a booster's trees). Default: moa
    /// for a single tree (within 0.02 of the best preset on 6 of the 9 shared sets,
    /// RESULTS.md); jgt-paper-nba for the trees of the multiclass ensembles (better than
    /// jgt-paper's majority leaves on most shared sets, RESULTS.md); jgt-paper for the binary
    /// boosters' and the rankers'.
    #[arg(long, value_enum)]
    pub preset: Option<Preset>,
    /// Each tree sees a random subset of this many features, fixed at construction. Default:
    /// 20 for the rankers (bmr, ada-olmr) under the jgt-paper preset, as in \[JT\]'s
    /// experiments; all features otherwise, as in \[JGT\]'s.
    #[arg(long, value_name = "M")]
    pub features_per_tree: Option<usize>,
    /// How the trees evaluate their numeric features' Gaussians: `exact`, as the spec writes
    /// them, or `fast`, from an interpolated table and per-leaf reciprocal variances (the
    /// same quantities within 10⁻⁹). Default: exact. Fast pays for trees of many classes
    /// and features (ada-olm on optdigits: 1.32× fewer CPU-seconds), not for the
    /// one-vs-rest trees of the default model, which it makes no faster and 13–30% larger
    /// (RESULTS.md, "Fast numerics and the default model").
    #[arg(long, value_enum)]
    pub numerics: Option<Numerics>,
    /// Each tree's memory limit (`1MiB`, `512KB`, or bytes: its state's size, to which the
    /// allocator adds), as MOA's `maxByteSize`: past it the tree parks its least promising
    /// leaves' observers (they keep predicting and counting their classes, and stop
    /// growing), as many as MOA's estimate of a leaf's bytes asks. Default: none
    /// (RESULTS.md, "A memory limit per tree").
    #[arg(long, value_name = "SIZE", value_parser = super::parse_memory_size)]
    pub tree_memory_limit: Option<u64>,
    /// Per-learner weight scale of a booster: a constant `C`, `LO:HI` for U[LO, HI] per
    /// learner (the papers' experiments used 5:200), or `unit-mean`: each learner's weights
    /// divided by their running mean, so it sees weight 1 per row on average as it would
    /// alone (not for the rankers). Default: unit-mean for ada-olm, ova and ada-ova;
    /// OnlineMBBM's 0.5:20; 1 otherwise.
    #[arg(long, value_parser = parse_weight_scale, value_name = "C|LO:HI|unit-mean")]
    pub weight_scale: Option<WeightScale>,
    /// The assumed edge γ of OnlineMBBM (the paper's grid: 0.3, 0.1, 0.05, 0.01, 0.001), of
    /// OnlineBMR and of the OSBoost family (in (0, 1/2)). Default 0.1.
    #[arg(long, value_name = "G")]
    pub gamma: Option<f64>,
    /// How a booster's learners vote: the class of least expected cost under the booster's
    /// cost matrix (the papers' code), or their most probable class. Default: the booster's
    /// own (expected cost for Adaboost.OLM, argmax for OnlineMBBM).
    #[arg(long, value_enum)]
    pub vote: Option<VoteRule>,
    /// OnlineMBBM's weight normalisation: divide by its bound k − 1 (the theory's), or not
    /// (the authors' code, whose experiments scaled the raw weights by 0.1·U[5, 200]; the
    /// default, with that weight scale).
    #[arg(long, value_enum)]
    pub weight_norm: Option<WeightNorm>,
    /// OnlineMBBM's certified pruning bound ε (ALGORITHMS.md §P.2.8): every potential within
    /// ε of the exact one. 0 (default) computes the potentials exactly.
    #[arg(long, value_name = "EPS")]
    pub epsilon_prune: Option<f64>,
    /// Rescale numeric features online before the model sees them, with statistics of the
    /// rows learnt so far (never looking ahead; part of the model and its checkpoints).
    #[arg(long, value_enum)]
    pub scale: Option<ScaleArg>,
    /// How the binary boosters (osboost*, ogboost) read their weak learners: the sign of the
    /// most probable class (default), or p(+) − p(−).
    #[arg(long, value_enum)]
    pub weak_output: Option<WeakOutput>,
    /// Perceptrons start from weights and biases drawn from U[−R, R] (per learner, from the
    /// model's seed) instead of zeros, as \[CLL\]'s random initial hypotheses.
    #[arg(long, value_name = "R")]
    pub perceptron_init: Option<f64>,
    /// Feed a booster's learners unweighted copies of each row instead of its weight `w`:
    /// `K ~ Poisson(w)` copies, or one copy with probability `min(1, w)` (ALGORITHMS.md §1.2).
    #[arg(long, value_enum)]
    pub resample: Option<ResampleArg>,
    /// A change detector on each learner's error of a booster: a learner whose error drifts
    /// is replaced by one grown in the background since the warning, once a test shows it
    /// the better, and a booster that predicts with Hedge over its prefixes restarts them
    /// when its own error drifts (docs/drift.md). Without it, a booster's first member is a
    /// Hoeffding adaptive tree (a moa tree for ova, ada-olm, ada-ova, mbbm, oza and
    /// oza-bag; one of the members' own for the others) whose first swap wakes this
    /// response on the others (`--lead-wakes`); any value given here replaces both, and
    /// `none` takes every response away (as `--protocol` does).
    #[arg(long, value_name = "DETECTOR|none", value_parser = drift_parser())]
    pub drift_detector: Option<DriftArg>,
    /// The response a booster's adaptive first member wakes on the others once it first
    /// swaps a subtree in: each member watched by this detector and replaced on a drift,
    /// as under `--drift-detector`. Default: adwin wherever the first member adapts (the
    /// boosters' defaults, docs/drift.md); `none` leaves the first member's swaps as the
    /// whole response. Refused where the first member does not adapt.
    #[arg(long, value_name = "DETECTOR|none", value_parser = drift_parser())]
    pub lead_wakes: Option<DriftArg>,
    /// Surrogate loss of ada-olm (and of ova and ada-ova's boosters; default logistic), or
    /// the loss of bmr's potentials (rank or hinge; default hinge).
    #[arg(long, value_enum)]
    pub loss: Option<LossArg>,
    /// Which OzaBoost: MOA's or River's, each with its own rule for a model of error 0 or
    /// above 1/2. Default: MOA's, with such models skipped.
    #[arg(long, value_enum)]
    pub oza_variant: Option<OzaVariant>,
    /// What Oza's vote does with a model whose error is 0, undefined or above 1/2: end the
    /// vote there (MOA), give it weight 1 (River) or skip it and go on. Default: skip, or the
    /// variant's rule when `--oza-variant` is given.
    #[arg(long, value_enum)]
    pub oza_zero_error: Option<ZeroErrorPolicy>,
    /// Which prefix of its members a booster predicts with: drawn from Hedge over the
    /// prefixes' 0-1 losses (`sample`, the default), Hedge's best (`best`), or all members
    /// (`last`; what mbbm, oza and oza-bag do under `--protocol`).
    #[arg(long, value_enum)]
    pub expert: Option<ExpertSelection>,
}

/// The flags of `flags` (a flattened group: [`ModelFlags`], `StreamFlags`) typed on the
/// command line `matches` parsed, as typed (`--algo`): read off the group itself, so a flag
/// added to it is covered without a list to keep.
pub fn typed<A: Args>(matches: &clap::ArgMatches) -> Vec<String> {
    let flags = A::augment_args(clap::Command::new("flags"));
    flags
        .get_arguments()
        .filter(|arg| typed_id(matches, arg.get_id().as_str()))
        .map(|arg| format!("--{}", arg.get_long().unwrap_or(arg.get_id().as_str())))
        .collect()
}

/// Whether argument `id` was typed on the command line (not a default; not an argument of
/// another command).
pub fn typed_id(matches: &clap::ArgMatches, id: &str) -> bool {
    matches!(matches.try_get_raw(id), Ok(Some(_)))
        && matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
}

/// The model flags given on the command line `matches` parsed, as typed.
pub fn given(matches: &clap::ArgMatches) -> Vec<String> {
    typed::<ModelFlags>(matches)
}

/// Refuses flags that would go unread beside the ones that replace them: a `--config` file
/// describes the whole model, so no other model flag is read with it; a `--load`ed
/// checkpoint brings its model, stream and generators, so no model or stream flag and no
/// `--seed` is. Derived from the flag groups, so a new model flag is refused with both.
pub fn refuse_unread(matches: &clap::ArgMatches) -> Result<()> {
    let refuse = |by: &str, unread: Vec<String>, why: &str| match unread.is_empty() {
        true => Ok(()),
        false => Err(Error::config(
            "flags",
            format!("{} would not be read with {by}: {why}", unread.join(" ")),
        )),
    };
    if typed_id(matches, "load") {
        let mut unread = given(matches);
        unread.extend(typed::<crate::cli::StreamFlags>(matches));
        if typed_id(matches, "seed") {
            unread.push("--seed".into());
        }
        refuse(
            "--load",
            unread,
            "the checkpoint brings its model, classes, encodings and generators (drop them, or \
             start a fresh model without --load)",
        )?;
    }
    if typed_id(matches, "config") {
        let unread = given(matches)
            .into_iter()
            .filter(|f| f != "--config")
            .collect();
        refuse(
            "--config",
            unread,
            "the config file describes the whole model (set them in it)",
        )?;
    }
    Ok(())
}

/// `--algo`'s values, with their help, from the catalogue.
fn algorithm_parser() -> impl TypedValueParser<Value = Algorithm> {
    let names = Algorithm::ALL
        .iter()
        .map(|a| PossibleValue::new(a.name()).help(a.about()));
    PossibleValuesParser::new(names).map(|name| name.parse().expect("a catalogue name"))
}

fn parse_weight_scale(s: &str) -> std::result::Result<WeightScale, String> {
    let number = |t: &str| {
        t.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{t}` is not a number"))
    };
    let scale = match s.split_once(':') {
        _ if s == "unit-mean" => WeightScale::UnitMean,
        Some((lo, hi)) => WeightScale::UniformRandom(number(lo)?, number(hi)?),
        None => WeightScale::Constant(number(s)?),
    };
    scale.validate().map_err(|e| e.to_string())?;
    Ok(scale)
}

impl ModelFlags {
    /// Every member votes and all are alike, as the papers ran OnlineMBBM and Oza's boosting:
    /// no prefix experts and no lead, unless a flag says otherwise.
    fn all_members_vote(&mut self) {
        self.expert = self.expert.or(Some(ExpertSelection::Last));
        self.lead = self.lead.or(Some(Lead(None)));
    }

    /// The model configuration these flags describe: the `--config` file, or the
    /// algorithm's defaults with the given flags' knobs set.
    pub fn model_config(&self) -> Result<ModelConfig> {
        if let Some(path) = &self.config {
            return read_config(path);
        }
        if let Some(protocol) = self.protocol {
            let mut flags = self.clone();
            flags.protocol = None;
            protocol.apply(&mut flags)?;
            return flags.model_config();
        }
        let mut config = self.algo.default_config();
        for knob in self.knobs() {
            if !config.tune(&knob) {
                // The tree knob gathers three flags: name the one given.
                let name = match knob {
                    Knob::Tree(_) if self.preset.is_none() => [
                        self.features_per_tree.map(|_| "features-per-tree"),
                        self.numerics.map(|_| "numerics"),
                        self.tree_memory_limit.map(|_| "tree-memory-limit"),
                    ]
                    .into_iter()
                    .flatten()
                    .next()
                    .unwrap_or(knob.name()),
                    _ => knob.name(),
                };
                let mut reason = format!("--{name} does not apply to {}", self.algo);
                if let Knob::Surrogate(_) | Knob::RankingLoss(_) = knob {
                    reason += " (ada-olm, ova and ada-ova take logistic, exp or square-hinge; \
                               bmr takes rank or hinge)";
                }
                return Err(Error::config(name, reason));
            }
        }
        let scaling = match self.scale.unwrap_or(ScaleArg::None) {
            ScaleArg::None => return Ok(config),
            ScaleArg::MinMax => Scaling::MinMax,
            ScaleArg::Standardize => Scaling::Standardize,
        };
        let model = Box::new(config);
        Ok(ModelConfig::Scaled(ScaledConfig { scaling, model }))
    }

    /// The knobs of the flags given, in an order where later ones refine earlier ones (the
    /// Oza variant before its zero-error policy).
    fn knobs(&self) -> Vec<Knob> {
        let tree_given = self.preset.is_some()
            || self.features_per_tree.is_some()
            || self.numerics.is_some()
            || self.tree_memory_limit.is_some();
        let kind_given = self.weak.is_some() || self.resample.is_some();
        // A single learner takes its own kind of knob; a booster takes its weak learner whole
        // when `--weak` names one, and otherwise its tree or resampling set in the learner
        // it has.
        let booster_weak_given = self.weak.is_some() || self.perceptron_init.is_some();
        let single = match self.algo {
            a if a.is_booster() && booster_weak_given => Some(Knob::Weak(self.weak())),
            a if a.is_booster() => tree_given.then(|| Knob::Tree(self.tree())),
            Algorithm::Hoeffding if tree_given => Some(Knob::Tree(self.tree())),
            Algorithm::Perceptron if self.perceptron_init.is_some() => {
                Some(Knob::Perceptron(self.perceptron()))
            }
            _ if kind_given => Some(Knob::Weak(self.weak())),
            _ if tree_given => Some(Knob::Tree(self.tree())),
            _ => self
                .perceptron_init
                .map(|_| Knob::Perceptron(self.perceptron())),
        };
        // A booster's resampling without `--weak` wraps the learner it has.
        let resample = match (self.algo.is_booster() && !booster_weak_given, self.resample) {
            (true, Some(ResampleArg::Poisson)) => Some(Knob::Resample(ResampleMode::Poisson)),
            (true, Some(ResampleArg::Bernoulli)) => {
                Some(Knob::Resample(ResampleMode::Bernoulli { w_max: 1.0 }))
            }
            _ => None,
        };
        [
            // The drift response first: it takes away the one the learner has, and the
            // learner the flags name after it keeps the detector (`--weak hat
            // --drift-detector none` is Hoeffding adaptive trees alone).
            self.drift_detector
                .clone()
                .map(|DriftArg(d)| Knob::Drift(d)),
            single,
            resample,
            self.learners.map(Knob::Learners),
            self.lead.map(|Lead(preset)| Knob::Lead(preset)),
            self.lead_wakes
                .clone()
                .map(|DriftArg(d)| Knob::LeadWakes(d)),
            self.gamma.map(Knob::Gamma),
            self.weight_scale.map(Knob::WeightScale),
            self.vote.map(Knob::Vote),
            self.expert.map(Knob::Expert),
            self.loss.map(LossArg::knob),
            self.weight_norm.map(Knob::WeightNorm),
            self.epsilon_prune.map(Knob::EpsilonPrune),
            self.weak_output.map(Knob::WeakOutput),
            self.oza_variant.map(Knob::OzaVariant),
            self.oza_zero_error.map(Knob::ZeroError),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// The weak learner the flags describe.
    fn weak(&self) -> WeakLearnerConfig {
        // The learners with flags of their own take them; any other is at its row's defaults.
        let weak = match self.weak.as_deref().unwrap_or("hoeffding") {
            "hoeffding" => self.tree().into(),
            "hat" => HatConfig {
                tree: self.tree(),
                ..HatConfig::default()
            }
            .into(),
            "perceptron" => self.perceptron().into(),
            other => WeakLearnerConfig::named(other).expect("--weak takes the rows' names"),
        };
        let mode = match self.resample.unwrap_or(ResampleArg::None) {
            ResampleArg::None => return weak,
            ResampleArg::Poisson => ResampleMode::Poisson,
            ResampleArg::Bernoulli => ResampleMode::Bernoulli { w_max: 1.0 },
        };
        let inner = Box::new(weak);
        WeakLearnerConfig::Resampled(ResamplingConfig { mode, inner })
    }

    /// The tree of `--preset` (or of the algorithm's default members) with `--numerics` and
    /// `--tree-memory-limit`; the rankers' trees see 20 random features under the papers'
    /// preset, as in \[JT\]'s experiments.
    fn tree(&self) -> HoeffdingTreeConfig {
        let preset = self.preset.unwrap_or(member_preset(self.algo));
        let paper_ranker = self.algo.is_ranker() && preset == Preset::JgtPaper;
        let tree = HoeffdingTreeConfig::preset(preset);
        HoeffdingTreeConfig {
            feature_subset: self.features_per_tree.or(paper_ranker.then_some(20)),
            numerics: self.numerics.unwrap_or(tree.numerics),
            max_bytes: self
                .tree_memory_limit
                .map(|b| usize::try_from(b).unwrap_or(usize::MAX))
                .or(tree.max_bytes),
            ..tree
        }
    }

    fn perceptron(&self) -> PerceptronConfig {
        PerceptronConfig {
            init_range: self.perceptron_init.unwrap_or(0.0),
            ..PerceptronConfig::default()
        }
    }
}

/// Reads a model's JSON config file (see [`ModelConfig::from_json`]): a config, or a file
/// that holds one under `config` (a `replay --report`, an `sql --model` file).
pub fn read_config(path: &Path) -> Result<ModelConfig> {
    let format = |message: String| Error::Format {
        file: path.to_path_buf(),
        message,
    };
    let mut value = super::files::read_json(path)?;
    // A `replay --report` file or an `sql --model` file holds the config under `config`.
    if let Some(config) = value.get_mut("config").filter(|c| c.is_object()) {
        value = config.take();
    }
    ModelConfig::from_json(value).map_err(|e| format(e.to_string()))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        model: ModelFlags,
    }

    /// A value each flag of a group accepts: its first possible value, else a number.
    fn a_value(arg: &clap::Arg) -> String {
        match arg.get_possible_values().first() {
            Some(value) => value.get_name().to_string(),
            None if arg.get_id() == "config" => "c.json".into(),
            None if arg.get_id() == "ordinal" => "safety=low,high".into(),
            None => "1".into(),
        }
    }

    /// Every model flag (and every stream flag, and `--seed`) is refused beside `--load`,
    /// and every other model flag beside `--config`, by name: none is silently unread.
    #[test]
    fn every_flag_a_loaded_checkpoint_or_a_config_leaves_unread_is_refused() {
        let groups = [
            ModelFlags::augment_args(clap::Command::new("m")),
            crate::cli::StreamFlags::augment_args(clap::Command::new("s")),
        ];
        let flags: Vec<(String, String)> = groups
            .iter()
            .flat_map(|g| g.get_arguments())
            .map(|a| (format!("--{}", a.get_long().unwrap()), a_value(a)))
            .chain([("--seed".to_string(), "2".to_string())])
            .collect();
        assert!(flags.len() > 25, "{flags:?}");
        let model_flags: Vec<String> = groups[0]
            .get_arguments()
            .map(|a| format!("--{}", a.get_long().unwrap()))
            .collect();
        for (flag, value) in &flags {
            for (by, path) in [("--load", "ck.parquet"), ("--config", "c.json")] {
                if flag == by || (by == "--config" && !model_flags.contains(flag)) {
                    continue;
                }
                let line = ["streamboost", "replay", by, path, flag, value];
                let matches = crate::cli::command()
                    .try_get_matches_from(line)
                    .unwrap_or_else(|e| panic!("{line:?}: {e}"));
                let (_, sub) = matches.subcommand().unwrap();
                let err = refuse_unread(sub).expect_err(&format!("{line:?}"));
                let text = err.to_string();
                assert!(text.contains(flag) && text.contains(by), "{line:?}: {text}");
            }
        }
        let plain = ["streamboost", "replay", "--learners", "3", "--seed", "2"];
        let matches = crate::cli::command().try_get_matches_from(plain).unwrap();
        assert!(refuse_unread(matches.subcommand().unwrap().1).is_ok());
    }

    /// The flags of every recorded golden case still describe the config recorded with it
    /// (read as the golden test reads it: a parameter added since takes its field default,
    /// the behaviour before it existed).
    #[test]
    fn flags_describe_the_configs_recorded_before() {
        let cases: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/golden_predictions.json"))
                .unwrap();
        for case in cases.as_array().unwrap() {
            let flags = case["flags"].as_array().unwrap().iter();
            let flags = flags.map(|f| f.as_str().unwrap());
            let parsed = Flags::try_parse_from(std::iter::once("replay").chain(flags)).unwrap();
            let config = serde_json::to_value(parsed.model.model_config().unwrap()).unwrap();
            let recorded: ModelConfig = serde_json::from_value(case["config"].clone()).unwrap();
            let recorded = serde_json::to_value(recorded).unwrap();
            assert_eq!(config, recorded, "{}", case["name"]);
        }
    }

    #[test]
    fn a_flag_the_algorithm_has_no_knob_for_is_an_error() {
        let config = |flags: &[&str]| {
            let flags = ["replay"].iter().chain(flags).copied();
            Flags::parse_from(flags).model.model_config()
        };
        let Ok(ModelConfig::OgBoost(c)) = config(&["--algo", "ogboost", "--learners", "7"]) else {
            panic!("ogboost");
        };
        assert_eq!(c.n_selectors, 7);
        let err = config(&["--algo", "ogboost", "--gamma", "0.2"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("--gamma does not apply to ogboost"),
            "{err}"
        );
        assert!(config(&["--algo", "bmr", "--loss", "logistic"]).is_err());
        let err = config(&["--algo", "perceptron", "--preset", "moa"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("--preset does not apply to perceptron"),
            "{err}"
        );
        assert!(config(&["--algo", "naive-bayes", "--learners", "3"]).is_err());
    }

    /// `--drift-detector` comes first whatever the order of the flags: the learner that
    /// `--weak` names keeps its detector, and `none` beside `--weak hat` leaves the adaptive
    /// trees alone; `--preset` and `--resample` reach the learner a booster has.
    #[test]
    fn the_drift_response_and_the_learner_combine_in_any_order() {
        let weak = |flags: &[&str]| {
            let flags = ["replay", "--algo", "ada-olm"].iter().chain(flags).copied();
            let config = Flags::parse_from(flags).model.model_config().unwrap();
            serde_json::to_value(config).unwrap()["weak"].clone()
        };
        let hat = weak(&["--weak", "hat", "--drift-detector", "none"]);
        assert_eq!(hat, weak(&["--drift-detector", "none", "--weak", "hat"]));
        assert_eq!(hat["learner"], "hat", "{hat}");
        let both = weak(&["--weak", "hat", "--drift-detector", "adwin"]);
        assert_eq!(both["learner"], "adaptive", "{both}");
        assert_eq!(both["inner"]["learner"], "hat", "{both}");
        let moa = weak(&["--drift-detector", "adwin", "--preset", "moa"]);
        assert_eq!(moa["inner"]["learner"], "hoeffding", "{moa}");
        assert_eq!(moa["inner"]["variance"], "unbiased", "{moa}");
        let copies = weak(&[
            "--weak",
            "hat",
            "--drift-detector",
            "none",
            "--resample",
            "poisson",
        ]);
        assert_eq!(copies["learner"], "resampled", "{copies}");
        assert_eq!(copies["inner"]["learner"], "hat", "{copies}");
        let resampled = weak(&["--drift-detector", "adwin", "--resample", "poisson"]);
        assert_eq!(resampled["inner"]["learner"], "resampled", "{resampled}");
    }

    /// `--numerics` and `--tree-memory-limit` set the members' trees and keep their preset
    /// (the default's or the one named); a learner with no tree refuses them.
    #[test]
    fn numerics_and_memory_limits_reach_the_trees_of_the_preset_in_use() {
        let config = |flags: &[&str]| {
            let flags = ["replay"].iter().chain(flags).copied();
            Flags::parse_from(flags).model.model_config()
        };
        let weak =
            |flags: &[&str]| serde_json::to_value(config(flags).unwrap()).unwrap()["weak"].clone();
        let plain = weak(&["--algo", "ada-olm"]);
        assert_eq!(plain["numerics"], "exact", "{plain}");
        let mut fast = weak(&["--algo", "ada-olm", "--numerics", "fast"]);
        assert_eq!(fast["numerics"], "fast", "{fast}");
        fast["numerics"] = plain["numerics"].clone();
        assert_eq!(fast, plain, "only the numerics differ");
        let moa = weak(&["--algo", "oza", "--preset", "moa", "--numerics", "fast"]);
        assert_eq!(
            (&moa["numerics"], &moa["variance"]),
            (&"fast".into(), &"unbiased".into())
        );
        let err = config(&["--algo", "perceptron", "--numerics", "fast"]).unwrap_err();
        assert!(
            err.to_string().contains("--numerics does not apply"),
            "{err}"
        );
        let limited = weak(&["--algo", "ada-olm", "--tree-memory-limit", "256KiB"]);
        assert_eq!(limited["max_bytes"], 256 * 1024, "{limited}");
        assert_eq!(plain["max_bytes"], serde_json::Value::Null, "{plain}");
        let err = config(&["--algo", "naive-bayes", "--tree-memory-limit", "1MB"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("--tree-memory-limit does not apply"),
            "{err}"
        );
    }

    /// Each protocol is the flag set of its paper's table in RESULTS.md (the scripts
    /// `reproduce_jgt17.py`, `multiclass_table.py`, `cll_table.py`, `jt18_table.py`), so those
    /// tables hold for `--protocol` by construction: same config, same predictions.
    #[test]
    fn protocols_are_the_papers_flag_sets() {
        let config = |flags: &[&str]| {
            let flags = ["replay"].iter().chain(flags).copied();
            Flags::parse_from(flags).model.model_config()
        };
        // The papers' streams are stationary: no drift response, the lead's neither.
        let paper = [
            "--learners",
            "100",
            "--preset",
            "jgt-paper",
            "--drift-detector",
            "none",
        ];
        let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
            (
                vec!["--algo", "ada-olm", "--protocol", "jgt17"],
                [
                    &[
                        "--algo",
                        "ada-olm",
                        "--weight-scale",
                        "5:200",
                        "--lead",
                        "none",
                    ][..],
                    &paper,
                ]
                .concat(),
            ),
            (
                vec!["--algo", "mbbm", "--protocol", "jgt17", "--gamma", "0.01"],
                [
                    &[
                        "--algo",
                        "mbbm",
                        "--gamma",
                        "0.01",
                        "--weight-scale",
                        "0.5:20",
                    ][..],
                    &["--weight-norm", "raw", "--vote", "expected-cost"],
                    &["--expert", "last", "--lead", "none"],
                    &paper,
                ]
                .concat(),
            ),
            (
                vec!["--algo", "ova", "--protocol", "jgt17"],
                [
                    &["--algo", "ova", "--weight-scale", "5:200", "--lead", "none"][..],
                    &paper,
                ]
                .concat(),
            ),
            (
                vec!["--algo", "oza", "--protocol", "jgt17"],
                [
                    &["--algo", "oza", "--oza-variant", "moa"][..],
                    &["--expert", "last", "--lead", "none"],
                    &paper,
                ]
                .concat(),
            ),
            (
                vec![
                    "--algo",
                    "oza",
                    "--weak",
                    "naive-bayes",
                    "--protocol",
                    "cll12",
                ],
                vec![
                    "--algo",
                    "oza",
                    "--weak",
                    "naive-bayes",
                    "--oza-variant",
                    "moa",
                    "--scale",
                    "min-max",
                    "--preset",
                    "default",
                    "--resample",
                    "poisson",
                    "--expert",
                    "last",
                    "--lead",
                    "none",
                    "--drift-detector",
                    "none",
                ],
            ),
            (
                vec!["--algo", "hoeffding", "--protocol", "jgt17"],
                vec!["--algo", "hoeffding", "--preset", "jgt-paper"],
            ),
            (
                vec![
                    "--algo",
                    "osboost",
                    "--weak",
                    "perceptron",
                    "--protocol",
                    "cll12",
                ],
                vec![
                    "--algo",
                    "osboost",
                    "--weak",
                    "perceptron",
                    "--scale",
                    "min-max",
                    "--preset",
                    "default",
                    "--resample",
                    "poisson",
                    "--drift-detector",
                    "none",
                ],
            ),
            (
                vec!["--algo", "naive-bayes", "--protocol", "cll12"],
                vec!["--algo", "naive-bayes", "--scale", "min-max"],
            ),
            (
                vec!["--algo", "bmr", "--protocol", "jt18", "--gamma", "0.1"],
                [
                    &["--algo", "bmr", "--gamma", "0.1", "--weight-scale", "3:10"][..],
                    &paper,
                ]
                .concat(),
            ),
            (
                vec!["--algo", "ada-olmr", "--protocol", "jt18"],
                [
                    &["--algo", "ada-olmr", "--weight-scale", "3:10"][..],
                    &paper,
                ]
                .concat(),
            ),
            // A flag given beside the protocol wins.
            (
                vec![
                    "--algo",
                    "ada-olm",
                    "--protocol",
                    "jgt17",
                    "--weight-scale",
                    "1",
                ],
                [
                    &["--algo", "ada-olm", "--weight-scale", "1", "--lead", "none"][..],
                    &paper,
                ]
                .concat(),
            ),
            (
                vec!["--algo", "ova", "--protocol", "jgt17", "--lead", "moa"],
                [&["--algo", "ova", "--weight-scale", "5:200"][..], &paper].concat(),
            ),
        ];
        for (with_protocol, flags) in cases {
            assert_eq!(
                config(&with_protocol).unwrap(),
                config(&flags).unwrap(),
                "{with_protocol:?}"
            );
        }
        // `--algo oza` alone is the configuration RESULTS.md measured as "Oza (MOA) skip",
        // with prefix experts led by a moa tree.
        let led = ["--expert", "sample", "--lead", "moa"];
        assert_eq!(
            config(&["--algo", "oza"]).unwrap(),
            config(
                &[
                    &["--algo", "oza", "--oza-variant", "moa"][..],
                    &["--oza-zero-error", "skip"],
                    &led
                ]
                .concat()
            )
            .unwrap()
        );
        // `--algo mbbm` alone is RESULTS.md's "raw weights, 0.1 x U[5, 200]" column, with
        // prefix experts led by a moa tree.
        assert_eq!(
            config(&["--algo", "mbbm"]).unwrap(),
            config(
                &[
                    &["--algo", "mbbm", "--weight-scale", "0.5:20"][..],
                    &["--weight-norm", "raw", "--vote", "argmax"],
                    &led
                ]
                .concat()
            )
            .unwrap()
        );
        let err = config(&["--algo", "osboost", "--protocol", "jgt17"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("osboost is not among the algorithms of jgt17")
        );
    }
}
