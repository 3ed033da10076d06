//! The `streamboost` command line: argument parsing and presentation only. Algorithms are
//! assembled from their configs ([`crate::model`]); evaluation is [`crate::eval`]'s.

mod inspect;
mod model_flags;
mod replay;
mod report;
#[cfg(feature = "sql")]
mod sql;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use inspect::InspectArgs;
pub use replay::ReplayArgs;
#[cfg(feature = "sql")]
pub use sql::SqlArgs;

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
    /// Print a checkpoint's metadata and a summary of its model (the file is only read).
    Inspect(InspectArgs),
    /// Run a SQL statement over files and models (boost_prequential, boost_predict, ...).
    #[cfg(feature = "sql")]
    Sql(SqlArgs),
}

/// Entry point of the `streamboost` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Replay(args) => replay::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        #[cfg(feature = "sql")]
        Command::Sql(args) => sql::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
