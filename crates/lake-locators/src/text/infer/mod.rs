//! Whole-file type inference for the schemaless formats (CSV family, JSON family, MsgPack,
//! XLSX), shared so that every format follows the same rules (`docs/lake-map.md` §9).
//!
//! Per column: Int64 when every non-null value is an integer within i64, Float64 when every
//! value is a number, Boolean when every value is `true`/`false`, otherwise Utf8; a column
//! without any non-null value is Utf8. The accumulators also gather the statistics of §6 in
//! the same pass, so that an index with statistics never decodes the file twice: integer,
//! float and string bounds are kept side by side until the final type picks one of them.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::locator::{ColumnStats, Stats, StatsColumns, repeated_names};
pub(crate) use crate::text::bounds::{NumBounds, max_f64, min_f64};
use crate::text::bounds::{TextBounds, prefix_key};
use crate::text::keys::Strided;
use crate::text::numbers::{
    KEY_FRAC, NumberKind, decimal_parts_at, dot_in, has_quote, int_value_at, is_bool, is_i64_text,
    is_number, key_float, key_int, masked_number, number_key, number_kind, parse_i64, word_at,
};
use crate::text::scan::unescape_into;

/// The values that fit a column without changing it (see [`ColumnInfer::shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Utf8 whatever comes: any value.
    Text,
    /// Integers only so far: nulls and integers.
    Int,
    /// Integers and other numbers: nulls and numbers.
    FloatInt,
    /// Numbers that are not integers: nulls and decimals.
    Float,
    /// Booleans only so far: nulls and `true`/`false` in any case ([`is_bool`]).
    Bool,
    /// No value yet: nulls only.
    Other,
}

/// Type and statistics accumulator of one column.
#[derive(Debug, Clone)]
pub(crate) struct ColumnInfer {
    /// The column's name.
    pub(crate) name: String,
    /// True when the name holds no quote or backslash, so that a JSON member name whose raw
    /// bytes equal it needs no escape decoding.
    plain_name: bool,
    /// For a plain name of up to 7 bytes: the name and its closing quote as a little-endian
    /// word, and the mask of those bytes, so that a member name is matched in one compare.
    key_word: Option<(u64, u64)>,
    seen_int: bool,
    seen_float: bool,
    seen_bool: bool,
    seen_str: bool,
    /// True when statistics of this column are wanted.
    track: bool,
    /// True when the text bounds of numbers may be left out while the column is numeric
    /// (see [`Columns::lazy_text_bounds`]).
    lazy: bool,
    /// True once a number's text bounds were left out.
    deferred: bool,
    /// Where the caller's rescan for the left-out text bounds may stop (see
    /// [`Columns::mark_pending`]).
    pub(crate) pending_until: Option<usize>,
    int_bounds: Option<(i64, i64)>,
    float_bounds: Option<(f64, f64)>,
    str_bounds: Option<TextBounds>,
    /// Numeric bounds of the blocks flushed so far (see [`Columns::flush_block`]).
    done: NumBounds,
}

/// The smallest and largest [`number_key`] (with `frac` fraction digits) of the `n` values
/// `data[s..e]` for `(s, e) = field(r)` (empty ones left out); a value without a key is
/// passed to `slow`. `(i64::MAX, i64::MIN)` when no value has a key.
#[inline(always)]
fn key_bounds(
    data: &[u8],
    n: usize,
    frac: u32,
    field: &impl Fn(usize) -> (usize, usize),
    slow: &mut impl FnMut(usize, usize),
) -> (i64, i64) {
    // Compiled with BMI1 and BMI2 where the CPU has them (see `with_bmi2`).
    crate::simd::with_bmi2(
        #[inline(always)]
        || key_bounds_plain(data, n, frac, field, slow),
    )
}

