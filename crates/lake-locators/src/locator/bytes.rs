//! Which bytes of a file a read touches, so that a file far away (an object in a bucket) is
//! fetched by ranges instead of whole: [`ByteLayout`] is a format's property
//! ([`crate::Locator::byte_layout`]), and [`read_ranges`] turns it, with a file's stored
//! blocks, into the byte ranges a read of some of its rows needs.

use std::ops::Range;
use std::sync::Arc;

use super::Block;

/// Reads a byte range of a file that is not on this machine (an object in a bucket): what
/// [`crate::Locator::index_ranged`] reads through.
pub type RangeRead = Arc<dyn Fn(Range<u64>) -> std::io::Result<bytes::Bytes> + Send + Sync>;

/// Where a block's stored bytes end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockEnd {
    /// At the next block's `first_byte` (the last block: at the end of the file, or where the
    /// tail starts). The row formats' checkpoints, Avro data blocks.
    NextBlock,
    /// At `first_byte + total_byte_size` (ORC stripes, Arrow IPC batches).
    Total,
    /// At `first_byte + compressed_size` (Parquet row groups: their column chunks).
    Compressed,
}

/// The parts of a file a read of some of its blocks touches: the blocks themselves, plus a
/// head (the bytes before the first block: a CSV header line, an Avro or Arrow IPC schema
/// and dictionaries) and a tail (the bytes after the last block: a Parquet footer and page
/// index, an ORC or Arrow IPC file footer) when the format says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteLayout {
    /// The bytes before the first block are read too.
    pub head: bool,
    /// The bytes after the last block are read too.
    pub tail: bool,
    /// Where a block ends.
    pub block_end: BlockEnd,
}

impl ByteLayout {
    /// Blocks after a head, nothing after the last block (row formats, Avro, Arrow streams).
    pub const HEAD_AND_BLOCKS: ByteLayout = ByteLayout {
        head: true,
        tail: false,
        block_end: BlockEnd::NextBlock,
    };
}

/// The byte ranges of a file of `size` bytes that a read of its local rows `rows` touches,
/// given its stored `blocks` and its format's `layout`: sorted, disjoint, neighbours merged.
/// `None` when the blocks lack the byte positions this needs (the whole file is needed
/// then). Fine checkpoints narrow the first and last touched block of a row format to the
/// checkpoints around the wanted rows.
pub fn read_ranges(
    layout: &ByteLayout,
    size: u64,
    blocks: &[Block],
    rows: Range<u64>,
) -> Option<Vec<Range<u64>>> {
    if blocks.is_empty() {
        return None;
    }
    let mut starts = Vec::with_capacity(blocks.len());
    for b in blocks {
        starts.push(b.first_byte?.min(size));
    }
    let end_of = |i: usize| -> Option<u64> {
        let b = &blocks[i];
        let end = match layout.block_end {
            BlockEnd::NextBlock => match starts.get(i + 1) {
                Some(&next) => next,
                None => size,
            },
            BlockEnd::Total => starts[i].checked_add(b.total_byte_size?)?,
            BlockEnd::Compressed => starts[i].checked_add(b.compressed_size?)?,
        };
        Some(end.clamp(starts[i], size))
    };
    let mut out: Vec<Range<u64>> = Vec::new();
    if layout.head {
        let first = starts.iter().copied().min().unwrap_or(0);
        out.push(0..first);
    }
    if rows.start < rows.end {
        for (i, b) in blocks.iter().enumerate() {
            let have = b.row_range();
            if have.end <= rows.start || have.start >= rows.end || b.row_count == 0 {
                continue;
            }
            // A Parquet row group with page locations: each chunk's dictionary page and
            // the data pages holding the rows, not the whole group.
            if layout.block_end == BlockEnd::Compressed
                && let Some(pages) = page_ranges(
                    b,
                    rows.start.max(have.start) - have.start..rows.end.min(have.end) - have.start,
                )
            {
                out.extend(pages);
                continue;
            }
            let mut start = starts[i];
            let mut end = end_of(i)?;
            if let Some(fine) = b.fine.as_ref().filter(|f| f.rows > 0) {
                // fine.bytes[j] is the offset of the block's row (j + 1) * rows.
                if rows.start > have.start {
                    let k = (rows.start - have.start) / fine.rows;
                    if k >= 1
                        && let Some(&off) = fine.bytes.get(k as usize - 1)
                    {
                        start = (starts[i] + off).min(end);
                    }
                }
                if rows.end < have.end {
                    let j = (rows.end - 1 - have.start) / fine.rows;
                    if let Some(&off) = fine.bytes.get(j as usize) {
                        end = (starts[i] + off).clamp(start, end);
                    }
                }
            }
            out.push(start..end);
        }
    }
    if layout.tail {
        let mut data_end = 0;
        for i in 0..blocks.len() {
            data_end = data_end.max(end_of(i)?);
        }
        out.push(data_end..size);
    }
    Some(merge_ranges(out, 0))
}

