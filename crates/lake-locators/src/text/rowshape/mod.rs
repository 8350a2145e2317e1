//! Whole-run type checks of delimited text read off block masks: whether every field of a
//! run of records fits the type its column already has, in a fixed number of bit operations
//! per 64-byte block whatever the records' shapes, instead of a classification per field.
//!
//! Once the first records have set the columns' types, almost every later record changes
//! none of them, so the question per block is only "does every field fit its column?". Every fact a field check needs is a mask of
//! the block's bytes, read at the field ends `t` (the delimiters and line breaks):
//! - whether a field holds a flagged byte `x` (not a digit, a dot...): adding `x` to `!t`
//!   carries from each flagged byte through the rest of its field onto its end, and out of
//!   the block into the next one for a field that goes on there (a multi-word addition);
//! - which column each field belongs to: `pdep` deposits a mask of columns, repeated every
//!   `ncols` bits and started at the column of the block's first field end, on the bits of
//!   `t` in order. That also checks the field count: the record ends must be the ends of the
//!   fields of the last column.
//!
//! A block that does not fit ends the run at the last record end before it; its records go
//! to the classification per field, which is exact and moves the types on.
//!
//! With statistics, the field ends of the blocks that fit are also gathered ([`RunValues`])
//! and folded column by column: the values' types are known, so a column's loop has no
//! classification and no dispatch per field, and numbers are compared as integer keys of
//! their text ([`crate::text::numbers::number_key`]) instead of being parsed.
//!
//! The rules are those of [`crate::text::numbers::masked_number`]: `-?[0-9]{1,18}` is an integer,
//! digits with one `.` and at least one digit a decimal; anything else (`1e5`, 19 digits, a
//! lone `-`) is left to the per-field path.

use crate::simd::csv_class::{CR, DELIM, DOT, HIGH, MINUS, NEWLINE, NON_DIGIT, QUOTE};
use crate::simd::{CSV, MaskCache, Window};
use crate::text::infer::{ColumnInfer, Shape};
use crate::text::keys::Strided;

/// Indices of the column masks of [`ShapeMasks`].
pub(crate) const OTHER: usize = 0;
pub(crate) const INT: usize = 1;
pub(crate) const FLOAT_INT: usize = 2;
pub(crate) const FLOAT: usize = 3;
pub(crate) const BOOL: usize = 4;
pub(crate) const LAST: usize = 5;
pub(crate) const KINDS: usize = 6;

/// Start positions in a row at which no run fits before runs pause.
const GATE_MISSES: u32 = 16;

/// Records or lines read otherwise before runs are tried again (none in tests, so that the
/// differential tests reach runs at every record).
const GATE_PAUSE: u32 = if cfg!(test) { 0 } else { 1024 };

/// When the row indexers try a run: not for [`GATE_PAUSE`] records or lines after
/// [`GATE_MISSES`] tries in a row that read nothing (records a run never takes would
/// otherwise pay for the try each time); and whether the type masks must first take in
/// types that records read otherwise may have moved on.
#[derive(Debug)]
pub(crate) struct RunGate {
    misses: u32,
    pause: u32,
    stale: bool,
}

impl RunGate {
    /// A gate; `stale` when the masks have not taken in the types yet.
    pub(crate) fn new(stale: bool) -> Self {
        RunGate {
            misses: 0,
            pause: 0,
            stale,
        }
    }

    /// True when a run is to be tried here.
    #[inline(always)]
    pub(crate) fn open(&self) -> bool {
        self.pause == 0
    }

    /// True (once) when the masks must take in the columns' types before the run.
    #[inline(always)]
    pub(crate) fn take_stale(&mut self) -> bool {
        std::mem::take(&mut self.stale)
    }

    /// Notes a try that read `rows` records or lines.
    #[inline(always)]
    pub(crate) fn tried(&mut self, rows: u64) {
        if rows > 0 {
            self.misses = 0;
        } else {
            self.misses += 1;
            if self.misses == GATE_MISSES {
                (self.misses, self.pause) = (0, GATE_PAUSE);
            }
        }
    }

