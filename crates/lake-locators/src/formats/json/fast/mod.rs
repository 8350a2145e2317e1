//! arrow-json's schema inference (with the widening of [`super::widen`]) computed straight
//! from the bytes of the rows: one validating walk per row updates a tree of inferred types
//! in place, with no `serde_json::Value` and no allocation for a member name already seen.
//!
//! The walk is a literal port of `arrow_json::reader::schema` (`InferredType`, its `merge`,
//! `collect_field_types_from_object`, `infer_array_element_type`, `coerce_data_type`) over
//! the values as `serde_json` would parse them:
//!
//! - members of an object are visited in the row's order, so members join their struct in
//!   order of first appearance, as pyarrow, polars and DuckDB list them (the reference puts
//!   arrow-json's schema in that order, [`super::order`]);
//! - an integer is `Int64` when `serde_json` keeps it as an `i64` (`-0`, integers past
//!   `i64` and any fraction or exponent are `Float64`);
//! - a top-level member whose values arrow-json cannot join, or joins only as a list of a
//!   scalar that its decoder then refuses (a scalar in one row, an array in another), becomes
//!   a JSON text column ([`super::widen`]); every other member keeps its type.
//!
//! Anything the walk does not reproduce exactly gives `None` and the caller runs the
//! reference path: invalid JSON of any kind (the reference reports it), a duplicate name in
//! one object, a row that is not an object, deep nesting, numbers out of `f64` range or
//! whose range is not obvious.

use std::collections::HashMap;

use arrow_schema::{DataType, Field, Fields, Schema};

use crate::locator::StatsColumns;

/// Scalar type bits of an inferred scalar set (arrow-json's `HashSet<DataType>`).
const INT: u8 = 1;
const FLOAT: u8 = 2;
const BOOL: u8 = 4;
const UTF8: u8 = 8;

/// Deeper values go to the reference path (serde_json refuses depth 128).
const MAX_DEPTH: u32 = 100;

/// Objects with more members than this are also looked up by a hash map.
const LINEAR: usize = 16;

/// arrow-json's `InferredType`.
#[derive(Debug, Clone)]
enum Ty {
    /// Nothing known yet (`null`, `[]`).
    Any,
    /// A set of scalar types, as bits.
    Scalar(u8),
    /// A list of the inner type.
    Array(Box<Ty>),
    /// An object's members in order of first appearance.
    Object(Obj),
}

/// The members of an inferred object, in order of first appearance.
#[derive(Debug, Clone, Default)]
struct Obj {
    entries: Vec<Entry>,
    /// Name to entry index, kept once there are more than [`LINEAR`] entries.
    index: Option<HashMap<Box<[u8]>, usize>>,
    /// A direct-mapped cache of entry indexes by [`slot`] of the name (`u16::MAX` empty).
    slots: Option<Box<[u16; SLOTS]>>,
}

/// Slots of [`Obj::slots`].
const SLOTS: usize = 64;

