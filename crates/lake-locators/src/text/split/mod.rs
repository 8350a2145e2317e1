//! Splitting one large row-format file into byte ranges that every thread of the caller's
//! rayon pool scans at once, and stitching their results into exactly the index of one
//! sequential pass.
//!
//! The plan of a split:
//!
//! 1. Nominal boundaries every [`chunk_len`] bytes ([`nominal_bounds`]).
//! 2. Each boundary moves to a guessed record start: for delimited text the first line feed
//!    outside quotes, the quote state guessed from the quotes just after the boundary
//!    ([`guess_quote_state`]; when a guess proves wrong in step 3, the plan is made again
//!    from the parity of the quotes before each boundary, one counting pass over the file,
//!    [`quote_parities`]); for JSON lines the first line feed.
//! 3. Each range is scanned on its own (its records wholly inside it), with checkpoints every
//!    [`FINE_STRIDE`] rows, and checked: a range whose guessed start was no record start of a
//!    sequential scan cannot end, without an error, on a line feed just before the next
//!    range. Any failure (a wrong guess, or a real error in the file) sends the whole file to
//!    the sequential scan, which is then the only result: correct, only slower, and the error
//!    reported is the sequential scan's (the first in file order, same message).
//! 4. Ranges are joined in file order: columns by [`crate::text::infer::Columns::merge`]
//!    (unions of facts and bounds, so order does not matter), row counts summed, and each
//!    checkpoint of the real stride found from the nearest fine checkpoint before it by
//!    skipping the records between ([`Checkpoints`]).
//!
//! Every row format runs these steps through one pipeline ([`pipeline`]), plugging in its
//! range scan ([`RangeScanner`]).
//!
//! Ranges are scanned in waves of a few per thread, and each range's pages are dropped from
//! the process's mapping once read ([`FileBytes::release`]), so that the resident set is
//! O(threads × chunk) whatever the file's size.

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use memchr::{memchr, memchr2};
use rayon::prelude::*;

use crate::locator::Block;
use crate::text::scan::{FileBytes, Prefetcher, skip_empty_lines};

mod pipeline;
pub(crate) use pipeline::{RangeScanner, Scanned, index_split, rescan_pending, scan_join};

/// Files below this size are indexed by one thread (lake-map already runs files in parallel;
/// a split of a small file costs more than it saves).
pub(crate) const MIN_SPLIT: u64 = 16 << 20;

/// The checkpoint stride of the range scans: the real checkpoints are found from these by
/// skipping fewer than this many records.
pub(crate) const FINE_STRIDE: u64 = 256;

/// Ranges scanned per thread in one wave.
const WAVE_PER_THREAD: usize = 4;

/// The threads of the caller's pool (the pool `CreateOptions::threads` or
/// `bazan map create --threads N` installs; every core otherwise). `BAZAN_SPLIT=off` in the
/// environment turns splitting off (each file on one thread, as before it existed): for
/// benchmarks that compare both.
pub(crate) fn threads() -> usize {
    if std::env::var_os("BAZAN_SPLIT").is_some_and(|v| v == "off") {
        return 1;
    }
    rayon::current_num_threads()
}

/// Files from this size are read in ranges even on one thread: the ranges are mapped and
/// dropped in waves, so the resident set stays a few ranges whatever the file's size (a
/// whole-file map of a 10 GB file would hold 10 GB).
pub(crate) const MIN_STREAM: u64 = 64 << 20;

/// The threads to index a file of `len` bytes in ranges with, or `None` when it is read
/// whole by one thread (a pool of one thread and a file under [`MIN_STREAM`], or a file
/// under [`MIN_SPLIT`]).
pub(crate) fn split_threads(len: u64) -> Option<usize> {
    let threads = threads();
    if len < MIN_SPLIT || (threads < 2 && len < MIN_STREAM) {
        return None;
    }
    Some(threads.max(1))
}

/// True when the locator of a row format reads a file of `len` bytes in ranges, asking the
/// OS for each range's pages ahead of its scan itself (on the calling rayon pool): a caller
/// reading many files ahead ([`crate::prefetch_file`]) leaves such a file to it.
pub fn reads_ahead_itself(len: u64) -> bool {
    split_threads(len).is_some()
}