    /// Notes a record or line read otherwise.
    #[inline(always)]
    pub(crate) fn read_otherwise(&mut self) {
        self.stale = true;
        self.pause = self.pause.saturating_sub(1);
    }
}

/// Which columns have which settled type, one bit per field of a run of records: from a
/// field of column `c` on, bit `k` of `phase[c]` is column `(c + k) % ncols`.
#[derive(Debug, Clone)]
pub(crate) struct ShapeMasks {
    /// True when the check may be used: there are columns, and their types are taken in.
    pub(crate) enabled: bool,
    /// The number of columns.
    ncols: usize,
    /// Per starting column: the columns without a value yet or of booleans (only empty
    /// fields fit), Int64 columns (empty fields and integers fit), Float64 columns that have
    /// seen integers too (empty fields and numbers), Float64 columns that have seen none
    /// (empty fields and decimals), and the last column, whose field ends its record.
    /// Columns that can only be Utf8 are in none of the first four: any field fits.
    phase: Vec<[u64; KINDS]>,
    /// `(c + k) % ncols` at `c + k`, for the column after `k` field ends from column `c`.
    wrap: Vec<u32>,
    /// The kind of each column (`KINDS` for Utf8) that `phase` was last made from (while
    /// `enabled`): an update to the same types leaves `phase` as it is.
    kinds: Vec<u8>,
    /// The kinds of the update being taken in.
    next: Vec<u8>,
}

impl ShapeMasks {
    /// Masks for `ncols` columns, all without a type yet (see [`ShapeMasks::update`]).
    pub(crate) fn new(ncols: usize) -> Self {
        let mut masks = ShapeMasks {
            enabled: false,
            ncols: usize::MAX,
            phase: Vec::new(),
            wrap: Vec::new(),
            kinds: Vec::new(),
            next: Vec::new(),
        };
        masks.set_width(ncols);
        masks
    }

    /// Makes the masks for `ncols` columns, all without a type yet.
    pub(crate) fn set_width(&mut self, ncols: usize) {
        self.enabled = false;
        if ncols == self.ncols {
            return;
        }
        self.ncols = ncols;
        self.kinds.clear();
        self.phase.clear();
        self.phase.resize(ncols, [0; KINDS]);
        self.wrap.clear();
        if ncols > 0 {
            self.wrap
                .extend((0..ncols + 65).map(|i| u32::try_from(i % ncols).unwrap_or(0)));
        }
    }

    /// Takes in the columns' current types.
    pub(crate) fn update(&mut self, cols: &[ColumnInfer]) {
        self.update_from(cols.iter());
    }

    /// Takes in the current types of the columns `cols`, in field order; the masks stay
    /// disabled unless they are as many as the masks' width.
    pub(crate) fn update_from<'a>(&mut self, cols: impl Iterator<Item = &'a ColumnInfer>) {
        let n = self.ncols;
        let was = std::mem::replace(&mut self.enabled, false);
        if n == 0 || u32::try_from(n).is_err() {
            return;
        }
        self.next.clear();
        for c in cols {
            if self.next.len() == n {
                return;
            }
            self.next.push(match c.shape() {
                Shape::Text => KINDS as u8,
                Shape::Int => INT as u8,
                Shape::FloatInt => FLOAT_INT as u8,
                Shape::Float => FLOAT as u8,
                Shape::Bool => BOOL as u8,
                Shape::Other => OTHER as u8,
            });
        }
        if self.next.len() != n {
            return;
        }
        self.enabled = true;
        // Runs are tried after most records read otherwise, which seldom change a type.
        if was && self.next == self.kinds {
            return;
        }
        std::mem::swap(&mut self.kinds, &mut self.next);
        if n <= 64 {
            self.phases_narrow();
        } else {
            self.phases_wide();
        }
    }

    /// The phases of at most 64 columns: each kind's column bits repeated over 128 bits, and
    /// each phase a 64-bit window of them (a few shifts per kind: JSON templates change
    /// often).
    fn phases_narrow(&mut self) {
        let n = self.ncols;
        let mut base = [0u128; KINDS];
        for (k, &kind) in self.kinds.iter().enumerate() {
            if let Some(x) = base.get_mut(usize::from(kind)) {
                *x |= 1 << k;
            }
        }
        base[LAST] = 1 << (n - 1);
        for x in &mut base {
            let mut shift = n;
            while shift < 128 {
                *x |= *x << shift;
                shift *= 2;
            }
        }
        for (c, phase) in self.phase.iter_mut().enumerate() {
            for (p, x) in phase.iter_mut().zip(&base) {
                *p = (x >> c) as u64;
            }
        }
    }

    /// The phases of more than 64 columns (a wide CSV): bit by bit, 64 per column (their
    /// types change a few times per file).
    fn phases_wide(&mut self) {
        let n = self.ncols;
        for (c, phase) in self.phase.iter_mut().enumerate() {
            *phase = [0; KINDS];
            let mut col = c;
            for k in 0..64 {
                if let Some(p) = phase.get_mut(usize::from(self.kinds[col])) {
                    *p |= 1 << k;
                }
                if col == n - 1 {
                    phase[LAST] |= 1 << k;
                    col = 0;
                } else {
                    col += 1;
                }
            }
        }
    }
}

