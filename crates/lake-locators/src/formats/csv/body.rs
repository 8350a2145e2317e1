//! The record loop of a delimited file, or of a range of one ([`scan_body`]): each record
//! read by the fastest path that takes it (a run of records that changes no column's type,
//! a short record from the window masks, a quote-free record split a word at a time, the
//! general path for quotes), its fields observed by the columns, and a checkpoint every
//! `stride` records. What the loop found so far, and the countdowns to the next checkpoint
//! and sample, are one [`BodyScan`].

use std::path::Path;

use super::{
    Header, MAX_CUTS, field_error, long_record, record_in_window, scan_plain_record, split_record,
    widen,
};
use crate::error::Result;
use crate::locator::{Block, IndexOptions, StatsColumns};
use crate::simd::csv_class::NEWLINE;
use crate::simd::{CSV, MaskCache, Window};
use crate::text::infer::{ColumnInfer, Columns};
use crate::text::rowshape::{RunGate, RunScratch, RunValues, ShapeMasks, stream_records};
use crate::text::scan::{check_utf8_at, skip_empty_lines, unescape_into};

/// What [`scan_body`] found.
pub(super) struct Body {
    pub(super) cols: Columns,
    /// Checkpoint blocks (sizes not filled in; bytes relative to the data scanned).
    pub(super) blocks: Vec<Block>,
    pub(super) rows: u64,
    /// The start of every `sample`-th record from the first.
    pub(super) samples: Vec<u64>,
}

/// The records of `data` from the record start `start` on (a whole file after its header
/// `h`, or one range of a file split at record starts, see [`super::split`]): inferred
/// columns, checkpoint blocks, row count, and with `sample` > 0 the start of every
/// `sample`-th record from the first (for a split's placing of checkpoints, which then skips
/// fewer than `sample` records to each). With `lazy`, numbers of numeric columns leave their
/// text bounds out (see [`Columns::lazy_text_bounds`]).
#[inline(always)]
pub(super) fn scan_body<W: Window<CSV>>(
    path: &Path,
    data: &[u8],
    h: &Header,
    start: usize,
    options: &IndexOptions,
    lazy: bool,
    sample: u64,
) -> Result<Body> {
    let mut st = BodyScan::new::<W>(path, data, h, options, lazy, sample);
    let mut pos = skip_empty_lines(data, start);
    while pos < data.len() {
        st.record_start(pos);
        if let Some(next) = st.run::<W>(pos)? {
            pos = next;
            continue;
        }
        let (end, n) = st.record::<W>(pos)?;
        st.record_end::<W>(n);
        pos = skip_empty_lines(data, end);
    }
    Ok(st.finish())
}

/// The state of [`scan_body`].
struct BodyScan<'a> {
    path: &'a Path,
    data: &'a [u8],
    h: &'a Header,
    stats: &'a StatsColumns,
    cols: Columns,
    /// Grows when a record has more fields than the header (see [`widen`]).
    ncols: usize,
    blocks: Vec<Block>,
    row: u64,
    stride: u64,
    /// A countdown instead of `row % stride`: a 64-bit division per row is measurable here.
    until_checkpoint: u64,
    samples: Vec<u64>,
    sample: u64,
    /// Counts down to the next sample (never, without samples).
    until_sample: u64,
    /// Numeric bounds per block (see `text::blocks`).
    per_block: bool,
    scratch: Vec<u8>,
    cuts: [usize; MAX_CUTS],
    cache: MaskCache<CSV>,
    /// Runs of records that fit their columns' types (see `rowshape`).
    shapes: ShapeMasks,
    gate: RunGate,
    /// The fields of runs are gathered for the statistics of some column (a column added by
    /// a wider record may gather them when no header column does: repeated header names,
    /// or statistics asked for an added column only).
    tracked: bool,
    run_scratch: RunScratch,
}