/// The slot of a name of first bytes `head` and length `len`.
#[inline]
fn slot(head: u64, len: usize) -> usize {
    ((head ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

/// One member of an inferred object.
#[derive(Debug, Clone)]
struct Entry {
    key: Box<[u8]>,
    /// The first (up to) 8 bytes of `key` ([`head`]).
    head: u64,
    ty: Ty,
    /// The object visit that last saw this name (a second sighting is a duplicate name).
    stamp: u64,
    /// A top-level member whose types arrow-json cannot join (widened to Utf8).
    widened: bool,
    /// The bounds of a top-level member's scalar values (with statistics).
    bounds: Option<Box<Bounds>>,
    /// A top-level member whose statistics are not wanted: it keeps no bounds.
    unbounded: bool,
}

impl Obj {
    /// The index of `key` whose [`head`] is `h`, trying `hint` first.
    #[inline(always)]
    fn find_h(&mut self, key: &[u8], h: u64, hint: usize) -> Option<usize> {
        let same = |e: &Entry| {
            e.head == h && e.key.len() == key.len() && (key.len() <= 8 || e.key[8..] == key[8..])
        };
        if let Some(e) = self.entries.get(hint)
            && same(e)
        {
            return Some(hint);
        }
        let k = slot(h, key.len());
        if let Some(slots) = &self.slots {
            let i = slots[k] as usize;
            if let Some(e) = self.entries.get(i)
                && same(e)
            {
                return Some(i);
            }
        }
        let found = match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(same),
        };
        if let Some(i) = found
            && i < u16::MAX as usize
        {
            self.slots
                .get_or_insert_with(|| Box::new([u16::MAX; SLOTS]))[k] = i as u16;
        }
        found
    }

    /// The index of `key`, appended as [`Ty::Any`] when new.
    #[inline]
    fn find_or_push(&mut self, key: &[u8], hint: usize) -> usize {
        self.find_or_push_h(key, head(key), hint)
    }

    /// [`Obj::find_or_push`] of `key` whose [`head`] is `h`.
    #[inline]
    fn find_or_push_h(&mut self, key: &[u8], h: u64, hint: usize) -> usize {
        match self.find_h(key, h, hint) {
            Some(i) => i,
            None => self.push(key),
        }
    }

    fn push(&mut self, key: &[u8]) -> usize {
        let i = self.entries.len();
        self.entries.push(Entry {
            key: key.into(),
            head: head(key),
            ty: Ty::Any,
            stamp: 0,
            widened: false,
            bounds: None,
            unbounded: false,
        });
        if let Some(index) = &mut self.index {
            index.insert(key.into(), i);
        } else if self.entries.len() > LINEAR {
            self.index = Some(
                self.entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (e.key.clone(), i))
                    .collect(),
            );
        }
        i
    }
}

/// The first (up to) 8 bytes of `key` as a number (zero-padded): most names differ in it.
#[inline]
fn head(key: &[u8]) -> u64 {
    match key.first_chunk::<8>() {
        Some(w) => u64::from_le_bytes(*w),
        None => key.iter().rev().fold(0u64, |h, &b| (h << 8) | u64::from(b)),
    }
}

/// [`head`] of the name `d[at..at + len]`, read as one word when `d` has 8 bytes from `at`
/// (no byte-by-byte assembly for short names).
#[inline]
fn head_at(d: &[u8], at: usize, len: usize) -> u64 {
    match d.get(at..).and_then(|r| r.first_chunk::<8>()) {
        Some(w) if len < 8 => u64::from_le_bytes(*w) & ((1u64 << (8 * len)) - 1),
        Some(w) => u64::from_le_bytes(*w),
        None => head(&d[at..at + len]),
    }
}

/// Why a walk stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Something the reference path must handle (invalid JSON, a duplicate name, ...).
    Bail,
    /// arrow-json refuses to join the types (its `JsonError` during inference).
    Incompatible,
}

type Walk<T> = std::result::Result<T, Stop>;

/// arrow-json's `InferredType::merge`, case by case.
fn merge(s: &mut Ty, o: Ty, coerced: &mut bool) -> Walk<()> {
    match (s, o) {
        (Ty::Array(s), Ty::Array(o)) => merge(s, *o, coerced),
        (Ty::Scalar(a), Ty::Scalar(b)) => {
            *a |= b;
            Ok(())
        }
        (Ty::Object(a), Ty::Object(b)) => {
            for e in b.entries {
                let i = a.find_or_push(&e.key, usize::MAX);
                merge(&mut a.entries[i].ty, e.ty, coerced)?;
            }
            Ok(())
        }
        (s @ Ty::Any, v) => {
            *s = v;
            Ok(())
        }
        (_, Ty::Any) => Ok(()),
        // Only the elements of an array of nulls (no scalar type) join an array.
        (Ty::Array(inner), o @ Ty::Scalar(0)) => {
            *coerced = true;
            merge(inner, o, coerced)
        }
        (s @ Ty::Scalar(0), Ty::Array(mut inner)) => {
            *coerced = true;
            merge(&mut inner, s.clone(), coerced)?;
            *s = Ty::Array(inner);
            Ok(())
        }
        _ => Err(Stop::Incompatible),
    }
}