impl ShapeMasks {
    /// The column masks from a field of column `c` on.
    #[inline(always)]
    pub(crate) fn phase(&self, c: usize) -> &[u64; KINDS] {
        &self.phase[c]
    }

    /// The column `n` field ends after one of column `c` (`c` < `ncols`, `n` <= 64).
    #[inline(always)]
    pub(crate) fn advance(&self, c: usize, n: u32) -> usize {
        self.wrap[c + n as usize] as usize
    }
}

/// `x + !t + carry`, and its carry out: the field ends of `t` whose field holds a byte of `x`
/// (or, for the first one, a flagged byte before the block when `carry` is 1) are the sum's
/// bits on `t`; the carry out says that the field going on past the block holds one.
#[inline(always)]
pub(crate) fn carry_to_ends(x: u64, t: u64, carry: u64) -> (u64, u64) {
    let (sum, c1) = x.overflowing_add(!t);
    let (sum, c2) = sum.overflowing_add(carry);
    (sum, u64::from(c1 | c2))
}

/// What the blocks before say about the number facts of the field going on into a block.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NumberCarry {
    /// Carries of [`carry_to_ends`]: the field holds a byte that is not part of an integer,
    /// one that is not part of a number (or a second dot), a dot.
    not_int: u64,
    bad_num: u64,
    dot: u64,
    /// The bytes of the block that field starts of the block before cover (see `deep`).
    cover: u64,
    /// The masks of the block before whose last bits shifts move into the block.
    lead_minus: u64,
    dots: u64,
    dot_starts: u64,
    deep: u64,
}

/// The number facts of the fields of a block, one bit per field end.
pub(crate) struct NumberEnds {
    /// The field holds a byte other than digits and a leading `-`.
    pub(crate) not_int: u64,
    /// The field holds a byte other than digits, a leading `-` and one dot, or is `-`, `.`
    /// or `-.` alone.
    pub(crate) bad_num: u64,
    /// The field holds a dot.
    pub(crate) dotted: u64,
    /// The field runs 18 bytes or more (too long for an integer of [`masked_number`]).
    ///
    /// [`masked_number`]: crate::text::numbers::masked_number
    pub(crate) long: u64,
    /// The field is `-`, `.` or `-.` alone.
    pub(crate) tiny: u64,
    /// The carries into the next block.
    pub(crate) carry: NumberCarry,
}