/// The byte ranges of Parquet row group `b` that a read of its rows `rows` (counted from
/// the group's first row) touches, by the page locations of its column chunks (the
/// OffsetIndex): each chunk's bytes before its first data page (the dictionary page) and
/// the data pages holding one of the rows, which is what a reader with that row selection
/// and the page index reads. `None` when a chunk has no page locations or one that lies
/// outside the chunk (the whole group is read then).
fn page_ranges(b: &Block, rows: Range<u64>) -> Option<Vec<Range<u64>>> {
    let columns = b.columns.as_ref().filter(|c| !c.is_empty())?;
    let mut out = Vec::new();
    for c in columns {
        let pages = c.page_locations.as_ref().filter(|p| !p.is_empty())?;
        let chunk = c.first_byte..c.first_byte.checked_add(c.compressed_size)?;
        let first = u64::try_from(pages[0].offset).ok()?;
        if first < chunk.start || first > chunk.end {
            return None;
        }
        out.push(chunk.start..first);
        for (j, p) in pages.iter().enumerate() {
            let from = u64::try_from(p.first_row_index).ok()?;
            let to = match pages.get(j + 1) {
                Some(next) => u64::try_from(next.first_row_index).ok()?,
                None => b.row_count,
            };
            let at = u64::try_from(p.offset).ok()?;
            let end = at.checked_add(u64::try_from(p.compressed_page_size).ok()?)?;
            if at < chunk.start || end > chunk.end {
                return None;
            }
            if to > rows.start && from < rows.end {
                out.push(at..end);
            }
        }
    }
    Some(out)
}

