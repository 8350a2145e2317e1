//! `bazan read FILE`: reads one data file directly (no map) with the handler `map create`
//! would index it with ([`bazan::read_file`]): by the file's extension (`.tsfile` included)
//! or, for a file without a known extension, by its magic bytes.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Context;
use bazan::ReadOptions;

use crate::Outcome;
use crate::output::{Format, RowWriter};

/// Arguments of `bazan read`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReadArgs {
    /// The data file.
    pub(crate) file: PathBuf,
    /// First local row to print (0-based).
    #[arg(long, default_value_t = 0)]
    pub(crate) start: u64,
    /// Rows to print (default: to the end of the file).
    #[arg(long)]
    pub(crate) len: Option<u64>,
    /// Columns to print, in this order (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub(crate) columns: Option<Vec<String>>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
}

/// Runs `bazan read`.
pub(crate) fn run(args: ReadArgs) -> anyhow::Result<Outcome> {
    let options = ReadOptions {
        start: args.start,
        len: args.len,
        columns: args.columns,
    };
    let batches = bazan::read_file(&args.file, &options)?;
    let stdout = io::stdout().lock();
    let mut writer = RowWriter::new(args.format, io::BufWriter::new(stdout));
    for batch in batches {
        let batch = batch.map_err(bazan::Error::from)?;
        if let Err(e) = writer.write_batch(&batch) {
            return quiet_broken_pipe(e);
        }
    }
    match writer.finish() {
        Ok(mut out) => match out.flush() {
            Ok(()) => Ok(Outcome::Ok),
            Err(e) => quiet_broken_pipe(e),
        },
        Err(e) => quiet_broken_pipe(e),
    }
}

/// A closed pipe (`bazan read … | head`) is not an error; anything else is.
pub(crate) fn quiet_broken_pipe(e: io::Error) -> anyhow::Result<Outcome> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(Outcome::Ok)
    } else {
        Err(e).context("cannot write to stdout")
    }
}