/// The number facts of the fields of a block: `starts` are the field starts, `body` the
/// bytes of fields, `t` the field ends, `minus`, `dot` and `non_digit` the byte classes.
#[inline(always)]
pub(crate) fn number_ends(
    starts: u64,
    body: u64,
    t: u64,
    minus: u64,
    dot: u64,
    non_digit: u64,
    before: &NumberCarry,
) -> NumberEnds {
    let lead_minus = minus & starts & body;
    let dots = dot & body;
    let not_int = non_digit & body & !lead_minus;
    let not_num = not_int & !dots;
    // Bytes 18 or more past their field's start: smear each start over 18 bytes.
    let s2 = starts | (starts << 1);
    let s16 = {
        let s4 = s2 | (s2 << 2);
        let s8 = s4 | (s4 << 4);
        s8 | (s8 << 8)
    };
    let deep = body & !(s16 | (s2 << 16) | before.cover);
    // Ends of fields that run 18 bytes or more, and of fields `-`, `.` or `-.`.
    let long = ((deep << 1) | (before.deep >> 63)) & t;
    let minus1 = (lead_minus << 1) | (before.lead_minus >> 63);
    let minus2 = (lead_minus << 2) | (before.lead_minus >> 62);
    let dot1 = (dots << 1) | (before.dots >> 63);
    let dot_start1 = ((dots & starts) << 1) | (before.dot_starts >> 63);
    let tiny = (minus1 | dot_start1 | (minus2 & dot1)) & t;
    let (dot_sum, dot_out) = carry_to_ends(dots, t, before.dot);
    // A dot after the first dot of its field: the bits the dots' carries change run from
    // a field's first dot to its end.
    let from_first_dot = (dot_sum ^ !t) | dots;
    let more_dots = dots & ((from_first_dot << 1) | before.dot) & !starts;
    let (not_int_sum, not_int_out) = carry_to_ends(not_int, t, before.not_int);
    let (bad_sum, bad_out) = carry_to_ends(not_num | more_dots, t, before.bad_num);
    NumberEnds {
        not_int: not_int_sum & t,
        bad_num: (bad_sum & t) | tiny,
        dotted: dot_sum & t,
        long,
        tiny,
        carry: NumberCarry {
            not_int: not_int_out,
            bad_num: bad_out,
            dot: dot_out,
            // A start in the last 17 bytes covers the first bytes of the next block.
            cover: match starts >> 47 {
                0 => 0,
                h => u64::MAX >> h.leading_zeros(),
            },
            lead_minus,
            dots,
            dot_starts: dots & starts,
            deep,
        },
    }
}

/// A run of records that fit their columns (see [`stream_records`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    /// Where the run ends: just past the line break of its last record.
    pub(crate) end: usize,
    /// Records in the run.
    pub(crate) rows: u64,
    /// True when the run holds a byte that is not ASCII (the caller checks UTF-8).
    pub(crate) high: bool,
}

impl Run {
    /// An empty run at `start`.
    pub(crate) fn at(start: usize) -> Self {
        Run {
            end: start,
            rows: 0,
            high: false,
        }
    }

    /// Takes in the records that end in the block at `q` (which fits), with line feeds `lf`
    /// and non-ASCII bytes `block_high` (gathered into `high`): all of them, or those up to
    /// `budget` records in the run. True when the budget is reached: the run ends, at the
    /// record that starts the next checkpoint.
    #[inline(always)]
    pub(crate) fn take<const K: usize, W: Window<K>>(
        &mut self,
        q: usize,
        lf: u64,
        block_high: u64,
        budget: u64,
        high: &mut u64,
    ) -> bool {
        let rows = u64::from(lf.count_ones());
        let left = budget - self.rows;
        if rows >= left {
            if left > 0 {
                let last = W::pdep(1 << (left - 1), lf).trailing_zeros() as usize;
                self.end = q + last + 1;
                self.rows = budget;
                *high |= block_high & (u64::MAX >> (63 - last));
            }
            return true;
        }
        *high |= block_high;
        if rows > 0 {
            self.rows += rows;
            self.end = q + 64 - lf.leading_zeros() as usize;
        }
        false
    }
}

/// Scratch space of [`RunValues`], kept from run to run.
#[derive(Debug, Default)]
pub(crate) struct RunScratch {
    ends: Vec<usize>,
}

/// Values of a run kept for their statistics: the value ends (and, for JSON members, the
/// value starts) of the blocks that fit, folded into the columns record by record once a run
/// ends or enough have gathered (see [`ColumnInfer::observe_fitting`]).
pub(crate) struct RunValues<'a> {
    cols: &'a mut [ColumnInfer],
    /// For JSON members, in order: the column of each, and how far its value starts past
    /// the end of the value before (delimited fields are the columns in order, and start
    /// just past the field before).
    order: Option<&'a [(usize, usize)]>,
    /// `ends[0]`: where the value before the first record not folded yet would end (the
    /// line feed of the delimited record before, the closing brace of the JSON line before);
    /// `ends[1..=len]`: the value ends from there on (delimiters, commas and closing braces,
    /// line feeds or the carriage returns before them).
    scratch: &'a mut RunScratch,
    len: usize,
    /// Records of the run folded so far.
    folded: u64,
    /// True once a record ended with a carriage return and a line feed.
    crlf: bool,
}

