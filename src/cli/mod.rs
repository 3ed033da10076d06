//! The `streamboost` command line: argument parsing and presentation only. Algorithms are
//! assembled from their configs ([`crate::model`]); evaluation is [`crate::eval`]'s.

mod files;
mod inspect;
mod model_flags;
pub mod plot;
mod replay;
mod report;
mod run;
#[cfg(feature = "serve")]
mod serve;
#[cfg(feature = "sql")]
mod sql;
mod train;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub use inspect::InspectArgs;
pub use plot::PlotArgs;
pub use replay::{ReplayArgs, StreamFlags};
pub use run::RunArgs;
#[cfg(feature = "serve")]
pub use serve::ServeArgs;
#[cfg(feature = "sql")]
pub use sql::SqlArgs;
#[cfg(feature = "serve")]
pub(crate) use sql::{name_and_path, tokio_runtime};
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
    /// Write a generated drifting stream to a CSV file: the rows `replay --synth SPEC`
    /// replays, for other tools to read.
    Synth(SynthArgs),
    /// Run a SQL statement over files and models (boost_prequential, boost_predict, ...).
    #[cfg(feature = "sql")]
    Sql(SqlArgs),
    /// Serve the SQL functions and the live models of a directory over Arrow Flight SQL:
    /// queries from any Flight SQL client, and record batches scored and learnt by
    /// `DoExchange`.
    #[cfg(feature = "serve")]
    Serve(Box<ServeArgs>),
    /// Serve over Arrow Flight SQL (this build has no server: build with `--features serve`).
    #[cfg(not(feature = "serve"))]
    #[command(disable_help_flag = true)]
    Serve {
        /// Whatever was given.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<String>,
    },
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
    let matches = command()
        .try_get_matches()
        .unwrap_or_else(|e| say_negative(e).exit());
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Flags that a `--config` or a `--load` would leave unread are refused, by name.
    if let Some(("replay" | "run", sub)) = matches.subcommand()
        && let Err(e) = model_flags::refuse_unread(sub)
    {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Replay(args) => on_the_pool(|| replay::run(&args)),
        Command::Run(args) => {
            let given = matches
                .subcommand_matches("run")
                .map(run::Given::of)
                .unwrap_or_default();
            on_the_pool(|| run::run(&args, &given))
        }
        Command::Train(args) => train::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Plot(args) => plot::run(&args),
        Command::Synth(args) => write_synth(&args),
        #[cfg(feature = "sql")]
        Command::Sql(args) => sql::run(&args),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::run(&args),
        #[cfg(not(feature = "serve"))]
        Command::Serve { .. } => {
            eprintln!(
                "error: this streamboost was built without its Flight SQL server: build it with \
                 `cargo build --release --features serve`"
            );
            return ExitCode::from(2);
        }
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

/// The command line's grammar: [`Cli`]'s, with every subcommand
/// * taking negative numbers as values (`--seed -1` is then refused by the flag's own
///   parser, saying why, rather than read as an unknown flag);
/// * helped in plain text: `-h`/`--help` give each flag's first sentence, `--help-all`
///   the whole text, without the Markdown escapes and rustdoc links of the doc comments
///   the texts come from.
pub fn command() -> clap::Command {
    Cli::command().mut_subcommands(|sub| {
        sub.allow_negative_numbers(true)
            .disable_help_flag(true)
            .mut_args(|arg| {
                let Some(full) = arg.get_long_help().or(arg.get_help()) else {
                    return arg;
                };
                let mut full = plain(&full.to_string());
                let mut short = first_sentence(&full);
                // Values with their own help are listed here, in plain text (clap would
                // print their doc comments' Markdown).
                let values = arg.get_possible_values();
                if values.iter().any(|v| v.get_help().is_some()) {
                    let shown: Vec<_> = values.iter().filter(|v| !v.is_hide_set()).collect();
                    let names: Vec<&str> = shown.iter().map(|v| v.get_name()).collect();
                    short = format!("{short} [values: {}]", names.join(", "));
                    full.push_str("\n\nValues:");
                    for value in shown {
                        let help = value.get_help().map(|h| plain(&h.to_string()));
                        full.push_str(&format!(
                            "\n  {}: {}",
                            value.get_name(),
                            help.unwrap_or_default()
                        ));
                    }
                    return arg.hide_possible_values(true).help(short).long_help(full);
                }
                arg.help(short).long_help(full)
            })
            .arg(
                clap::Arg::new("help")
                    .short('h')
                    .long("help")
                    .action(clap::ArgAction::HelpShort)
                    .help("Print help, a line per flag (--help-all: the whole text)"),
            )
            .arg(
                clap::Arg::new("help-all")
                    .long("help-all")
                    .action(clap::ArgAction::HelpLong)
                    .help("Print help with every flag's whole text"),
            )
    })
}

/// A parse error for a negative number given to a flag that takes none (a count, a seed)
/// says so, instead of the integer parser's "invalid digit found in string".
fn say_negative(e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let value = match e.get(ContextKind::InvalidValue) {
        Some(ContextValue::String(v)) if v.starts_with('-') && v[1..].parse::<f64>().is_ok() => v,
        _ => return e,
    };
    let flag = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(flag)) => flag.clone(),
        _ => return e,
    };
    if e.kind() != ErrorKind::ValueValidation {
        return e;
    }
    let message = format!(
        "invalid value '{value}' for '{flag}': a negative number, where a count or a seed (0 or \
         more) is expected\n"
    );
    let mut command = command();
    command.build();
    clap::Error::raw(ErrorKind::ValueValidation, message).with_cmd(&command)
}

