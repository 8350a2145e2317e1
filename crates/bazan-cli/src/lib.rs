//! `bazan`: the command line over Bazan's TsFile and Lake Map crates, as a library so that
//! other front ends (the Python package's `bazan` command) run exactly the same program.
//!
//! Human output by default, `--json` for machines (a stable contract). Exit codes: 0 success,
//! 1 the command found a problem it reports (drift, an invalid file), 2 usage or input error.
//! Errors are printed to stderr as one `error: …` line. The binary holds argument parsing and
//! output only: everything else is the `bazan` library crate (the facade).
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod doctor;
mod map;
mod output;
mod read;
#[cfg(feature = "sql")]
mod sql;
mod tsfile;
mod tsfile_import;
mod verbose;
#[cfg(feature = "sql")]
mod worker;

/// Bazan: read Apache TsFile, and map, slice and check data lakes.
#[derive(Debug, Parser)]
#[command(name = "bazan", version, about, long_about = None)]
struct Cli {
    /// Print debug logging to stderr.
    #[arg(short, long, global = true)]
    verbose: bool,

    /// An option of the object store of a lake given by URL (s3://, gs://, az://, http(s)://),
    /// by object_store's key names: `aws_endpoint=http://127.0.0.1:9000`,
    /// `aws_allow_http=true`, `aws_region=…` (repeatable). The store's standard environment
    /// variables (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, GOOGLE_APPLICATION_CREDENTIALS,
    /// AZURE_STORAGE_ACCOUNT_NAME, …) apply first. A failed request is retried 4 times with
    /// exponential backoff, for at most 15 seconds.
    #[arg(long = "storage-option", value_name = "KEY=VALUE", global = true, value_parser = parse_storage_option)]
    storage_options: Vec<(String, String)>,

    /// Where the lake's map is kept when not beside the data (a local path or a URL): a
    /// local map of a lake in a read-only bucket, say.
    #[arg(long = "map", value_name = "PATH_OR_URL", global = true)]
    map_location: Option<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Read rows of one data file directly (no map).
    Read(read::ReadArgs),
    /// Build or print the Lake Map of a lake (`map create`, `map show`).
    Map(map::MapArgs),
    /// Find the file, local row and block of a global row.
    Locate(map::LocateArgs),
    /// Print global rows [start, start+len) of a lake, file by file.
    Slice(map::SliceArgs),
    /// Compare the map with the disk: healthy, modified, unindexed, missing.
    Doctor(doctor::DoctorArgs),
    /// Inspect, dump, query and check one TsFile (`tsfile info|dump|query|check`).
    Tsfile(tsfile::TsfileArgs),
    /// Run a SQL query over a lake (table `lake`) and more lakes or TsFiles (DataFusion).
    #[cfg(feature = "sql")]
    Sql(sql::SqlArgs),
    /// Serve a SQL worker for `bazan sql --workers` until Ctrl-C or SIGTERM.
    #[cfg(feature = "sql")]
    Worker(worker::WorkerArgs),
}

/// What a command reports back to `main`: success, or a problem it found and printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Everything is fine (exit 0).
    Ok,
    /// The command ran and found a problem it reported (exit 1).
    Problem,
}

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    verbose::init(cli.verbose);
    bazan::set_default_storage_options(cli.storage_options.iter().cloned().collect());
    map::set_map_location(cli.map_location.clone());
    match cli.command {
        Command::Read(args) => read::run(args),
        Command::Map(args) => map::run_map(args),
        Command::Locate(args) => map::run_locate(args),
        Command::Slice(args) => map::run_slice(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Tsfile(args) => tsfile::run(args),
        #[cfg(feature = "sql")]
        Command::Sql(args) => sql::run(args),
        #[cfg(feature = "sql")]
        Command::Worker(args) => worker::run(args),
    }
}

/// Runs the `bazan` command line with `args` (the first one is the program name) and
/// returns its exit code: 0 success, 1 a problem the command found and reported, 2 a usage
/// or input error (printed to stderr as one `error: …` line).
pub fn run_with_args<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    // A format library that panics on a malformed file yields an `error: …` line only.
    bazan::quiet_guarded_panics();
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            // --help and --version are not errors.
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return code;
        }
    };
    match run(cli) {
        Ok(Outcome::Ok) => 0,
        Ok(Outcome::Problem) => 1,
        Err(err) => {
            // One line, whatever the cause (DataFusion and flatbuffer messages have several).
            let text = format!("{err:#}");
            let parts: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!("error: {}", parts.join("; "));
            2
        }
    }
}

/// [`run_with_args`] with the process's arguments, as an exit code.
pub fn main_with_env_args() -> ExitCode {
    ExitCode::from(run_with_args(std::env::args_os()))
}

/// `KEY=VALUE` of `--storage-option`.
fn parse_storage_option(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("expected KEY=VALUE, got {text:?}")),
    }
}