/// Values gathered before they are folded into the columns: each fold calls every column
/// once, so on wide records fewer, longer folds pay. 8,192 (64 KiB of ends) against 2,048:
/// the 120-column CSV 75.8 → 72.3 ms with default statistics and 70.6 → 65.9 ms with all
/// (one thread, min of 8), the quoted CSV and nested NDJSON unchanged.
const FOLD_AT: usize = 8192;

impl<'a> RunValues<'a> {
    /// Values for the delimited columns `cols` (that the run's masks were made from) of a
    /// run starting at `start` (not 0: a record start after a line feed).
    pub(crate) fn delimited(
        cols: &'a mut [ColumnInfer],
        scratch: &'a mut RunScratch,
        start: usize,
    ) -> Self {
        RunValues::new(cols, None, scratch, start.wrapping_sub(1))
    }

    /// Values for the JSON lines of a run starting at `start` (at a line's `{`, after a line
    /// feed), whose members are the columns of `order`, each with how far its value starts
    /// past the end of the value before: `"name":` and the comma before it, and for the first
    /// member `"name":`, the brace and the line feed before it and the closing brace of the
    /// line before.
    pub(crate) fn members(
        cols: &'a mut [ColumnInfer],
        order: &'a [(usize, usize)],
        scratch: &'a mut RunScratch,
        start: usize,
    ) -> Self {
        // As if the line before closed its brace just before its line feed.
        RunValues::new(cols, Some(order), scratch, start.wrapping_sub(2))
    }

    fn new(
        cols: &'a mut [ColumnInfer],
        order: Option<&'a [(usize, usize)]>,
        scratch: &'a mut RunScratch,
        before: usize,
    ) -> Self {
        if scratch.ends.is_empty() {
            scratch.ends.resize(1 + FOLD_AT + 64, 0);
        }
        scratch.ends[0] = before;
        RunValues {
            cols,
            order,
            scratch,
            len: 0,
            folded: 0,
            crlf: false,
        }
    }

    /// Values per record.
    fn width(&self) -> usize {
        self.order.map_or(self.cols.len(), <[(usize, usize)]>::len)
    }

    /// Adds the value ends `t` of the block at `q`, where `crlf` marks the carriage returns
    /// that end records.
    #[inline(always)]
    pub(crate) fn push<const K: usize, W: Window<K>>(&mut self, q: usize, t: u64, crlf: u64) {
        self.crlf |= crlf != 0;
        self.len += flatten::<K, W>(&mut self.scratch.ends, 1 + self.len, q, t);
    }

    /// Folds the values of the records of the run up to its `rows`th, when they are many
    /// or when `all`.
    #[inline(always)]
    pub(crate) fn fold(&mut self, data: &[u8], rows: u64, all: bool) {
        let ncols = self.width();
        let done = (rows - self.folded) as usize * ncols;
        if done == 0 || !(all || done >= FOLD_AT) {
            return;
        }
        // Value `i` ends at `ends[i + 1]`.
        let ends = &self.scratch.ends[..=done];
        let nrec = done / ncols;
        match self.order {
            Some(order) => {
                for (k, &(c, skip)) in order.iter().enumerate() {
                    let Some(col) = self.cols.get_mut(c) else {
                        continue;
                    };
                    // A `null` is read as an empty value.
                    col.observe_fitting::<true>(data, nrec, |r| {
                        let i = r * ncols + k;
                        let s = ends[i].wrapping_add(skip);
                        (s, if data[s] == b'n' { s } else { ends[i + 1] })
                    });
                }
                self.scratch.ends[0] = ends[done];
            }
            None => {
                // Field `i` starts past `ends[i]`.
                for (c, col) in self.cols.iter_mut().enumerate() {
                    if c == 0 && self.crlf {
                        // Past the line feed after the carriage return that ends the record
                        // before.
                        col.observe_fitting::<false>(data, nrec, |r| {
                            let i = r * ncols;
                            let cr = r > 0 && data[ends[i]] == b'\r';
                            (ends[i].wrapping_add(1 + usize::from(cr)), ends[i + 1])
                        });
                    } else {
                        col.observe_fitting_strided(
                            data,
                            Strided {
                                ends,
                                stride: ncols,
                                col: c,
                                n: nrec,
                            },
                        );
                    }
                }
                // The line feed that ends the last record folded.
                let last = ends[done];
                self.scratch.ends[0] = last + usize::from(data[last] == b'\r');
            }
        }
        self.scratch.ends.copy_within(done + 1..=self.len, 1);
        self.len -= done;
        self.folded = rows;
    }
}

