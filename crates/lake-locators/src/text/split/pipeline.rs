//! The one split-scan pipeline of the row formats (delimited text, JSON, MsgPack): a file
//! opened for a split ([`index_split`]), its ranges scanned in waves on every thread, the
//! checkpoints of each placed from its noted record starts, the ranges joined in file order
//! ([`scan_join`]), and the ranges whose numbers' text bounds were left out read again when a
//! column turned Utf8 ([`rescan_pending`]). A format plugs in through [`RangeScanner`]: how
//! one range is scanned and how records are skipped from a record start; what its ranges
//! find besides columns, rows and record starts (a delimited range's fine checkpoints, a JSON
//! range's byte walk) is its [`RangeScanner::Extra`], which it joins itself.

use std::ops::Range;
use std::path::Path;

use super::{Checkpoints, RangePart, Samples, chunk_len, open_split, scan_waves};
use crate::error::Result;
use crate::locator::{FileIndex, IndexOptions, StatsColumns};
use crate::text::blocks::map_fine;
use crate::text::infer::Columns;
use crate::text::scan::FileBytes;

/// The per-format part of a split scan.
pub(crate) trait RangeScanner: Sync {
    /// What the scan of a range finds besides [`Scanned`]'s columns, rows and record starts.
    type Extra: Send;

    /// True when the real checkpoints are placed from the ranges' noted record starts
    /// ([`super::Placer`], with [`RangeScanner::skip`]); false when the format finds them
    /// itself (MsgPack's header walk), and the ranges note none.
    const PLACES: bool = true;

    /// The scan of `range` (which starts at a record start, the first at 0); with `lazy`,
    /// numbers' text bounds may be left out (see [`rescan_pending`]). `None` when the range
    /// cannot be trusted: the split is then abandoned.
    fn scan(&self, range: Range<usize>, lazy: bool) -> Option<Scanned<Self::Extra>>;

    /// The start of the record `n` records after the record start `at`; `None` when there
    /// are fewer.
    fn skip(&self, at: usize, n: u64) -> Option<usize> {
        let _ = (at, n);
        None
    }
}

/// What the scan of one range found.
pub(crate) struct Scanned<X> {
    pub(crate) cols: Columns,
    pub(crate) rows: u64,
    pub(crate) range: Range<usize>,
    /// Its noted record starts and, once placed, its checkpoints.
    pub(crate) samples: Samples,
    pub(crate) extra: X,
}

impl<X: Send> RangePart for Scanned<X> {
    fn rows(&self) -> u64 {
        self.rows
    }
}

/// The index of `path` built on every thread by `run(file, chunk, threads)` over the mapped
/// file, ranges of about `chunk` bytes; `None` when the file is read whole by one thread
/// ([`open_split`]) or when `run` gives up.
pub(crate) fn index_split(
    path: &Path,
    options: &IndexOptions,
    run: impl FnOnce(&FileBytes, usize, usize) -> Result<Option<FileIndex>>,
) -> Result<Option<FileIndex>> {
    let Some((file, threads)) = open_split(path, options)? else {
        return Ok(None);
    };
    let chunk = chunk_len(file.len(), threads);
    run(&file, chunk, threads)
}

/// The ranges of a plan joined in file order.
pub(crate) struct Joined {
    /// Their columns merged; `None` for an empty plan.
    pub(crate) cols: Option<Columns>,
    /// The checkpoints of the map's fine stride when it has one, otherwise of the real
    /// stride (see [`map_fine`]), and the rows.
    pub(crate) checkpoints: Checkpoints,
    /// The ranges that left numbers' text bounds out, for [`rescan_pending`].
    pub(crate) deferred: Vec<Range<usize>>,
}

/// Scans the ranges of `plan` lazily on `threads` threads, places their checkpoints and
/// joins them in file order, handing each range first to `each` with the rows of the ranges
/// before it (for the joins of the format's [`RangeScanner::Extra`]); `None` when a range
/// fails its scan or its placing.
pub(crate) fn scan_join<S: RangeScanner>(
    scanner: &S,
    file: &FileBytes,
    plan: &[Range<usize>],
    threads: usize,
    options: &IndexOptions,
    mut each: impl FnMut(&mut Scanned<S::Extra>, u64),
) -> Option<Joined> {
    let stats = &options.stats;
    let mut joined = Joined {
        cols: None,
        checkpoints: Checkpoints::new(map_fine(options.stride).unwrap_or(options.stride)),
        deferred: Vec::new(),
    };
    let placer = joined.checkpoints.placer();
    let place = |part: &mut Scanned<S::Extra>, first: u64| {
        !S::PLACES
            || placer.place(first, part.rows, &mut part.samples, |at, n| {
                scanner.skip(at, n)
            })
    };
    let scan = |_: usize, r: Range<usize>| scanner.scan(r, true);
    let ok = scan_waves(file, plan, threads, scan, place, |mut part| {
        each(&mut part, joined.checkpoints.rows);
        if part.cols.cols.iter().any(|c| c.deferred()) {
            joined.deferred.push(part.range.clone());
        }
        match &mut joined.cols {
            Some(c) => c.merge(&part.cols, stats),
            None => joined.cols = Some(part.cols),
        }
        if S::PLACES {
            joined.checkpoints.append(&part.samples, part.rows);
        } else {
            joined.checkpoints.rows += part.rows;
        }
        true
    });
    ok.then_some(joined)
}

/// Columns of `cols` that turned Utf8 after numbers whose text bounds were left out: the
/// `deferred` ranges are read again without laziness (rare) and their text bounds joined.
/// `None` when a range fails.
pub(crate) fn rescan_pending<S: RangeScanner>(
    scanner: &S,
    file: &FileBytes,
    cols: &mut Columns,
    deferred: &[Range<usize>],
    threads: usize,
    stats: &StatsColumns,
) -> Option<()> {
    if cols.pending_end(file.len()).is_none() {
        return Some(());
    }
    let mut rescan: Option<Columns> = None;
    let ok = scan_waves(
        file,
        deferred,
        threads,
        |_: usize, r: Range<usize>| scanner.scan(r, false),
        |_, _| true,
        |part| {
            match &mut rescan {
                Some(c) => c.merge(&part.cols, stats),
                None => rescan = Some(part.cols),
            }
            true
        },
    );
    if !ok {
        return None;
    }
    if let Some(r) = &rescan {
        cols.join_pending(r);
    }
    Some(())
}
