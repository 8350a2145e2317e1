//! One scan of a JSON file's row values, or of a range of one ([`scan_values_walk`]): the
//! columns inferred, the checkpoints, the rows, whether a nested value was met, and, for
//! nested lines, the byte walk of [`super::fast`]. A line file is read by the fastest path
//! each line allows ([`LineScan`]: runs of lines that change no type, streamed lines that
//! repeat the template, compact lines from window masks, walked nested lines, and the
//! reference path); an array element by element ([`scan_array`]). What they found so far,
//! and where the next checkpoint and sample are, is one [`WalkScan`].

use std::path::Path;

use super::run::{Skeleton, run_lines};
use super::win::{Template, compact_line, stream_lines, template_line};
use super::{ArrayPart, Layout, STREAM_PAUSE, fast, next_line, observe_value, syntax};
use crate::error::{Error, Result};
use crate::locator::{Block, IndexOptions, StatsColumns};
use crate::simd::{JSON, MaskCache, Window};
use crate::text::infer::Columns;
use crate::text::rowshape::{RunGate, RunScratch, RunValues, ShapeMasks};
use crate::text::scan::{array_next, bom_len, check_utf8, check_utf8_at, skip_ws};

/// What a scan of row values is asked to do.
#[derive(Clone, Copy)]
pub(super) struct ValueScan<'a> {
    pub(super) path: &'a Path,
    pub(super) data: &'a [u8],
    pub(super) lay: Layout,
    /// Which part of a split array `data` is.
    pub(super) part: ArrayPart,
    pub(super) options: &'a IndexOptions,
    /// Numbers of numeric columns leave their text bounds out (see
    /// [`Columns::lazy_text_bounds`]).
    pub(super) lazy: bool,
    /// Nested lines of a line file are read by the byte walk of [`fast`] (which validates
    /// them) instead of being delimited.
    pub(super) walk: bool,
    /// With `sample` > 0, the start of every `sample`-th row's value from the first is noted
    /// (for a split's placing of checkpoints).
    pub(super) sample: u64,
}

/// What [`scan_values_walk`] found.
pub(super) struct ValuesFound {
    pub(super) cols: Columns,
    /// Checkpoint blocks (sizes not filled in).
    pub(super) blocks: Vec<Block>,
    pub(super) rows: u64,
    /// True when a nested value was met.
    pub(super) nested: bool,
    /// The walk's inference, when it took every row.
    pub(super) walked: Option<fast::Inferrer>,
    /// The sampled row starts.
    pub(super) samples: Vec<u64>,
}

/// Where the byte walk of [`fast`] stands in a scan of nested lines.
enum WalkState {
    /// Not started (no nested line yet) or not wanted.
    Off,
    /// Every row so far is walked.
    On(Box<fast::Inferrer>),
    /// A row the walk does not take: the reference runs after the scan.
    Dead,
}

/// Starts the walk of a line file at its first nested line, `data[s..end]`, with the rows
/// before it.
fn start_walk(data: &[u8], s: usize, end: usize, wanted: &StatsColumns) -> WalkState {
    let mut inf = fast::Inferrer::new(wanted);
    let before = &data[..s];
    let mut pos = bom_len(data);
    while let Some((ls, le)) = next_line(before, pos) {
        if inf.row(data, ls, le).is_none() {
            return WalkState::Dead;
        }
        pos = le + 1;
    }
    match inf.row(data, s, end) {
        Some(()) => WalkState::On(Box::new(inf)),
        None => WalkState::Dead,
    }
}

/// The state of a scan: what it found so far, and where the next checkpoint and sample are.
struct WalkScan {
    cols: Columns,
    blocks: Vec<Block>,
    rows: u64,
    nested: bool,
    samples: Vec<u64>,
    walker: WalkState,
    stride: u64,
    sample: u64,
    /// The next checkpoint row: a comparison per row instead of a 64-bit division.
    next_checkpoint: u64,
    /// The next sampled row (never, without samples).
    next_sample: u64,
}

impl WalkScan {
    #[inline(always)]
    fn new(scan: &ValueScan<'_>) -> Self {
        let mut cols = Columns::default();
        if scan.lazy {
            cols.lazy_text_bounds();
        }
        WalkScan {
            cols,
            blocks: Vec::new(),
            rows: 0,
            nested: false,
            samples: Vec::new(),
            walker: WalkState::Off,
            stride: scan.options.stride,
            sample: scan.sample,
            next_checkpoint: 0,
            next_sample: if scan.sample > 0 { 0 } else { u64::MAX },
        }
    }

