//! `streamboost replay`: its flags, and the model config they describe. The driver replays;
//! [`crate::cli::report`] presents.

mod driver;

use std::path::PathBuf;

use crate::runtime::delay::PendingLimits;
use clap::Args;

pub use driver::run;

use super::model_flags::ModelFlags;
use crate::Error;
use crate::columnar::Ordinal;
use crate::core::Encodings;

/// Arguments of `streamboost replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Input file (CSV with header, or Parquet); repeat to replay several in order.
    /// Without it, a small bundled data set (UCI car) is replayed.
    #[arg(long = "input", value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// A drifting stream generated in memory instead of an input file:
    /// `sea[:drift=abrupt|gradual|recurring][:width=N][:noise=P]`,
    /// `hyperplane[:features=N][:drift-features=N][:speed=S][:noise=P]`,
    /// `rbf[:features=N][:classes=N][:centroids=N][:speed=S]`,
    /// `agrawal[:functions=F,F,…][:drift=abrupt|gradual][:width=N][:perturbation=P][:noise=P]`
    /// or `led[:noise=P][:drift-features=N][:drift=abrupt|gradual][:width=N]`, each with
    /// `:rows=N` (100,000) and `:seed=N` (1). Its label column is `label`.
    #[arg(long, value_name = "SPEC", conflicts_with = "inputs")]
    pub synth: Option<String>,
    /// Test file(s), replayed after the inputs: the model goes on learning test-then-train,
    /// and the report has these rows' metrics under `test` (the protocol of \[JT\]).
    #[arg(long = "test", value_name = "PATH", requires = "inputs")]
    pub tests: Vec<PathBuf>,
    /// The stream's label, column kinds and classes.
    #[command(flatten)]
    pub stream: StreamFlags,
    /// The model.
    #[command(flatten)]
    pub model: ModelFlags,
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
    /// Draw the learning curve (windowed and cumulative, the final fraction marked) as an
    /// SVG chart.
    #[arg(long, value_name = "PATH.svg")]
    pub plot: Option<PathBuf>,
    /// Write every row's prediction and class probabilities (CSV, or Parquet by extension).
    #[arg(long, value_name = "PATH")]
    pub predictions: Option<PathBuf>,
    /// Continue from this checkpoint: its model, features, classes and encodings; the
    /// inputs are the rows that follow the ones it has seen.
    #[arg(long, value_name = "PATH")]
    pub load: Option<PathBuf>,
    /// Save a checkpoint here at the end (and every `--checkpoint-every` rows), atomically.
    #[arg(long, value_name = "PATH")]
    pub save: Option<PathBuf>,
    /// Also save the checkpoint after every N rows.
    #[arg(long, value_name = "N", requires = "save")]
    pub checkpoint_every: Option<u64>,
    /// Replay under a label delay: each row's label arrives N rows after it. The row is
    /// predicted when it arrives and learnt when its label does, and the report scores each
    /// prediction against the label that came later (0: test-then-train, as without it).
    /// The labels due after the last row are learnt before `--save` saves the model;
    /// `--checkpoint-every` is refused, as a checkpoint in mid-stream would lose the rows
    /// waiting for their labels.
    #[arg(long, value_name = "N", conflicts_with_all = ["label_delay_by", "checkpoint_every"])]
    pub label_delay: Option<u64>,
    /// Replay under a label delay given per row: column COL (not a feature) says how many
    /// rows after its row the label arrives; where it is empty, the label never arrives.
    #[arg(long, value_name = "COL", conflicts_with = "checkpoint_every")]
    pub label_delay_by: Option<String>,
    /// Under a label delay: how many rows wait for their labels, and for how long.
    #[command(flatten)]
    pub pending: PendingFlags,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

/// How many rows wait for labels that arrive later, and for how long (`replay` under a
/// label delay, `run --labels`).
#[derive(Debug, Clone, Args)]
pub struct PendingFlags {
    /// A row waits at most this long for its label, in the time column's units (rows, in a
    /// replay); then it expires, counted in the report.
    #[arg(long, value_name = "T")]
    pub pending_ttl: Option<f64>,
    /// Rows waiting at most (the oldest are evicted beyond, counted).
    #[arg(long, value_name = "N", default_value_t = PendingLimits::default().max_events)]
    pub pending_max_rows: usize,
}

impl PendingFlags {
    /// The limits these flags set.
    pub fn limits(&self) -> crate::Result<PendingLimits> {
        let limits = PendingLimits {
            max_events: self.pending_max_rows,
            ttl: self.pending_ttl,
            ..PendingLimits::default()
        };
        limits.validate()?;
        Ok(limits)
    }
}

/// How a fresh model reads its input: the label, column kinds and classes (`replay` and
/// `run` alike).
#[derive(Debug, Args)]
pub struct StreamFlags {
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
    /// The classes the model starts with, in this order (comma-separated). Default: every
    /// class of the inputs (`run`: of its first file), sorted by name. A label outside them
    /// is a new class to `replay` (the model grows when its first row arrives, after
    /// predicting that row); `run` counts such rows and scores them without learning.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub classes: Option<Vec<String>>,
}

impl StreamFlags {
    /// The column encodings these flags give, with `passthrough` columns kept out of the
    /// features.
    pub fn encodings(&self, passthrough: &[String]) -> Encodings {
        Encodings {
            nominal: self.nominal.clone(),
            ordinal: self.ordinal.clone(),
            passthrough: passthrough.to_vec(),
        }
    }
}

fn parse_ordinal(s: &str) -> std::result::Result<Ordinal, String> {
    s.parse().map_err(|e: Error| e.to_string())
}