/// Writes the positions `q + k` of the bits `k` of `bits` to `out` from `at` on (see
/// [`Window::flatten`]), growing it when needed; returns how many.
#[inline(always)]
fn flatten<const K: usize, W: Window<K>>(
    out: &mut Vec<usize>,
    at: usize,
    q: usize,
    bits: u64,
) -> usize {
    if out.len() < at + 64 {
        out.resize(at + FOLD_AT + 64, 0);
    }
    match out
        .get_mut(at..at + 64)
        .and_then(|s| <&mut [usize; 64]>::try_from(s).ok())
    {
        Some(slots) => W::flatten(slots, q, bits),
        None => 0,
    }
}

/// The longest run of at most `budget` whole records from the record start `start` that
/// changes no column of `masks`: records of one field per column, without empty lines, whose
/// fields fit their columns' types. The run is read 64-byte block by block and ends at the
/// last record end before the first block that does not fit (or before the last 64 bytes of
/// `data`); it may hold no record.
///
/// Quoted fields are read off the masks too: delimiters, line feeds and carriage returns
/// inside quotes (a prefix XOR of the quote mask, carried across blocks) end nothing, and
/// statistics take a quoted field's inside with each doubled quote read as one
/// ([`ColumnInfer::observe_fitting`]). A quote must be where the general path
/// ([`crate::formats::csv`]'s `split_record`) would read it the same way: an opening quote
/// at a field start or just after a closing quote (a doubled quote), a closing quote just
/// before a delimiter, a record end or an opening quote. Any other quote (`ab"c`, `"ab"c`)
/// ends the run there, and so does a quoted field in a numeric or boolean column (the quote
/// is not a digit, and booleans are checked unquoted): the general path reads those.
#[inline(always)]
pub(crate) fn stream_records<W: Window<CSV>>(
    data: &[u8],
    start: usize,
    delim: u8,
    cache: &mut MaskCache<CSV>,
    masks: &ShapeMasks,
    budget: u64,
    mut values: Option<&mut RunValues<'_>>,
) -> Run {
    let mut run = Run::at(start);
    // The column of the block's first field end, what the blocks before say about the
    // number facts of the field going on into this one, and the last bits of the masks that
    // shifts move across.
    let mut col = 0usize;
    let mut numbers = NumberCarry::default();
    // The block before ended a field (or a record) at its last byte: starts at bit 0.
    let (mut p_end, mut p_lf, mut p_crlf) = (1u64 << 63, 1u64 << 63, 0u64);
    // All ones when the block before ended inside quotes; bit 0 set when it ended with a
    // closing quote.
    let (mut p_inside, mut p_close) = (0u64, 0u64);
    let mut high = 0u64;
    let mut q = start;
    'blocks: while let Some(m) = cache.window::<W>(data, q, delim) {
        let phase = &masks.phase[col];
        let quotes = m[QUOTE];
        // Quoted bytes: from an opening quote up to (not including) its closing quote.
        let (inside, open, close) = if quotes == 0 {
            (p_inside, 0, 0)
        } else {
            let inside = W::inside(quotes) ^ p_inside;
            (inside, quotes & inside, quotes & !inside)
        };
        let lf = m[NEWLINE] & !inside;
        let next_lf = u64::from(data.get(q + 64) == Some(&b'\n'));
        // A carriage return before a line feed ends the field in its place (one outside
        // quotes is followed by a line feed outside quotes, in the next block too).
        let crlf = m[CR] & !inside & ((lf >> 1) | (next_lf << 63));
        let row_ends = (lf & !((crlf << 1) | (p_crlf >> 63))) | crlf;
        let d = m[DELIM] & !inside;
        let t = d | row_ends;
        let row_starts = (lf << 1) | (p_lf >> 63);
        // One field per column in every record: the record ends are the ends of the fields
        // of the last column. No empty line.
        if W::pdep(phase[LAST], t) != row_ends || row_starts & (lf | crlf) != 0 {
            break;
        }
        // Field starts (a start equals its end when the field is empty).
        let starts = ((d | lf) << 1) | (p_end >> 63);
        if quotes != 0 || p_close != 0 {
            // Just past each closing quote: a field end or the second quote of a pair.
            let after_close = (close << 1) | p_close;
            if open & !(starts | after_close) != 0 || after_close & !(t | open) != 0 {
                break;
            }
        }
        let body = !(d | lf | crlf);
        let n = number_ends(starts, body, t, m[MINUS], m[DOT], m[NON_DIGIT], &numbers);
        // The ends of the fields of each column type.
        let int = W::pdep(phase[INT], t);
        let float_int = W::pdep(phase[FLOAT_INT], t);
        let float = W::pdep(phase[FLOAT], t);
        let misfits = (int & (n.not_int | n.long | n.tiny))
            | (float_int & (n.bad_num | (n.long & !n.dotted)))
            | (float & (n.bad_num | !n.dotted))
            | W::pdep(phase[OTHER], t);
        // Empty fields fit every column.
        if misfits & !starts != 0 {
            break;
        }
        // Booleans are read back from their ends, about one field per record of the
        // columns that have them.
        let mut bools = W::pdep(phase[BOOL], t) & !starts;
        while bools != 0 {
            let end = q + bools.trailing_zeros() as usize;
            bools &= bools - 1;
            if !bool_before(data, start, end, delim) {
                break 'blocks;
            }
        }
        if let Some(v) = values.as_deref_mut() {
            v.push::<CSV, W>(q, t, crlf);
        }
        let full = run.take::<CSV, W>(q, lf, m[HIGH], budget, &mut high);
        if let Some(v) = values.as_deref_mut() {
            v.fold(data, run.rows, false);
        }
        if full {
            break;
        }
        col = masks.advance(col, t.count_ones());
        numbers = n.carry;
        (p_end, p_lf, p_crlf) = (d | lf, lf, crlf);
        p_inside = 0u64.wrapping_sub(inside >> 63);
        p_close = close >> 63;
        q += 64;
    }
    if let Some(v) = values {
        v.fold(data, run.rows, true);
    }
    run.high = high != 0;
    run
}