/// The file `path` mapped, with the threads to index it with in ranges, or `None` when it
/// is read whole by one thread ([`split_threads`]); the stride is checked first.
pub(crate) fn open_split(
    path: &std::path::Path,
    options: &crate::locator::IndexOptions,
) -> crate::error::Result<Option<(FileBytes, usize)>> {
    let len = std::fs::metadata(path)
        .map_err(|e| crate::error::Error::io(path, e))?
        .len();
    let Some(threads) = split_threads(len) else {
        return Ok(None);
    };
    crate::text::rowread::check_stride(path, options)?;
    Ok(Some((FileBytes::open(path)?, threads)))
}

/// The nominal length of a range: about eight per thread, between 2 and 16 MiB.
pub(crate) fn chunk_len(len: usize, threads: usize) -> usize {
    (len / (threads.max(1) * 8)).clamp(2 << 20, 16 << 20)
}

/// Nominal boundaries of `len` bytes in ranges of `chunk` bytes after `first` (the first
/// range starts at 0 and holds the header): `first`-free positions `k * chunk` past it.
pub(crate) fn nominal_bounds(len: usize, first: usize, chunk: usize) -> Vec<usize> {
    let mut out = vec![0];
    let mut b = chunk.max(1);
    while b < len {
        if b > first + 1 {
            out.push(b);
        }
        b += chunk.max(1);
    }
    out
}

/// How many bytes of `data` are `byte` (vectorised: counts per 255-byte block in `u8`).
pub(crate) fn count_byte(data: &[u8], byte: u8) -> usize {
    data.chunks(255)
        .map(|c| {
            c.iter()
                .fold(0u8, |n, &b| n.wrapping_add(u8::from(b == byte))) as usize
        })
        .sum()
}

/// Asks for the pages around every nominal boundary of `bounds` at once (see
/// [`FileBytes::prefetch`]), before the first record start after each is looked for: from a
/// cold cache, those lookups otherwise wait for the disk one page fault after another.
pub(crate) fn prefetch_bounds(file: &FileBytes, bounds: &[usize]) {
    const AHEAD: usize = 64 << 10;
    for &b in bounds {
        let from = b.saturating_sub(1);
        file.prefetch(from..(from + AHEAD).min(file.len()));
    }
}

/// For each nominal boundary `b` of `bounds` (the first is 0): true when an odd number of
/// quotes precede `b - 1` in the file (the quote state of a well-formed CSV there), counted
/// on every thread.
pub(crate) fn quote_parities(file: &FileBytes, bounds: &[usize]) -> Vec<bool> {
    let data: &[u8] = file;
    let cuts: Vec<usize> = bounds.iter().map(|&b| b.saturating_sub(1)).collect();
    let stop = AtomicBool::new(false);
    let counts: Vec<usize> = std::thread::scope(|scope| {
        // Every byte is read here: the disk reads ahead of the threads (cold cache).
        let ahead = Prefetcher::start(scope, file, &stop);
        ahead.ask(0..data.len());
        (1..cuts.len())
            .into_par_iter()
            .map(|k| {
                let r = cuts[k - 1]..cuts[k];
                file.populate(r.clone());
                let n = count_byte(&data[r.clone()], b'"');
                file.release(r);
                n
            })
            .collect()
    });
    let mut out = Vec::with_capacity(bounds.len());
    out.push(false);
    for c in counts {
        let before = out.last().copied().unwrap_or(false);
        out.push(before ^ (c % 2 == 1));
    }
    out
}

/// Bytes after a boundary read for a quote that tells the quote state there
/// ([`guess_quote_state`]).
const GUESS_WINDOW: usize = 64 << 10;

