//! `streamboost replay`'s driver: reads the inputs, starts a [`Session`] and replays it,
//! collecting what the report and the output files need.

use std::fmt::Display;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::ReplayArgs;
use crate::Result;
use crate::cli::files::dataset_csv;
use crate::cli::report::{self, Outputs, RunInfo};
use crate::columnar::{BatchRows, RowsWriter, ScoredRows, Table, open_table, read_csv_bytes};
use crate::core::Dataset;
use crate::eval::{DriftEvents, DriftLog, Prequential, Replaced, RowOutcome};
use crate::files::{self, Named};
use crate::learner::Classifier;
use crate::model::Model;
use crate::runtime::delay::LabelDelay;
use crate::runtime::replay::{self, CheckpointPolicy, Checkpointer, Session};
use crate::synth::drift::DriftSpec;

/// The data set replayed when no `--input` is given: UCI Car Evaluation (1,728 rows,
/// 6 nominal features, 4 classes), rows in a fixed random order (see `data/README.md`).
const BUNDLED_NAME: &str = "data/car.csv (bundled)";
const BUNDLED_CSV: &[u8] = include_bytes!("../../../data/car.csv");

/// Runs `streamboost replay`.
pub fn run(args: &ReplayArgs) -> Result<()> {
    refuse_overlaps(args)?;
    let policy = args.save.clone().map(|path| CheckpointPolicy {
        every: args.checkpoint_every,
        ..CheckpointPolicy::at_end(path)
    });
    policy.as_ref().map_or(Ok(()), CheckpointPolicy::validate)?;
    let (tables, inputs, test_start) = read_inputs(args)?;
    args.plot
        .as_deref()
        .map_or(Ok(()), crate::cli::plot::check_path)?;
    let outputs = Outputs {
        report: args.report.clone(),
        curve: args.curve.clone(),
        plot: args.plot.clone(),
    };
    let delay = match (args.label_delay, &args.label_delay_by) {
        (Some(n), _) => Some(LabelDelay::Rows(n)),
        (None, Some(column)) => {
            let mut delays = Vec::new();
            for table in &tables {
                table.numbers_into(column, &mut delays)?;
            }
            Some(LabelDelay::PerRow(delays))
        }
        (None, None) => None,
    };
    let evaluation = Prequential {
        final_fraction: args.final_fraction,
        window: args.window,
        weight: 1.0,
        test_start,
        delay,
        pending: args.pending.limits()?,
        observe_every: policy.as_ref().and_then(|p| p.every),
    };
    evaluation.validate()?;
    let session = match &args.load {
        Some(path) => {
            let session = Session::resume(&tables, path)?;
            let seen = session.stream.stats.rows_seen;
            eprintln!("resumed  {} ({seen} rows seen)", path.display());
            session
        }
        None => {
            let stream = &args.stream;
            let config = args.model.model_config()?;
            // A label's delay is read beside the features, not as one.
            let beside: Vec<String> = args.label_delay_by.iter().cloned().collect();
            let (encodings, classes) = (stream.encodings(&beside), stream.classes.as_deref());
            Session::fresh(
                &tables,
                config,
                args.seed,
                &stream.label,
                encodings,
                classes,
            )?
        }
    };
    let Session {
        mut model,
        stream,
        rows,
    } = session;
    let spec = &stream.spec;
    let n = rows.n_rows();
    // Rows are encoded a batch at a time as they are replayed, so memory does not grow with
    // the stream; a shuffled order and a multi-label stream are encoded whole.
    let whole = (spec.is_multi_label() || args.shuffle.is_some())
        .then(|| rows.encoded())
        .transpose()?;
    let unknown_label_rows = whole
        .as_ref()
        .map_or(&[][..], |e| &e.unknown_label_rows[..]);
    let mut checkpointer = Checkpointer::new(policy, &stream, unknown_label_rows);
    let before = stream.stats;
    let config = stream.config.clone();
    let n_nominal = spec.features.iter().filter(|f| f.is_nominal()).count();
    let order = replay::order(n, test_start, args.shuffle);

    if let Some(p) = args.model.protocol {
        eprintln!("protocol {}", p.name());
    }
    eprintln!("model    {config}");
    if !model.learns_online() {
        eprintln!(
            "note     {} was trained in batch and does not learn online: the rows are scored, \
             counted as seen and not learnt",
            config.algorithm()
        );
    }
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
        n,
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
        eprintln!("test     rows {t}.. ({} rows)", n - t);
    }
    let met = &spec.classes.names()[model.n_classes()..];
    if !met.is_empty() {
        eprintln!(
            "classes  {} new to the model, added as their first rows arrive: [{}]",
            met.len(),
            met.join(", ")
        );
    }
    if !unknown_label_rows.is_empty() {
        eprintln!(
            "warning  {} rows have a label set naming labels the model does not rank: scored, \
             not learnt",
            unknown_label_rows.len()
        );
    }

    let progress = report::ProgressMeter::rows(n as u64, args.quiet);
    let mut drift_log = DriftLog::default();
    let mut after_row =
        |position: usize, row: usize, labelled: bool, current: bool, model: &mut Model| {
            progress.step(position as u64 + 1);
            if current {
                drift_log.observe(position as u64 + 1, model);
            }
            checkpointer.after_row(position, row, labelled, current, model)
        };
    let encodings = stream.encodings.clone();
    let protocol = args.model.protocol.map(|p| p.name());
    let run = RunInfo {
        algorithm: config.algorithm(),
        protocol,
        model: config.to_string(),
        config: &config,
        seed,
        shuffle: args.shuffle,
        inputs: inputs.clone(),
        test_start,
        encodings: &encodings,
        resumed_from: args.load.as_ref().map(|p| p.display().to_string()),
        rows_before: before.rows_seen,
        unknown_labels: unknown_label_rows.len(),
    };

    if let Some(whole) = &whole {
        say_missing(missing_cells(&whole.data));
    }
    let ending = Ending {
        final_from: evaluation.first_final(n) as u64,
        progress: &progress,
        outputs: &outputs,
        run: &run,
    };
    if spec.is_multi_label() {
        let data = &whole
            .as_ref()
            .expect("a multi-label stream is encoded whole")
            .data;
        let labels = spec.classes.names();
        let mut predictions = prediction_file(&args.predictions, ScoredRows::rankings(labels))?;
        let report = evaluation.run_ranking(&mut model, data, order.as_deref(), |row, model| {
            if let Some(p) = predictions.as_mut() {
                let number = before.rows_seen + row.row as u64;
                p.rows
                    .push_ranking(number, row.relevant, row.scores, row.predicted);
                p.flush_if_full()?;
            }
            after_row(row.position, row.row, row.relevant.is_some(), true, model)
        })?;
        predictions.map_or(Ok(()), RowsWriter::finish)?;
        let saved = checkpointer.finish(n, &mut model);
        let points = report.curve.iter();
        let points = points.map(|p| (p.rows, p.cumulative_rank_loss, p.window_rank_loss));
        let drift = drift_log.finish();
        return ending.write(saved, &report, "rank_loss", points, drift, &model);
    }

    let class_names = spec.classes.names();
    let mut predictions = prediction_file(&args.predictions, ScoredRows::predictions(class_names))?;
    let on_row = |outcome: &RowOutcome<'_>, model: &mut Model| {
        if let Some(p) = predictions.as_mut() {
            let label = outcome.label.map(|y| class_names[y].clone());
            let number = before.rows_seen + outcome.row as u64;
            let predicted = class_names[outcome.predicted].clone();
            p.rows.push(number, label, predicted, outcome.proba);
            p.flush_if_full()?;
        }
        after_row(
            outcome.position,
            outcome.row,
            outcome.label.is_some(),
            outcome.model_current,
            model,
        )
    };
    let report = match &whole {
        Some(whole) => evaluation.run_with(&mut model, &whole.data, order.as_deref(), on_row)?,
        None => {
            let mut missing = 0;
            let chunks = |each: &mut dyn FnMut(Dataset) -> Result<()>| {
                rows.for_each_chunk(&mut |chunk| {
                    missing += missing_cells(&chunk);
                    each(chunk)
                })
            };
            let report = evaluation.run_chunks(&mut model, spec, n, chunks, on_row)?;
            say_missing(missing);
            report
        }
    };
    predictions.map_or(Ok(()), RowsWriter::finish)?;
    if let Some(delay) = &report.delay {
        checkpointer.learnt_under_delay(delay.learnt);
    }
    let saved = checkpointer.finish(n, &mut model);
    let points = report.curve.iter();
    let points = points.map(|p| (p.rows, p.cumulative_accuracy, p.window_accuracy));
    let drift = drift_log.finish();
    ending.write(saved, &report, "accuracy", points, drift, &model)
}