/// `text` without a doc comment's Markdown: escaped brackets unescaped, rustdoc links
/// (``[`Type::item`]``, `[text](target)`) as their text, code quotes kept.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['\\', '[']) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix('\\') {
            // `\[` → `[`
            let mut chars = after.chars();
            if let Some(c) = chars.next() {
                out.push(c);
            }
            rest = chars.as_str();
        } else if let Some(close) = rest.find(']').filter(|&c| rest[1..c].starts_with('`')) {
            // [`Config::with_margin_output`] → `with_margin_output`
            let inner = rest[1..close].trim_matches('`');
            let name = inner.rsplit("::").next().unwrap_or(inner);
            out.push('`');
            out.push_str(name.trim_end_matches("()"));
            out.push('`');
            rest = &rest[close + 1..];
            if rest.starts_with('(')
                && let Some(end) = rest.find(')')
            {
                rest = &rest[end + 1..];
            }
        } else {
            out.push('[');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The first sentence of `text` (up to a period followed by a space or the end), or its
/// first line where it has no such period: what `-h` prints of a flag.
fn first_sentence(text: &str) -> String {
    let first = text.split("\n\n").next().unwrap_or(text);
    let mut end = first.len();
    for (i, _) in first.match_indices(". ") {
        // Not after an abbreviation such as `e.g.` or `i.e.`.
        let before = &first[..i];
        if !(before.ends_with("e.g") || before.ends_with("i.e") || before.ends_with("vs")) {
            end = i + 1;
            break;
        }
    }
    first[..end].trim_end_matches(':').replace('\n', " ")
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
    fn help_is_plain_text() {
        assert_eq!(
            plain(r"Adaboost.OLM (\[JGT\] Algorithm 2), see [`Config::with_margin_output`]"),
            "Adaboost.OLM ([JGT] Algorithm 2), see `with_margin_output`"
        );
        assert_eq!(plain("a [`x`](crate::x) b [c]"), "a `x` b [c]");
        assert_eq!(
            first_sentence("Seed of it, e.g. 1. More here."),
            "Seed of it, e.g. 1."
        );
    }

    /// Every subcommand's `--help` and `--help-all` hold no doc comment's Markdown, and
    /// `--help` gives a line or so per flag.
    #[test]
    fn every_help_is_plain_and_short() {
        let mut cli = command();
        for sub in cli.get_subcommands_mut() {
            let short = sub.render_help().to_string();
            let long = sub.render_long_help().to_string();
            for text in [&short, &long] {
                assert!(!text.contains("\\[") && !text.contains("[`"), "{text}");
            }
            let flags = sub.get_arguments().count();
            assert!(
                short.lines().count() <= 2 * flags + 12,
                "{}: {short}",
                sub.get_name()
            );
        }
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

/// Arguments of `streamboost synth`.
#[derive(Debug, clap::Args)]
pub struct SynthArgs {
    /// The stream, as `replay --synth` takes it (`sea:drift=gradual:rows=200000`, …; see
    /// `replay --help-all`).
    #[arg(value_name = "SPEC")]
    pub spec: String,
    /// The CSV file to write (replaced atomically).
    #[arg(short, long, value_name = "PATH")]
    pub output: std::path::PathBuf,
}

/// `streamboost synth`: the stream of `args.spec`, as CSV, to `args.output`.
fn write_synth(args: &SynthArgs) -> crate::Result<()> {
    let data = args
        .spec
        .parse::<crate::synth::drift::DriftSpec>()?
        .generate();
    files::write_text(&args.output, &files::dataset_csv(&data))
}
