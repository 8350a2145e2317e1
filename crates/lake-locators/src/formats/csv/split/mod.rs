//! A large delimited file indexed on every thread of the caller's pool (see
//! [`crate::text::split`] for the plan and why the result is exactly a sequential scan's):
//! ranges start at the first line feed outside quotes after each nominal boundary, the quote
//! state coming from a parity pass; each range is scanned by the same loop as a whole file
//! ([`super::body::scan_body`]) and must end, without an error, on the line feed before the next range.

use std::ops::Range;
use std::path::Path;

use crate::error::Result;
use crate::locator::{Block, FileIndex, IndexOptions};
use crate::simd::{CSV, Kernel, Window};
use crate::text::blocks::{SplitBounds, map_fine, regroup};
use crate::text::scan::{FileBytes, check_utf8_at};
use crate::text::skip::skip_records;
use crate::text::split::{
    self, RangeScanner, SAMPLE, Samples, Scanned, chunk_len, csv_record_start, fine_stride,
    guess_quote_state, nominal_bounds, prefetch_bounds, quote_parities, ranges, release_around,
};

use super::body::scan_body;
#[cfg(test)]
use super::index_bytes;
use super::{Header, assemble, cr_line_ends, header};

/// The index of `path` built on every thread, or `None` when the file is read whole by one
/// thread: a file [`crate::text::split::open_split`] leaves whole, a file of lone carriage
/// returns (read from a converted copy), or a split that failed its checks (a wrong guess or
/// an error in the file, which the sequential scan then reports).
pub(super) fn index_split(path: &Path, options: &IndexOptions) -> Result<Option<FileIndex>> {
    split::index_split(path, options, |file, _, threads| {
        index_file(path, file, options, threads)
    })
}

/// [`index_split`] over the mapped `file`, split for `threads` threads.
pub(super) fn index_file(
    path: &Path,
    file: &FileBytes,
    options: &IndexOptions,
    threads: usize,
) -> Result<Option<FileIndex>> {
    let data: &[u8] = file;
    if cr_line_ends(data) {
        return Ok(None);
    }
    let Ok(h) = header(path, data) else {
        return Ok(None);
    };
    if check_utf8_at(path, h.format, data, 0, h.body).is_err() {
        return Ok(None);
    }
    let chunk = chunk_len(data.len(), threads);
    Ok(plan_and_run(path, file, options, &h, chunk, threads))
}

/// The split index of `file` in ranges of about `chunk` bytes: from quote states guessed at
/// the boundaries, and when a range fails its checks, from counted ones (unless those give
/// the same ranges: the failure is then the file's); `None` when that fails too.
fn plan_and_run(
    path: &Path,
    file: &FileBytes,
    options: &IndexOptions,
    h: &Header,
    chunk: usize,
    threads: usize,
) -> Option<FileIndex> {
    let guessed = plan(file, h, chunk, Quotes::Guessed);
    if let Some(index) = run_plan(path, file, options, h, &guessed, threads) {
        return Some(index);
    }
    let counted = plan(file, h, chunk, Quotes::Counted);
    if counted == guessed {
        return None;
    }
    run_plan(path, file, options, h, &counted, threads)
}

/// Where [`plan`] takes the quote state at each boundary from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quotes {
    /// The quotes just after it ([`guess_quote_state`]): no pass over the file.
    Guessed,
    /// The parity of every quote before it ([`quote_parities`]): a pass over the file.
    Counted,
}

