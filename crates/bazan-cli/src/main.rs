//! The `bazan` binary: the command line of `bazan_cli`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    bazan_cli::main_with_env_args()
}
