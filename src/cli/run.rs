//! `streamboost run`: the flags of a long-running scoring job ([`crate::runtime::job`]), its stop on
//! SIGINT or SIGTERM, and its events on stderr (progress at a set rate, rejected files, the
//! end), through `tracing`, as text or JSON lines.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use clap::Args;

use super::model_flags::ModelFlags;
use super::replay::{PendingFlags, StreamFlags};
use crate::Result;
use crate::columnar::PipeFormat;
use crate::runtime::KeyedStore;
use crate::runtime::delay::{DelayColumns, PendingLimits};
use crate::runtime::job::{DelayedLabels, FreshModel, Job, JobStats, LiveSource};
use crate::runtime::live::CheckpointPolicy;

/// Arguments of `streamboost run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The watched directory: CSV or Parquet files, taken in name order, each once. Write a
    /// file under a name starting with `.` or ending in `.partial` and rename it when it is
    /// complete; names must sort in arrival order.
    #[arg(long, value_name = "DIR", required_unless_present = "stdin")]
    pub input_dir: Option<PathBuf>,
    /// Where one scored Parquet file per input file appears (`<stem>.parquet`: the input's
    /// columns, then the predictions), whole, once the first commit after its last row is
    /// in place.
    #[arg(long, value_name = "DIR", required_unless_present = "stdin")]
    pub output_dir: Option<PathBuf>,
    /// Read an Arrow IPC stream from standard input instead of a directory, and write each
    /// scored batch to standard output as it is scored (see `--stdout-format`); commits by
    /// the policy, at the end of the stream and on SIGINT or SIGTERM.
    #[arg(long, conflicts_with_all = ["input_dir", "output_dir"])]
    pub stdin: bool,
    /// The format of the scored batches on standard output, with `--stdin`.
    #[arg(long, value_enum, default_value = "ipc", requires = "stdin")]
    pub stdout_format: PipeFormat,
    /// With `--stdin`: learn each row once by this ordering column (ascending; not a
    /// feature), so that a restarted job fed the stream again from an earlier point learns
    /// only rows after the committed largest value (and emits the others again, with the same
    /// predictions).
    #[arg(long, value_name = "COL", requires = "stdin")]
    pub learn_once_by: Option<String>,
    /// The live model's checkpoint: loaded when it exists, else made from the model flags
    /// at the first file; committed by the checkpoint policy, when the directory has
    /// nothing more to take, and on SIGINT or SIGTERM.
    #[arg(long, value_name = "PATH")]
    pub model: PathBuf,
    /// Also commit after every N rows.
    #[arg(long, value_name = "ROWS")]
    pub checkpoint_every: Option<u64>,
    /// Commit when this many seconds have passed since the last commit (checked between
    /// batches), so a crash loses at most this much work.
    #[arg(long, default_value_t = CheckpointPolicy::DEFAULT_INTERVAL.as_secs_f64(), value_name = "SECS")]
    pub checkpoint_interval: f64,
    /// Deltas between two whole checkpoints: a commit writes the tree nodes that changed since
    /// the last one to `<model>.deltas/`, and every this many commits (or once the deltas
    /// outweigh the whole model) the whole model to `--model`. 0: every commit writes the
    /// whole model.
    #[arg(long, default_value_t = crate::checkpoint::ChainLimits::default().max_deltas, value_name = "N")]
    pub checkpoint_deltas: u32,
    /// One model per value of this column (not a feature). `--model` is then a directory:
    /// one checkpoint per key and a manifest; a commit writes the keys that took rows since
    /// the last.
    #[arg(long, value_name = "COL")]
    pub key: Option<String>,
    /// With `--key`: hold the keys' models within this much memory (`64MB`, `4GiB`, or
    /// bytes); beyond it, the least recently used keys are spilled to the `--model`
    /// directory and loaded back, unchanged, when they reappear. Default: half the machine's
    /// physical memory.
    #[arg(long, value_name = "SIZE", value_parser = super::parse_memory_size, requires = "key")]
    pub memory_budget: Option<u64>,
    /// With `--key`: threads each batch's keys are spread over (default: the machine's
    /// cores). Outputs and models are the same whatever the count.
    #[arg(long, value_name = "N", requires = "key")]
    pub threads: Option<usize>,
    /// Take the files that are there, then exit (else watch the directory).
    #[arg(long)]
    pub once: bool,
    /// Seconds between looks at the input directory.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub poll: f64,
    /// Labels that arrive after their events: a directory of label files (the `--id`, label
    /// and `--time` columns), taken with the input directory's files in one name order (a
    /// label file first on a tie). An event row without its label is scored on arrival and
    /// waits for its label, which is learnt when its file is taken; each label row's outcome
    /// (the class predicted for its event, what it did, whether the prediction was right)
    /// goes to `<output dir>/labels/<stem>.parquet`. The waiting events are committed with
    /// the model (with `--key`, each key's with its model; the labels carry the key too).
    #[arg(long, value_name = "DIR", requires_all = ["id", "time"], conflicts_with = "stdin")]
    pub labels: Option<PathBuf>,
    /// With `--labels`: the event id column, in the events and in the labels (not a feature).
    #[arg(long, value_name = "COL", requires = "labels")]
    pub id: Option<String>,
    /// With `--labels`: the time column, in the events and in the labels (not a feature; it
    /// must not decrease within each directory's stream).
    #[arg(long, value_name = "COL", requires = "labels")]
    pub time: Option<String>,
    /// With `--labels`: how many events wait for their labels, and for how long.
    #[command(flatten)]
    pub pending: PendingFlags,
    /// With `--labels`: a label that comes before its event (its file taken first) is held
    /// this long, in the time column's units, for its event; the event is then learnt as
    /// soon as it is scored. Held labels count against `--pending-max-rows`; one whose event
    /// does not come in time is counted as unmatched. Default: 0, not held.
    #[arg(long, value_name = "T", default_value_t = 0.0, requires = "labels")]
    pub early_label_tolerance: f64,
    /// A column that is carried to the output without being a feature of a fresh model (an
    /// event id, a timestamp; repeatable).
    #[arg(long = "passthrough", value_name = "COL")]
    pub passthrough: Vec<String>,
    /// A fresh model's label, column kinds and classes.
    #[command(flatten)]
    pub stream: StreamFlags,
    /// The model a fresh checkpoint starts from.
    #[command(flatten)]
    pub model_flags: ModelFlags,
    /// Seed of a fresh model.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seconds between progress events on stderr (rows, rows/s, accuracy so far, commits).
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub progress_every: f64,
    /// How events are written on stderr: `text` lines or `json` lines.
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,
    /// No events on stderr (errors still are).
    #[arg(long, short)]
    pub quiet: bool,
}