/// [`key_bounds`], for any CPU.
#[inline(always)]
fn key_bounds_plain(
    data: &[u8],
    n: usize,
    frac: u32,
    field: &impl Fn(usize) -> (usize, usize),
    slow: &mut impl FnMut(usize, usize),
) -> (i64, i64) {
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for r in 0..n {
        let (s, e) = field(r);
        if s < e {
            match number_key(data, s, e, frac) {
                Some(k) => (lo, hi) = (lo.min(k), hi.max(k)),
                None => slow(s, e),
            }
        }
    }
    (lo, hi)
}

/// [`prefix_key`] of `data[start..end]`, from one word read when 8 bytes are there.
#[inline(always)]
fn prefix_key_at(data: &[u8], start: usize, end: usize) -> u64 {
    let n = end - start;
    match word_at(data, start) {
        Some(w) if n >= 8 => w.swap_bytes(),
        // Keeps the top `n` bytes of the big-endian word (none when `n` is 0).
        Some(w) => w.swap_bytes() & !(u64::MAX >> (8 * n)),
        None => prefix_key(&data[start..end]),
    }
}

impl ColumnInfer {
    /// A fresh accumulator; `track` enables statistics.
    pub(crate) fn new(name: String, track: bool) -> Self {
        let plain_name = !name.bytes().any(|b| b == b'"' || b == b'\\');
        let key_word = (plain_name && name.len() < 8).then(|| {
            let mut bytes = [0u8; 8];
            bytes[..name.len()].copy_from_slice(name.as_bytes());
            bytes[name.len()] = b'"';
            let mask = u64::MAX >> (8 * (7 - name.len()));
            (u64::from_le_bytes(bytes), mask)
        });
        ColumnInfer {
            plain_name,
            key_word,
            name,
            seen_int: false,
            seen_float: false,
            seen_bool: false,
            seen_str: false,
            track,
            lazy: false,
            deferred: false,
            pending_until: None,
            int_bounds: None,
            float_bounds: None,
            str_bounds: None,
            done: NumBounds::default(),
        }
    }

    /// What values fit the column without changing it, for [`crate::text::rowshape`].
    #[inline]
    pub(crate) fn shape(&self) -> Shape {
        if self.is_text() {
            Shape::Text
        } else if self.seen_bool {
            Shape::Bool
        } else if !(self.seen_int || self.seen_float) {
            Shape::Other
        } else if !self.seen_float {
            Shape::Int
        } else if self.seen_int {
            Shape::FloatInt
        } else {
            Shape::Float
        }
    }

    /// A column without statistics whose values so far give it `shape`.
    #[cfg(test)]
    pub(crate) fn with_shape(shape: Shape) -> Self {
        let mut c = ColumnInfer::new("c".into(), false);
        match shape {
            Shape::Text => c.seen_str = true,
            Shape::Int => c.seen_int = true,
            Shape::FloatInt => (c.seen_int, c.seen_float) = (true, true),
            Shape::Float => c.seen_float = true,
            Shape::Bool => c.seen_bool = true,
            Shape::Other => {}
        }
        c
    }

    /// True once the column can only be Utf8 (callers may skip classifying its values).
    #[inline]
    pub(crate) fn is_text(&self) -> bool {
        self.seen_str || (self.seen_bool && (self.seen_int || self.seen_float))
    }

    /// True while the column may still become Float64.
    #[inline]
    pub(crate) fn may_be_number(&self) -> bool {
        !(self.seen_str || self.seen_bool)
    }

    /// True while the column may still become Boolean.
    #[inline]
    pub(crate) fn may_be_bool(&self) -> bool {
        !(self.seen_str || self.seen_int || self.seen_float)
    }

    /// True when statistics are gathered for this column.
    #[inline]
    pub(crate) fn tracks(&self) -> bool {
        self.track
    }

    /// Records an integer value whose text is `text`.
    #[inline]
    pub(crate) fn int(&mut self, v: i64, text: &[u8]) {
        self.int_keyed(v, text, prefix_key(text));
    }

    /// [`ColumnInfer::int`] with the text's [`prefix_key`] already known.
    #[inline(always)]
    fn int_keyed(&mut self, v: i64, text: &[u8], key: u64) {
        self.seen_int = true;
        if self.track {
            self.int_bounds_add(v, v);
            // The float bounds of an Int64 column that turns Float64 later come from the
            // integer bounds at the end (see `stats`), not from a conversion per value.
            self.number_text_bounds(text, key);
        }
    }

