//! Statistics of an Arrow IPC file's columns (map creation with statistics on): its record
//! batches decoded in place from a memory map, the wanted columns only, folded into min/max.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use arrow_array::RecordBatch;
use arrow_ipc::reader::FileDecoder;
use arrow_schema::{DataType, Schema, SchemaRef};

use super::{FILE_FORMAT, Footer, FooterBlock, Src, check_block, lib};
use crate::error::{Error, Result};
use crate::locator::{Stats, StatsColumns};
use crate::stats::StatsBuilder;
use crate::text::scan::{FileBytes, Prefetcher};

/// The statistics of the columns of `footer`'s file (`file`, `len` bytes at `path`) that
/// `wanted` asks for and that have statistics (Int64, Float64, Utf8, LargeUtf8).
pub(super) fn file_stats(
    path: &Path,
    file: &File,
    len: u64,
    footer: &Footer,
    wanted: &StatsColumns,
) -> Result<Stats> {
    let schema = &footer.schema;
    let cols = stats_projection(schema, wanted);
    if cols.is_empty() {
        return Ok(Default::default());
    }
    // Decoded straight from a memory map: the batches' buffers are slices of the map, nothing
    // is copied.
    let map = FileBytes::open(path)?;
    let bytes = map.to_buffer();
    if bytes.len() as u64 != len {
        return Err(Error::malformed(
            path,
            FILE_FORMAT,
            "the file changed size while it was being indexed",
        ));
    }
    // Every message is checked before arrow-ipc decodes it: the dictionaries here, each batch
    // from the map once its run's pages are in (a header read is then no kernel call).
    footer.check(path, file.into(), len, 0..0)?;
    // The readers report the whole file schema; the batches hold the projection.
    let projected = Arc::new(
        schema
            .project(&cols)
            .map_err(|e| Error::Schema(e.to_string()))?,
    );
    // The footer blocks were checked to lie inside the file.
    let message = |b: &FooterBlock| {
        let block = arrow_ipc::Block::new(b.offset as i64, b.meta_len as i32, b.body_len as i64);
        let data = bytes.slice_with_length(b.offset as usize, (b.meta_len + b.body_len) as usize);
        (block, data)
    };
    let mut decoder = FileDecoder::new(schema.clone(), footer.version).with_projection(cols);
    for b in &footer.dictionaries {
        let (block, data) = message(b);
        decoder
            .read_dictionary(&block, &data)
            .map_err(|e| lib(path, FILE_FORMAT, e))?;
    }
    let mut builder = StatsBuilder::new(&projected, wanted);
    // Batches in runs of about STATS_RUN_BYTES: each run's pages are mapped in one call before
    // its batches are decoded, and dropped from this process in one call after (the page cache
    // keeps them), so the resident set stays one run whatever the file's size. Batch by batch,
    // 2,560 batches of 37 KB spent over half their time in the kernel: page faults, and a TLB
    // shootdown per dropped batch.
    let runs = stats_runs(&footer.blocks);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| -> Result<()> {
        // The disk reads the next runs while this thread decodes one (from a cold cache each
        // run otherwise waited for its pages, readahead window by window: 0.9-1.1 s for the
        // 895 MB file that takes 0.48 s warm).
        let ahead = Prefetcher::start(scope, &map, &stop);
        for r in runs.iter().take(RUNS_AHEAD) {
            ahead.ask(r.span.clone());
        }
        for (k, run) in runs.iter().enumerate() {
            if let Some(next) = runs.get(k + RUNS_AHEAD) {
                ahead.ask(next.span.clone());
            }
            map.populate(run.span.clone());
            for b in &footer.blocks[run.blocks.clone()] {
                check_block(path, Src::Mapped(&map[..]), len, b)?;
            }
            for b in &footer.blocks[run.blocks.clone()] {
                let (block, data) = message(b);
                let batch = decoder
                    .read_record_batch(&block, &data)
                    .map_err(|e| lib(path, FILE_FORMAT, e))?;
                if let Some(batch) = batch {
                    builder.update(&batch);
                }
            }
            map.release(run.span.clone());
        }
        Ok(())
    })?;
    Ok(builder.finish())
}