/// arrow-json's `set_object_scalar_field_type`.
#[inline]
fn scalar(ty: &mut Ty, bit: u8, coerced: &mut bool) -> Walk<()> {
    match ty {
        Ty::Scalar(b) => {
            *b |= bit;
            Ok(())
        }
        Ty::Any => {
            *ty = Ty::Scalar(bit);
            Ok(())
        }
        // A scalar where an array was: a conflict (`bit` is never 0).
        Ty::Array(_) => merge(ty, Ty::Scalar(bit), coerced),
        Ty::Object(_) => Err(Stop::Incompatible),
    }
}

/// arrow-json's `coerce_data_type` of a scalar set (order does not matter for scalars).
fn coerce(bits: u8) -> DataType {
    match bits {
        INT => DataType::Int64,
        FLOAT | 3 => DataType::Float64,
        BOOL => DataType::Boolean,
        _ => DataType::Utf8,
    }
}

/// arrow-json's `generate_datatype`.
fn data_type(t: &Ty) -> DataType {
    match t {
        Ty::Scalar(bits) => coerce(*bits),
        Ty::Object(o) => DataType::Struct(fields(o)),
        Ty::Array(inner) => DataType::List(std::sync::Arc::new(Field::new_list_field(
            data_type(inner),
            true,
        ))),
        Ty::Any => DataType::Null,
    }
}