    /// Records a number that is not an i64 integer, whose text is `text`.
    #[inline]
    pub(crate) fn float(&mut self, v: f64, text: &[u8]) {
        self.float_keyed(v, text, prefix_key(text));
    }

    /// [`ColumnInfer::float`] with the text's [`prefix_key`] already known.
    #[inline(always)]
    fn float_keyed(&mut self, v: f64, text: &[u8], key: u64) {
        self.seen_float = true;
        if self.track {
            self.float_bounds_add(v);
            self.number_text_bounds(text, key);
        }
    }

    /// Records a boolean whose text is `text`.
    #[inline]
    pub(crate) fn boolean(&mut self, text: &[u8]) {
        self.seen_bool = true;
        if self.track {
            // Like a number's: needed only if the column ends up Utf8.
            self.number_text_bounds(text, prefix_key(text));
        }
    }

    /// Records a text value.
    #[inline]
    pub(crate) fn text(&mut self, text: &[u8]) {
        self.seen_str = true;
        if self.track {
            self.text_bounds(text);
        }
    }

    /// Widens the integer bounds to `lo..=hi`.
    #[inline(always)]
    fn int_bounds_add(&mut self, lo: i64, hi: i64) {
        self.int_bounds = Some(match self.int_bounds {
            None => (lo, hi),
            Some((l, h)) => (l.min(lo), h.max(hi)),
        });
    }

    #[inline]
    fn float_bounds_add(&mut self, v: f64) {
        if v.is_nan() {
            return;
        }
        self.float_bounds = Some(match self.float_bounds {
            None => (v, v),
            Some((lo, hi)) => (min_f64(lo, v), max_f64(hi, v)),
        });
    }

    /// The text bounds of a number or boolean: needed only if the column ends up Utf8, so a
    /// lazy column that is still numeric or boolean leaves them out and remembers it.
    #[inline(always)]
    fn number_text_bounds(&mut self, text: &[u8], key: u64) {
        if self.lazy && !self.is_text() {
            self.deferred = true;
        } else {
            self.text_bounds_keyed(text, key);
        }
    }

    /// True when the column turned Utf8 after numbers whose text bounds were left out: its
    /// text statistics need those numbers again (a rescan of the rows before the turn).
    #[inline]
    pub(crate) fn pending_text(&self) -> bool {
        self.deferred && self.track && self.is_text()
    }

    /// Joins the text bounds of `other` (the same column over some of the same rows, read
    /// without laziness) into this column's.
    pub(crate) fn merge_text_bounds(&mut self, other: &ColumnInfer) {
        if let Some(b) = &other.str_bounds {
            for bound in [&b.lo, &b.hi] {
                let short = bound.key.to_be_bytes();
                self.text_bounds_keyed(bound.bytes(&short), bound.key);
            }
        }
        self.deferred = false;
    }

    /// Joins `other`, the same column over other rows of the same file (a range scanned on
    /// another thread): every fact and bound is a union, so the result is the column of
    /// both ranges read in one pass, whatever the order.
    pub(crate) fn merge(&mut self, other: &ColumnInfer) {
        self.seen_int |= other.seen_int;
        self.seen_float |= other.seen_float;
        self.seen_bool |= other.seen_bool;
        self.seen_str |= other.seen_str;
        self.deferred |= other.deferred;
        if let Some((lo, hi)) = other.int_bounds {
            self.int_bounds_add(lo, hi);
        }
        if let Some((lo, hi)) = other.float_bounds {
            self.float_bounds = Some(match self.float_bounds {
                None => (lo, hi),
                Some((a, b)) => (min_f64(a, lo), max_f64(b, hi)),
            });
        }
        if let Some(b) = &other.str_bounds {
            for bound in [&b.lo, &b.hi] {
                let short = bound.key.to_be_bytes();
                self.text_bounds_keyed(bound.bytes(&short), bound.key);
            }
        }
    }

