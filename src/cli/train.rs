//! `streamboost train`: a batch booster (AdaBoost.MM, AdaBoost.M1, AdaBoost.MH, the OS
//! strategy) trained in one call on a logged table, tested on another table or a held-out
//! part, and saved as a checkpoint that `replay --load`, `run`, the operator and SQL's
//! `boost_predict` score. A batch model does not learn online: what it is given afterwards
//! it scores, and counts as not learnt.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use super::files::{read_json, write_json};
use super::replay::StreamFlags;
use super::report::ProgressMeter;
use crate::boost::batch::{BatchBoost, BatchBoostConfig, Round, SortedColumns};
use crate::boost::{Knob, Tune};
use crate::checkpoint::{self, StreamState};
use crate::columnar::{Table, encode_with_spec, infer_spec, open_table};
use crate::core::{Dataset, Rng};
use crate::files::Named;
use crate::model::{Algorithm, Model, ModelConfig, Role};
use crate::runtime::OperatorStats;
use crate::{Error, Result};

/// Arguments of `streamboost train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// The batch booster: adaboost-mm, adaboost-m1, adaboost-mh or os-strategy.
    #[arg(long, default_value = "adaboost-mm", value_name = "NAME")]
    pub algo: String,
    /// A JSON config naming the algorithm and what differs from its defaults (as `replay
    /// --config` and `sql --model` take); flags below override it.
    #[arg(long, value_name = "PATH", conflicts_with = "algo")]
    pub config: Option<PathBuf>,
    /// Rounds `T`.
    #[arg(long, value_name = "T")]
    pub rounds: Option<usize>,
    /// Leaves per tree at most (AdaBoost.MH's stumps have 2).
    #[arg(long, value_name = "L")]
    pub max_leaves: Option<usize>,
    /// The OS strategy's edge `γ`.
    #[arg(long, value_name = "G")]
    pub gamma: Option<f64>,
    /// Training table (CSV with header, or Parquet); repeat to train on several.
    #[arg(long = "input", value_name = "PATH", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Test table(s).
    #[arg(long = "test", value_name = "PATH")]
    pub tests: Vec<PathBuf>,
    /// Train on the first N rows of the inputs and test on the rest.
    #[arg(long, value_name = "N", conflicts_with_all = ["tests", "test_fraction"])]
    pub train_rows: Option<usize>,
    /// Test on this fraction of the inputs' rows, drawn with `--split-seed` (the rest train;
    /// both parts keep file order).
    #[arg(long, value_name = "F", conflicts_with = "tests")]
    pub test_fraction: Option<f64>,
    /// Seed of `--test-fraction`'s draw.
    #[arg(long, default_value_t = 1, value_name = "SEED")]
    pub split_seed: u64,
    /// The table's label, column kinds and classes.
    #[command(flatten)]
    pub stream: StreamFlags,
    /// Save the trained model here (a checkpoint, atomically).
    #[arg(long, value_name = "PATH")]
    pub save: Option<PathBuf>,
    /// Write the report as JSON: the config, rows, time, memory, test accuracy and every
    /// round's figures.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
    /// Write every round's figures as CSV: edge, weight, loss bound, potential, training
    /// and test error.
    #[arg(long, value_name = "PATH")]
    pub rounds_csv: Option<PathBuf>,
    /// Draw training error, loss bound and test error against rounds (SVG or PNG).
    #[arg(long, value_name = "PATH.svg|png")]
    pub plot: Option<PathBuf>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

/// What `train --report` writes.
#[derive(Debug, Serialize)]
pub struct TrainReport {
    /// The algorithm's name.
    pub algorithm: Algorithm,
    /// The whole config it was trained with.
    pub config: ModelConfig,
    /// The training and test tables.
    pub inputs: Vec<String>,
    /// Rows trained on (labelled), and features and classes.
    pub train: Part,
    /// The test rows, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<Part>,
    /// Hypotheses in the vote (fewer than the rounds when a round's edge stopped it).
    pub hypotheses: usize,
    /// Seconds spent training (not reading).
    pub seconds: f64,
    /// Memory.
    pub memory: Memory,
    /// A batch model does not learn online.
    pub note: &'static str,
    /// Every round.
    pub rounds: Vec<RoundRow>,
}