fn name(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

fn fields(o: &Obj) -> Fields {
    o.entries
        .iter()
        .map(|e| Field::new(name(&e.key), data_type(&e.ty), true))
        .collect()
}

/// What [`Inferrer::finish`] returns.
#[derive(Debug, Clone)]
pub(crate) struct Inferred {
    /// The schema [`super::widen::infer`] gives for the same rows (before `null_to_utf8`).
    pub(crate) schema: Schema,
    /// True when some member was widened (arrow-json's own inference fails on the rows).
    pub(crate) widened: bool,
    /// True when some row holds a non-empty array of nulls alone (see [`super::split`]).
    pub(crate) null_array: bool,
}

/// The inference state over rows fed one by one.
#[derive(Debug)]
pub(crate) struct Inferrer {
    top: Obj,
    stamp: u64,
    null_array: bool,
    stats: bool,
    /// The columns whose statistics are wanted (with `stats`).
    wanted: StatsColumns,
    /// Top-level members before this one have been checked against `wanted`.
    checked: usize,
    coerced: bool,
    /// The data (address, length) whose bytes from the third number to the fourth are
    /// known UTF-8 (both row starts or ends, so that rows between are UTF-8 too).
    utf8: (usize, usize, usize, usize),
}

impl Inferrer {
    /// A new inference; top-level members that `wanted` names keep their values' bounds.
    pub(crate) fn new(wanted: &StatsColumns) -> Self {
        Inferrer {
            top: Obj::default(),
            stamp: 0,
            null_array: false,
            stats: !wanted.is_none(),
            wanted: wanted.clone(),
            checked: 0,
            coerced: false,
            utf8: (0, 0, 0, 0),
        }
    }

    /// `Some` when the walked row `data[start..end]` is UTF-8 (`high`: it holds a byte above
    /// 0x7F, which a row the walk takes has only inside its strings). Checked a block of
    /// [`UTF8_BLOCK`] bytes at a time from the row on (simdutf8 is several times faster per
    /// byte on long runs than on rows); a row not inside the block known valid starts a new
    /// block, so a bad row gets `None` itself and the reference path reports it exactly.
    #[inline]
    fn utf8(&mut self, data: &[u8], start: usize, end: usize, high: bool) -> Option<()> {
        if !high {
            return Some(());
        }
        let (addr, len, from, to) = self.utf8;
        if addr == data.as_ptr() as usize && len == data.len() && from <= start && end <= to {
            return Some(());
        }
        let block = &data[start..(start + UTF8_BLOCK).min(data.len()).max(end)];
        // The basic check first (faster: it keeps no error position), the one that says
        // where the valid bytes end only for a block that fails it.
        let valid = if simdutf8::basic::from_utf8(block).is_ok() {
            block.len()
        } else {
            match simdutf8::compat::from_utf8(block) {
                Ok(_) => block.len(),
                Err(e) => e.valid_up_to(),
            }
        };
        self.utf8 = (data.as_ptr() as usize, data.len(), start, start + valid);
        (end <= start + valid).then_some(())
    }
}

/// Bytes checked for UTF-8 at once by [`Inferrer::utf8`].
const UTF8_BLOCK: usize = 64 << 10;

impl Inferrer {
    /// Walks the object at `data[start]` into the inference; `None` when the reference path
    /// must run. The walk ends past the object's `}`.
    #[inline]
    fn walk<'a>(&mut self, data: &'a [u8], start: usize) -> Option<Walker<'a>> {
        #[cfg(test)]
        if tests::REFERENCE_ONLY.with(std::cell::Cell::get) {
            return None;
        }
        let mut w = Walker {
            d: data,
            pos: start,
            depth: 0,
            stamp: self.stamp,
            null_array: false,
            check_names: false,
            stats: self.stats,
            coerced: false,
            high: false,
            newline: false,
        };
        if data.get(start) != Some(&b'{') {
            return None;
        }
        let r = w.collect(&mut self.top, true);
        if self.stats && self.checked < self.top.entries.len() {
            // A member first met in this row: its bounds are dropped when not wanted.
            for e in &mut self.top.entries[self.checked..] {
                if !self.wanted.wants(&name(&e.key)) {
                    e.unbounded = true;
                    e.bounds = None;
                }
            }
            self.checked = self.top.entries.len();
        }
        self.stamp = w.stamp;
        self.null_array |= w.null_array;
        self.coerced |= w.coerced;
        r.ok()?;
        Some(w)
    }

    /// Adds the row value `data[start..end]`; `None` when the reference path must run. A row
    /// it takes is a UTF-8 JSON object with only blanks after it.
    pub(crate) fn row(&mut self, data: &[u8], start: usize, end: usize) -> Option<()> {
        let data = data.get(..end)?;
        let mut w = self.walk(data, start)?;
        w.ws();
        if w.pos != end {
            return None;
        }
        let high = w.high;
        self.utf8(data, start, end, high)
    }

    /// [`Inferrer::row`] of the whole of `text` (text this crate wrote, such as MsgPack rows
    /// transcoded to JSON): UTF-8 by its type, so unchecked, and with no block of the
    /// UTF-8 check kept for a buffer that is written over between rows.
    pub(crate) fn text_row(&mut self, text: &str) -> Option<()> {
        let data = text.as_bytes();
        let mut w = self.walk(data, 0)?;
        w.ws();
        (w.pos == data.len()).then_some(())
    }

    /// Adds the line whose value starts at `data[start]` (an object), with no search for
    /// its end beforehand: the end of its line (the line feed's position, or the data's end)
    /// when the walk takes it, as [`Inferrer::row`] of `start` to that end would, else
    /// `None` (the inference is then spoilt: the caller gives up on it).
    #[inline]
    pub(crate) fn line(&mut self, data: &[u8], start: usize) -> Option<usize> {
        let mut w = self.walk(data, start)?;
        while let Some(b' ' | b'\t' | b'\r') = w.peek() {
            w.pos += 1;
        }
        // A value that went on past a line feed is not one line's.
        if w.newline || !matches!(w.peek(), Some(b'\n') | None) {
            return None;
        }
        let (end, high) = (w.pos, w.high);
        self.utf8(data, start, end, high).map(|()| end)
    }

    /// The inferred schema.
    pub(crate) fn finish(&self) -> Inferred {
        let mut widened = false;
        let fields: Vec<Field> = self
            .top
            .entries
            .iter()
            .map(|e| {
                widened |= e.widened;
                if e.widened {
                    super::widen::json_field(&name(&e.key))
                } else {
                    Field::new(name(&e.key), data_type(&e.ty), true)
                }
            })
            .collect();
        Inferred {
            schema: Schema::new(fields),
            widened,
            null_array: self.null_array,
        }
    }
}

