//! The replay driver: reads the inputs, builds or loads the model, replays the rows
//! test-then-train through [`crate::eval`], and saves checkpoints by a [`CheckpointPolicy`].

use std::path::{Path, PathBuf};

use super::ReplayArgs;
use crate::checkpoint::{self, StreamState};
use crate::cli::report::{self, Outputs, RunInfo};
use crate::columnar::{
    Encoded, Encodings, OperatorStats, Predictions, RankedPredictions, Table, encode_tables,
    encode_with_spec, read_csv_bytes, read_table,
};
use crate::core::Rng;
use crate::eval::Prequential;
use crate::learner::Config;
use crate::model::Model;
use crate::{Error, Result};

/// The data set replayed when no `--input` is given: UCI Car Evaluation (1,728 rows,
/// 6 nominal features, 4 classes), rows in a fixed random order (see `data/README.md`).
const BUNDLED_NAME: &str = "data/car.csv (bundled)";
const BUNDLED_CSV: &[u8] = include_bytes!("../../../data/car.csv");

/// Where and how often a replay saves its model.
pub struct CheckpointPolicy {
    /// The checkpoint file, replaced atomically at each save.
    pub path: PathBuf,
    /// Also save after every this many rows (else only at the end).
    pub every: Option<u64>,
}

/// What every replayed row does besides being scored: progress, the stream's counters and
/// the periodic checkpoint.
struct Bookkeeping<'a> {
    checkpoint: Option<CheckpointPolicy>,
    stream: StreamState,
    unknown_label_rows: &'a [usize],
    progress: report::Progress,
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
        if let Some(CheckpointPolicy {
            path,
            every: Some(every),
        }) = &self.checkpoint
            && (position as u64 + 1).is_multiple_of(*every)
        {
            checkpoint::save(path, model, &self.stream)?;
            self.saved_at = Some(position);
        }
        Ok(())
    }

    /// Saves the final checkpoint unless the last row already did.
    fn finish(&mut self, rows: usize, model: &mut Model) -> Result<()> {
        self.progress.finish();
        if let Some(CheckpointPolicy { path, .. }) = &self.checkpoint {
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
    let outputs = Outputs {
        report: args.report.clone(),
        curve: args.curve.clone(),
        predictions: args.predictions.clone(),
    };
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
            let config = args.model.model_config()?;
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
        checkpoint: args.save.clone().map(|path| CheckpointPolicy {
            path,
            every: args.checkpoint_every,
        }),
        stream: StreamState {
            spec: spec.clone(),
            ..stream
        },
        unknown_label_rows: &encoded.unknown_label_rows,
        progress: report::Progress::new(data.len() as u64, args.quiet),
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
        report::print_ranking_summary(&report);
        let points = report.curve.iter();
        let points = points.map(|p| (p.rows, p.cumulative_rank_loss, p.window_rank_loss));
        let predictions = predictions.map(|p| p.to_batch()).transpose()?;
        return report::write_outputs(&outputs, &run, &report, "rank_loss", points, predictions);
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
    report::print_summary(&report);
    let points = report.curve.iter();
    let points = points.map(|p| (p.rows, p.cumulative_accuracy, p.window_accuracy));
    let predictions = predictions.map(|p| p.to_batch()).transpose()?;
    report::write_outputs(&outputs, &run, &report, "accuracy", points, predictions)
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