    /// True when a number's text bounds were left out (see [`Columns::lazy_text_bounds`]).
    pub(crate) fn deferred(&self) -> bool {
        self.deferred
    }

    #[inline]
    fn text_bounds(&mut self, text: &[u8]) {
        self.text_bounds_keyed(text, prefix_key(text));
    }

    /// Updates the text bounds with `text` whose [`prefix_key`] is `key`: the common case of
    /// a text inside the bounds is decided here by key comparisons; updates go out of line.
    #[inline(always)]
    fn text_bounds_keyed(&mut self, text: &[u8], key: u64) {
        TextBounds::add(&mut self.str_bounds, text, key);
    }

    /// Records a number that [`number_kind`] or [`crate::text::numbers::json_number_end`] certified
    /// as `Int` or `Decimal`, computing its value only when statistics are tracked.
    /// The number is `data[start..end]`, a range of the whole buffer, so that its text bounds
    /// key is read as one word; `dot` is the position of a `Decimal`'s dot when the caller
    /// knows it.
    #[inline(always)]
    pub(crate) fn known_number(
        &mut self,
        data: &[u8],
        start: usize,
        end: usize,
        kind: NumberKind,
        dot: Option<usize>,
    ) {
        let text = &data[start..end];
        match kind {
            NumberKind::Int if self.track => self.int_keyed(
                int_value_at(data, start, end),
                text,
                prefix_key_at(data, start, end),
            ),
            NumberKind::Int => self.seen_int = true,
            NumberKind::Decimal if self.track => {
                let dot = dot.unwrap_or_else(|| dot_in(data, start, end).unwrap_or(end));
                match decimal_parts_at(data, start, dot, end) {
                    Some(d) => {
                        let key = prefix_key_at(data, start, end);
                        // A value inside the bounds changes none: most values of a column
                        // are decided without the division of the exact conversion.
                        match self.float_bounds {
                            Some((lo, hi)) if d.strictly_inside(lo, hi) => {
                                self.seen_float = true;
                                self.number_text_bounds(text, key);
                            }
                            _ => self.float_keyed(d.value(), text, key),
                        }
                    }
                    None => {
                        self.number_text(text);
                    }
                }
            }
            NumberKind::Decimal => self.seen_float = true,
            NumberKind::Unknown => {
                self.number_text(text);
            }
        }
    }

    /// Records `text` as a number when it is one (an i64 integer or a plain decimal number)
    /// and returns whether it was. Without statistics a non-integer is only validated, never
    /// converted, which keeps the indexing pass cheap.
    #[inline]
    pub(crate) fn number_text(&mut self, text: &[u8]) -> bool {
        if !self.track {
            // Classification only: validating digits needs no dependent multiply chain.
            if is_i64_text(text) {
                self.seen_int = true;
                return true;
            }
            if is_number(text) {
                self.seen_float = true;
                return true;
            }
            return false;
        }
        if let Some(v) = parse_i64(text) {
            self.int(v, text);
            return true;
        }
        if !is_number(text) {
            return false;
        }
        if self.track {
            match std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
            {
                Some(v) => self.float(v, text),
                None => return false,
            }
        } else {
            self.seen_float = true;
        }
        true
    }

    /// Classifies one delimited-text field (already unquoted; empty = null) and records it.
    #[inline]
    pub(crate) fn observe_text_field(&mut self, field: &[u8]) {
        if field.is_empty() {
            return;
        }
        if !self.track {
            // Classification only, inline: the common case of an index without statistics.
            if !self.is_text() {
                if self.may_be_number() {
                    if is_i64_text(field) {
                        self.seen_int = true;
                        return;
                    }
                    if is_number(field) {
                        self.seen_float = true;
                        return;
                    }
                }
                if self.may_be_bool() && is_bool(field) {
                    self.seen_bool = true;
                    return;
                }
            }
            self.seen_str = true;
            return;
        }
        if !self.is_text() {
            if self.may_be_number() && self.number_text(field) {
                return;
            }
            if self.may_be_bool() && is_bool(field) {
                self.boolean(field);
                return;
            }
        }
        self.text(field);
    }