    /// The row where runs of lines stop: the next checkpoint or sample.
    #[inline(always)]
    fn next_stop(&self) -> u64 {
        self.next_checkpoint.min(self.next_sample)
    }

    /// Notes that row `self.rows` starts at `at` (a sample, a checkpoint); true when a block
    /// starts there.
    #[inline(always)]
    fn checkpoint(&mut self, at: usize) -> bool {
        let rows = self.rows;
        if rows == self.next_sample {
            self.next_sample = rows + self.sample;
            self.samples.push(at as u64);
        }
        let starts = rows == self.next_checkpoint;
        if starts {
            self.next_checkpoint = rows + self.stride;
            self.blocks
                .push(Block::checkpoint(self.blocks.len() as u64, rows, at as u64));
        }
        starts
    }

    #[inline(always)]
    fn finish(self, lay: Layout) -> ValuesFound {
        let walked = match self.walker {
            WalkState::On(w) if self.nested && lay == Layout::Lines => Some(*w),
            _ => None,
        };
        ValuesFound {
            cols: self.cols,
            blocks: self.blocks,
            rows: self.rows,
            nested: self.nested,
            walked,
            samples: self.samples,
        }
    }
}

/// The row values of `scan.data` laid out as `scan.lay` (see [`ValueScan`] for what is
/// asked); an array is read as `scan.part` says.
#[inline(always)]
pub(super) fn scan_values_walk<W: Window<JSON>>(scan: &ValueScan<'_>) -> Result<ValuesFound> {
    let mut st = WalkScan::new(scan);
    match scan.lay {
        Layout::Lines => LineScan::new().scan::<W>(scan, &mut st)?,
        Layout::Array(open) => {
            // Arrays are checked whole; line files line by line, while each line is hot in
            // the cache (blank lines are ASCII whitespace), so the file is streamed once.
            check_utf8(scan.path, scan.lay.format(), scan.data)?;
            scan_array(scan, open, &mut st)?;
        }
    }
    Ok(st.finish(scan.lay))
}

/// Bytes of a line file checked for ASCII at once: a long slice checks several times faster
/// per byte than many short ones, and stays in the cache for the scan; a block that is not
/// all ASCII is checked line by line instead, so that a bad byte is still named exactly.
const ASCII_BLOCK: usize = 1 << 16;

/// The state of the line paths of a line file's scan.
struct LineScan {
    /// Lines ending by `ascii_to` are known ASCII; lines ending by `lines_to` are checked
    /// one by one ([`ASCII_BLOCK`]).
    ascii_to: usize,
    lines_to: usize,
    cache: MaskCache<JSON>,
    template: Template,
    /// Lines before the streaming reader is tried again after it read none.
    stream_pause: u32,
    /// Runs of lines that change no column's type (see `super::run`), tried as the gate
    /// says (`rowshape::RunGate`); with statistics, their values are folded into the
    /// columns of the template's members, `members`.
    shapes: ShapeMasks,
    members: Vec<(usize, usize)>,
    run_scratch: RunScratch,
    skeleton: Skeleton,
    /// The template generation the skeleton and the masks' width are of.
    learned: Option<u64>,
    gate: RunGate,
}

impl LineScan {
    #[inline(always)]
    fn new() -> Self {
        LineScan {
            ascii_to: 0,
            lines_to: 0,
            cache: MaskCache::<JSON>::new(),
            template: Template::default(),
            stream_pause: 0,
            shapes: ShapeMasks::new(0),
            members: Vec::new(),
            run_scratch: RunScratch::default(),
            skeleton: Skeleton::default(),
            learned: None,
            gate: RunGate::new(true),
        }
    }

    /// Reads every line of `scan.data` into `st`, each by the fastest path that takes it.
    #[inline(always)]
    fn scan<W: Window<JSON>>(&mut self, scan: &ValueScan<'_>, st: &mut WalkScan) -> Result<()> {
        let data = scan.data;
        let mut pos = bom_len(data);
        loop {
            if let Some(end) = self.run::<W>(scan, st, pos)? {
                pos = end;
                continue;
            }
            self.gate.read_otherwise();
            pos = self.stream::<W>(scan, st, pos)?;
            if let Some(end) = self.compact::<W>(scan, st, pos)? {
                pos = end;
                continue;
            }
            if let Some(end) = st.walk_line(data, pos) {
                pos = end;
                continue;
            }
            let Some((s, end)) = next_line(data, pos) else {
                break;
            };
            self.reference_line(scan, st, pos, s, end)?;
            pos = end + 1;
        }
        Ok(())
    }