/// The inference of the row values `spans` of `data`; `None` when the reference path must
/// run.
#[cfg(test)]
pub(crate) fn infer_rows(data: &[u8], spans: &[(usize, usize)]) -> Option<Inferred> {
    Some(infer_state(data, spans, &StatsColumns::None)?.finish())
}

/// The inference state after the row values `spans` of `data` (see [`infer_rows`]); with
/// top-level members that `wanted` names keep their values' bounds for [`Inferrer::stats`].
pub(crate) fn infer_state(
    data: &[u8],
    spans: &[(usize, usize)],
    wanted: &StatsColumns,
) -> Option<Inferrer> {
    let mut inf = Inferrer::new(wanted);
    for &(s, e) in spans {
        inf.row(data, s, e)?;
    }
    Some(inf)
}

/// A validating walk over one row value.
struct Walker<'a> {
    d: &'a [u8],
    pos: usize,
    depth: u32,
    stamp: u64,
    null_array: bool,
    /// Names of objects skipped by [`Walker::skip_value`] are checked for duplicates.
    check_names: bool,
    /// Top-level members keep the bounds of their values.
    stats: bool,
    /// A list met an array of nulls (left to the decoder for statistics).
    coerced: bool,
    /// A string held a byte above 0x7F: [`Inferrer::row`] checks the row is UTF-8.
    high: bool,
    /// Blanks between tokens held a line feed.
    newline: bool,
}