    /// Classifies the delimited-text field `data[start..end]` (empty = null) and records it,
    /// like [`ColumnInfer::observe_text_field`]. Without statistics, a column that can only be
    /// Utf8 is not looked at, and plain numbers are recognised a word at a time: the field is
    /// a range of the whole buffer, so words may be read past its end without copying.
    #[inline(always)]
    pub(crate) fn observe_field_at(&mut self, data: &[u8], start: usize, end: usize) {
        if start < end {
            if self.is_text() {
                if self.track {
                    self.text_bounds_keyed(&data[start..end], prefix_key_at(data, start, end));
                }
                return;
            }
            if self.may_be_number() {
                let kind = number_kind(data, start, end);
                if kind != NumberKind::Unknown {
                    self.known_number(data, start, end, kind, None);
                    return;
                }
            }
        }
        self.observe_text_field(&data[start..end]);
    }

    /// Classifies the delimited-text field `data[base + s..base + t]` (empty = null; `t` < 64)
    /// and records it, like [`ColumnInfer::observe_field_at`], with the number shape read off
    /// `non_digit`, the mask of the bytes from `base` on that are not ASCII digits (see
    /// [`crate::simd::csv_class`]): `-?[0-9]{1,18}` is `Int`, digits with one `.` are `Decimal`.
    #[inline(always)]
    pub(crate) fn observe_masked(
        &mut self,
        data: &[u8],
        base: usize,
        s: u32,
        t: u32,
        non_digit: u64,
    ) {
        let (start, end) = (base + s as usize, base + t as usize);
        if s >= t {
            return;
        }
        if self.is_text() {
            if self.track {
                self.text_bounds_keyed(&data[start..end], prefix_key_at(data, start, end));
            }
            return;
        }
        if self.may_be_number() {
            let (kind, dot) = masked_number(data, base, s, t, non_digit);
            if kind != NumberKind::Unknown {
                self.known_number(data, start, end, kind, Some(dot));
                return;
            }
        }
        self.observe_text_field(&data[start..end]);
    }

    /// Records `n` values, value `r` being `data[s..e]` for `(s, e) = field(r)` (empty =
    /// null), each of which a run of [`crate::text::rowshape`] or of the JSON runs
    /// (`formats::json::run`) found to fit the column's type: their type is known (numbers of
    /// the column's kind, anything for a Utf8 column), so only the statistics move, in one loop
    /// per column without a classification per value. With `QUOTED` (JSON), a value that starts
    /// with a quote is a string, recorded without its quotes.
    #[inline(always)]
    pub(crate) fn observe_fitting<const QUOTED: bool>(
        &mut self,
        data: &[u8],
        n: usize,
        field: impl Fn(usize) -> (usize, usize),
    ) {
        if !self.track {
            return;
        }
        match self.shape() {
            Shape::Text => {
                let mut unescaped = Vec::new();
                for r in 0..n {
                    let (mut s, mut e) = field(r);
                    if QUOTED && s < e && data[s] == b'"' {
                        (s, e) = (s + 1, e - 1);
                        if s == e {
                            self.text_bounds_keyed(b"", 0);
                            continue;
                        }
                    } else if !QUOTED && e >= s + 2 && data[s] == b'"' && data[e - 1] == b'"' {
                        // A quoted delimited field: its inside, a doubled quote read as one,
                        // `""` a null, as `formats::csv` reads it.
                        (s, e) = (s + 1, e - 1);
                        if has_quote(data, s, e) {
                            unescape_into(&data[s..e], &mut unescaped);
                            self.text_bounds(&unescaped);
                            continue;
                        }
                    }
                    if s < e {
                        self.text_bounds_keyed(&data[s..e], prefix_key_at(data, s, e));
                    }
                }
            }
            // Numbers of a numeric column that stays numeric: their text bounds wait (see
            // `lazy_text_bounds`), and most values are folded as integer keys.
            Shape::Int | Shape::FloatInt | Shape::Float if self.lazy => {
                let frac = self.key_frac();
                let (lo, hi) = key_bounds(data, n, frac, &field, &mut |s, e| {
                    self.fitting_number(data, s, e)
                });
                self.take_keys(lo, hi, frac);
            }
            Shape::Int | Shape::FloatInt | Shape::Float => {
                for r in 0..n {
                    let (s, e) = field(r);
                    if s < e {
                        self.fitting_number(data, s, e);
                    }
                }
            }
            // Unquoted booleans (the delimited runs read no quoted one; JSON runs none at all):
            // their text bounds wait in a lazy column, as numbers' do.
            // (Left out for empty fields too: a rescan that finds nothing costs only time.)
            Shape::Bool if self.lazy => self.deferred |= n > 0,
            Shape::Bool => {
                for r in 0..n {
                    let (s, e) = field(r);
                    if s < e {
                        self.text_bounds(&data[s..e]);
                    }
                }
            }
            // Only empty fields fit a column without a value.
            Shape::Other => {}
        }
    }

