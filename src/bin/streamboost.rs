//! The `streamboost` command (see `streamboost --help`).

fn main() -> std::process::ExitCode {
    streamboost::cli::main()
}
