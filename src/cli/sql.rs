//! `streamboost sql`: register files and models, run one statement, print or write the
//! result.

use std::path::{Path, PathBuf};

use clap::Args;
use datafusion::prelude::{SessionConfig, SessionContext};

use datafusion::arrow::record_batch::RecordBatch;
use futures::StreamExt;

use crate::columnar::BatchWriter;
use crate::files::Named;
use crate::runtime::live::CheckpointPolicy;
use crate::sql::sources::{df_error, read_model_file, register_table};
use crate::sql::{ModelRegistry, register_all};
use crate::{Error, Result};

/// Arguments of `streamboost sql`.
#[derive(Debug, Args)]
pub struct SqlArgs {
    /// The statement to run.
    pub statement: String,
    /// Register a CSV or Parquet file as a table (repeatable).
    #[arg(long = "table", value_name = "NAME=PATH")]
    pub tables: Vec<String>,
    /// Register a model: a checkpoint (`.parquet`), or a JSON file
    /// `{"config": {...}, "classes": [...], "seed": 1}` for a fresh model (repeatable).
    #[arg(long = "model", value_name = "NAME=PATH")]
    pub models: Vec<String>,
    /// Register a live model: a checkpoint that `boost_score` queries start from and commit
    /// to (every N rows, every S seconds — 60 unless given — and at the end of each query),
    /// made from a model JSON file (as `--model` takes) when it does not exist yet
    /// (repeatable): `NAME=PATH[,every=N][,interval=S][,config=FILE.json][,memory=SIZE]`. A
    /// query with a key makes a fresh live model one model per key: PATH is then a
    /// directory, and `memory` (`64MB`, `4GiB`; default half the machine's memory) bounds
    /// the keys held in memory, the least recently used spilled to it beyond.
    #[arg(long = "live", value_name = "NAME=PATH[,…]")]
    pub live: Vec<String>,
    /// Write the result here (CSV, or Parquet by extension) instead of printing it.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Partitions a query runs on (DataFusion's `target_partitions`): a keyed `boost_score`
    /// hashes its keys over them, one model per key in each, one thread each. Default: the
    /// machine's cores.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub partitions: Option<u64>,
    /// Run the statement on the Ballista cluster whose scheduler is at this URL
    /// (`df://host:50050`; see `examples/ballista_cluster.rs`). Tables and checkpoints are
    /// read by their paths on the executors; live models stay on one machine.
    #[arg(long, value_name = "URL")]
    pub ballista: Option<String>,
}

pub(crate) fn name_and_path<'a>(arg: &'a str, flag: &'static str) -> Result<(&'a str, &'a Path)> {
    match arg.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => Ok((name, Path::new(path))),
        _ => Err(Error::config(flag, format!("`{arg}`: expected NAME=PATH"))),
    }
}

/// Refuses an `--output` that would overwrite a registered table or model (or a file the
/// statement names in quotes, `FROM 'x.csv'`), or a live model's checkpoint, and a live
/// checkpoint that is a table or another model: before any file is opened.
fn refuse_overlaps(args: &SqlArgs) -> Result<()> {
    let mut inputs = Vec::new();
    for arg in &args.tables {
        inputs.push(Named::new("--table", name_and_path(arg, "table")?.1));
    }
    for arg in &args.models {
        inputs.push(Named::new("--model", name_and_path(arg, "model")?.1));
    }
    let quoted = args.statement.split('\'').skip(1).step_by(2);
    inputs.extend(
        quoted
            .map(Path::new)
            .filter(|p| p.is_file())
            .map(|p| Named::new("the statement's", p)),
    );
    let mut outputs = Vec::new();
    if let Some(path) = &args.output {
        outputs.push(Named::new("--output", path));
    }
    for arg in &args.live {
        let spec = arg.split(',').next().unwrap_or_default();
        outputs.push(Named::new("--live", name_and_path(spec, "live")?.1));
    }
    crate::files::refuse_overlaps(&inputs, &outputs)
}