    /// [`ColumnInfer::observe_fitting`] of the delimited fields `f` of a run: a numeric
    /// column's keys eight at a time where the CPU can ([`crate::text::keys`]).
    pub(crate) fn observe_fitting_strided(&mut self, data: &[u8], f: Strided<'_>) {
        if self.track
            && self.lazy
            && matches!(self.shape(), Shape::Int | Shape::FloatInt | Shape::Float)
        {
            let frac = self.key_frac();
            let keys = crate::text::keys::strided_key_bounds(data, f, frac, &mut |s, e| {
                self.fitting_number(data, s, e)
            });
            if let Some((lo, hi)) = keys {
                self.take_keys(lo, hi, frac);
                return;
            }
        }
        self.observe_fitting::<false>(data, f.n, |r| f.field(r));
    }

    /// The fraction digits of the keys of this numeric column's values.
    fn key_frac(&self) -> u32 {
        if self.seen_float { KEY_FRAC } else { 0 }
    }

    /// Takes in the smallest and largest key (`frac` fraction digits) of fitting numbers, when
    /// any had one (`lo <= hi`); their text bounds wait (see `lazy_text_bounds`).
    fn take_keys(&mut self, lo: i64, hi: i64, frac: u32) {
        if lo <= hi {
            self.deferred = true;
            if frac == 0 {
                self.int_bounds_add(key_int(lo), key_int(hi));
            } else {
                // Integers of a Float64 column join its float bounds here (exactly: the
                // final bounds are the same, see `stats`).
                self.float_bounds_add(key_float(lo, frac));
                self.float_bounds_add(key_float(hi, frac));
            }
        }
    }

    /// Records the number `data[s..e]` that fits the column (see
    /// [`ColumnInfer::observe_fitting`]).
    #[inline(always)]
    fn fitting_number(&mut self, data: &[u8], s: usize, e: usize) {
        match dot_in(data, s, e) {
            Some(dot) => self.known_number(data, s, e, NumberKind::Decimal, Some(dot)),
            None => self.known_number(data, s, e, NumberKind::Int, None),
        }
    }

    /// The inferred Arrow type.
    pub(crate) fn data_type(&self) -> DataType {
        if self.is_text() {
            DataType::Utf8
        } else if self.seen_bool {
            DataType::Boolean
        } else if self.seen_float {
            DataType::Float64
        } else if self.seen_int {
            DataType::Int64
        } else {
            DataType::Utf8
        }
    }

    /// The statistics of the inferred type, when tracked and any value was seen.
    pub(crate) fn stats(&self) -> Option<ColumnStats> {
        if !self.track {
            return None;
        }
        match self.data_type() {
            DataType::Utf8 => self.str_bounds.as_ref().map(|b| ColumnStats::Str {
                min_str: b.lo.to_text(),
                max_str: b.hi.to_text(),
            }),
            ty => self.numeric().stats(&ty),
        }
    }

