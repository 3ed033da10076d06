//! What a replay writes at its end: the summary on stdout, the JSON report and the learning
//! curve; and its progress on stderr. The predictions are written as rows are scored.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::files::{write_json, write_text};
use crate::Result;
use crate::columnar::Encodings;
use crate::eval::DriftEvents;
use crate::model::{Algorithm, Model, ModelConfig};

/// The files a replay was asked to write.
pub struct Outputs {
    /// The JSON report.
    pub report: Option<PathBuf>,
    /// The learning curve (CSV).
    pub curve: Option<PathBuf>,
    /// The learning curve as a chart (SVG).
    pub plot: Option<PathBuf>,
}

/// The JSON report: what ran, then the prequential metrics.
#[derive(Serialize)]
struct RunReport<'a, R> {
    #[serde(flatten)]
    run: &'a RunInfo<'a>,
    #[serde(flatten)]
    metrics: &'a R,
    /// The learners replaced after a drift, where the model's learners are adaptive.
    #[serde(skip_serializing_if = "Option::is_none")]
    drift: Option<&'a DriftEvents>,
    /// The process's memory when the report was written.
    memory: ProcessMemory,
}

/// The memory a run's process took, and what the trees' limits held back.
#[derive(Serialize)]
pub struct ProcessMemory {
    /// Its peak resident set so far (`VmHWM`), model, input buffers and all; `null` where
    /// the platform does not say (Linux does).
    pub peak_rss_bytes: Option<u64>,
    /// Leaves the trees' limits (`--tree-memory-limit`, `max_active_leaves`) have parked:
    /// they predict and count classes, and no longer grow. 0 where no limit bound.
    pub parked_leaves: usize,
}

impl ProcessMemory {
    /// The process's memory now, beside the leaves `model`'s limits have parked.
    pub fn now(model: &Model) -> Self {
        ProcessMemory {
            peak_rss_bytes: peak_rss(),
            parked_leaves: model.parked_leaves(),
        }
    }
}

/// What a run's model ended with, for its report and chart: the learners replaced after a
/// drift (where its learners are adaptive) and its memory.
pub struct ModelEnd<'a> {
    pub drift: Option<&'a DriftEvents>,
    pub memory: ProcessMemory,
}

/// The process's peak resident set (`VmHWM`), on Linux.
pub(super) fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What ran.
#[derive(Serialize)]
pub struct RunInfo<'a> {
    pub algorithm: Algorithm,
    /// The paper's protocol the model flags followed (`--protocol`), if one.
    pub protocol: Option<&'static str>,
    pub model: String,
    pub config: &'a ModelConfig,
    /// `null` when the model was loaded from a checkpoint.
    pub seed: Option<u64>,
    pub shuffle: Option<u64>,
    pub inputs: Vec<String>,
    /// Rows (0-based replay positions) from which the test part starts, if any.
    pub test_start: Option<usize>,
    pub encodings: &'a Encodings,
    /// The checkpoint the run continued from, and the rows that model had seen.
    pub resumed_from: Option<String>,
    pub rows_before: u64,
    /// Rows whose label is not in the model's class set (scored, not learnt).
    pub unknown_labels: usize,
}

/// Writes the files a replay was asked for at its end: the JSON report (`run`, `metrics`,
/// and the model's end: `drift` and `memory`), and the learning curve of `metric` as CSV
/// and as a chart marking `final_from`, the first row of the final fraction, and the rows
/// where learners were replaced (the predictions are written as the rows are scored).
pub fn write_outputs<R: Serialize>(
    outputs: &Outputs, run: &RunInfo, metrics: &R, metric: &str,
    curve: impl Iterator<Item = (u64, Option<f64>, Option<f64>)>, final_from: u64,
    ModelEnd { drift, memory }: ModelEnd,
) -> Result<()> {
    if let Some(path) = &outputs.report {
        write_json(
            path,
            &RunReport {
                run,
                metrics,
                drift,
                memory,
            },
        )?;
    }
    let points: Vec<_> = curve.collect();
    if let Some(path) = &outputs.curve {
        write_curve(path, metric, points.iter().copied())?;
    }
    if let Some(path) = &outputs.plot {
        let curve = super::plot::Curve {
            name: run.algorithm.name().to_string(),
            points,
            final_from: Some(final_from),
            replaced_at: drift.map_or(Vec::new(), |d| d.events.iter().map(|e| e.row).collect()),
        };
        // The files' names, not their paths: a title is one line.
        let names: Vec<_> = run
            .inputs
            .iter()
            .map(|i| {
                Path::new(i)
                    .file_name()
                    .map_or(i.into(), |n| n.to_string_lossy())
            })
            .collect();
        let title = format!("{} on {}", run.algorithm.name(), names.join(", "));
        super::plot::draw(path, &title, ("rows", &metric.replace('_', " ")), &[curve])?;
    }
    Ok(())
}

/// Writes a learning curve as CSV: `rows,cumulative_<metric>,window_<metric>`.
fn write_curve(
    path: &Path, metric: &str, points: impl Iterator<Item = (u64, Option<f64>, Option<f64>)>,
) -> Result<()> {
    let cell = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let mut csv = format!("rows,cumulative_{metric},window_{metric}\n");
    for (rows, cumulative, window) in points {
        csv += &format!("{rows},{},{}\n", cell(cumulative), cell(window));
    }
    write_text(path, &csv)
}

/// Prints a report's summary on stdout (a closed pipe ends the output, not the run).
pub fn print(report: &impl std::fmt::Display) {
    use std::io::Write;
    let _ = write!(std::io::stdout().lock(), "{report}");
}

/// A progress bar on a terminal, plain lines every 10% otherwise.
pub struct ProgressMeter {
    bar: Option<ProgressBar>,
    total: u64,
    unit: &'static str,
    /// Steps between two updates of the bar.
    every: u64,
    quiet: bool,
}

impl ProgressMeter {
    /// Over `total` rows of a replay (the bar moves every 64 rows).
    pub fn rows(total: u64, quiet: bool) -> Self {
        ProgressMeter::new(total, "rows", 64, quiet)
    }

    /// Over `total` rounds of a batch booster.
    pub fn rounds(total: u64, quiet: bool) -> Self {
        ProgressMeter::new(total, "rounds", 1, quiet)
    }

    fn new(total: u64, unit: &'static str, every: u64, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(total);
            let template = format!("{{bar:40}} {{pos}}/{{len}} {unit}  {{per_sec}}  eta {{eta}}");
            bar.set_style(ProgressStyle::with_template(&template).expect("static template"));
            bar
        });
        ProgressMeter {
            bar,
            total,
            unit,
            every,
            quiet,
        }
    }

    /// `done` steps are done.
    #[inline]
    pub fn step(&self, done: u64) {
        if let Some(bar) = &self.bar {
            if done.is_multiple_of(self.every) {
                bar.set_position(done);
            }
        } else if !self.quiet && self.total >= 10 && done.is_multiple_of(self.total / 10) {
            eprintln!("progress {done}/{} {}", self.total, self.unit);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