impl<'a> BodyScan<'a> {
    #[inline(always)]
    fn new<W: Window<CSV>>(
        path: &'a Path,
        data: &'a [u8],
        h: &'a Header,
        options: &'a IndexOptions,
        lazy: bool,
        sample: u64,
    ) -> Self {
        let ncols = h.names.len();
        let mut cols = Columns::with_names(&h.names, &options.stats);
        if lazy {
            cols.lazy_text_bounds();
        }
        let mut shapes = ShapeMasks::new(ncols);
        if W::RUNS {
            shapes.update(&cols.cols);
        }
        let tracked = cols.cols.iter().any(ColumnInfer::tracks);
        BodyScan {
            path,
            data,
            h,
            stats: &options.stats,
            cols,
            ncols,
            blocks: Vec::new(),
            row: 0,
            stride: options.stride,
            until_checkpoint: 0,
            samples: Vec::new(),
            sample,
            until_sample: if sample > 0 { 0 } else { u64::MAX },
            per_block: !options.stats.is_none(),
            scratch: Vec::new(),
            cuts: [0usize; MAX_CUTS],
            cache: MaskCache::<CSV>::new(),
            shapes,
            gate: RunGate::new(false),
            tracked,
            run_scratch: RunScratch::default(),
        }
    }

    /// Notes a record start at `pos`: a sample, and a checkpoint (which closes the block
    /// before) when one is due.
    #[inline(always)]
    fn record_start(&mut self, pos: usize) {
        if self.until_sample == 0 {
            self.until_sample = self.sample;
            self.samples.push(pos as u64);
        }
        if self.until_checkpoint == 0 {
            self.until_checkpoint = self.stride;
            self.cols.mark_pending(pos);
            if self.per_block && !self.blocks.is_empty() {
                let b = self.cols.flush_block();
                self.cols.block_bounds.push(b);
            }
            self.blocks.push(Block::checkpoint(
                self.blocks.len() as u64,
                self.row,
                pos as u64,
            ));
        }
    }

    /// A run of records from `pos` that changes no column's type, counted rather than
    /// classified, when the gate tries one: the next record start, or `None` when it took
    /// no record.
    #[inline(always)]
    fn run<W: Window<CSV>>(&mut self, pos: usize) -> Result<Option<usize>> {
        if !(self.shapes.enabled && self.gate.open()) {
            return Ok(None);
        }
        if self.gate.take_stale() {
            self.shapes.update(&self.cols.cols);
        }
        let mut values = self
            .tracked
            .then(|| RunValues::delimited(&mut self.cols.cols, &mut self.run_scratch, pos));
        let run = stream_records::<W>(
            self.data,
            pos,
            self.h.delim,
            &mut self.cache,
            &self.shapes,
            self.until_checkpoint.min(self.until_sample),
            values.as_mut(),
        );
        self.gate.tried(run.rows);
        if run.rows == 0 {
            return Ok(None);
        }
        if run.high {
            check_utf8_at(self.path, self.h.format, self.data, pos, run.end)?;
        }
        self.row += run.rows;
        self.until_checkpoint -= run.rows;
        self.until_sample -= run.rows;
        Ok(Some(skip_empty_lines(self.data, run.end)))
    }

    /// The record at `pos`, its fields observed: its end and its field count. Most records
    /// are short and hold no quote: their fields and number shapes come from the window
    /// masks at the record start; otherwise a quote-free record is split a word at a time,
    /// and a record with a quote takes the general path.
    #[inline(always)]
    fn record<W: Window<CSV>>(&mut self, pos: usize) -> Result<(usize, usize)> {
        let (path, format, data) = (self.path, self.h.format, self.data);
        let window = match self.cache.window::<W>(data, pos, self.h.delim) {
            Some(m) if m[NEWLINE] != 0 => {
                record_in_window(path, format, data, pos, &m, &mut self.cols.cols)?
            }
            Some(_) => long_record::<W>(
                path,
                format,
                data,
                pos,
                self.h.delim,
                &mut self.cache,
                &mut self.cols.cols,
            )?
            .map(|end| (end, self.ncols)),
            None => None,
        };
        match window {
            Some(done) => Ok(done),
            None => match self.plain_record(pos)? {
                Some(done) => Ok(done),
                None => self.quoted_record(pos),
            },
        }
    }