    /// The numeric bounds gathered since the last [`ColumnInfer::flush_block`].
    fn numeric(&self) -> NumBounds {
        NumBounds {
            int: self.int_bounds,
            float: self.float_bounds,
        }
    }

    /// Ends a block: returns the numeric bounds of its rows and starts the next block's
    /// from none (the file's are kept aside until [`ColumnInfer::fold_blocks`]).
    pub(crate) fn flush_block(&mut self) -> NumBounds {
        let b = self.numeric();
        self.done.merge(&b);
        (self.int_bounds, self.float_bounds) = (None, None);
        b
    }

    /// Makes the numeric bounds those of every row again, after blocks were flushed.
    pub(crate) fn fold_blocks(&mut self) {
        let mut all = std::mem::take(&mut self.done);
        all.merge(&self.numeric());
        (self.int_bounds, self.float_bounds) = (all.int, all.float);
    }
}

/// Up to this many columns, [`Columns::index_of`] searches names instead of hashing.
const LINEAR_COLUMNS: usize = 16;

/// The columns of one file, in order of first appearance, with a name lookup for formats
/// whose rows name their fields (JSON objects, MsgPack maps).
#[derive(Debug, Clone, Default)]
pub(crate) struct Columns {
    /// The accumulators, in column order.
    pub(crate) cols: Vec<ColumnInfer>,
    /// Numeric bounds per checkpoint block of the scan, when its blocks were flushed.
    pub(crate) block_bounds: Vec<crate::text::bounds::BlockBounds>,
    by_name: HashMap<Vec<u8>, usize>,
    lazy: bool,
}

impl Columns {
    /// Columns with fixed names (a delimited header), statistics per `wanted` except for a
    /// name the header repeats ([`repeated_names`]).
    pub(crate) fn with_names(names: &[String], wanted: &StatsColumns) -> Self {
        let repeated = repeated_names(names.iter().map(String::as_str));
        let mut c = Columns::default();
        for n in names {
            let i = c.push(n.clone(), wanted);
            if repeated.contains(n.as_str())
                && let Some(col) = c.cols.get_mut(i)
            {
                col.track = false;
            }
        }
        c
    }

    fn push(&mut self, name: String, wanted: &StatsColumns) -> usize {
        let idx = self.cols.len();
        self.by_name.entry(name.as_bytes().to_vec()).or_insert(idx);
        let track = wanted.wants(&name);
        let mut c = ColumnInfer::new(name, track);
        c.lazy = self.lazy;
        self.cols.push(c);
        idx
    }

    /// Lets numbers leave their text bounds out while their column is numeric: most
    /// numeric columns stay numeric, and their text bounds would only be used if the column
    /// turned Utf8. A caller that sets this must, for every column whose
    /// [`ColumnInfer::pending_text`] holds at the end, read the rows before its turn again
    /// without laziness and join the text bounds found ([`Columns::join_pending`]).
    pub(crate) fn lazy_text_bounds(&mut self) {
        self.lazy = true;
        for c in &mut self.cols {
            c.lazy = true;
        }
    }

    /// Notes `at` (a byte position the reading has reached) as the end of the rescan of
    /// every column that turned pending before it; cheap enough to call once per block.
    pub(crate) fn mark_pending(&mut self, at: usize) {
        for c in &mut self.cols {
            if c.pending_until.is_none() && c.pending_text() {
                c.pending_until = Some(at);
            }
        }
    }

    /// How far a rescan must read for the pending columns (`end` for columns that turned
    /// after the last mark), or `None` when no column is pending.
    pub(crate) fn pending_end(&self, end: usize) -> Option<usize> {
        self.cols
            .iter()
            .filter(|c| c.pending_text())
            .map(|c| c.pending_until.unwrap_or(end))
            .max()
    }

