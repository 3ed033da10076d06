fn main() -> std::process::ExitCode {
    streamboost::cli::main()
}
