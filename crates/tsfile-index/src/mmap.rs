//! The one place that memory-maps a file.
//!
//! Mapping is the fastest way to read a TsFile: chunks are sliced out of the mapping without a
//! copy. It is also the one `unsafe` operation of this crate. `memmap2::Mmap::map` is unsafe
//! because the mapping's contents change if another process truncates or rewrites the file
//! while it is mapped; truncation can even raise `SIGBUS` on access. TsFiles are written once
//! and closed (the tail magic proves it), so readers of closed files are safe in practice;
//! callers that read files still being written should use [`std::fs::File`] through
//! [`crate::io::ChunkReader`] instead.

use std::fs::File;
use std::path::Path;

use bytes::Bytes;

use crate::error::{Error, Result};

/// Maps the whole file at `path` read-only and returns it as shared [`Bytes`], so every range
/// handed out by [`crate::io::ChunkReader`] is a zero-copy slice of the mapping.
///
/// Empty files cannot be mapped on every platform, so they come back as empty bytes.
pub fn map_file(path: &Path) -> Result<Bytes> {
    let file = File::open(path).map_err(|source| Error::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let len = file
        .metadata()
        .map_err(|source| Error::Open {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    if len == 0 {
        return Ok(Bytes::new());
    }
    // SAFETY: the mapping is read-only and private to this process; the risk of another
    // process modifying the file while it is mapped is documented at the top of this module.
    let mmap = unsafe { memmap2::Mmap::map(&file) }.map_err(|source| Error::Open {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(Bytes::from_owner(mmap))
}