/// Sorts `ranges`, drops empty ones and merges those closer than `gap` bytes.
pub fn merge_ranges(mut ranges: Vec<Range<u64>>, gap: u64) -> Vec<Range<u64>> {
    ranges.retain(|r| r.start < r.end);
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(gap) => {
                last.end = last.end.max(r.end);
            }
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod testing {
    //! A [`RangeRead`] for the ranged indexes' tests.

    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::RangeRead;

    /// Requests and bytes a [`RangeRead`] served.
    #[derive(Default)]
    pub(crate) struct Counts {
        pub(crate) requests: AtomicU64,
        pub(crate) bytes: AtomicU64,
    }

    /// A [`RangeRead`] over `data` that counts what it serves and refuses ranges past the end.
    pub(crate) fn counting(data: bytes::Bytes) -> (RangeRead, Arc<Counts>) {
        let counts = Arc::new(Counts::default());
        let seen = Arc::clone(&counts);
        let read: RangeRead = Arc::new(move |r: std::ops::Range<u64>| {
            seen.requests.fetch_add(1, Ordering::Relaxed);
            seen.bytes.fetch_add(r.end - r.start, Ordering::Relaxed);
            data.get(r.start as usize..r.end as usize)
                .map(bytes::Bytes::copy_from_slice)
                .ok_or_else(|| std::io::Error::other(format!("range {r:?} is past the end")))
        });
        (read, counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FineCheckpoints;

    fn checkpoints(starts: &[u64], rows: u64) -> Vec<Block> {
        starts
            .iter()
            .enumerate()
            .map(|(i, &s)| Block {
                row_count: rows,
                ..Block::checkpoint(i as u64, i as u64 * rows, s)
            })
            .collect()
    }

    #[test]
    fn row_format_reads_head_and_touched_blocks_only() {
        let blocks = checkpoints(&[10, 100, 200, 300], 10);
        let got = read_ranges(&ByteLayout::HEAD_AND_BLOCKS, 400, &blocks, 12..15).unwrap();
        assert_eq!(got, vec![0..10, 100..200]);
        let got = read_ranges(&ByteLayout::HEAD_AND_BLOCKS, 400, &blocks, 25..40).unwrap();
        assert_eq!(got, vec![0..10, 200..400]);
    }

    #[test]
    fn fine_checkpoints_narrow_the_span() {
        let mut blocks = checkpoints(&[0, 1000], 100);
        blocks[0].fine = Some(FineCheckpoints {
            rows: 10,
            bytes: (1..10).map(|k| k * 100).collect(),
        });
        // Rows 35..47 lie between the checkpoints of rows 30 (byte 300) and 50 (byte 500).
        let got = read_ranges(&ByteLayout::HEAD_AND_BLOCKS, 2000, &blocks, 35..47).unwrap();
        assert_eq!(got, vec![300..500]);
        // Up to the block's last row: to the next block.
        let got = read_ranges(&ByteLayout::HEAD_AND_BLOCKS, 2000, &blocks, 95..100).unwrap();
        assert_eq!(got, vec![900..1000]);
    }

    #[test]
    fn footer_formats_read_the_tail() {
        let mut blocks = checkpoints(&[4, 50], 10);
        blocks[0].compressed_size = Some(46);
        blocks[1].compressed_size = Some(40);
        let layout = ByteLayout {
            head: false,
            tail: true,
            block_end: BlockEnd::Compressed,
        };
        let got = read_ranges(&layout, 200, &blocks, 0..3).unwrap();
        assert_eq!(got, vec![4..50, 90..200]);
    }

    #[test]
    fn parquet_reads_the_dictionary_and_the_pages_of_the_rows() {
        use crate::{ColumnChunk, PageLocation};
        let page = |offset: i64, first_row_index: i64| PageLocation {
            offset,
            compressed_page_size: 100,
            first_row_index,
        };
        // One row group of 300 rows at byte 4: column a (dictionary 4..50, pages of 100
        // rows at 50, 150, 250), column b (no dictionary, pages at 350, 450, 550).
        let mut blocks = checkpoints(&[4], 300);
        blocks[0].compressed_size = Some(646);
        blocks[0].columns = Some(vec![
            ColumnChunk {
                path: "a".into(),
                first_byte: 4,
                compressed_size: 346,
                page_locations: Some(vec![page(50, 0), page(150, 100), page(250, 200)]),
            },
            ColumnChunk {
                path: "b".into(),
                first_byte: 350,
                compressed_size: 300,
                page_locations: Some(vec![page(350, 0), page(450, 100), page(550, 200)]),
            },
        ]);
        let layout = ByteLayout {
            head: false,
            tail: true,
            block_end: BlockEnd::Compressed,
        };
        let got = read_ranges(&layout, 800, &blocks, 120..130).unwrap();
        assert_eq!(got, vec![4..50, 150..250, 450..550, 650..800]);
        let got = read_ranges(&layout, 800, &blocks, 99..101).unwrap();
        assert_eq!(got, vec![4..250, 350..550, 650..800]);
        // A page outside its chunk: the whole group.
        if let Some(c) = blocks[0].columns.as_mut() {
            c[1].page_locations = Some(vec![page(900, 0)]);
        }
        let got = read_ranges(&layout, 1000, &blocks, 120..130).unwrap();
        assert_eq!(got, vec![4..1000]);
    }

    #[test]
    fn missing_positions_mean_the_whole_file() {
        let blocks = vec![Block::rows(0, 0, 10)];
        assert_eq!(
            read_ranges(&ByteLayout::HEAD_AND_BLOCKS, 10, &blocks, 0..1),
            None
        );
        let mut sized = checkpoints(&[0], 10);
        sized[0].total_byte_size = None;
        let layout = ByteLayout {
            head: true,
            tail: true,
            block_end: BlockEnd::Total,
        };
        assert_eq!(read_ranges(&layout, 10, &sized, 0..1), None);
    }

    #[test]
    fn merge_joins_close_ranges() {
        assert_eq!(
            merge_ranges(vec![10..20, 0..5, 22..30, 40..40], 2),
            vec![0..5, 10..30]
        );
    }
}
