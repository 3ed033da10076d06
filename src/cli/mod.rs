//! The `streamboost` command line: argument parsing and presentation only. Algorithms are
//! assembled from their configs ([`crate::model`]); evaluation is [`crate::eval`]'s.

mod files;
mod inspect;
mod model_flags;
mod plot;
mod replay;
mod report;
mod run;
#[cfg(feature = "sql")]
mod sql;
mod train;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use inspect::InspectArgs;
pub use plot::PlotArgs;
pub use replay::{ReplayArgs, StreamFlags};
pub use run::RunArgs;
#[cfg(feature = "sql")]
pub use sql::SqlArgs;
pub use train::TrainArgs;

/// Online boosting over logged streams.
#[derive(Debug, Parser)]
#[command(name = "streamboost", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay a logged stream test-then-train and report prequential metrics.
    Replay(Box<ReplayArgs>),
    /// Score the files that arrive in a directory with a live model, committed to a
    /// checkpoint so that a restart goes on where it stopped (exactly once).
    Run(Box<RunArgs>),
    /// Train a batch booster (AdaBoost.MM, AdaBoost.M1, AdaBoost.MH, the OS strategy) on a
    /// logged table and save it as a checkpoint that every scorer serves.
    Train(Box<TrainArgs>),
    /// Print a checkpoint's metadata and a summary of its model (the file is only read).
    Inspect(InspectArgs),
    /// Draw the learning curves of `replay --report` files on one chart (SVG or PNG).
    Plot(PlotArgs),
    /// Run a SQL statement over files and models (boost_prequential, boost_predict, ...).
    #[cfg(feature = "sql")]
    Sql(SqlArgs),
    /// Run a SQL statement (this build has no SQL: build with `--features sql`).
    #[cfg(not(feature = "sql"))]
    #[command(disable_help_flag = true)]
    Sql {
        /// Whatever was given.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<String>,
    },
}

/// Entry point of the `streamboost` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Replay(args) => on_the_pool(|| replay::run(&args)),
        Command::Run(args) => on_the_pool(|| run::run(&args)),
        Command::Train(args) => train::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Plot(args) => plot::run(&args),
        #[cfg(feature = "sql")]
        Command::Sql(args) => sql::run(&args),
        #[cfg(not(feature = "sql"))]
        Command::Sql { .. } => {
            eprintln!(
                "error: this streamboost was built without SQL (DataFusion): build it with \
                 `cargo build --release --features sql`, or run `cargo run --release --features \
                 sql -- sql ...`"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `job` on a thread of rayon's pool (the machine's cores, or `RAYON_NUM_THREADS`), so
/// that what it hands to the pool (a one-vs-all bundle's members, a batch's keys) is
/// scheduled with it rather than on threads beside it. A pool that cannot be made leaves
/// the job on this thread.
fn on_the_pool<T: Send>(job: impl FnOnce() -> T + Send) -> T {
    // The main thread's stack, not a worker's default.
    match rayon::ThreadPoolBuilder::new().stack_size(8 << 20).build() {
        Ok(pool) => pool.install(job),
        Err(_) => job(),
    }
}

/// A memory size as users write it: `64MB`, `4GiB`, `512 KiB`, or a number of bytes (SI
/// units are powers of 1000, `Ki`/`Mi`/`Gi` of 1024).
pub(crate) fn parse_memory_size(text: &str) -> std::result::Result<u64, String> {
    let size: bytesize::ByteSize = text
        .parse()
        .map_err(|e| format!("`{text}` is not a memory size like 64MB or 4GiB: {e}"))?;
    match size.as_u64() {
        0 => Err("a memory size must be above 0".into()),
        bytes => Ok(bytes),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// Without the `sql` feature, `sql` is still a subcommand (answered with how to get it),
    /// never clap's "unrecognized subcommand".
    #[test]
    fn sql_is_a_subcommand_in_every_build() {
        let cli = Cli::try_parse_from(["streamboost", "sql", "SELECT 1", "--table", "t=x.csv"]);
        assert!(matches!(cli.map(|c| c.command), Ok(Command::Sql { .. })));
    }

    #[test]
    fn memory_sizes_read_as_users_write_them() {
        assert_eq!(parse_memory_size("64MB"), Ok(64_000_000));
        assert_eq!(parse_memory_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_memory_size("1000"), Ok(1000));
        assert!(parse_memory_size("0").is_err());
        assert!(parse_memory_size("lots").unwrap_err().contains("lots"));
    }
}
