//! Whole-file type inference for the schemaless formats (CSV family, JSON family, MsgPack,
//! XLSX), shared so that every format follows the same rules (lake-map §9).
//!
//! Per column: Int64 when every non-null value is an integer within i64, Float64 when every
//! value is a number, Boolean when every value is `true`/`false`, otherwise Utf8; a column
//! without any non-null value is Utf8. The accumulators also gather the statistics of §6 in
//! the same pass, so that an index with statistics never decodes the file twice: integer,
//! float and string bounds are kept side by side until the final type picks one of them.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::locator::{ColumnStats, Stats, StatsColumns};

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
    int_bounds: Option<(i64, i64)>,
    float_bounds: Option<(f64, f64)>,
    str_bounds: Option<(Vec<u8>, Vec<u8>)>,
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
            int_bounds: None,
            float_bounds: None,
            str_bounds: None,
        }
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
        self.seen_int = true;
        if self.track {
            self.int_bounds = Some(match self.int_bounds {
                None => (v, v),
                Some((lo, hi)) => (lo.min(v), hi.max(v)),
            });
            // An Int64 column that turns Float64 later needs the integers among its bounds;
            // `as` rounds to nearest like a correctly rounding text parser does.
            self.float_bounds_add(v as f64);
            self.text_bounds(text);
        }
    }

    /// Records a number that is not an i64 integer, whose text is `text`.
    #[inline]
    pub(crate) fn float(&mut self, v: f64, text: &[u8]) {
        self.seen_float = true;
        if self.track {
            self.float_bounds_add(v);
            self.text_bounds(text);
        }
    }

    /// Records a boolean whose text is `text`.
    #[inline]
    pub(crate) fn boolean(&mut self, text: &[u8]) {
        self.seen_bool = true;
        if self.track {
            self.text_bounds(text);
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

    #[inline]
    fn float_bounds_add(&mut self, v: f64) {
        if v.is_nan() {
            return;
        }
        self.float_bounds = Some(match self.float_bounds {
            None => (v, v),
            Some((lo, hi)) => (lo.min(v), hi.max(v)),
        });
    }

    #[inline]
    fn text_bounds(&mut self, text: &[u8]) {
        match &mut self.str_bounds {
            None => self.str_bounds = Some((text.to_vec(), text.to_vec())),
            Some((lo, hi)) => {
                if text < lo.as_slice() {
                    lo.clear();
                    lo.extend_from_slice(text);
                } else if text > hi.as_slice() {
                    hi.clear();
                    hi.extend_from_slice(text);
                }
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

    /// Records a number recognised by [`json_number_end`] (`Int` or `Decimal`), for a column
    /// without statistics: classification only, no value is computed.
    #[inline(always)]
    pub(crate) fn untracked_number(&mut self, kind: NumberKind) {
        debug_assert!(!self.track);
        match kind {
            NumberKind::Int => self.seen_int = true,
            NumberKind::Decimal => self.seen_float = true,
            NumberKind::Unknown => {}
        }
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
        if !self.track && start < end {
            if self.is_text() {
                return;
            }
            if self.may_be_number() {
                match number_kind(data, start, end) {
                    NumberKind::Int => {
                        self.seen_int = true;
                        return;
                    }
                    NumberKind::Decimal => {
                        self.seen_float = true;
                        return;
                    }
                    NumberKind::Unknown => {}
                }
            }
        }
        self.observe_text_field(&data[start..end]);
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
            DataType::Int64 => self
                .int_bounds
                .map(|(min, max)| ColumnStats::Int { min, max }),
            DataType::Float64 => self
                .float_bounds
                .map(|(min, max)| ColumnStats::Float { min, max }),
            DataType::Utf8 => self.str_bounds.as_ref().map(|(lo, hi)| ColumnStats::Str {
                min_str: String::from_utf8_lossy(lo).into_owned(),
                max_str: String::from_utf8_lossy(hi).into_owned(),
            }),
            _ => None,
        }
    }
}

/// The columns of one file, in order of first appearance, with a name lookup for formats
/// whose rows name their fields (JSON objects, MsgPack maps).
#[derive(Debug, Clone, Default)]
pub(crate) struct Columns {
    /// The accumulators, in column order.
    pub(crate) cols: Vec<ColumnInfer>,
    by_name: HashMap<Vec<u8>, usize>,
}

impl Columns {
    /// Columns with fixed names (a delimited header), statistics per `wanted`.
    pub(crate) fn with_names(names: &[String], wanted: &StatsColumns) -> Self {
        let mut c = Columns::default();
        for n in names {
            c.push(n.clone(), wanted);
        }
        c
    }

    fn push(&mut self, name: String, wanted: &StatsColumns) -> usize {
        let idx = self.cols.len();
        self.by_name.entry(name.as_bytes().to_vec()).or_insert(idx);
        let track = wanted.wants(&name);
        self.cols.push(ColumnInfer::new(name, track));
        idx
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
        if let Some(&i) = self.by_name.get(key) {
            return i;
        }
        self.push(String::from_utf8_lossy(key).into_owned(), wanted)
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

/// What [`number_kind`] could tell about a field without looking at it byte by byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberKind {
    /// `-?[0-9]{1,18}`: an i64 integer.
    Int,
    /// `-?[0-9]*\.[0-9]*` with at least one digit: a plain decimal number.
    Decimal,
    /// Anything else (an exponent, text, a field longer than 24 bytes or at the end of the
    /// buffer): the caller classifies it byte by byte.
    Unknown,
}

/// The high bit of every byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The little-endian word of the 8 bytes of `data` at `at`, when there are 8.
#[inline(always)]
fn word_at(data: &[u8], at: usize) -> Option<u64> {
    let bytes: [u8; 8] = data.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// One bit per byte of `w` (bit k for byte k) set when that byte is not an ASCII digit.
#[inline(always)]
fn non_digit_bits(w: u64) -> u32 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // Digits become 0..=9; adding 0x76 to the low 7 bits sets the high bit of every byte
    // above 9 without carrying into the next byte (at most 0x7f + 0x76 = 0xf5).
    let x = w ^ 0x3030_3030_3030_3030;
    let high = (x | ((x & LOW7) + 0x7676_7676_7676_7676)) & HIGH_BITS;
    // Gathers the eight high bits into the top byte: the products land on distinct bits.
    (((high >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56) as u32
}

/// Recognises the common plain numbers of the field `data[start..end]` (non-empty) a word
/// at a time. `Int` and `Decimal` are certain; `Unknown` says nothing.
#[inline(always)]
pub(crate) fn number_kind(data: &[u8], start: usize, end: usize) -> NumberKind {
    let n = end.saturating_sub(start);
    if n == 0 {
        return NumberKind::Unknown;
    }
    // Bit k is set when byte `start + k` of the field is not a digit.
    let mask: u32 = if n <= 8 {
        // Near the end of the buffer the word ending with the field serves, shifted down.
        let w = match word_at(data, start) {
            Some(w) => w,
            None => match end.checked_sub(8).and_then(|at| word_at(data, at)) {
                Some(w) => w >> (64 - 8 * n),
                None => return NumberKind::Unknown,
            },
        };
        non_digit_bits(w) & ((1u32 << n) - 1)
    } else if n <= 16 {
        let (Some(a), Some(b)) = (word_at(data, start), word_at(data, end - 8)) else {
            return NumberKind::Unknown;
        };
        non_digit_bits(a) | (non_digit_bits(b) << (n - 8))
    } else if n <= 24 {
        let (Some(a), Some(b), Some(c)) = (
            word_at(data, start),
            word_at(data, start + 8),
            word_at(data, end - 8),
        ) else {
            return NumberKind::Unknown;
        };
        non_digit_bits(a) | (non_digit_bits(b) << 8) | (non_digit_bits(c) << (n - 8))
    } else {
        return NumberKind::Unknown;
    };
    let neg = data[start] == b'-';
    let mask = mask & !u32::from(neg);
    let body = n - usize::from(neg);
    if mask == 0 {
        // At most 24 digits here: only up to 18 are certainly within i64.
        if (1..=18).contains(&body) {
            return NumberKind::Int;
        }
        return NumberKind::Unknown;
    }
    // One non-digit byte, a `.`, with a digit somewhere (`body` counts the dot).
    if mask & (mask - 1) == 0 && data[start + mask.trailing_zeros() as usize] == b'.' && body >= 2 {
        return NumberKind::Decimal;
    }
    NumberKind::Unknown
}

/// The end and kind of the JSON number starting at `data[start]` (a `-` or a digit) when it
/// is recognised a word at a time: `-?[0-9]{1,18}` or a plain decimal within 24 bytes,
/// followed by a byte that cannot continue a number (the byte-by-byte scan would stop there
/// too). `None` says nothing: the caller scans byte by byte.
#[inline(always)]
pub(crate) fn json_number_end(data: &[u8], start: usize) -> Option<(usize, NumberKind)> {
    let neg = data.get(start) == Some(&b'-');
    // Three words are always read: a branch on whether the number goes on past the first
    // word is often mispredicted.
    let mask = (non_digit_bits(word_at(data, start)?)
        | (non_digit_bits(word_at(data, start + 8)?) << 8)
        | (non_digit_bits(word_at(data, start + 16)?) << 16))
        & !u32::from(neg);
    let neg = usize::from(neg);
    let k = mask.trailing_zeros() as usize;
    if k >= 24 {
        return None;
    }
    let continues = |b: u8| matches!(b, b'+' | b'-' | b'.' | b'e' | b'E');
    if data[start + k] == b'.' {
        let k2 = (mask & (mask - 1)).trailing_zeros() as usize;
        // At least one digit besides the dot.
        if k2 < 24 && k2 - neg >= 2 && !continues(data[start + k2]) {
            return Some((start + k2, NumberKind::Decimal));
        }
        return None;
    }
    if (1..=18).contains(&(k - neg)) && !continues(data[start + k]) {
        return Some((start + k, NumberKind::Int));
    }
    None
}

/// True when `text` is `-?[0-9]+` within i64 (what [`parse_i64`] accepts), without computing
/// the value unless it has 19 digits.
#[inline(always)]
pub(crate) fn is_i64_text(text: &[u8]) -> bool {
    let digits = match text.first() {
        Some(b'-') => &text[1..],
        _ => text,
    };
    match digits.len() {
        1..=18 => digits.iter().all(u8::is_ascii_digit),
        19 => parse_i64(text).is_some(),
        _ => false,
    }
}

/// Parses `-?[0-9]+` into an i64, or `None` when the text is not such an integer or overflows.
#[inline]
pub(crate) fn parse_i64(b: &[u8]) -> Option<i64> {
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut acc: i64 = 0;
    if digits.len() < 19 {
        // Up to 18 digits cannot overflow.
        for &d in digits {
            let d = d.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            acc = acc * 10 + i64::from(d);
        }
        return Some(if neg { -acc } else { acc });
    }
    for &d in digits {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        // Accumulate negatively so that i64::MIN parses.
        acc = acc.checked_mul(10)?.checked_sub(i64::from(d))?;
    }
    if neg { Some(acc) } else { acc.checked_neg() }
}

/// True for a plain decimal number: `-?`, digits with at most one `.` (at least one digit),
/// then an optional exponent `[eE][+-]?digits`. No `+` at the start, no `inf`/`NaN` words:
/// exactly what both Rust's and arrow's float parsers accept among such texts.
#[inline(always)]
pub(crate) fn is_number(b: &[u8]) -> bool {
    let mut i = usize::from(b.first() == Some(&b'-'));
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

/// True for `true`/`false` in any letter case (what arrow-csv accepts for Boolean).
#[inline]
pub(crate) fn is_bool(b: &[u8]) -> bool {
    b.eq_ignore_ascii_case(b"true") || b.eq_ignore_ascii_case(b"false")
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
                Field::new(f.name().clone(), t, true)
            })
            .collect::<Vec<_>>(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"12345678901234567890"), None);
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b"1.0"), None);
        assert_eq!(parse_i64(b"+1"), None);
        for t in [
            "0",
            "-12",
            "9223372036854775807",
            "-9223372036854775808",
            "123456789012345678",
        ] {
            assert!(is_i64_text(t.as_bytes()), "{t}");
        }
        for t in [
            "",
            "-",
            "9223372036854775808",
            "12345678901234567890",
            "1.0",
            "+1",
            "1a",
        ] {
            assert!(!is_i64_text(t.as_bytes()), "{t}");
        }
    }

    #[test]
    fn numbers() {
        for ok in [
            "1",
            "-1.5",
            "1.",
            ".5",
            "1e5",
            "-2.5E-300",
            "0.30000000000000004",
        ] {
            assert!(is_number(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "", "-", ".", "+1", "1e", "1e+", "inf", "NaN", "1.2.3", "1-2", "e5", " 1",
        ] {
            assert!(!is_number(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn word_at_a_time_numbers() {
        // Every field is classified inside a longer buffer and at its very end.
        for (text, kind) in [
            ("0", NumberKind::Int),
            ("-7", NumberKind::Int),
            ("12345678", NumberKind::Int),
            ("-12345678", NumberKind::Int),
            ("123456789012345678", NumberKind::Int),
            ("-123456789012345678", NumberKind::Int),
            ("1234567890123456789", NumberKind::Unknown),
            ("-", NumberKind::Unknown),
            (".", NumberKind::Unknown),
            ("-.", NumberKind::Unknown),
            ("1.", NumberKind::Decimal),
            (".5", NumberKind::Decimal),
            ("-.5", NumberKind::Decimal),
            ("-8673.29", NumberKind::Decimal),
            ("2909.6900000000005", NumberKind::Decimal),
            ("-2525.9399999999996", NumberKind::Decimal),
            ("-2525.93999999999999999", NumberKind::Decimal),
            ("-2525.939999999999999999", NumberKind::Decimal),
            ("-2525.9399999999999999999", NumberKind::Unknown),
            ("1.2.3", NumberKind::Unknown),
            ("1e5", NumberKind::Unknown),
            ("--1", NumberKind::Unknown),
            ("1-", NumberKind::Unknown),
            ("12345678-", NumberKind::Unknown),
            ("1234567890123456-", NumberKind::Unknown),
            ("123456789012345678901234", NumberKind::Unknown),
            ("abc", NumberKind::Unknown),
            ("1/2", NumberKind::Unknown),
            ("1:2", NumberKind::Unknown),
            ("9\u{e9}", NumberKind::Unknown),
        ] {
            let inside = format!("{text},999999999999999999999999,x");
            assert_eq!(
                number_kind(inside.as_bytes(), 0, text.len()),
                kind,
                "{text}"
            );
            let padded = format!("{}{text}", "9".repeat(30));
            let b = padded.as_bytes();
            assert_eq!(number_kind(b, 30, b.len()), kind, "{text} at the end");
            // Certain answers agree with the byte-by-byte rules.
            match kind {
                NumberKind::Int => assert!(is_i64_text(text.as_bytes()), "{text}"),
                NumberKind::Decimal => assert!(is_number(text.as_bytes()), "{text}"),
                NumberKind::Unknown => {}
            }
        }
        // Fewer than 8 bytes left in the buffer: no word can be read.
        assert_eq!(number_kind(b"12", 0, 2), NumberKind::Unknown);
    }

    #[test]
    fn expected_keys() {
        let mut cols = Columns::default();
        let all = StatsColumns::All;
        for name in ["a", "seven77", "eight888", "q\"", ""] {
            cols.index_of(name.as_bytes(), usize::MAX, &all);
        }
        let data = br#""a":1,"ab":2,"seven77":3,"seven7":4,"eight888":5,"q\"":6,"":7,"a""#;
        let key = |hint: usize, at: usize| cols.expected_key(hint, data, at);
        assert_eq!(key(0, 1), Some(3));
        assert_eq!(key(0, 7), None);
        assert_eq!(key(1, 14), Some(22));
        assert_eq!(key(1, 26), None);
        assert_eq!(key(2, 37), Some(46));
        // A name with a quote or backslash is never matched raw.
        assert_eq!(key(3, 50), None);
        assert_eq!(key(4, 58), Some(59));
        // Near the end of the data the byte-wise comparison serves.
        assert_eq!(key(0, data.len() - 2), Some(data.len()));
        assert_eq!(key(9, 1), None);
    }

    #[test]
    fn word_at_a_time_json_numbers() {
        for (text, want) in [
            ("0,", Some((1, NumberKind::Int))),
            ("-12}", Some((3, NumberKind::Int))),
            ("123456789012345678 ", Some((18, NumberKind::Int))),
            ("1234567890123456789,", None),
            ("-,", None),
            ("-8673.29}", Some((8, NumberKind::Decimal))),
            ("2909.6900000000005,", Some((18, NumberKind::Decimal))),
            ("-2525.93999999999999}", Some((20, NumberKind::Decimal))),
            ("-2525.939999999999999999}", None),
            ("1.,", Some((2, NumberKind::Decimal))),
            ("-.5]", Some((3, NumberKind::Decimal))),
            ("-.,", None),
            ("1e5,", None),
            ("1.5e5,", None),
            ("1.2.3,", None),
            ("12-3,", None),
            ("12+,", None),
            ("1x,", Some((1, NumberKind::Int))),
        ] {
            let padded = format!("{text}{}", " ".repeat(24));
            assert_eq!(json_number_end(padded.as_bytes(), 0), want, "{text}");
            if let Some((end, kind)) = want {
                let number = &text.as_bytes()[..end];
                match kind {
                    NumberKind::Int => assert!(is_i64_text(number), "{text}"),
                    _ => assert!(is_number(number), "{text}"),
                }
            }
        }
        assert_eq!(json_number_end(b"12,", 0), None);
    }

    #[test]
    fn lattice() {
        let mut c = ColumnInfer::new("a".into(), true);
        assert_eq!(c.data_type(), DataType::Utf8);
        c.observe_text_field(b"1");
        c.observe_text_field(b"");
        assert_eq!(c.data_type(), DataType::Int64);
        c.observe_text_field(b"2.5");
        assert_eq!(c.data_type(), DataType::Float64);
        assert_eq!(c.stats(), Some(ColumnStats::Float { min: 1.0, max: 2.5 }));
        c.observe_text_field(b"true");
        assert_eq!(c.data_type(), DataType::Utf8);
        assert_eq!(
            c.stats(),
            Some(ColumnStats::Str {
                min_str: "1".into(),
                max_str: "true".into()
            })
        );
        let mut b = ColumnInfer::new("b".into(), false);
        b.observe_text_field(b"TRUE");
        b.observe_text_field(b"false");
        assert_eq!(b.data_type(), DataType::Boolean);
        assert_eq!(b.stats(), None);
        let mut big = ColumnInfer::new("c".into(), true);
        big.observe_text_field(b"9223372036854775808");
        assert_eq!(big.data_type(), DataType::Float64);
        let mut nan = ColumnInfer::new("d".into(), true);
        nan.observe_text_field(b"NaN");
        assert_eq!(nan.data_type(), DataType::Utf8);
    }
}