/// Which of a fresh model's flags `run` was given on its command line: checked against an
/// existing `--model`, whose own settings they would otherwise silently lose to.
#[derive(Debug, Default)]
pub struct Given {
    /// The model flags given (`--algo`, `--learners`, `--config`, ...), as typed.
    model: Vec<String>,
    /// The stream flags given (`--label`, `--classes`, `--nominal`, `--ordinal`), and
    /// `--seed`.
    stream: Vec<String>,
}

impl Given {
    /// What `matches` (of `run`) says was typed, read off the flag groups.
    pub fn of(matches: &clap::ArgMatches) -> Given {
        let mut stream = super::model_flags::typed::<StreamFlags>(matches);
        if super::model_flags::typed_id(matches, "seed") {
            stream.push("--seed".into());
        }
        Given {
            model: super::model_flags::given(matches),
            stream,
        }
    }
}

/// Refuses the flags of a fresh model that describe another model than the existing
/// checkpoint holds (flags that describe it, as when a job is restarted with its first
/// command line, pass); returns the checkpoint's stream state, or none for a fresh model.
fn check_existing(args: &RunArgs, given: &Given) -> Result<Option<crate::checkpoint::StreamState>> {
    let path = &args.model;
    if !path.exists() {
        return Ok(None);
    }
    let (state, seed) = match KeyedStore::is_keyed(path) {
        true => {
            let manifest = KeyedStore::open_read_only(path)?.manifest().clone();
            (manifest.template, Some(manifest.seed))
        }
        false => (crate::checkpoint::read_stream_state(path)?, None),
    };
    let refuse = |flags: &str, what: String| {
        Err(crate::Error::config(
            "model",
            format!(
                "{} exists and {what}; {flags} describe a fresh model, not this one: remove them \
                 to go on with the checkpoint, or give a new --model path",
                path.display()
            ),
        ))
    };
    if !given.model.is_empty() {
        let config = args.model_flags.model_config()?;
        if config != state.config {
            let flags = given.model.join(" ");
            return refuse(&flags, format!("holds {} (flags: {config})", state.config));
        }
    }
    let stream = &args.stream;
    let differs = |flag: &str| match flag {
        "--label" => stream.label != state.label,
        "--classes" => stream.classes.as_deref() != Some(state.spec.classes.names()),
        "--nominal" => stream.nominal != state.encodings.nominal,
        "--ordinal" => stream.ordinal != state.encodings.ordinal,
        "--seed" => seed.is_some_and(|s| s != args.seed),
        // A stream flag this check cannot compare is refused rather than ignored.
        _ => true,
    };
    if let Some(flag) = given.stream.iter().find(|f| differs(f.as_str())) {
        let what = format!(
            "was made with label `{}`, classes [{}]{}",
            state.label,
            state.spec.classes.names().join(", "),
            seed.map_or(String::new(), |s| format!(", seed {s}"))
        );
        return refuse(flag, what);
    }
    Ok(Some(state))
}

