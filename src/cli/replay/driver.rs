//! `streamboost replay`'s driver: reads the inputs, starts a [`Session`] and replays it,
//! collecting what the report and the output files need.

use std::path::{Path, PathBuf};

use super::ReplayArgs;
use crate::Result;
use crate::cli::report::{self, Outputs, RunInfo};
use arrow::record_batch::RecordBatch;

use crate::columnar::{
    BatchWriter, Predictions, RankedPredictions, Table, read_csv_bytes, read_table,
};
use crate::core::Encodings;
use crate::eval::Prequential;
use crate::model::Model;
use crate::replay::{self, CheckpointPolicy, Checkpointer, Session};

/// The data set replayed when no `--input` is given: UCI Car Evaluation (1,728 rows,
/// 6 nominal features, 4 classes), rows in a fixed random order (see `data/README.md`).
const BUNDLED_NAME: &str = "data/car.csv (bundled)";
const BUNDLED_CSV: &[u8] = include_bytes!("../../../data/car.csv");

/// Runs `streamboost replay`.
pub fn run(args: &ReplayArgs) -> Result<()> {
    let policy = args.save.clone().map(|path| CheckpointPolicy {
        path,
        every: args.checkpoint_every,
    });
    policy.as_ref().map_or(Ok(()), CheckpointPolicy::validate)?;
    let (tables, inputs, test_start) = read_inputs(args)?;
    let outputs = Outputs {
        report: args.report.clone(),
        curve: args.curve.clone(),
    };
    let evaluation = Prequential {
        final_fraction: args.final_fraction,
        window: args.window,
        weight: 1.0,
        test_start,
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
            let encodings = Encodings {
                nominal: args.nominal.clone(),
                ordinal: args.ordinal.clone(),
            };
            let config = args.model.model_config()?;
            Session::fresh(&tables, config, args.seed, &args.label, encodings)?
        }
    };
    let Session {
        mut model,
        stream,
        encoded,
    } = session;
    let mut checkpointer = Checkpointer::new(policy, &stream, &encoded.unknown_label_rows);
    let data = &encoded.data;
    let before = stream.stats;
    let config = stream.config.clone();
    let spec = data.spec();
    let n_nominal = spec.features.iter().filter(|f| f.is_nominal()).count();
    let order = replay::order(data.len(), test_start, args.shuffle);

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

    let progress = report::Progress::new(data.len() as u64, args.quiet);
    let mut after_row = |position: usize, row: usize, labelled: bool, model: &mut Model| {
        progress.row(position as u64 + 1);
        checkpointer.after_row(position, row, labelled, model)
    };
    let encodings = stream.encodings.clone();
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
        let mut predictions = prediction_file(&args.predictions, RankedPredictions::new(labels))?;
        let report = evaluation.run_ranking(&mut model, data, order.as_deref(), |row, model| {
            if let Some((file, p)) = predictions.as_mut() {
                p.push(
                    before.rows_seen + row.row as u64,
                    row.relevant,
                    row.scores,
                    row.predicted,
                );
                if p.len() >= FLUSH_ROWS {
                    file.write(&p.take_batch()?)?;
                }
            }
            after_row(row.position, row.row, row.relevant.is_some(), model)
        })?;
        if let Some((file, mut p)) = predictions {
            file_end(file, p.take_batch()?)?;
        }
        // A failed final save is reported after the other outputs are written.
        let saved = checkpointer.finish(data.len(), &mut model);
        finish(&progress, saved.as_ref().ok().copied().flatten());
        report::print(&report);
        let points = report.curve.iter();
        let points = points.map(|p| (p.rows, p.cumulative_rank_loss, p.window_rank_loss));
        report::write_outputs(&outputs, &run, &report, "rank_loss", points)?;
        return saved.map(|_| ());
    }

    let class_names = spec.classes.names();
    let mut predictions = prediction_file(&args.predictions, Predictions::new(class_names))?;
    let report = evaluation.run_with(&mut model, data, order.as_deref(), |outcome, model| {
        if let Some((file, p)) = predictions.as_mut() {
            p.rows.push(before.rows_seen + outcome.row as u64);
            // A label outside the model's classes is written as the input spells it.
            let unknown = || {
                let i = encoded
                    .unknown_label_rows
                    .binary_search(&outcome.row)
                    .ok()?;
                encoded.unknown_labels.get(i).cloned()
            };
            p.labels.push(
                outcome
                    .label
                    .map(|y| class_names[y].clone())
                    .or_else(unknown),
            );
            p.predictions.push(class_names[outcome.predicted].clone());
            p.probabilities.extend_from_slice(outcome.proba);
            if p.len() >= FLUSH_ROWS {
                file.write(&p.take_batch()?)?;
            }
        }
        after_row(
            outcome.position,
            outcome.row,
            outcome.label.is_some(),
            model,
        )
    })?;
    if let Some((file, mut p)) = predictions {
        file_end(file, p.take_batch()?)?;
    }
    let saved = checkpointer.finish(data.len(), &mut model);
    finish(&progress, saved.as_ref().ok().copied().flatten());
    report::print(&report);
    let points = report.curve.iter();
    let points = points.map(|p| (p.rows, p.cumulative_accuracy, p.window_accuracy));
    report::write_outputs(&outputs, &run, &report, "accuracy", points)?;
    saved.map(|_| ())
}

/// Predictions are written to their file every this many rows, so that memory stays flat
/// and a run that is killed keeps the rows it scored (CSV).
const FLUSH_ROWS: usize = 8192;

/// The `--predictions` file, created before the first row, with `rows` to hold the rows not
/// yet written.
fn prediction_file<P>(path: &Option<PathBuf>, rows: P) -> Result<Option<(BatchWriter, P)>> {
    path.as_ref()
        .map(|path| Ok((BatchWriter::create(path)?, rows)))
        .transpose()
}

/// Writes the last rows and ends the file.
fn file_end(mut file: BatchWriter, last: RecordBatch) -> Result<()> {
    file.write(&last)?;
    file.finish()
}

/// Ends the progress display and says where the model was saved.
fn finish(progress: &report::Progress, saved: Option<(&Path, u64)>) {
    progress.finish();
    if let Some((path, seen)) = saved {
        eprintln!("saved    {} ({seen} rows seen)", path.display());
    }
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