    /// A run of lines from `pos` that changes no column's type, when the gate tries one:
    /// the position after it, or `None` when it took no line.
    #[inline(always)]
    fn run<W: Window<JSON>>(
        &mut self,
        scan: &ValueScan<'_>,
        st: &mut WalkScan,
        pos: usize,
    ) -> Result<Option<usize>> {
        if !(W::RUNS
            && !st.nested
            && self.template.active()
            && st.rows < st.next_stop()
            && self.gate.open())
        {
            return Ok(None);
        }
        if self.gate.take_stale() || self.learned != Some(self.template.generation()) {
            let slots = self.template.slots();
            if self.learned != Some(self.template.generation()) {
                self.shapes.set_width(slots.len());
                self.skeleton.learn(slots);
                self.members.clear();
                self.members.extend(slots.iter().enumerate().map(|(k, s)| {
                    // Past the comma, or past `}`, the line feed and `{`.
                    (s.col, if k == 0 { 3 } else { 1 } + s.len)
                }));
                self.learned = Some(self.template.generation());
            }
            self.shapes
                .update_from(slots.iter().filter_map(|s| st.cols.cols.get(s.col)));
        }
        let left = st.next_stop() - st.rows;
        let mut values = (!scan.options.stats.is_none()).then(|| {
            RunValues::members(&mut st.cols.cols, &self.members, &mut self.run_scratch, pos)
        });
        let run = run_lines::<W>(
            scan.data,
            pos,
            &self.skeleton,
            &self.shapes,
            left,
            values.as_mut(),
        );
        self.gate.tried(run.rows);
        if run.rows == 0 {
            return Ok(None);
        }
        if run.high {
            check_utf8_at(scan.path, scan.lay.format(), scan.data, pos, run.end)?;
        }
        st.rows += run.rows;
        Ok(Some(run.end))
    }

    /// Lines from `pos` that repeat the template, streamed block by block up to the line
    /// that starts the next checkpoint block (read by the other paths, which note it), unless
    /// runs are being tried: then one line at a time is read by the others, so that runs
    /// resume at the next line. The position after them.
    #[inline(always)]
    fn stream<W: Window<JSON>>(
        &mut self,
        scan: &ValueScan<'_>,
        st: &mut WalkScan,
        pos: usize,
    ) -> Result<usize> {
        if !(W::ENABLED
            && !(W::RUNS && self.gate.open())
            && !st.nested
            && self.template.active()
            && st.rows < st.next_stop())
        {
            return Ok(pos);
        }
        if self.stream_pause > 0 {
            self.stream_pause -= 1;
            return Ok(pos);
        }
        let left = st.next_stop() - st.rows;
        let (end, n) = stream_lines::<W>(
            scan.path,
            scan.lay.format(),
            scan.data,
            pos,
            left,
            &self.template,
            &mut st.cols,
        )?;
        st.rows += n;
        if n == 0 {
            self.stream_pause = STREAM_PAUSE;
        }
        Ok(end)
    }

    /// The compact flat line at `pos`, read from window masks: by the member names of the
    /// previous line when they repeat, else member by member. The position after it, or
    /// `None` when it is not one.
    #[inline(always)]
    fn compact<W: Window<JSON>>(
        &mut self,
        scan: &ValueScan<'_>,
        st: &mut WalkScan,
        pos: usize,
    ) -> Result<Option<usize>> {
        let data = scan.data;
        let compact = if st.nested || !W::ENABLED {
            None
        } else if self.template.active()
            && let Some(done) =
                template_line::<W>(data, pos, &mut self.cache, &mut st.cols, &self.template)
        {
            self.template.hit();
            Some(done)
        } else {
            let order = &mut self.template.order;
            let wanted = &scan.options.stats;
            let done = compact_line::<W>(data, pos, &mut self.cache, &mut st.cols, wanted, order);
            if self.template.learning() {
                self.template.missed();
                if done.is_some() {
                    self.template.learn(&st.cols);
                }
            }
            done
        };
        let Some((nl, high)) = compact else {
            return Ok(None);
        };
        // Non-ASCII bytes are checked as the general path does (the same error).
        if high {
            check_utf8_at(scan.path, scan.lay.format(), data, pos, nl)?;
        }
        // The line is already observed: a column that turned in it must be read again up
        // to its end.
        if st.checkpoint(pos) {
            st.cols.mark_pending(nl + 1);
        }
        st.rows += 1;
        Ok(Some(nl + 1))
    }

