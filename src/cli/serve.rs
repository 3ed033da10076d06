//! `streamboost serve`: flags to [`crate::serve::Options`], events on stderr, and SIGTERM /
//! SIGINT as the shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::run::LogFormat;
use crate::checkpoint::ChainLimits;
use crate::runtime::live::CheckpointPolicy;
use crate::serve::{Defaults, Limits, Options, Server, Tokens};
use crate::{Error, Result};

/// Arguments of `streamboost serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on. A loopback address unless another is named; one beyond
    /// loopback needs `--token-file`.
    #[arg(long, default_value = "127.0.0.1:50051", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// The models directory: `NAME.parquet` checkpoints (a file, or a keyed model's
    /// directory) and `NAME.json` configs of fresh models (`{"config": {…}, "classes": […],
    /// "seed": 1}`, committed to `NAME.parquet`), each served as live model `NAME`.
    #[arg(long, value_name = "DIR")]
    pub models: PathBuf,
    /// Register a CSV or Parquet file (or directory) as a table (repeatable).
    #[arg(long = "table", value_name = "NAME=PATH")]
    pub tables: Vec<String>,
    /// Bearer tokens, one client per line: `NAME TOKEN` (the name is what the logs call
    /// the client). Every call must then carry `authorization: Bearer TOKEN`.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// TLS: the server's certificate (chain), PEM.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS: the certificate's private key, PEM.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The largest message a client may send, in bytes.
    #[arg(long, default_value_t = Limits::default().max_message_bytes, value_name = "BYTES")]
    pub max_message_bytes: usize,
    /// Calls in progress at once (queries' result streams and DoExchange streams included);
    /// beyond, a call is refused with `ResourceExhausted`.
    #[arg(long, default_value_t = Limits::default().max_calls, value_name = "N",
          value_parser = at_least_one)]
    pub max_calls: usize,
    /// The longest a call other than a DoExchange may take, in seconds, its result stream
    /// included; beyond, it ends with `DeadlineExceeded`.
    #[arg(long, default_value_t = Limits::default().call_timeout.as_secs_f64(), value_name = "SECS")]
    pub call_timeout: f64,
    /// The label column of a model never committed, where a DoExchange names none.
    #[arg(long, default_value = "label", value_name = "COL")]
    pub label: String,
    /// Learn each row of a DoExchange once by this ordering column (an integer or timestamp
    /// column, ascending; not a feature), where the DoExchange names none: rows at or
    /// before a model's last commit are scored, not learnt again.
    #[arg(long, value_name = "COL")]
    pub learn_once_by: Option<String>,
    /// Also commit a model after every N rows it takes.
    #[arg(long, value_name = "ROWS")]
    pub checkpoint_every: Option<u64>,
    /// Commit a model when this many seconds have passed since its last commit (checked
    /// between batches).
    #[arg(long, default_value_t = CheckpointPolicy::DEFAULT_INTERVAL.as_secs_f64(), value_name = "SECS")]
    pub checkpoint_interval: f64,
    /// Deltas between two whole checkpoints (see `run --checkpoint-deltas`).
    #[arg(long, default_value_t = ChainLimits::default().max_deltas, value_name = "N")]
    pub checkpoint_deltas: u32,
    /// A keyed model's memory budget (`64MB`, `4GiB`, or bytes). Default: half the
    /// machine's physical memory.
    #[arg(long, value_name = "SIZE", value_parser = super::parse_memory_size)]
    pub memory_budget: Option<u64>,
    /// Partitions a query runs on (DataFusion's `target_partitions`). Default: the
    /// machine's cores.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub partitions: Option<u64>,
    /// How events are written on stderr.
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

fn at_least_one(text: &str) -> std::result::Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{text}`: expected a whole number >= 1")),
    }
}

fn seconds(value: f64, name: &'static str) -> Result<Duration> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| Error::config(name, "must be a number of seconds >= 0"))
}

/// The server's options from its flags.
fn options(args: &ServeArgs) -> Result<Options> {
    let tables = args
        .tables
        .iter()
        .map(|arg| {
            let (name, path) = super::name_and_path(arg, "table")?;
            Ok((name.to_string(), path.to_path_buf()))
        })
        .collect::<Result<Vec<_>>>()?;
    let tokens = args.token_file.as_deref().map(Tokens::read).transpose()?;
    let policy = CheckpointPolicy {
        every: args.checkpoint_every,
        interval: Some(seconds(args.checkpoint_interval, "checkpoint_interval")?),
        memory_budget: args.memory_budget,
        chain: ChainLimits {
            max_deltas: args.checkpoint_deltas,
            ..ChainLimits::default()
        },
        ..CheckpointPolicy::at_end(&args.models)
    };
    Ok(Options {
        listen: args.listen,
        models: args.models.clone(),
        tables,
        tokens,
        tls: args.tls_cert.clone().zip(args.tls_key.clone()),
        limits: Limits {
            max_message_bytes: args.max_message_bytes,
            max_calls: args.max_calls,
            call_timeout: seconds(args.call_timeout, "call_timeout")?,
        },
        policy,
        defaults: Defaults {
            label: args.label.clone(),
            learn_once_by: args.learn_once_by.clone(),
        },
        partitions: args
            .partitions
            .map_or_else(crate::core::cores, |n| n as usize),
    })
}

/// Runs `streamboost serve` until SIGTERM or SIGINT.
pub fn run(args: &ServeArgs) -> Result<()> {
    super::run::log_events(args.log_format);
    let options = options(args)?;
    let runtime = super::tokio_runtime()?;
    let served = runtime.block_on(async {
        let server = Server::bind(options).await?;
        // The address actually bound (port 0 picks one), on stdout for whoever started us.
        println!("listening on {}", server.local_addr());
        server.run(shutdown_signal()).await
    });
    // The models are committed by now. A query cancelled at its deadline stops at its
    // operators' next yield, which a huge join may not reach for long: its work does not
    // hold the exit.
    runtime.shutdown_timeout(Duration::from_secs(5));
    served
}

/// Resolves at the first SIGTERM or SIGINT.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        // Without handlers the default actions stop the process.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
