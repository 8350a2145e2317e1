//! Reading one data file directly, without a map: the locator is the handler `map create`
//! would index the file with (a handler registered at run time for its extension, the
//! `.tsfile` handler, a built-in locator) or, for a file without a known extension, the one
//! of the format its magic bytes show.

use std::path::Path;
use std::sync::Arc;

use lake_locators::sniff;
use lake_locators::{BatchIter, Locator, ReadRequest};

use crate::error::{Error, ErrorKind, Result};
use crate::handlers::handlers;

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

/// The locator of `path` among the handlers of this process ([`crate::handlers`]: the
/// built-in locators, `.tsfile`, the handlers registered at run time): by extension, else by
/// magic bytes.
pub fn locator_for(path: &Path) -> Result<Arc<dyn Locator>> {
    let registry = handlers();
    if let Some(handler) = registry.for_path(path) {
        log::debug!(
            "{}: read by the {} handler{}",
            path.display(),
            handler.locator.name(),
            if handler.dynamic { " (registered)" } else { "" }
        );
        return Ok(handler.locator);
    }
    let extension = match sniff::sniff_path(path)? {
        Some(found) => found.extension(),
        None => {
            return Err(Error::new(
                ErrorKind::UnsupportedFormat,
                format!(
                    "{}: unknown format: the extension is not a data format and no magic bytes match",
                    path.display()
                ),
            ));
        }
    };
    log::debug!("{}: magic bytes of .{extension}", path.display());
    registry
        .for_extension(extension)
        .map(|h| h.locator)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::UnsupportedFormat,
                format!(
                    "{}: looks like .{extension}, but no handler reads it",
                    path.display()
                ),
            )
        })
}

/// Reads rows of one file into Arrow record batches (schema inferred from the whole file for
/// schemaless formats, as a map would store it).
pub fn read_file(path: &Path, options: &ReadOptions) -> Result<BatchIter> {
    if let Some(url) = path
        .to_str()
        .filter(|s| crate::remote::is_url(s) && crate::remote::local_path(s).is_none())
    {
        let (guard, local) = crate::remote::fetch_file(url)?;
        let batches = read_file(&local, options).map_err(|e| e.at(Path::new(url)))?;
        // The fetched copy lives as long as the batches are read.
        return Ok(Box::new(batches.inspect(move |_| {
            let _ = &guard;
        })));
    }
    if let Some(local) = path.to_str().and_then(crate::remote::local_path) {
        return read_file(&local, options);
    }
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