/// Runs `streamboost run`.
pub fn run(args: &RunArgs, given: &Given) -> Result<()> {
    let existing = check_existing(args, given)?;
    let seconds = |s: f64, name: &'static str| {
        Duration::try_from_secs_f64(s)
            .map_err(|_| crate::Error::config(name, "must be a number of seconds >= 0"))
    };
    let interval = Some(seconds(args.checkpoint_interval, "checkpoint_interval")?);
    let mut passthrough = args.passthrough.clone();
    passthrough.extend(args.learn_once_by.clone());
    let delayed = match (&args.labels, &args.id, &args.time) {
        (Some(_), Some(id), Some(time)) => Some(DelayedLabels {
            columns: DelayColumns {
                id: id.clone(),
                time: time.clone(),
            },
            limits: {
                let limits = PendingLimits {
                    early_label_tolerance: args.early_label_tolerance,
                    ..args.pending.limits()?
                };
                limits.validate()?;
                limits
            },
        }),
        _ => None,
    };
    let job = Job {
        input_dir: args.input_dir.clone().unwrap_or_default(),
        output_dir: args.output_dir.clone().unwrap_or_default(),
        labels_dir: delayed.as_ref().and(args.labels.clone()),
        live: LiveSource {
            policy: CheckpointPolicy {
                path: args.model.clone(),
                every: args.checkpoint_every,
                interval,
                memory_budget: args.memory_budget,
                chain: crate::checkpoint::ChainLimits {
                    max_deltas: args.checkpoint_deltas,
                    ..Default::default()
                },
            },
            fresh: FreshModel {
                config: args.model_flags.model_config()?,
                seed: args.seed,
                label: args.stream.label.clone(),
                encodings: args.stream.encodings(&passthrough),
                classes: args.stream.classes.clone(),
            },
            key: args.key.clone(),
            key_threads: args.threads.unwrap_or_else(crate::core::cores),
            delayed,
        },
        once: args.once,
        poll: seconds(args.poll, "poll")?,
    };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop)).map_err(|source| {
            crate::Error::Io {
                path: PathBuf::from("signal handler"),
                source,
            }
        })?;
    }
    let every = seconds(args.progress_every, "progress_every")?;
    if !args.quiet {
        log_events(args.log_format);
    }
    say_start(args, &job, existing.as_ref(), given);
    let start = Instant::now();
    let mut last = Instant::now();
    let (mut rows_at_last, mut rejected, mut named) = (0, 0, 0);
    // A keyed model's list follows the keys in memory: a class is warned about once by name.
    let mut classes_named = std::collections::HashSet::new();
    let mut report = |p: &JobStats| {
        for (file, reason) in &p.rejections[named..] {
            tracing::warn!(
                file,
                reason,
                "rejected: moved to rejected/ in its directory, with the reason beside it"
            );
        }
        named = p.rejections.len();
        if p.rejected > rejected {
            let unnamed = p.rejected - named as u64;
            if unnamed > 0 {
                tracing::warn!(rejected = p.rejected, unnamed, "more files rejected");
            }
            rejected = p.rejected;
        }
        for class in p
            .unknown_classes
            .iter()
            .filter(|c| classes_named.insert((*c).clone()))
        {
            tracing::warn!(
                class,
                "a label outside the model's classes (taken from its first file, or --classes): \
                 its rows are scored, not learnt; to learn it, start a fresh model (a new \
                 --model) with --classes naming every class, this one included"
            );
        }
        if last.elapsed() < every {
            return;
        }
        event(p, p.rows - rows_at_last, last.elapsed(), "progress");
        (last, rows_at_last) = (Instant::now(), p.rows);
    };
    let progress = match args.stdin {
        true => job.run_pipe(
            std::io::stdin(),
            std::io::stdout(),
            args.stdout_format,
            args.learn_once_by.as_deref(),
            &stop,
            &mut report,
        )?,
        false => job.run(&stop, &mut report)?,
    };
    let end = match progress.stopped {
        true => "stopped on request, after a final commit",
        false => "done",
    };
    event(&progress, progress.rows, start.elapsed(), end);
    Ok(())
}