    /// The line `data[s..end]` (found from `pos`): by the byte walk when it takes it, else
    /// by the reference path ([`observe_value`]), its UTF-8 checked.
    #[inline(always)]
    fn reference_line(
        &mut self,
        scan: &ValueScan<'_>,
        st: &mut WalkScan,
        pos: usize,
        s: usize,
        end: usize,
    ) -> Result<()> {
        let ValueScan {
            path, data, lay, ..
        } = *scan;
        let format = lay.format();
        let wanted = &scan.options.stats;
        // A walked line is a UTF-8 object with only blanks after it: what the checks and
        // the delimiting below accept.
        let walked = match &mut st.walker {
            WalkState::On(w) if st.nested => {
                let ok = w.row(data, s, end).is_some();
                if !ok {
                    st.walker = WalkState::Dead;
                }
                ok
            }
            _ => false,
        };
        if !walked && end > self.ascii_to {
            if end > self.lines_to {
                let block_end = (s + ASCII_BLOCK).min(data.len()).max(end);
                if data[s..block_end].is_ascii() {
                    self.ascii_to = block_end;
                } else {
                    self.lines_to = block_end;
                }
            }
            if end > self.ascii_to && !data[s..end].is_ascii() {
                check_utf8_at(path, format, data, s, end)?;
            }
        }
        if st.checkpoint(s) {
            st.cols.mark_pending(pos);
        }
        if !walked {
            let line = &data[..end];
            let was_nested = st.nested;
            let v_end = observe_value(
                path,
                format,
                line,
                data,
                s,
                st.rows,
                &mut st.cols,
                wanted,
                &mut st.nested,
            )?;
            if skip_ws(line, v_end) != end {
                return Err(syntax(
                    path,
                    format,
                    v_end,
                    "unexpected bytes after the row's value",
                    st.rows,
                ));
            }
            if scan.walk && st.nested && !was_nested {
                st.walker = start_walk(data, s, end, wanted);
            }
        }
        st.rows += 1;
        Ok(())
    }
}

impl WalkScan {
    /// A nested line that starts at `pos` at once, walked with no search for its end: the
    /// position after it, or `None` (the reference path then reads it).
    #[inline(always)]
    fn walk_line(&mut self, data: &[u8], pos: usize) -> Option<usize> {
        if !self.nested || data.get(pos) != Some(&b'{') {
            return None;
        }
        let WalkState::On(w) = &mut self.walker else {
            return None;
        };
        let Some(end) = w.line(data, pos) else {
            self.walker = WalkState::Dead;
            return None;
        };
        if self.checkpoint(pos) {
            self.cols.mark_pending(pos);
        }
        self.rows += 1;
        Some(end + 1)
    }
}

/// The elements of the array opened at `open` (or of a range of one, as `scan.part` says).
#[inline(always)]
fn scan_array(scan: &ValueScan<'_>, open: usize, st: &mut WalkScan) -> Result<()> {
    let ValueScan {
        path, data, part, ..
    } = *scan;
    let format = scan.lay.format();
    let wanted = &scan.options.stats;
    let never_closes = |row| {
        syntax(
            path,
            format,
            data.len(),
            &format!("the array opened at byte {open} never closes"),
            row,
        )
    };
    let mut p = if part.first {
        skip_ws(data, open + 1)
    } else {
        0
    };
    let close = if part.first && data.get(p) == Some(&b']') {
        Some(p)
    } else {
        loop {
            if p >= data.len() {
                if part.last {
                    return Err(never_closes(st.rows));
                }
                // A range of a split array, which ends past a separator.
                break None;
            }
            st.checkpoint(p);
            let rows = st.rows;
            let end = observe_value(
                path,
                format,
                data,
                data,
                p,
                rows,
                &mut st.cols,
                wanted,
                &mut st.nested,
            )
            .map_err(|e| match e {
                Error::Malformed {
                    offset: Some(at), ..
                } if at >= data.len() as u64 => never_closes(rows),
                other => other,
            })?;
            st.rows += 1;
            match array_next(data, end) {
                Ok(Some(n)) => p = n,
                Ok(None) => break Some(skip_ws(data, end)),
                Err(at) if at >= data.len() => return Err(never_closes(st.rows)),
                Err(at) => {
                    return Err(syntax(path, format, at, "expected ',' or ']'", st.rows));
                }
            }
        }
    };
    if let Some(close) = close {
        let after = skip_ws(data, close + 1);
        if after < data.len() || !part.last {
            return Err(syntax(
                path,
                format,
                after,
                "unexpected bytes after the array",
                st.rows,
            ));
        }
    }
    Ok(())
}
