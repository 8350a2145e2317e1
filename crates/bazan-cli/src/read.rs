//! `bazan read FILE`: reads one data file directly (no map), with the locator chosen by the
//! file's extension or, for a file without a known extension, by its magic bytes.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use lake_locators::sniff::{self, Sniffed};
use lake_locators::{Locator, ReadRequest, registry};

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

/// The locator for `path`: by extension, else by magic bytes.
pub(crate) fn locator_for(path: &Path) -> anyhow::Result<Arc<dyn Locator>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if let Some(locator) = ext.as_deref().and_then(registry::for_extension) {
        return Ok(locator);
    }
    match sniff::sniff_path(path).map_err(locator_error)? {
        Some(Sniffed::TsFile) => bail!(
            "{}: this is a TsFile; use `bazan tsfile query` to read it",
            path.display()
        ),
        Some(found) => registry::for_extension(found.extension()).with_context(|| {
            format!(
                "{}: looks like {found:?}, but no locator for it is built in",
                path.display()
            )
        }),
        None => bail!(
            "{}: unknown format: the extension is not a data format and no magic bytes match",
            path.display()
        ),
    }
}

/// Runs `bazan read`.
pub(crate) fn run(args: ReadArgs) -> anyhow::Result<Outcome> {
    // A format library that panics on a malformed file yields an `error: …` line only.
    lake_locators::columnar::quiet_guarded_panics();
    let locator = locator_for(&args.file)?;
    let end = args
        .len
        .map_or(u64::MAX, |len| args.start.saturating_add(len));
    let request = ReadRequest {
        rows: args.start..end,
        blocks: None,
        schema: None,
        projection: args.columns.as_deref(),
        batch_size: 0,
    };
    let batches = locator.read(&args.file, &request).map_err(locator_error)?;
    let stdout = io::stdout().lock();
    let mut writer = RowWriter::new(args.format, io::BufWriter::new(stdout));
    for batch in batches {
        let batch = batch.map_err(locator_error)?;
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

/// A locator error as one line: its text already names the file and includes the cause, so
/// the cause chain is not printed a second time, and a library's multi-line message (a
/// flatbuffer verifier's trace, say) is joined with `; `.
pub(crate) fn locator_error(e: lake_locators::Error) -> anyhow::Error {
    let text = e.to_string();
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    anyhow::anyhow!("{}", parts.join("; "))
}

/// A closed pipe (`bazan read … | head`) is not an error; anything else is.
fn quiet_broken_pipe(e: io::Error) -> anyhow::Result<Outcome> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(Outcome::Ok)
    } else {
        Err(e).context("cannot write to stdout")
    }
}