/// Statistics from decoded batches of the wanted columns only.
pub(super) fn data_stats(
    schema: &SchemaRef,
    wanted: &StatsColumns,
    batches: impl Iterator<Item = Result<RecordBatch>>,
) -> Result<crate::locator::Stats> {
    let mut builder = StatsBuilder::new(schema, wanted);
    for batch in batches {
        builder.update(&batch?);
    }
    Ok(builder.finish())
}

/// Runs asked of the disk ahead of the one decoded (32 MiB).
const RUNS_AHEAD: usize = 4;

/// Bytes of record batches whose pages the statistics pass maps and drops at once (8 MiB):
/// few kernel calls, and a resident set bounded whatever the file's size.
const STATS_RUN_BYTES: u64 = 8 << 20;

/// A run of consecutive footer blocks and the file bytes they span.
#[derive(Debug, PartialEq)]
struct StatsRun {
    blocks: std::ops::Range<usize>,
    span: std::ops::Range<usize>,
}

/// `blocks` (checked to lie inside the file) cut into runs of at most [`STATS_RUN_BYTES`]
/// of span each (a single larger batch is a run of its own).
fn stats_runs(blocks: &[FooterBlock]) -> Vec<StatsRun> {
    let mut runs: Vec<StatsRun> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let (lo, hi) = (b.offset, b.offset + b.meta_len + b.body_len);
        if let Some(r) = runs.last_mut() {
            let (start, end) = (r.span.start.min(lo as usize), r.span.end.max(hi as usize));
            if (end - start) as u64 <= STATS_RUN_BYTES {
                r.blocks.end = i + 1;
                r.span = start..end;
                continue;
            }
        }
        runs.push(StatsRun {
            blocks: i..i + 1,
            span: lo as usize..hi as usize,
        });
    }
    runs
}

/// Columns that need statistics, as file column indices.
pub(super) fn stats_projection(schema: &Schema, wanted: &StatsColumns) -> Vec<usize> {
    schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            wanted.wants(f.name())
                && matches!(
                    f.data_type(),
                    DataType::Int64 | DataType::Float64 | DataType::Utf8 | DataType::LargeUtf8
                )
        })
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(offset: u64, len: u64) -> FooterBlock {
        FooterBlock {
            offset,
            meta_len: 8,
            body_len: len - 8,
        }
    }

    #[test]
    fn runs_cover_every_block_once_within_the_bound() {
        let mib = 1 << 20;
        // Three 3 MiB batches, one 20 MiB batch, two 1 MiB batches, then one written earlier
        // in the file than the one before it.
        let blocks = vec![
            block(8, 3 * mib),
            block(8 + 3 * mib, 3 * mib),
            block(8 + 6 * mib, 3 * mib),
            block(8 + 9 * mib, 20 * mib),
            block(8 + 29 * mib, mib),
            block(8 + 30 * mib, mib),
            block(8 + 3 * mib, mib),
        ];
        let runs = stats_runs(&blocks);
        let got: Vec<_> = runs.iter().map(|r| r.blocks.clone()).collect();
        assert_eq!(got, vec![0..2, 2..3, 3..4, 4..6, 6..7]);
        let m = mib as usize;
        assert_eq!(runs[0].span, 8..8 + 6 * m);
        assert_eq!(runs[2].span, 8 + 9 * m..8 + 29 * m);
        assert_eq!(runs[3].span, 8 + 29 * m..8 + 31 * m);
        for r in &runs {
            for b in &blocks[r.blocks.clone()] {
                assert!(r.span.start <= b.offset as usize);
                assert!((b.offset + b.meta_len + b.body_len) as usize <= r.span.end);
            }
            assert!(r.blocks.len() == 1 || r.span.len() as u64 <= STATS_RUN_BYTES);
        }
        assert!(stats_runs(&[]).is_empty());
    }
}
