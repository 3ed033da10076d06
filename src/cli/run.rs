//! `streamboost run`: the flags of a long-running scoring job ([`crate::job`]), its stop on
//! SIGINT or SIGTERM, and its progress lines.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use clap::Args;

use super::model_flags::ModelFlags;
use super::replay::StreamFlags;
use crate::Result;
use crate::columnar::PipeFormat;
use crate::job::{FreshModel, Job, Progress};
use crate::live::CheckpointPolicy;

/// Arguments of `streamboost run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The watched directory: CSV or Parquet files, taken in name order, each once. Write a
    /// file under a name starting with `.` or ending in `.partial` and rename it when it is
    /// complete; names must sort in arrival order.
    #[arg(long, value_name = "DIR", required_unless_present = "stdin")]
    pub input_dir: Option<PathBuf>,
    /// Where one scored Parquet file per input file appears (`<stem>.parquet`: the input's
    /// columns, then the predictions), whole, at the first commit after its last row.
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
    /// One model per value of this column (not a feature). `--model` is then a directory:
    /// one checkpoint per key and a manifest; a commit writes the keys that took rows since
    /// the last.
    #[arg(long, value_name = "COL")]
    pub key: Option<String>,
    /// Take the files that are there, then exit (else watch the directory).
    #[arg(long)]
    pub once: bool,
    /// Seconds between looks at the input directory.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub poll: f64,
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
    /// Seconds between progress lines on stderr.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub progress_every: f64,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `streamboost run`.
pub fn run(args: &RunArgs) -> Result<()> {
    let seconds = |s: f64, name: &'static str| {
        Duration::try_from_secs_f64(s)
            .map_err(|_| crate::Error::config(name, "must be a number of seconds >= 0"))
    };
    let interval = Some(seconds(args.checkpoint_interval, "checkpoint_interval")?);
    let mut passthrough = args.passthrough.clone();
    passthrough.extend(args.learn_once_by.clone());
    let job = Job {
        input_dir: args.input_dir.clone().unwrap_or_default(),
        output_dir: args.output_dir.clone().unwrap_or_default(),
        policy: CheckpointPolicy {
            path: args.model.clone(),
            every: args.checkpoint_every,
            interval,
        },
        fresh: FreshModel {
            config: args.model_flags.model_config()?,
            seed: args.seed,
            label: args.stream.label.clone(),
            encodings: args.stream.encodings(&passthrough),
            classes: args.stream.classes.clone(),
        },
        once: args.once,
        poll: seconds(args.poll, "poll")?,
        key: args.key.clone(),
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
    let start = Instant::now();
    let mut last = Instant::now();
    let mut rows_at_last = 0;
    let mut report = |p: &Progress| {
        if args.quiet || last.elapsed() < every {
            return;
        }
        eprintln!("{}", line(p, p.rows - rows_at_last, last.elapsed()));
        (last, rows_at_last) = (Instant::now(), p.rows);
    };
    let progress = match args.stdin {
        true => job.run_pipe(
            std::io::stdin(),
            args.stdout_format,
            args.learn_once_by.as_deref(),
            &stop,
            &mut report,
        )?,
        false => job.run(&stop, &mut report)?,
    };
    if !args.quiet {
        eprintln!("{}", line(&progress, progress.rows, start.elapsed()));
        if progress.stopped {
            eprintln!("stopped  on request, after a final commit");
        }
    }
    Ok(())
}

/// One progress line: totals, the rate over the last `rows` rows in `elapsed`, the accuracy
/// of the job's labelled rows, and the last commit.
fn line(p: &Progress, rows: u64, elapsed: Duration) -> String {
    let rate = rows as f64 / elapsed.as_secs_f64().max(1e-9);
    let accuracy = match p.labelled {
        0 => "-".to_string(),
        n => format!("{:.4}", p.correct as f64 / n as f64),
    };
    format!(
        "run      files {} rows {} ({rate:.0} rows/s) rejected {} accuracy {accuracy} \
         commits {} (last {:.3} s){}",
        p.files,
        p.rows,
        p.rejected,
        p.commits,
        p.last_commit.as_secs_f64(),
        p.file
            .as_deref()
            .map(|f| format!(" file {f}"))
            .unwrap_or_default(),
    )
}
