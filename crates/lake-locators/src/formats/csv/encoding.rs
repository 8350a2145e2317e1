//! The text encoding of delimited files: UTF-8 (the default, whose bytes are checked) or
//! Latin-1 (ISO-8859-1: every byte is a character, `0x80`–`0xFF` being U+0080–U+00FF).
//!
//! The record structure (quotes, delimiters, line ends) is ASCII in both, so a Latin-1 file's
//! checkpoints stay byte offsets of the file itself. Indexing a Latin-1 file that holds bytes
//! above `0x7F` transcodes it to UTF-8 in memory and runs the same scan (types inferred
//! alike; string bounds, as UTF-8 preserves code-point order, equal to Latin-1's byte
//! order), then maps the checkpoint and error offsets back to the file's bytes. Reading
//! seeks on the file's bytes and transcodes only the records it hands to arrow-csv.

use std::path::Path;

use arrow_array::RecordBatch;

use super::{EXTENSIONS, Header, Text, index_bytes, read_file, split, take, with_row};
use crate::error::{Error, Result};
use crate::locator::{BatchIter, FileIndex, IndexOptions, Locator, ReadRequest, RowsRequest};
use crate::text::encoding::{TextEncoding, latin1_to_utf8};
use crate::text::rowread::{block_starts, finish_blocks};
use crate::text::scan::FileBytes;

/// The file offsets of ascending offsets `utf8` into the UTF-8 transcoding of Latin-1 `raw`.
fn raw_offsets(raw: &[u8], utf8: &[u64]) -> Vec<u64> {
    let (mut r, mut u) = (0usize, 0u64);
    utf8.iter()
        .map(|&t| {
            while u < t && r < raw.len() {
                u += if raw[r] < 0x80 { 1 } else { 2 };
                r += 1;
            }
            r as u64
        })
        .collect()
}

/// The index of the (already line-end converted) bytes `data` of a file in `encoding`.
pub(super) fn index_text(
    path: &Path,
    data: &[u8],
    options: &IndexOptions,
    encoding: TextEncoding,
) -> Result<(Header, FileIndex)> {
    if encoding == TextEncoding::Utf8 || data.is_ascii() {
        return index_bytes(path, data, options);
    }
    let utf8 = latin1_to_utf8(data);
    match index_bytes(path, &utf8, options) {
        Ok((h, mut index)) => {
            // Every byte position of the index, in file order: each block's start, then its
            // fine checkpoints (offsets from that start), moved from the transcoding to the
            // file. A fine checkpoint left in UTF-8 bytes would send a read past a row start.
            let at: Vec<u64> = index
                .blocks
                .iter()
                .flat_map(block_starts)
                .map(|(_, byte)| byte)
                .collect();
            let mut raw = raw_offsets(data, &at).into_iter();
            for b in &mut index.blocks {
                if b.first_byte.is_some() {
                    let first = raw.next().unwrap_or(data.len() as u64);
                    b.first_byte = Some(first);
                    // The same positions, in the order `block_starts` gave them.
                    if let Some(fine) = b.fine.as_mut().filter(|f| f.rows > 0) {
                        for off in &mut fine.bytes {
                            *off = raw
                                .next()
                                .unwrap_or(data.len() as u64)
                                .saturating_sub(first);
                        }
                    }
                }
            }
            finish_blocks(&mut index.blocks, index.row_count, data.len() as u64);
            Ok((h, index))
        }
        Err(e) => {
            let mut e = with_row(path, &utf8, e);
            if let Error::Malformed {
                offset: Some(at), ..
            } = &mut e
            {
                *at = raw_offsets(data, &[*at])[0];
            }
            Err(e)
        }
    }
}

/// The locator of the delimited formats in a given text encoding (the registry's built-in
/// [`super::DelimitedLocator`] reads UTF-8). Its name, extensions and formats are the
/// built-in one's, so a map reads the files it indexed with either.
#[derive(Debug, Clone, Copy, Default)]
pub struct DelimitedTextLocator {
    encoding: TextEncoding,
}

impl DelimitedTextLocator {
    /// A locator reading delimited text in `encoding`.
    pub fn new(encoding: TextEncoding) -> Self {
        DelimitedTextLocator { encoding }
    }

    /// The encoding it reads.
    pub fn encoding(&self) -> TextEncoding {
        self.encoding
    }
}

impl Locator for DelimitedTextLocator {
    fn name(&self) -> &str {
        "csv"
    }

    fn infers_schema(&self) -> bool {
        true
    }

    fn with_text_encoding(&self, encoding: TextEncoding) -> Option<std::sync::Arc<dyn Locator>> {
        Some(std::sync::Arc::new(DelimitedTextLocator::new(encoding)))
    }

    fn extensions(&self) -> &[&str] {
        EXTENSIONS
    }

    fn reads_whole_file(&self) -> bool {
        true
    }

    fn byte_layout(&self) -> Option<crate::ByteLayout> {
        Some(crate::ByteLayout::HEAD_AND_BLOCKS)
    }

    fn formats(&self) -> &[&str] {
        EXTENSIONS
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        if self.encoding == TextEncoding::Utf8 {
            return super::DelimitedLocator.index(path, options);
        }
        // A Latin-1 file is scanned by one thread (the split scan checks UTF-8), unless it
        // is ASCII.
        let data = Text::new(FileBytes::open_whole(path)?);
        if data.is_ascii()
            && let Some(index) = split::index_split(path, options)?
        {
            return Ok(index);
        }
        index_text(path, &data, options, self.encoding)
            .map(|(_, index)| index)
            .map_err(|e| with_row(path, &data, e))
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        read_file(path, request, self.encoding)
    }

    fn read_rows(&self, path: &Path, request: &RowsRequest<'_>) -> Result<Vec<RecordBatch>> {
        take::read_rows(path, request, self.encoding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_back_to_the_file() {
        let raw = b"a\xe9b\xff\xfec";
        // UTF-8: a C3 A9 b C3 BF C3 BE c
        assert_eq!(
            raw_offsets(raw, &[0, 1, 3, 4, 8, 9]),
            vec![0, 1, 2, 3, 5, 6]
        );
    }
}