    /// Joins the text bounds that `rescan` (the same file's first rows, read without
    /// laziness) found for every pending column.
    pub(crate) fn join_pending(&mut self, rescan: &Columns) {
        for (pos, c) in self.cols.iter_mut().enumerate() {
            if !c.pending_text() {
                continue;
            }
            // The column at the same position first: a delimited header may repeat a name,
            // and the lookup by name would join another column's bounds.
            let other = match rescan.cols.get(pos) {
                Some(o) if eq_short(o.name.as_bytes(), c.name.as_bytes()) => Some(o),
                _ => rescan
                    .by_name
                    .get(c.name.as_bytes())
                    .and_then(|&i| rescan.cols.get(i)),
            };
            if let Some(other) = other {
                c.merge_text_bounds(other);
            }
        }
    }

    /// Joins `other`, the columns of a later range of the same file (see
    /// [`ColumnInfer::merge`]); its new columns follow, in their order of first appearance.
    pub(crate) fn merge(&mut self, other: &Columns, wanted: &StatsColumns) {
        for (hint, c) in other.cols.iter().enumerate() {
            let i = self.index_of(c.name.as_bytes(), hint, wanted);
            if let Some(mine) = self.cols.get_mut(i) {
                mine.merge(c);
            }
        }
    }

    /// The index of the column named `key`, adding it at the end when new. `hint` is the
    /// index the caller expects (the previous key's index + 1); rows that keep one key order
    /// then never hash.
    #[inline]
    pub(crate) fn index_of(&mut self, key: &[u8], hint: usize, wanted: &StatsColumns) -> usize {
        if let Some(c) = self.cols.get(hint)
            && eq_short(c.name.as_bytes(), key)
        {
            return hint;
        }
        // A few columns are searched (lengths first) faster than a name is hashed: rows of
        // varying key order miss the hint at most keys.
        let found = if self.cols.len() <= LINEAR_COLUMNS {
            self.cols
                .iter()
                .position(|c| eq_short(c.name.as_bytes(), key))
        } else {
            self.by_name.get(key).copied()
        };
        match found {
            Some(i) => i,
            None => self.push(String::from_utf8_lossy(key).into_owned(), wanted),
        }
    }

    /// When the member name whose first byte is `data[at]` (just after its opening quote)
    /// is exactly the plain name of column `hint` followed by the closing quote, the position
    /// just past that quote: rows that keep one key order then never scan their keys.
    #[inline(always)]
    pub(crate) fn expected_key(&self, hint: usize, data: &[u8], at: usize) -> Option<usize> {
        let c = self.cols.get(hint)?;
        if let Some((pattern, mask)) = c.key_word
            && let Some(w) = word_at(data, at)
        {
            return (w & mask == pattern).then_some(at + c.name.len() + 1);
        }
        if !c.plain_name {
            return None;
        }
        let name = c.name.as_bytes();
        let end = at + name.len();
        (data.get(end) == Some(&b'"') && eq_short(&data[at..end], name)).then_some(end + 1)
    }

    /// The inferred schema (every field nullable).
    pub(crate) fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            self.cols
                .iter()
                .map(|c| Field::new(c.name.clone(), c.data_type(), true))
                .collect::<Vec<_>>(),
        ))
    }

    /// The statistics of every tracked column that holds a value.
    pub(crate) fn stats(&self) -> Stats {
        let mut stats = Stats::new();
        for c in &self.cols {
            if let Some(s) = c.stats() {
                stats.insert(c.name.clone(), s);
            }
        }
        stats
    }
}

/// Byte equality that compares short slices inline: column names are short, and a `memcmp`
/// call per key of every JSON row showed in profiles.
#[inline(always)]
fn eq_short(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() <= 16 {
        a.iter().zip(b).all(|(x, y)| x == y)
    } else {
        a == b
    }
}

/// Replaces top-level Null types (all-null columns of arrow-json's inference) by Utf8.
pub(crate) fn null_to_utf8(schema: &Schema) -> SchemaRef {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| {
                let t = match f.data_type() {
                    DataType::Null => DataType::Utf8,
                    other => other.clone(),
                };
                // Field metadata (a JSON text column's extension type) is kept.
                Field::new(f.name().clone(), t, true).with_metadata(f.metadata().clone())
            })
            .collect::<Vec<_>>(),
    ))
}

#[cfg(test)]
mod tests;