/// The job's first event: what it reads, what it writes, and the model it goes on with or
/// starts.
fn say_start(
    args: &RunArgs, job: &Job, existing: Option<&crate::checkpoint::StreamState>, given: &Given,
) {
    let model = args.model.display().to_string();
    let (mode, config) = match existing {
        Some(state) => (
            format!("resumed ({} rows seen)", state.stats.rows_seen),
            state.config.to_string(),
        ),
        None => (
            "fresh, made at the first file".to_string(),
            job.live.fresh.config.to_string(),
        ),
    };
    match args.stdin {
        true => tracing::info!(
            input = "standard input (Arrow IPC stream)",
            output = "standard output",
            model,
            mode,
            config,
            "start"
        ),
        false => {
            let input_dir = job.input_dir.display().to_string();
            let labels = args.labels.as_ref().map(|d| d.display().to_string());
            let output_dir = job.output_dir.display().to_string();
            tracing::info!(
                input_dir,
                labels = labels.unwrap_or_default(),
                output_dir,
                model,
                mode,
                config,
                once = args.once,
                "start: takes the CSV and Parquet files of input_dir in name order, writes \
                 output_dir/<stem>.parquet per file"
            );
        }
    }
    if existing.is_some()
        && given.stream.iter().any(|f| f == "--seed")
        && !KeyedStore::is_keyed(&args.model)
    {
        tracing::warn!(
            "--seed seeds a fresh model only: the checkpoint's generators go on where they were"
        );
    }
}

/// Writes the process's `tracing` events on stderr in `format`, unless the process already
/// has a subscriber (a job embedded in a program that logs keeps that one).
pub(crate) fn log_events(format: LogFormat) {
    let events = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(false);
    drop(match format {
        LogFormat::Text => events.try_init(),
        LogFormat::Json => events.json().flatten_event(true).try_init(),
    });
}

/// How `run` and `serve` write their events on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line of `key=value` fields per event.
    Text,
    /// One JSON object per line, for a log collector.
    Json,
}

/// One progress event: totals, the rate over the last `rows` rows in `elapsed`, the accuracy
/// of the job's labelled rows (before they were learnt), and the commits.
fn event(p: &JobStats, rows: u64, elapsed: Duration, message: &str) {
    let rows_per_s = (rows as f64 / elapsed.as_secs_f64().max(1e-9)).round() as u64;
    let accuracy = (p.labelled > 0).then(|| p.correct as f64 / p.labelled as f64);
    let last_commit_s = p.last_commit.as_secs_f64();
    let (commit_s, commit_bytes) = (p.commit_time.as_secs_f64(), p.commit_bytes);
    let file = p.file.as_deref().unwrap_or("");
    let (files, total, rejected, commits) = (p.files, p.rows, p.rejected, p.commits);
    let labels = p.labels;
    // Before the progress line, so that a job's last event is its `done`.
    if let Some(drift) = p.drift.filter(|d| d.any()) {
        tracing::info!(
            learners_replaced = drift.learners_replaced,
            subtrees_swapped = drift.subtrees_swapped,
            "drift"
        );
    }
    match accuracy {
        Some(accuracy) => tracing::info!(
            files,
            rows = total,
            labels,
            rows_per_s,
            rejected,
            accuracy,
            commits,
            last_commit_s,
            commit_s,
            commit_bytes,
            file,
            "{message}"
        ),
        None => tracing::info!(
            files,
            rows = total,
            labels,
            rows_per_s,
            rejected,
            commits,
            last_commit_s,
            commit_s,
            commit_bytes,
            file,
            "{message}"
        ),
    }
    if let Some(k) = p.keys {
        let resident_mb = k.resident_bytes as f64 / 1e6;
        let (resident_keys, loads, spills, drops) = (k.resident_keys, k.loads, k.spills, k.drops);
        tracing::info!(resident_keys, resident_mb, loads, spills, drops, "keys");
    }
}