/// Refuses an output that would overwrite an input or another output, before anything is
/// read or written. `--save` naming the `--load` checkpoint updates it: the checkpoint is
/// read whole before the replay, and saved atomically after.
fn refuse_overlaps(args: &ReplayArgs) -> Result<()> {
    let updated = matches!((&args.load, &args.save), (Some(l), Some(s)) if files::overlaps(l, s));
    let inputs: Vec<Named> = (args.inputs.iter().map(|p| Named::new("--input", p)))
        .chain(args.tests.iter().map(|p| Named::new("--test", p)))
        .chain(Named::given("--load", &args.load).filter(|_| !updated))
        .collect();
    let outputs: Vec<Named> = [
        Named::given("--save", &args.save),
        Named::given("--report", &args.report),
        Named::given("--curve", &args.curve),
        Named::given("--plot", &args.plot),
        Named::given("--predictions", &args.predictions),
    ]
    .into_iter()
    .flatten()
    .collect();
    files::refuse_overlaps(&inputs, &outputs)
}

/// Cells read as missing values: never refused (WEAK_LEARNERS.md §0), but said.
fn missing_cells(data: &Dataset) -> usize {
    data.rows().iter().filter(|v| !v.is_finite()).count()
}

fn say_missing(missing: usize) {
    if missing > 0 {
        eprintln!("missing  {missing} cells (empty, null, NaN or infinite) read as missing values");
    }
}

