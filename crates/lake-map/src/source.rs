//! Where the bytes of a map's entries come from. By default they are the files under the
//! lake root, checked against their entries by size and mtime before every read
//! ([`LakeMap::check_fresh`]). A lake kept elsewhere (an object store) gives its map an
//! [`EntrySource`], which checks each entry its own way and makes the bytes a read needs
//! available at a local path before the entry's locator reads them.

use std::ops::Range;
use std::path::PathBuf;

use lake_locators::{Block, ByteLayout};

use crate::error::Result;

/// What a read of an entry is about to touch.
#[derive(Debug, Clone, Copy)]
pub struct ReadNeed<'a> {
    /// The local row ranges the read wants (sorted; may be empty).
    pub rows: &'a [Range<u64>],
    /// The entry's stored blocks (empty when it has none).
    pub blocks: &'a [Block],
    /// The entry's format's byte layout (`None`: a read may touch any byte).
    pub layout: Option<ByteLayout>,
}

/// The facts of one entry a source needs.
#[derive(Debug, Clone, Copy)]
pub struct SourceEntry<'a> {
    /// Position of the entry in map order.
    pub index: usize,
    /// Path relative to the lake root, `/`-separated.
    pub path: &'a str,
    /// Size in bytes when indexed.
    pub size_bytes: u64,
    /// The ETag stored for the entry (maps of object-store lakes).
    pub etag: Option<&'a str>,
}

/// The bytes of a map's entries, when they are not files under its root.
pub trait EntrySource: Send + Sync + std::fmt::Debug {
    /// The source as `Any`, for its owner to find its own type again.
    fn as_any(&self) -> &dyn std::any::Any;

    /// Makes `entry` ready to read at a local path, which it returns: checks that the entry
    /// still describes the data (a changed or missing one is [`crate::Error::Stale`] naming
    /// it) and, with `need`, makes at least the bytes that read needs available there.
    /// Without `need` it only checks.
    fn prepare(&self, entry: SourceEntry<'_>, need: Option<ReadNeed<'_>>) -> Result<PathBuf>;
}