/// The rows of one part and the vote's accuracy on them.
#[derive(Debug, Serialize)]
pub struct Part {
    /// Labelled rows.
    pub rows: usize,
    /// The vote's accuracy after the last round.
    pub accuracy: f64,
}

/// What the training held.
#[derive(Debug, Serialize)]
pub struct Memory {
    /// The training rows as encoded (8 bytes a value).
    pub rows_bytes: usize,
    /// The columnar training table built from them (presorted numeric columns, codes).
    pub table_bytes: usize,
    /// The process's peak resident memory, where the system says it (Linux).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
}

/// One round's figures.
#[derive(Debug, Serialize)]
pub struct RoundRow {
    /// The round, from 1.
    pub round: usize,
    /// The training report of the round.
    #[serde(flatten)]
    pub round_report: Round,
    /// The test error of the vote after this round (over hypotheses kept so far).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_error: Option<f64>,
}

const NOTE: &str = "a batch model does not learn online: scoring more rows (replay --load, run, \
                    SQL) counts them as seen, not learnt";

/// Runs `streamboost train`.
pub fn run(args: &TrainArgs) -> Result<()> {
    let inputs: Vec<Named> = (args.inputs.iter().map(|p| Named::new("--input", p)))
        .chain(args.tests.iter().map(|p| Named::new("--test", p)))
        .chain(Named::given("--config", &args.config))
        .collect();
    let outputs: Vec<Named> = [
        Named::given("--save", &args.save),
        Named::given("--report", &args.report),
        Named::given("--rounds-csv", &args.rounds_csv),
        Named::given("--plot", &args.plot),
    ]
    .into_iter()
    .flatten()
    .collect();
    crate::files::refuse_overlaps(&inputs, &outputs)?;
    if let Some(plot) = &args.plot {
        super::plot::check_path(plot)?;
    }
    let batch_config = config_of(args)?;
    let config = ModelConfig::from(batch_config.clone());
    let algorithm = config.algorithm();
    let encodings = args.stream.encodings(&[]);
    let label = &args.stream.label;
    let open = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| open_table(p))
            .collect::<Result<Vec<Table>>>()
    };
    let (train_tables, test_tables) = (open(&args.inputs)?, open(&args.tests)?);
    let all: Vec<Table> = train_tables.iter().chain(&test_tables).cloned().collect();
    let mut spec = infer_spec(&all, label, &encodings)?;
    if spec.is_multi_label() {
        return Err(Error::config(
            "input",
            "the batch boosters learn one label a row; this table has label sets",
        ));
    }
    if let Some(names) = &args.stream.classes {
        spec.classes = crate::core::ClassSet::new(names.to_vec())?;
    }
    let encoded = encode_with_spec(&train_tables, &spec, label, &encodings)?.data;
    let (training, test) = if !test_tables.is_empty() {
        let test = encode_with_spec(&test_tables, encoded.spec(), label, &encodings)?.data;
        (encoded, Some(test))
    } else {
        split(
            encoded,
            args.train_rows,
            args.test_fraction,
            args.split_seed,
        )?
    };
    // The test rows may bring classes the training rows lack (beyond `--classes`): the
    // model is trained for all of them (its checkpoint's spec is the whole table's).
    let spec = test.as_ref().map_or(training.spec(), |t| t.spec()).clone();
    let training = if training.spec() == &spec {
        training
    } else {
        Dataset::from_parts(
            spec.clone(),
            training.rows().to_vec(),
            training.labels().to_vec(),
        )?
    };
    eprintln!("model    {config}");
    eprintln!(
        "train    {} rows, {} features, {} classes [{}]",
        training.len(),
        spec.n_features(),
        spec.n_classes(),
        spec.classes.names().join(", ")
    );
    if let Some(test) = &test {
        eprintln!("test     {} rows", test.len());
    }
    let progress = ProgressMeter::rounds(batch_config.rounds as u64, args.quiet);
    let start = Instant::now();
    let mut done = 0u64;
    // The columnar table is built once, here, so that its size can be reported.
    let table = SortedColumns::new(&training)?;
    let batch = batch_config.train_on(&table, &mut |_| {
        done += 1;
        progress.step(done);
    })?;
    let seconds = start.elapsed().as_secs_f64();
    progress.finish();
    let report = report(
        algorithm,
        &config,
        args,
        &batch,
        &training,
        test.as_ref(),
        seconds,
        table.bytes(),
    );
    drop(table);
    let mut model = Model::from(batch);
    if let Some(path) = &args.save {
        let stream = StreamState {
            config: config.clone(),
            spec: spec.clone(),
            encodings,
            label: label.clone(),
            stats: OperatorStats {
                rows_seen: training.len() as u64,
                rows_learnt: report.train.rows as u64,
                unknown_labels: 0,
            },
            position: None,
            delayed: None,
        };
        checkpoint::save(path, &mut model, &stream)?;
        eprintln!("saved    {}", path.display());
    }
    if let Some(path) = &args.report {
        write_json(path, &report)?;
    }
    if let Some(path) = &args.rounds_csv {
        write_rounds_csv(path, &report.rounds)?;
    }
    if let Some(path) = &args.plot {
        plot_rounds(path, &report)?;
    }
    print_summary(&report);
    Ok(())
}