/// The quote state at `from` of a delimited file (true: inside a quoted field) as the first
/// telling quote after it says, without reading the file before it, and how far it read.
///
/// In a well-formed file a quote just after a delimiter or a line feed and before any other
/// byte opens a field (inside a quoted field such a quote is doubled), and a quote after any
/// byte but those and before a delimiter or a line break closes one (inside, doubled again):
/// the state before it is then known, and the state at `from` follows from the parity of
/// the quotes passed on the way. Doubled quotes and other quotes tell nothing. With no
/// telling quote in [`GUESS_WINDOW`] bytes the guess is "outside" (a quote-free stretch).
/// A wrong guess (a file that is not well-formed there) puts a range start inside a quoted
/// field: the range before it then ends inside quotes, which its scan refuses, and the plan
/// is made again from the counted parities ([`quote_parities`]).
pub(crate) fn guess_quote_state(data: &[u8], from: usize, delim: u8) -> (bool, usize) {
    let end = from.saturating_add(GUESS_WINDOW).min(data.len());
    let breaks = |c: u8| c == delim || c == b'\n' || c == b'\r';
    let mut pos = from.min(end);
    // The parity of the quotes passed.
    let mut passed = false;
    while let Some(i) = memchr(b'"', &data[pos..end]) {
        let q = pos + i;
        let before = q.checked_sub(1).map_or(b'\n', |p| data[p]);
        let after = data.get(q + 1).copied();
        let opens =
            (before == delim || before == b'\n') && after.is_some_and(|c| !breaks(c) && c != b'"');
        let closes =
            after.is_none_or(breaks) && before != delim && before != b'\n' && before != b'"';
        if opens != closes {
            // Outside before an opening quote, inside before a closing one.
            return (closes ^ passed, q + 1);
        }
        passed = !passed;
        pos = q + 1;
    }
    (false, end)
}

/// The first record start of a delimited file after `from`, where the quote state is
/// `in_quotes`: just past the first line feed outside quotes (and the empty lines after it),
/// or the end of the data.
pub(crate) fn csv_record_start(data: &[u8], from: usize, mut in_quotes: bool) -> usize {
    let mut pos = from;
    while pos < data.len() {
        let Some(i) = memchr2(b'"', b'\n', &data[pos..]) else {
            return data.len();
        };
        let p = pos + i;
        if data[p] == b'"' {
            in_quotes = !in_quotes;
        } else if !in_quotes {
            return skip_empty_lines(data, p + 1);
        }
        pos = p + 1;
    }
    data.len()
}

/// Drops from the mapping of `file` the pages around `range`, which finding one range
/// start read: whole 2 MiB spans, since the kernel may map a whole large folio of the page
/// cache for one touched byte (6.18 maps 2 MiB), and a partial drop would leave the rest of
/// it mapped. Before this, the page touched at each boundary of a 1.5 GB file held 300 MB
/// for a moment (peak RSS), and 270 MB until the scans reached it.
pub(crate) fn release_around(file: &FileBytes, range: Range<usize>) {
    const SPAN: usize = 2 << 20;
    let lo = range.start / SPAN * SPAN;
    let hi = range
        .end
        .div_ceil(SPAN)
        .saturating_mul(SPAN)
        .min(file.len());
    file.release(lo..hi);
}

/// The first line start of a JSON-lines file after `from`: just past the first line feed
/// (never inside a valid JSON string), or the end of the data.
pub(crate) fn line_start(data: &[u8], from: usize) -> usize {
    match memchr(b'\n', &data[from.min(data.len())..]) {
        Some(i) => from + i + 1,
        None => data.len(),
    }
}

/// The ranges between guessed starts (`starts[0]` is the first range's start), empty ones
/// left out; the last ends at `len`.
pub(crate) fn ranges(mut starts: Vec<usize>, len: usize) -> Vec<Range<usize>> {
    starts.push(len);
    let mut out = Vec::with_capacity(starts.len());
    let mut from = starts[0];
    for &s in &starts[1..] {
        if s > from {
            out.push(from..s);
            from = s;
        }
    }
    out
}

/// The result of one range's scan, as [`scan_waves`] needs it.
pub(crate) trait RangePart: Send {
    /// The records of the range.
    fn rows(&self) -> u64;
}

/// Scans `ranges` on every thread in waves of a few per thread, handing each range's result
/// to `join` in file order; `scan` returns `None` when its range cannot be trusted, which
/// ends the split (`false`: the caller falls back to a sequential scan). Once a wave is
/// scanned, the first row of each of its ranges is known: `place` then gets it, on every
/// thread (to find the checkpoints of the real stride in it, see [`Placer`], which reads
/// about a sixteenth of it again), and false from it ends the split too. Each range's pages
/// are faulted in before its scan and dropped after it, and the few the placing reads again
/// after that: the resident set stays the ranges being scanned, not the wave (two files
/// split at once held two waves of 16 MiB ranges, +80 MB of peak RSS on the 1.4 GB lake).
pub(crate) fn scan_waves<T: RangePart>(
    file: &FileBytes,
    ranges: &[Range<usize>],
    threads: usize,
    scan: impl Fn(usize, Range<usize>) -> Option<T> + Sync,
    place: impl Fn(&mut T, u64) -> bool + Sync,
    join: impl FnMut(T) -> bool,
) -> bool {
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let ahead = Prefetcher::start(scope, file, &stop);
        scan_waves_ahead(file, ranges, threads, &ahead, scan, place, join)
    })
}

