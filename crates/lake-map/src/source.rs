//! Where the bytes of a map's entries come from. By default they are the files under the
//! lake root, checked against their entries by size and mtime before every read
//! ([`LakeMap::check_fresh`]). A lake kept elsewhere (an object store) gives its map an
//! [`EntrySource`], which checks each entry its own way and makes the bytes a read needs
//! available at a local path before the entry's locator reads them.

use std::ops::Range;
use std::path::PathBuf;

use lake_locators::{Block, ByteLayout};

use crate::error::Result;
use crate::lake_map::LakeMap;

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

/// The bytes of a map's entries, when they are not files under its root.
pub trait EntrySource: Send + Sync + std::fmt::Debug {
    /// The source as `Any`, for its owner to find its own type again.
    fn as_any(&self) -> &dyn std::any::Any;

    /// Makes entry `i` of `map` ready to read at a local path, which it returns: checks that
    /// the entry still describes the data (a changed or missing one is [`crate::Error::Stale`]
    /// naming it) and, with `need`, makes at least the bytes that read needs available there.
    /// Without `need` it only checks.
    fn prepare(&self, map: &LakeMap, i: usize, need: Option<ReadNeed<'_>>) -> Result<PathBuf>;
}

impl LakeMap {
    /// Entry `i` ready for a read of its local row ranges `rows` by `layout`'s format: the
    /// stale check and, for a lake with an [`EntrySource`], the bytes fetched. Returns the path
    /// to read.
    pub fn prepare_read(
        &self,
        i: usize,
        rows: &[Range<u64>],
        layout: Option<ByteLayout>,
    ) -> Result<PathBuf> {
        match self.source() {
            None => self.check_fresh(i),
            Some(source) => {
                let blocks = self.blocks(i)?;
                source.prepare(
                    self,
                    i,
                    Some(ReadNeed {
                        rows,
                        blocks: &blocks,
                        layout,
                    }),
                )
            }
        }
    }
}