/// True when the field that ends at `end` (a delimiter or record end outside quotes) is
/// `true` or `false` in any case ([`crate::text::numbers::is_bool`]), unquoted, and starts at
/// or after the record start `start`. The word's bytes are no quotes, so the byte before it
/// is outside quotes too: a delimiter or line feed there starts the field. The last four
/// bytes are compared as one word with their case folded (bit 5 set: exactly the two cases
/// of each letter): a wide CSV reads a boolean every few fields.
#[inline(always)]
fn bool_before(data: &[u8], start: usize, end: usize, delim: u8) -> bool {
    const FOLD: u32 = 0x2020_2020;
    let Some(tail) = end
        .checked_sub(4)
        .and_then(|at| data.get(at..end))
        .and_then(|t| <[u8; 4]>::try_from(t).ok())
    else {
        return false;
    };
    let w = u32::from_le_bytes(tail) | FOLD;
    let at = if w == u32::from_le_bytes(*b"true") {
        end - 4
    } else if w == u32::from_le_bytes(*b"alse")
        && let Some(at) = end.checked_sub(5)
        && data.get(at).is_some_and(|&f| f | 0x20 == b'f')
    {
        at
    } else {
        return false;
    };
    at >= start && (at == start || matches!(data.get(at - 1), Some(&b) if b == delim || b == b'\n'))
}

#[cfg(test)]
mod tests;