/// The ranges of `file` for nominal ranges of `chunk` bytes: each starts at the first line
/// feed outside quotes after its nominal boundary (the first at 0, with the header).
pub(super) fn plan(
    file: &FileBytes,
    h: &Header,
    chunk: usize,
    quotes: Quotes,
) -> Vec<Range<usize>> {
    let data: &[u8] = file;
    let bounds = nominal_bounds(data.len(), h.body, chunk);
    let parities = match quotes {
        Quotes::Counted => Some(quote_parities(file, &bounds)),
        Quotes::Guessed => {
            prefetch_bounds(file, &bounds);
            None
        }
    };
    let starts: Vec<usize> = bounds
        .iter()
        .enumerate()
        .map(|(k, &b)| {
            if b == 0 {
                return 0;
            }
            let (inside, read) = match &parities {
                Some(p) => (p[k], b),
                None => guess_quote_state(data, b - 1, h.delim),
            };
            let start = csv_record_start(data, b - 1, inside);
            release_around(file, b - 1..start.max(read));
            start
        })
        .collect();
    ranges(starts, data.len())
}

/// Scans the ranges of `plan` and joins them; `None` when any range fails its checks.
pub(super) fn run_plan(
    path: &Path,
    file: &FileBytes,
    options: &IndexOptions,
    h: &Header,
    plan: &[Range<usize>],
    threads: usize,
) -> Option<FileIndex> {
    let data: &[u8] = file;
    let fine = IndexOptions {
        stride: fine_stride(options.stride),
        stats: options.stats.clone(),
    };
    let scanner = Ranges {
        path,
        data,
        h,
        options: &fine,
    };
    let map_fine = map_fine(options.stride);
    let mut bounds = SplitBounds::new(options.stride, fine.stride);
    let joined = split::scan_join(
        &scanner,
        file,
        plan,
        threads,
        options,
        |part, rows_before| {
            let part_bounds = std::mem::take(&mut part.cols.block_bounds);
            bounds.join(
                rows_before,
                &part.extra,
                part_bounds,
                part.rows,
                part.range.end,
            );
        },
    )?;
    let mut cols = joined.cols?;
    let checkpoints = joined.checkpoints;
    // The fine rows on both sides of a block start: read again for their exact bounds.
    let whole = IndexOptions {
        stride: u64::MAX,
        stats: options.stats.clone(),
    };
    let exact = Ranges {
        options: &whole,
        ..scanner
    };
    let block_bounds = bounds.finish(&checkpoints.blocks, |r: Range<usize>| {
        let part = exact.scan(r.clone(), true);
        file.release(r);
        Some(part?.cols.block_bounds.pop().unwrap_or_default())
    })?;
    split::rescan_pending(
        &scanner,
        file,
        &mut cols,
        &joined.deferred,
        threads,
        &options.stats,
    )?;
    let h = Header {
        format: h.format,
        delim: h.delim,
        names: Vec::new(),
        body: h.body,
    };
    let rows = checkpoints.rows;
    let (blocks, _) = regroup(checkpoints.blocks, Vec::new(), options.stride, map_fine);
    Some(assemble(h, &cols, blocks, block_bounds, rows, data.len(), options).1)
}

/// The ranges of a delimited file for [`split::scan_join`]: each scanned by the loop of a
/// whole file ([`scan_body`]) with `options`, records skipped by
/// [`crate::text::skip::skip_records`].
#[derive(Clone, Copy)]
struct Ranges<'a> {
    path: &'a Path,
    data: &'a [u8],
    h: &'a Header,
    options: &'a IndexOptions,
}

impl RangeScanner for Ranges<'_> {
    /// The range's checkpoints every [`fine_stride`] rows, bytes absolute.
    type Extra = Vec<Block>;

    fn scan(&self, range: Range<usize>, lazy: bool) -> Option<Scanned<Vec<Block>>> {
        crate::simd::dispatch(RangeScan {
            path: self.path,
            data: self.data,
            h: self.h,
            range,
            options: self.options,
            lazy,
        })
    }

    fn skip(&self, at: usize, n: u64) -> Option<usize> {
        match skip_records(self.data, at, n, self.h.delim) {
            Ok((end, done)) if done == n => Some(end),
            _ => None,
        }
    }
}

/// The scan of one range, run by [`crate::simd::dispatch`] over this CPU's window masks.
struct RangeScan<'a> {
    path: &'a Path,
    data: &'a [u8],
    h: &'a Header,
    range: Range<usize>,
    options: &'a IndexOptions,
    lazy: bool,
}