/// The session a statement runs in: this process's, or a Ballista cluster's.
async fn session(
    args: &SqlArgs, registry: &ModelRegistry, partitions: usize,
) -> Result<SessionContext> {
    let config = SessionConfig::new().with_target_partitions(partitions);
    if let Some(url) = &args.ballista {
        #[cfg(feature = "ballista")]
        return crate::sql::distributed::remote(url, registry, config)
            .await
            .map_err(df_error);
        #[cfg(not(feature = "ballista"))]
        return Err(Error::config(
            "ballista",
            format!(
                "`{url}`: this build has no Ballista client; build with \
                 `cargo build --release --features ballista`"
            ),
        ));
    }
    let ctx = SessionContext::new_with_config(config).enable_url_table();
    register_all(&ctx, registry).map_err(df_error)?;
    Ok(ctx)
}

/// Runs `streamboost sql`.
pub fn run(args: &SqlArgs) -> Result<()> {
    tokio_runtime()?.block_on(run_async(args))
}

/// The runtime a command's async work runs on: tokio's, on every core.
pub(crate) fn tokio_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| Error::Io {
            path: PathBuf::from("tokio runtime"),
            source,
        })
}

async fn run_async(args: &SqlArgs) -> Result<()> {
    refuse_overlaps(args)?;
    let registry = ModelRegistry::new();
    // Files can also be queried by path: `SELECT ... FROM 'model.parquet'`.
    let partitions = args
        .partitions
        .map_or_else(crate::core::cores, |n| n as usize);
    let ctx = session(args, &registry, partitions).await?;
    for arg in &args.tables {
        let (name, path) = name_and_path(arg, "table")?;
        register_table(&ctx, name, path).await?;
    }
    // Models after tables: a fresh model may learn its classes from one.
    for arg in &args.models {
        let (name, path) = name_and_path(arg, "model")?;
        if path.extension().is_some_and(|e| e == "json") {
            let (config, classes, seed) = read_model_file(path, &ctx).await?;
            registry.register_config(name, config, classes, seed)?;
        } else {
            registry.load_checkpoint(name, path)?;
        }
    }
    for arg in &args.live {
        let mut parts = arg.split(',');
        let (name, path) = name_and_path(parts.next().unwrap_or_default(), "live")?;
        let mut policy = CheckpointPolicy::new(path);
        let mut fresh = None;
        for option in parts {
            let bad = || {
                Error::config(
                    "live",
                    format!("`{option}`: expected every=N, interval=S, config=FILE or memory=SIZE"),
                )
            };
            let (key, value) = option.split_once('=').ok_or_else(bad)?;
            match key {
                "every" => policy.every = Some(value.parse().map_err(|_| bad())?),
                "interval" => {
                    let seconds: f64 = value.parse().map_err(|_| bad())?;
                    policy.interval =
                        Some(std::time::Duration::try_from_secs_f64(seconds).map_err(|_| bad())?);
                }
                "config" => fresh = Some(read_model_file(Path::new(value), &ctx).await?),
                "memory" => {
                    let bytes = super::parse_memory_size(value);
                    policy.memory_budget = Some(bytes.map_err(|e| Error::config("live", e))?);
                }
                _ => return Err(bad()),
            }
        }
        registry.register_live(name, policy, fresh)?;
    }
    let frame = ctx.sql(&args.statement).await.map_err(df_error)?;
    match &args.output {
        None => frame.show().await.map_err(df_error)?,
        Some(path) => {
            // Batches are written as the query yields them: memory stays flat however long
            // the result. They go to a temporary file renamed over the path at the end: a
            // failed query leaves an existing file as it was.
            let schema = frame.schema().inner().clone();
            let mut writer = BatchWriter::create(path)?;
            let mut batches = frame.execute_stream().await.map_err(df_error)?;
            let mut rows = 0;
            while let Some(batch) = batches.next().await {
                let batch = batch.map_err(df_error)?;
                rows += batch.num_rows();
                writer.write(&batch)?;
            }
            if rows == 0 {
                // An empty result still has its columns (a CSV header, a Parquet schema).
                writer.write(&RecordBatch::new_empty(schema))?;
            }
            writer.finish()?;
        }
    }
    Ok(())
}