/// The config the flags describe: `--config`'s or `--algo`'s defaults, then the flags.
fn config_of(args: &TrainArgs) -> Result<BatchBoostConfig> {
    let config = match &args.config {
        Some(path) => ModelConfig::from_json(read_json(path)?)?,
        None => args.algo.parse::<Algorithm>()?.default_config(),
    };
    let algorithm = config.algorithm();
    let ModelConfig::BatchBoost(mut c) = config else {
        return Err(Error::config(
            "algo",
            format!(
                "{algorithm} learns online, row by row: `streamboost replay --algo {algorithm}`; \
                 `train` takes {}",
                Algorithm::ALL
                    .iter()
                    .filter(|a| a.capabilities().role == Role::Batch)
                    .map(|a| a.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    if let Some(rounds) = args.rounds {
        c.rounds = rounds;
    }
    if let Some(leaves) = args.max_leaves {
        c.max_leaves = leaves;
    }
    if let Some(gamma) = args.gamma
        && !c.tune(&Knob::Gamma(gamma))
    {
        return Err(Error::config("gamma", format!("{algorithm} has no edge γ")));
    }
    crate::learner::Config::validate(&c)?;
    Ok(c)
}

/// The training and test parts of `data`: the first `train_rows` and the rest, or a seeded
/// draw of `test_fraction` of the rows as the test part; all of it to train otherwise.
fn split(
    data: Dataset, train_rows: Option<usize>, test_fraction: Option<f64>, seed: u64,
) -> Result<(Dataset, Option<Dataset>)> {
    match (train_rows, test_fraction) {
        (Some(n), _) => {
            if n == 0 || n >= data.len() {
                return Err(Error::config(
                    "train_rows",
                    format!("must leave rows on both sides of {} rows", data.len()),
                ));
            }
            Ok((data.slice(0..n), Some(data.slice(n..data.len()))))
        }
        (None, Some(f)) => {
            if !(f > 0.0 && f < 1.0) {
                return Err(Error::config("test_fraction", "must be in (0, 1)"));
            }
            // A seeded shuffle; its first `f·n` rows test. Both parts keep file order.
            let n = data.len();
            let mut order: Vec<usize> = (0..n).collect();
            let mut rng = Rng::new(seed);
            for i in (1..n).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                order.swap(i, j);
            }
            let tested = ((f * n as f64).round() as usize).clamp(1, n - 1);
            let mut is_test = vec![false; n];
            order[..tested].iter().for_each(|&i| is_test[i] = true);
            let train = data.pick((0..n).filter(|&i| !is_test[i]));
            let test = data.pick((0..n).filter(|&i| is_test[i]));
            Ok((train, Some(test)))
        }
        (None, None) => Ok((data, None)),
    }
}

#[allow(clippy::too_many_arguments)]
fn report(
    algorithm: Algorithm, config: &ModelConfig, args: &TrainArgs, model: &BatchBoost,
    training: &Dataset, test: Option<&Dataset>, seconds: f64, table_bytes: usize,
) -> TrainReport {
    let accuracy = |data: &Dataset| {
        let errors = model.errors_by_round(data);
        (errors.last().map_or(f64::NAN, |e| 1.0 - e), errors)
    };
    let labelled = |data: &Dataset| (0..data.len()).filter(|&i| data.is_labelled(i)).count();
    let (train_accuracy, _) = accuracy(training);
    let test_part = test.map(|t| {
        let (acc, errors) = accuracy(t);
        (
            Part {
                rows: labelled(t),
                accuracy: acc,
            },
            errors,
        )
    });
    let test_errors = test_part.as_ref().map(|(_, e)| e.clone());
    // Test errors are per hypothesis kept; a discarded round repeats the last one.
    let mut kept = 0usize;
    let rounds = model
        .rounds()
        .iter()
        .enumerate()
        .map(|(t, r)| {
            if r.alpha != 0.0 {
                kept += 1;
            }
            RoundRow {
                round: t + 1,
                round_report: r.clone(),
                test_error: test_errors
                    .as_ref()
                    .and_then(|e| kept.checked_sub(1).and_then(|k| e.get(k)).copied()),
            }
        })
        .collect();
    TrainReport {
        algorithm,
        config: config.clone(),
        inputs: args
            .inputs
            .iter()
            .chain(&args.tests)
            .map(|p| p.display().to_string())
            .collect(),
        train: Part {
            rows: labelled(training),
            accuracy: train_accuracy,
        },
        test: test_part.map(|(p, _)| p),
        hypotheses: model.n_hypotheses(),
        seconds,
        memory: Memory {
            rows_bytes: std::mem::size_of_val(training.rows()),
            table_bytes,
            peak_rss_bytes: super::report::peak_rss(),
        },
        note: NOTE,
        rounds,
    }
}

fn write_rounds_csv(path: &Path, rounds: &[RoundRow]) -> Result<()> {
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let mut text =
        String::from("round,delta,alpha,shift,loss_bound,potential,train_error,test_error\n");
    for r in rounds {
        let x = &r.round_report;
        text.push_str(&format!(
            "{},{},{},{},{},{},{},{}\n",
            r.round,
            opt(x.delta),
            x.alpha,
            x.shift,
            opt(x.loss_bound),
            opt(x.potential),
            x.train_error,
            opt(r.test_error)
        ));
    }
    super::files::write_text(path, &text)
}

fn plot_rounds(path: &Path, report: &TrainReport) -> Result<()> {
    use super::plot::{Curve, draw};
    let curve = |name: &str, value: &dyn Fn(&RoundRow) -> Option<f64>| Curve {
        name: name.to_string(),
        points: report
            .rounds
            .iter()
            .map(|r| (r.round as u64, value(r), None))
            .collect(),
        final_from: None,
        replaced_at: Vec::new(),
    };
    let mut curves = vec![curve("training error", &|r| {
        Some(r.round_report.train_error)
    })];
    if report
        .rounds
        .iter()
        .any(|r| r.round_report.loss_bound.is_some())
    {
        curves.push(curve("training loss bound (shown up to 1)", &|r| {
            r.round_report.loss_bound.map(|b| b.min(1.0))
        }));
    }
    if report.test.is_some() {
        curves.push(curve("test error", &|r| r.test_error));
    }
    draw(
        path,
        &format!("{}", report.config),
        ("rounds", "error"),
        &curves,
    )
}

fn print_summary(report: &TrainReport) {
    let mut out = std::io::stdout().lock();
    let mb = |b: usize| b as f64 / 1e6;
    let _ = writeln!(
        out,
        "{}: {} hypotheses in {:.2} s on {} rows; training accuracy {:.4}{}",
        report.algorithm,
        report.hypotheses,
        report.seconds,
        report.train.rows,
        report.train.accuracy,
        report.test.as_ref().map_or(String::new(), |t| format!(
            "; test accuracy {:.4} on {} rows",
            t.accuracy, t.rows
        ))
    );
    let _ = writeln!(
        out,
        "memory: rows {:.1} MB, columnar table {:.1} MB{}",
        mb(report.memory.rows_bytes),
        mb(report.memory.table_bytes),
        report
            .memory
            .peak_rss_bytes
            .map_or(String::new(), |b| format!(
                ", peak resident {:.1} MB",
                b as f64 / 1e6
            ))
    );
}
