//! Statistics from the byte walk of [`super`]: the bounds of each top-level member's values
//! as arrow-json would decode them into the member's column, and the checks that send a
//! file's statistics to the reference decoder instead.

use arrow_schema::{DataType, Schema};

use super::{Inferrer, Ty, name};
use crate::locator::{ColumnStats, Stats, StatsColumns};
use crate::text::bounds::{TextBounds, prefix_key};

/// The bounds of the scalar values of one top-level member, for each column type it may end
/// up with (the values as arrow-json decodes them into that type).
#[derive(Debug, Clone, Default)]
pub(super) struct Bounds {
    /// Integers (an Int64 column).
    int: Option<(i64, i64)>,
    /// Numbers as `f64` (a Float64 column).
    float: Option<(f64, f64)>,
    /// Strings, decoded (a Utf8 column).
    text: Option<TextBounds>,
    /// A number or boolean (a Utf8 column then holds their text: left to the reference).
    pub(super) other: bool,
}

impl Bounds {
    pub(super) fn number(&mut self, n: Number) {
        let f = match n {
            Number::Int(v) => {
                self.int = Some(self.int.map_or((v, v), |(l, h)| (l.min(v), h.max(v))));
                v as f64
            }
            Number::Float(f) => f,
        };
        self.float = Some(self.float.map_or((f, f), |(l, h)| (l.min(f), h.max(f))));
        self.other = true;
    }

    pub(super) fn text(&mut self, v: &[u8]) {
        // Keys decide most updates (a whole compare was 6% of a nested NDJSON scan with
        // statistics), as in the delimited columns' bounds.
        TextBounds::add(&mut self.text, v, prefix_key(v));
    }
}

/// A number as arrow-json decodes it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Number {
    /// An integer serde_json keeps as an `i64`.
    Int(i64),
    /// Any other number, correctly rounded.
    Float(f64),
}

/// True when values inferred as `t` decode as `dt` (a type joined from `t` and other rows'):
/// no scalar where `dt` has a list, and nothing the join cannot have made.
fn fits(t: &Ty, dt: &DataType) -> bool {
    match (t, dt) {
        (Ty::Any, _) | (Ty::Scalar(0), _) => true,
        (Ty::Scalar(_), DataType::List(_)) => false,
        (Ty::Scalar(_), _) => true,
        (Ty::Array(inner), DataType::List(f)) => fits(inner, f.data_type()),
        (Ty::Object(o), DataType::Struct(fields)) => o.entries.iter().all(|e| {
            fields
                .iter()
                .find(|f| f.name().as_bytes() == &*e.key)
                .is_some_and(|f| fits(&e.ty, f.data_type()))
        }),
        _ => false,
    }
}

impl Inferrer {
    /// The statistics [`crate::stats::StatsBuilder`] gives from decoding the rows under
    /// `schema` (the inferred schema after `null_to_utf8`, of these rows or of a whole file
    /// they are a range of) for the columns `wanted`; `None`
    /// when the reference must decode them: a widened member (a JSON text column of the file)
    /// or a list that met an array of nulls, a Utf8 column holding numbers or
    /// booleans, a Float64 bound at zero with a `-0` among the values.
    pub(crate) fn stats(&self, schema: &Schema, wanted: &StatsColumns) -> Option<Stats> {
        if !self.stats || self.coerced || self.top.entries.iter().any(|e| e.widened) {
            return None;
        }
        // A file's schema may join a range's scalars into lists (rows the decoder refuses).
        for e in &self.top.entries {
            let f = schema.field_with_name(&name(&e.key)).ok()?;
            // A JSON text column holds strings with their quotes: decoded.
            if !fits(&e.ty, f.data_type()) || crate::formats::json::widen::is_json(f) {
                return None;
            }
        }
        let mut out = Stats::new();
        for f in schema.fields() {
            if !wanted.wants(f.name()) {
                continue;
            }
            // By name: the rows may be a range of the file, whose members come in another
            // order or not at all.
            let name = f.name().as_bytes();
            let Some(b) = self
                .top
                .entries
                .iter()
                .find(|e| *e.key == *name)
                .and_then(|e| e.bounds.as_deref())
            else {
                continue;
            };
            let s = match f.data_type() {
                DataType::Int64 => b.int.map(|(min, max)| ColumnStats::Int { min, max }),
                DataType::Float64 => b.float.map(|(min, max)| ColumnStats::float(min, max)),
                DataType::Utf8 if b.other => return None,
                DataType::Utf8 => match &b.text {
                    Some(t) => {
                        let (lo, hi) = t.texts();
                        Some(ColumnStats::Str {
                            min_str: String::from_utf8(lo).ok()?,
                            max_str: String::from_utf8(hi).ok()?,
                        })
                    }
                    None => None,
                },
                _ => None,
            };
            if let Some(s) = s {
                out.insert(f.name().clone(), s);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_bounds_by_keys_equal_whole_compares() {
        let words: &[&[u8]] = &[
            b"",
            b"a",
            b"ab",
            b"ab\0",
            b"ab\0x",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefghi",
            b"abcdefgi",
            b"b",
            b"\xff",
            b"\xc3\xa9t\xc3\xa9",
            b"abcdefg",
            b"abcdefg\xff",
        ];
        let mut rng = crate::testutil::XorShift(0x7e57_b0d5);
        for _ in 0..2000 {
            let mut b = Bounds::default();
            let (mut lo, mut hi): (Option<&[u8]>, Option<&[u8]>) = (None, None);
            for _ in 0..1 + rng.below(12) {
                let w = words[rng.below(words.len())];
                b.text(w);
                lo = Some(lo.map_or(w, |l| l.min(w)));
                hi = Some(hi.map_or(w, |h| h.max(w)));
            }
            let t = b.text.as_ref().map(TextBounds::texts);
            assert_eq!(t, lo.zip(hi).map(|(l, h)| (l.to_vec(), h.to_vec())));
        }
    }
}