impl Walker<'_> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.d.get(self.pos).copied()
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(c @ (b' ' | b'\t' | b'\n' | b'\r')) = self.peek() {
            self.newline |= c == b'\n';
            self.pos += 1;
        }
    }

    #[inline]
    fn enter(&mut self) -> Walk<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Stop::Bail);
        }
        Ok(())
    }

    /// The string at `pos` (its opening quote): its inside and whether it holds escapes.
    #[inline]
    fn string(&mut self) -> Walk<(usize, usize, bool)> {
        let open = self.pos;
        let (end, escaped, high) = string_end(self.d, open).ok_or(Stop::Bail)?;
        if end > self.d.len() {
            return Err(Stop::Bail);
        }
        let inside = &self.d[open + 1..end - 1];
        // Non-ASCII bytes of a row are inside its strings: the row is checked once at its
        // end (a row the walk takes is UTF-8).
        if escaped && !valid_escaped(inside) {
            return Err(Stop::Bail);
        }
        self.high |= high;
        self.pos = end;
        Ok((open, end, escaped))
    }

    /// The literal `word` at `pos`.
    #[inline]
    fn literal(&mut self, word: &[u8]) -> Walk<()> {
        if self.d.get(self.pos..self.pos + word.len()) != Some(word) {
            return Err(Stop::Bail);
        }
        self.pos += word.len();
        Ok(())
    }

    /// The number at `pos`: [`INT`] when `serde_json` reads it as an `i64`, else [`FLOAT`].
    #[inline]
    fn number(&mut self) -> Walk<u8> {
        self.number_value(false).map(|(bit, _)| bit)
    }

    /// [`Walker::number`], and with `value` the number as arrow-json decodes it.
    fn number_value(&mut self, value: bool) -> Walk<(u8, Option<Number>)> {
        let d = self.d;
        let start = self.pos;
        let mut p = start;
        let neg = d.get(p) == Some(&b'-');
        if neg {
            p += 1;
        }
        let digits_at = p;
        match d.get(p) {
            Some(b'0') => {
                p += 1;
                if let Some(b'0'..=b'9') = d.get(p) {
                    return Err(Stop::Bail);
                }
            }
            Some(b'1'..=b'9') => p = digit_run(d, p + 1),
            _ => return Err(Stop::Bail),
        }
        let int_digits = p - digits_at;
        let mut float = false;
        // Where the fraction's digits start (past the point).
        let mut frac_at = p;
        if d.get(p) == Some(&b'.') {
            p += 1;
            frac_at = p;
            p = digit_run(d, p);
            if p == frac_at {
                return Err(Stop::Bail);
            }
            float = true;
        }
        let mut exp = false;
        if let Some(b'e' | b'E') = d.get(p) {
            p += 1;
            if let Some(b'+' | b'-') = d.get(p) {
                p += 1;
            }
            let f = p;
            p = digit_run(d, p);
            if p == f {
                return Err(Stop::Bail);
            }
            exp = true;
        }
        self.pos = p;
        if exp {
            // Out of range is an error of serde_json's: decided by a correctly rounded
            // parse, as serde_json's (float_roundtrip) is; long texts go to the reference.
            let text = std::str::from_utf8(&d[start..p]).map_err(|_| Stop::Bail)?;
            let f = text.parse::<f64>().map_err(|_| Stop::Bail)?;
            if p - start > 40 || !f.is_finite() {
                return Err(Stop::Bail);
            }
            return Ok((FLOAT, Some(Number::Float(f))));
        }
        if int_digits > 300 {
            return Err(Stop::Bail);
        }
        let parsed = || -> Walk<Option<Number>> {
            if !value {
                return Ok(None);
            }
            let text = std::str::from_utf8(&d[start..p]).map_err(|_| Stop::Bail)?;
            let f = text.parse::<f64>().map_err(|_| Stop::Bail)?;
            Ok(Some(Number::Float(f)))
        };
        if float {
            if value && let Some(f) = short_decimal(&d[digits_at..frac_at - 1], &d[frac_at..p]) {
                return Ok((FLOAT, Some(Number::Float(if neg { -f } else { f }))));
            }
            return Ok((FLOAT, parsed()?));
        }
        // Fewer than 19 digits always fit an i64; `-0` is a float to serde_json.
        if !value && int_digits < 19 {
            let minus_zero = neg && d[digits_at] == b'0';
            return Ok((if minus_zero { FLOAT } else { INT }, None));
        }
        // An integer: serde_json keeps it as u64/i64 while it fits a u64.
        let mut v: u64 = 0;
        for &c in &d[digits_at..p] {
            match v
                .checked_mul(10)
                .and_then(|x| x.checked_add(u64::from(c - b'0')))
            {
                Some(x) => v = x,
                None => return Ok((FLOAT, parsed()?)),
            }
        }
        let int = if !neg {
            v <= i64::MAX as u64
        } else {
            v != 0 && v <= 1u64 << 63
        };
        if !int {
            return Ok((FLOAT, parsed()?));
        }
        let i = if neg {
            (v as i64).wrapping_neg()
        } else {
            v as i64
        };
        Ok((INT, Some(Number::Int(i))))
    }

    /// The separator after an element or member: `true` after `,`, `false` after `close`.
    #[inline]
    fn next(&mut self, close: u8) -> Walk<bool> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.ws();
                Ok(true)
            }
            Some(c) if c == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(Stop::Bail),
        }
    }

    /// Validates the value at `pos` and moves past it.
    fn skip_value(&mut self) -> Walk<()> {
        match self.peek() {
            Some(b'{') => {
                self.enter()?;
                self.pos += 1;
                self.ws();
                let mut names: Vec<Vec<u8>> = Vec::new();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                } else {
                    loop {
                        if self.peek() != Some(b'"') {
                            return Err(Stop::Bail);
                        }
                        let (open, end, escaped) = self.string()?;
                        if self.check_names {
                            let name = if escaped {
                                serde_json::from_slice::<String>(&self.d[open..end])
                                    .map_err(|_| Stop::Bail)?
                                    .into_bytes()
                            } else {
                                self.d[open + 1..end - 1].to_vec()
                            };
                            if names.contains(&name) {
                                return Err(Stop::Bail);
                            }
                            names.push(name);
                        }
                        self.ws();
                        self.literal(b":")?;
                        self.ws();
                        self.skip_value()?;
                        if !self.next(b'}')? {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Ok(())
            }
            Some(b'[') => {
                self.enter()?;
                self.pos += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                } else {
                    loop {
                        self.skip_value()?;
                        if !self.next(b']')? {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Ok(())
            }
            Some(b'"') => self.string().map(|_| ()),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number().map(|_| ()),
            _ => Err(Stop::Bail),
        }
    }

    /// arrow-json's `collect_field_types_from_object` for the object at `pos` into `obj`;
    /// at the top level a member arrow-json cannot join is widened instead.
    fn collect(&mut self, obj: &mut Obj, top: bool) -> Walk<()> {
        self.enter()?;
        self.pos += 1;
        self.ws();
        self.stamp += 1;
        let stamp = self.stamp;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(());
        }
        let mut hint = 0;
        loop {
            if self.peek() != Some(b'"') {
                return Err(Stop::Bail);
            }
            let (open, end, escaped) = self.string()?;
            let d = self.d;
            let i = if escaped {
                let s = serde_json::from_slice::<String>(&d[open..end]).map_err(|_| Stop::Bail)?;
                obj.find_or_push(s.as_bytes(), hint)
            } else {
                let h = head_at(d, open + 1, end - open - 2);
                obj.find_or_push_h(&d[open + 1..end - 1], h, hint)
            };
            hint = i + 1;
            self.ws();
            self.literal(b":")?;
            self.ws();
            let e = &mut obj.entries[i];
            let stats = top && self.stats && !e.unbounded;
            if e.stamp == stamp {
                // serde_json keeps the last value of a duplicate name only.
                return Err(Stop::Bail);
            }
            e.stamp = stamp;
            if e.widened {
                self.skip_value()?;
            } else {
                let (at, depth) = (self.pos, self.depth);
                let bounds = if stats {
                    Some(&mut **e.bounds.get_or_insert_default())
                } else {
                    None
                };
                match self.member(&mut e.ty, bounds) {
                    Ok(()) => {}
                    Err(Stop::Incompatible) if top => {
                        // The value as serde_json reads it is the bytes' only when no object
                        // in it repeats a name (it keeps the last value of a name).
                        e.widened = true;
                        e.ty = Ty::Any;
                        self.pos = at;
                        self.depth = depth;
                        self.check_names = true;
                        let skipped = self.skip_value();
                        self.check_names = false;
                        skipped?;
                    }
                    Err(stop) => return Err(stop),
                }
            }
            if !self.next(b'}')? {
                break;
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// One member value into its inferred type `ty` (the match of
    /// `collect_field_types_from_object`).
    fn member(&mut self, ty: &mut Ty, bounds: Option<&mut Bounds>) -> Walk<()> {
        match self.peek() {
            Some(b'[') => {
                let ele = self.element_type()?;
                if let Ty::Any = ty {
                    *ty = match ele {
                        Ty::Scalar(_) => Ty::Array(Box::new(Ty::Scalar(0))),
                        Ty::Object(_) => Ty::Array(Box::new(Ty::Object(Obj::default()))),
                        Ty::Any | Ty::Array(_) => Ty::Array(Box::new(Ty::Any)),
                    };
                }
                match ty {
                    Ty::Array(inner) => merge(inner, ele, &mut self.coerced),
                    // Only the elements of an array of nulls join an array.
                    Ty::Scalar(0) => {
                        self.coerced = true;
                        merge(ty, ele, &mut self.coerced)?;
                        *ty = Ty::Array(Box::new(ty.clone()));
                        Ok(())
                    }
                    _ => Err(Stop::Incompatible),
                }
            }
            Some(b'{') => {
                if let Ty::Any = ty {
                    *ty = Ty::Object(Obj::default());
                }
                match ty {
                    Ty::Object(o) => self.collect(o, false),
                    _ => Err(Stop::Incompatible),
                }
            }
            Some(b'"') => {
                let (open, end, escaped) = self.string()?;
                if let Some(b) = bounds {
                    if escaped {
                        let v = serde_json::from_slice::<String>(&self.d[open..end])
                            .map_err(|_| Stop::Bail)?;
                        b.text(v.as_bytes());
                    } else {
                        b.text(&self.d[open + 1..end - 1]);
                    }
                }
                scalar(ty, UTF8, &mut self.coerced)
            }
            Some(b't') => {
                self.literal(b"true")?;
                if let Some(b) = bounds {
                    b.other = true;
                }
                scalar(ty, BOOL, &mut self.coerced)
            }
            Some(b'f') => {
                self.literal(b"false")?;
                if let Some(b) = bounds {
                    b.other = true;
                }
                scalar(ty, BOOL, &mut self.coerced)
            }
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => {
                let (bit, n) = self.number_value(bounds.is_some())?;
                if let (Some(b), Some(n)) = (bounds, n) {
                    b.number(n);
                }
                scalar(ty, bit, &mut self.coerced)
            }
            _ => Err(Stop::Bail),
        }
    }

    /// arrow-json's `infer_array_element_type` of the array at `pos`.
    fn element_type(&mut self) -> Walk<Ty> {
        self.enter()?;
        self.pos += 1;
        self.ws();
        let out = match self.peek() {
            Some(b']') => {
                self.pos += 1;
                Ty::Any
            }
            Some(b'[') => {
                let mut inner = Ty::Any;
                loop {
                    if self.peek() != Some(b'[') {
                        return Err(Stop::Incompatible);
                    }
                    let t = self.element_type()?;
                    merge(&mut inner, t, &mut self.coerced)?;
                    if !self.next(b']')? {
                        break;
                    }
                }
                Ty::Array(Box::new(inner))
            }
            Some(b'{') => {
                let mut o = Obj::default();
                loop {
                    if self.peek() != Some(b'{') {
                        return Err(Stop::Incompatible);
                    }
                    self.collect(&mut o, false)?;
                    if !self.next(b']')? {
                        break;
                    }
                }
                Ty::Object(o)
            }
            _ => {
                let mut bits = 0u8;
                loop {
                    match self.peek() {
                        Some(b'n') => self.literal(b"null")?,
                        Some(b'"') => {
                            self.string()?;
                            bits |= UTF8;
                        }
                        Some(b't') => {
                            self.literal(b"true")?;
                            bits |= BOOL;
                        }
                        Some(b'f') => {
                            self.literal(b"false")?;
                            bits |= BOOL;
                        }
                        Some(b'-' | b'0'..=b'9') => bits |= self.number()?,
                        Some(b'[' | b'{') => return Err(Stop::Incompatible),
                        _ => return Err(Stop::Bail),
                    }
                    if !self.next(b']')? {
                        break;
                    }
                }
                // A non-empty array of nulls alone.
                if bits == 0 {
                    self.null_array = true;
                }
                Ty::Scalar(bits)
            }
        };
        self.depth -= 1;
        Ok(out)
    }
}

mod stats;
mod text;
use stats::{Bounds, Number};
#[cfg(test)]
use text::control_bytes;
use text::{digit_run, short_decimal, string_end, valid_escaped};

#[cfg(test)]
pub(super) mod tests;