/// [`scan_waves`] with the read-ahead of its ranges asked of `ahead`.
fn scan_waves_ahead<T: RangePart>(
    file: &FileBytes,
    ranges: &[Range<usize>],
    threads: usize,
    ahead: &Prefetcher<'_>,
    scan: impl Fn(usize, Range<usize>) -> Option<T> + Sync,
    place: impl Fn(&mut T, u64) -> bool + Sync,
    mut join: impl FnMut(T) -> bool,
) -> bool {
    let wave = (threads * WAVE_PER_THREAD).max(1);
    // Rows of the ranges of the waves before.
    let mut rows = 0u64;
    for (w, group) in ranges.chunks(wave).enumerate() {
        // The next wave is read from disk while this one is scanned (a cold file otherwise
        // keeps each thread waiting for its range's pages before every scan).
        // Also this wave at the start, so that every thread's first range is queued at once.
        let waves = if w == 0 { w..w + 2 } else { w + 1..w + 2 };
        for next in ranges.chunks(wave).skip(waves.start).take(waves.len()) {
            for r in next {
                ahead.ask(r.clone());
            }
        }
        let scanned: Option<Vec<T>> = group
            .par_iter()
            .enumerate()
            .map(|(i, r)| {
                file.populate(r.clone());
                let out = scan(w * wave + i, r.clone());
                file.release(r.clone());
                out
            })
            .collect();
        let Some(mut parts) = scanned else {
            return false;
        };
        // The placing of each range is independent once its first row is known: run on
        // every thread, not on the joining one while the others wait.
        let firsts: Vec<u64> = parts
            .iter()
            .map(|p| {
                let first = rows;
                rows += p.rows();
                first
            })
            .collect();
        let placed = parts
            .par_iter_mut()
            .zip(firsts)
            .zip(group.par_iter())
            .map(|((part, first), r)| {
                let ok = place(part, first);
                file.release(r.clone());
                ok
            })
            .reduce(|| true, |a, b| a && b);
        if !placed {
            return false;
        }
        for part in parts {
            if !join(part) {
                return false;
            }
        }
    }
    true
}

/// A range scan notes the start of every `SAMPLE`-th record (CSV) or line's value (JSON
/// lines): the placing of the real checkpoints then skips fewer than this many records to
/// each, instead of up to a fine stride's (256), most of a range read again once it has
/// left the cache. 32 keeps that to about a sixteenth of the range and costs a run of
/// records an end every 32 records.
pub(crate) const SAMPLE: u64 = 32;

/// What a range scan noted for the placing of its checkpoints, and what the placing found.
#[derive(Debug, Default)]
pub(crate) struct Samples {
    /// The start of every [`SAMPLE`]-th record of the range from its first, bytes absolute.
    starts: Vec<u64>,
    /// The checkpoints of the real stride in the range, (row, byte), once placed.
    placed: Vec<(u64, u64)>,
}

impl Samples {
    /// The record starts a scan noted in the bytes of a range that start at `base` of the
    /// file (the starts are relative to them).
    pub(crate) fn new(mut starts: Vec<u64>, base: usize) -> Self {
        for s in &mut starts {
            *s += base as u64;
        }
        Samples {
            starts,
            placed: Vec::new(),
        }
    }
}

/// Finds the checkpoints of the real stride in one range from its [`Samples`]: the stride
/// of a [`Checkpoints`], for [`scan_waves`]'s `place` on every thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placer {
    stride: u64,
}