impl Kernel<CSV> for RangeScan<'_> {
    type Output = Option<Scanned<Vec<Block>>>;

    #[inline(always)]
    fn run<W: Window<CSV>>(self) -> Option<Scanned<Vec<Block>>> {
        let Range { start, end } = self.range;
        // The first range holds the header: it is read from the file's start, so its bytes
        // are already absolute.
        let (slice, from, base) = if start == 0 {
            (&self.data[..end], self.h.body, 0)
        } else {
            (&self.data[start..end], 0, start)
        };
        // A range that ends before the file's end must end on a line feed: otherwise the
        // guessed start after it was no record start.
        if end < self.data.len() && self.data.get(end.wrapping_sub(1)) != Some(&b'\n') {
            return None;
        }
        let body = scan_body::<W>(
            self.path,
            slice,
            self.h,
            from,
            self.options,
            self.lazy,
            SAMPLE,
        )
        .ok()?;
        let mut fine = body.blocks;
        for b in &mut fine {
            b.first_byte = b.first_byte.map(|x| x + base as u64);
        }
        Some(Scanned {
            cols: body.cols,
            rows: body.rows,
            range: start..end,
            samples: Samples::new(body.samples, base),
            extra: fine,
        })
    }
}

/// The fuzz check of the delimited scanners ([`crate::fuzzing::csv`]): the index of `data`
/// (the bytes of the file at `path`) by this CPU's vector path, by the portable path, and
/// split in ranges of `chunk` bytes must be the same (or the first two the same error, the
/// split then falling back). Panics with the difference otherwise.
pub(crate) fn fuzz_check(path: &Path, chunk: usize, options: &IndexOptions) {
    let Ok(file) = FileBytes::open(path) else {
        return;
    };
    let data: &[u8] = &file;
    let show = |r: &Result<FileIndex>| match r {
        Ok(i) => format!("{i:?}"),
        Err(e) => format!("error: {e}"),
    };
    let portable = super::portable_index(path, data, options).map(|r| r.1);
    // Every loop this CPU has: the one it picks, and those it could (the runs with either
    // `pdep`, the lean masks, AVX-512); all equal the portable scan from here on.
    for l in crate::simd::available_loops() {
        let other =
            crate::simd::with_loop(l, || super::index_bytes(path, data, options).map(|r| r.1));
        assert_eq!(
            show(&other),
            show(&portable),
            "the {l:?} and portable scans differ"
        );
    }
    // The record skip of slices, takes and range joins: the masked skip equals the portable
    // one from any byte, for any count.
    #[cfg(target_arch = "x86_64")]
    for (pos, n) in [
        (0, u64::MAX),
        (chunk % (data.len() + 1), 1 + chunk as u64 % 7),
        (data.len() / 2, u64::MAX),
    ] {
        for delim in [b',', b'\t'] {
            assert_eq!(
                crate::text::skip::skip_records_masked(data, pos, n, delim),
                crate::text::skip::skip_records_portable(data, pos, n, delim),
                "the masked and portable record skips differ from byte {pos}, {n} records"
            );
        }
    }
    if cr_line_ends(data) {
        return;
    }
    // The checks `index_file` makes before a split.
    let Ok(h) = header(path, data) else {
        return;
    };
    if check_utf8_at(path, h.format, data, 0, h.body).is_err() {
        return;
    }
    // Ranges from guessed quote states (a wrong guess must fail a check, never give another
    // index) and from counted ones.
    for quotes in [Quotes::Guessed, Quotes::Counted] {
        let plan = plan(&file, &h, chunk.max(1), quotes);
        if let Some(split) = run_plan(path, &file, options, &h, &plan, 2) {
            assert_eq!(
                format!("{split:?}"),
                show(&portable),
                "the split scan ({quotes:?} quote states) differs from the sequential scan"
            );
        }
    }
}

#[cfg(test)]
mod tests;