/// The `--predictions` file, created before the first row, holding `rows` until written.
fn prediction_file<R: BatchRows>(path: &Option<PathBuf>, rows: R) -> Result<Option<RowsWriter<R>>> {
    path.as_ref()
        .map(|path| RowsWriter::create(path, rows))
        .transpose()
}

/// What is left once the rows are replayed: the outcome of the final save, and where the
/// rest goes.
struct Ending<'a> {
    /// The first row of the final fraction.
    final_from: u64,
    progress: &'a report::ProgressMeter,
    outputs: &'a Outputs,
    run: &'a RunInfo<'a>,
}

impl Ending<'_> {
    /// Ends the progress display, says where the model was saved, prints the summary and
    /// writes the report (with the learners replaced after a drift, if any were adaptive)
    /// and the curve of `metric`; a failed final save is reported after them, so that it
    /// costs none of them.
    fn write<R: Serialize + Display>(
        self, saved: Result<Option<(&Path, u64)>>, report: &R, metric: &str,
        curve: impl Iterator<Item = (u64, Option<f64>, Option<f64>)>, drift: Option<DriftEvents>,
        model: &Model,
    ) -> Result<()> {
        self.progress.finish();
        if let Ok(Some((path, seen))) = &saved {
            eprintln!("saved    {} ({seen} rows seen)", path.display());
        }
        let memory = report::ProcessMemory::now(model);
        if memory.parked_leaves > 0 {
            eprintln!(
                "limits   {} leaves parked by the trees' memory or leaf limits",
                memory.parked_leaves
            );
        }
        if let Some(d) = &drift {
            let first: Vec<String> = d.events.iter().take(8).map(|e| e.row.to_string()).collect();
            let more = if d.replaced > 8 { ", …" } else { "" };
            let (replaced, watched, warnings) = match d.what {
                Replaced::Learners => ("learners replaced", "watched", "warnings"),
                Replaced::Subtrees => ("subtrees swapped", "adaptive trees", "alternates started"),
            };
            eprintln!(
                "drift    {} {replaced} ({} {watched}), {} {warnings}{}{}",
                d.replaced,
                d.learners,
                d.warnings,
                match first.is_empty() {
                    true => String::new(),
                    false => format!("; at rows {}{more}", first.join(", ")),
                },
                match d.subtrees_swapped {
                    0 => String::new(),
                    n => format!("; {n} subtrees swapped by the adaptive trees"),
                }
            );
        }
        report::print(report);
        report::write_outputs(
            self.outputs,
            self.run,
            report,
            metric,
            curve,
            self.final_from,
            report::ModelEnd {
                drift: drift.as_ref(),
                memory,
            },
        )?;
        saved.map(|_| ())
    }
}

/// The input tables then the test tables, their names, and the row where the test part
/// starts (the bundled data set without `--input`).
fn read_inputs(args: &ReplayArgs) -> Result<(Vec<Table>, Vec<String>, Option<usize>)> {
    if let Some(spec) = &args.synth {
        let name = format!("--synth {spec}");
        let data = spec.parse::<DriftSpec>()?.generate();
        let table = read_csv_bytes(Path::new(&name), dataset_csv(&data).as_bytes())?;
        return Ok((vec![table], vec![name], None));
    }
    if args.inputs.is_empty() {
        let table = read_csv_bytes(Path::new(BUNDLED_NAME), BUNDLED_CSV)?;
        return Ok((vec![table], vec![BUNDLED_NAME.to_string()], None));
    }
    let paths: Vec<&PathBuf> = args.inputs.iter().chain(&args.tests).collect();
    // Opened, not read: a file's rows are read on each pass over it, a batch at a time.
    let tables = paths
        .iter()
        .map(|p| open_table(p))
        .collect::<Result<Vec<_>>>()?;
    let names = paths.iter().map(|p| p.display().to_string()).collect();
    let test_start = (!args.tests.is_empty())
        .then(|| tables[..args.inputs.len()].iter().map(Table::n_rows).sum());
    Ok((tables, names, test_start))
}