impl Placer {
    /// Places the real checkpoints of a range of `rows` rows whose first row is `first`
    /// into its `samples`; `skip(byte, n)` is the start of the record `n` records after the
    /// record start `byte` (`None` when there are fewer). False when a checkpoint cannot be
    /// found (the split is then abandoned).
    pub(crate) fn place(
        &self,
        first: u64,
        rows: u64,
        samples: &mut Samples,
        mut skip: impl FnMut(usize, u64) -> Option<usize>,
    ) -> bool {
        let mut found = || {
            let mut out = Vec::new();
            // The first row of this range that starts a real checkpoint.
            let mut row = first.div_ceil(self.stride) * self.stride;
            while row < first + rows {
                let local = row - first;
                let byte = *samples.starts.get(usize::try_from(local / SAMPLE).ok()?)?;
                let at = skip(usize::try_from(byte).ok()?, local % SAMPLE)?;
                out.push((row, at as u64));
                row += self.stride;
            }
            Some(out)
        };
        match found() {
            Some(out) => {
                samples.placed = out;
                true
            }
            None => false,
        }
    }
}

/// Builds the checkpoints of the real stride from the placed checkpoints of ranges joined
/// in file order.
pub(crate) struct Checkpoints {
    stride: u64,
    /// Rows of the ranges joined so far.
    pub(crate) rows: u64,
    /// The checkpoints found so far.
    pub(crate) blocks: Vec<Block>,
}

impl Checkpoints {
    /// No range joined yet.
    pub(crate) fn new(stride: u64) -> Self {
        Checkpoints {
            stride,
            rows: 0,
            blocks: Vec::new(),
        }
    }

    /// The strides of these checkpoints, to place a range's on another thread.
    pub(crate) fn placer(&self) -> Placer {
        Placer {
            stride: self.stride,
        }
    }

    /// Joins the next range in file order: `rows` rows, whose real checkpoints
    /// [`Placer::place`] put in `samples`.
    pub(crate) fn append(&mut self, samples: &Samples, rows: u64) {
        for &(row, byte) in &samples.placed {
            self.blocks
                .push(Block::checkpoint(self.blocks.len() as u64, row, byte));
        }
        self.rows += rows;
    }
}

/// The fine checkpoint stride for a real stride `stride`.
pub(crate) fn fine_stride(stride: u64) -> u64 {
    stride.min(FINE_STRIDE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_bytes_past_255() {
        let data: Vec<u8> = (0..10_000)
            .map(|i| if i % 3 == 0 { b'"' } else { b'a' })
            .collect();
        assert_eq!(
            count_byte(&data, b'"'),
            data.iter().filter(|&&b| b == b'"').count()
        );
    }

    #[test]
    fn record_starts_follow_the_quote_state() {
        let data = b"a,\"x\ny\"\nb,c\n\nd,e\n";
        assert_eq!(csv_record_start(data, 0, false), 8);
        assert_eq!(csv_record_start(data, 3, true), 8);
        assert_eq!(csv_record_start(data, 9, false), 13);
        assert_eq!(csv_record_start(data, 14, false), data.len());
        assert_eq!(ranges(vec![0, 5, 5, 8], 16), vec![0..5, 5..8, 8..16]);
    }

    #[test]
    fn quote_states_are_guessed_from_telling_quotes() {
        let data = b"id,note\n1,\"a, \"\"b\"\"\nc\",2\n3,\"d\",4\n";
        // The state at each byte by counting, against the guess from there on.
        let mut inside = false;
        for (at, &c) in data.iter().enumerate() {
            assert_eq!(guess_quote_state(data, at, b',').0, inside, "at byte {at}");
            inside ^= c == b'"';
        }
        // Doubled quotes tell nothing; an opening quote after a line feed, a closing one
        // before the end, do.
        assert_eq!(guess_quote_state(b"\"\"x", 0, b','), (false, 3));
        assert_eq!(guess_quote_state(b"x\n\"y", 0, b','), (false, 3));
        assert_eq!(guess_quote_state(b"y\"", 0, b','), (true, 2));
        assert_eq!(guess_quote_state(b"a\tb\"\tc", 0, b'\t'), (true, 4));
        // No telling quote: outside.
        assert_eq!(guess_quote_state(b"abc\ndef", 2, b','), (false, 7));
    }

    #[test]
    fn nominal_bounds_skip_the_header() {
        assert_eq!(nominal_bounds(100, 30, 20), vec![0, 40, 60, 80]);
        assert_eq!(nominal_bounds(100, 0, 20), vec![0, 20, 40, 60, 80]);
    }
}
