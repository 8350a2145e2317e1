//! Reading one data file directly, without a map: the locator is chosen by the file's
//! extension or, for a file without a known extension, by its magic bytes.

use std::path::Path;
use std::sync::Arc;

use lake_locators::sniff::{self, Sniffed};
use lake_locators::{BatchIter, Locator, ReadRequest, registry};

use crate::error::{Error, ErrorKind, Result};

/// Which rows and columns of a file to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// First local row (0-based).
    pub start: u64,
    /// Rows to read (`None`: to the end of the file).
    pub len: Option<u64>,
    /// Columns, in this order (`None`: every column).
    pub columns: Option<Vec<String>>,
}

/// The built-in locator of `path`: by extension, else by magic bytes.
pub fn locator_for(path: &Path) -> Result<Arc<dyn Locator>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if let Some(locator) = ext.as_deref().and_then(registry::for_extension) {
        return Ok(locator);
    }
    match sniff::sniff_path(path)? {
        Some(Sniffed::TsFile) => Err(Error::new(
            ErrorKind::UnsupportedFormat,
            format!(
                "{}: this is a TsFile; use `bazan tsfile query` to read it",
                path.display()
            ),
        )),
        Some(found) => registry::for_extension(found.extension()).ok_or_else(|| {
            Error::new(
                ErrorKind::UnsupportedFormat,
                format!(
                    "{}: looks like {found:?}, but no locator for it is built in",
                    path.display()
                ),
            )
        }),
        None => Err(Error::new(
            ErrorKind::UnsupportedFormat,
            format!(
                "{}: unknown format: the extension is not a data format and no magic bytes match",
                path.display()
            ),
        )),
    }
}

/// Reads rows of one file into Arrow record batches (schema inferred from the whole file for
/// schemaless formats, as a map would store it).
pub fn read_file(path: &Path, options: &ReadOptions) -> Result<BatchIter> {
    let locator = locator_for(path)?;
    let end = options
        .len
        .map_or(u64::MAX, |len| options.start.saturating_add(len));
    let request = ReadRequest {
        rows: options.start..end,
        blocks: None,
        schema: None,
        projection: options.columns.as_deref(),
        batch_size: 0,
    };
    Ok(locator.read(path, &request)?)
}