    /// The record at `pos` when it holds no quote: the line end found once, the line split
    /// with a word-at-a-time delimiter scan, and the fields passed as ranges of the whole
    /// buffer, so that numbers can be checked a word at a time. `None` for a record with a
    /// quote.
    #[inline(always)]
    fn plain_record(&mut self, pos: usize) -> Result<Option<(usize, usize)>> {
        let data = self.data;
        let Some((line_end, ncuts, non_ascii)) =
            scan_plain_record(data, pos, self.h.delim, &mut self.cuts)
        else {
            return Ok(None);
        };
        if non_ascii {
            check_utf8_at(self.path, self.h.format, data, pos, line_end)?;
        }
        let mut prev = pos;
        let mut last = line_end;
        if last > prev && data[last - 1] == b'\r' {
            last -= 1;
        }
        if ncuts + 1 > self.cols.cols.len() {
            widen(&mut self.cols, &self.h.names, ncuts + 1, self.stats);
        }
        let bounds = self.cuts[..ncuts]
            .iter()
            .copied()
            .chain(std::iter::once(last));
        for (c, cut) in self.cols.cols.iter_mut().zip(bounds) {
            c.observe_field_at(data, prev, cut);
            prev = cut + 1;
        }
        Ok(Some(((line_end + 1).min(data.len()), ncuts + 1)))
    }

    /// The record at `pos` by the general path (quoted fields, doubled quotes).
    #[inline(always)]
    fn quoted_record(&mut self, pos: usize) -> Result<(usize, usize)> {
        let (path, h, stats) = (self.path, self.h, self.stats);
        let cols = &mut self.cols;
        let scratch = &mut self.scratch;
        let observe = |i: usize, text: &[u8], escaped: bool| {
            if i >= cols.cols.len() {
                widen(cols, &h.names, i + 1, stats);
            }
            if let Some(c) = cols.cols.get_mut(i) {
                if escaped {
                    // A field with doubled quotes is never a number or a boolean.
                    if c.tracks() {
                        unescape_into(text, scratch);
                        c.text(scratch);
                    } else {
                        c.text(b"");
                    }
                } else {
                    c.observe_text_field(text);
                }
            }
        };
        let (end, n) = split_record(self.data, pos, h.delim, observe)
            .map_err(|e| field_error(path, h.format, e, Some(self.row)))?;
        check_utf8_at(path, h.format, self.data, pos, end)?;
        Ok((end, n))
    }

    /// Ends a record of `n` fields. A record of fewer fields has nulls in the columns after
    /// its last (nothing to observe); one of more fields has added columns: runs now read
    /// records of that width.
    #[inline(always)]
    fn record_end<W: Window<CSV>>(&mut self, n: usize) {
        debug_assert!(n <= self.cols.cols.len());
        if self.cols.cols.len() != self.ncols {
            self.ncols = self.cols.cols.len();
            self.tracked = self.cols.cols.iter().any(ColumnInfer::tracks);
            self.shapes.set_width(self.ncols);
            if W::RUNS {
                self.shapes.update(&self.cols.cols);
            }
        }
        self.gate.read_otherwise();
        self.row += 1;
        self.until_checkpoint -= 1;
        self.until_sample -= 1;
    }

    #[inline(always)]
    fn finish(mut self) -> Body {
        if self.per_block && !self.blocks.is_empty() {
            let b = self.cols.flush_block();
            self.cols.block_bounds.push(b);
            self.cols.fold_blocks();
        }
        Body {
            cols: self.cols,
            blocks: self.blocks,
            rows: self.row,
            samples: self.samples,
        }
    }
}
