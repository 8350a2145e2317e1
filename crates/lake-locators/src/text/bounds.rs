//! Numeric bounds kept apart by kind until a column's final type picks how they combine: the
//! integer and float bounds of some rows of one column ([`NumBounds`]), and the order-stable
//! float minimum and maximum they fold with; and text bounds decided by 8-byte prefix keys
//! ([`TextBounds`]), for delimited columns and JSON members alike.

use arrow_schema::DataType;

use crate::locator::ColumnStats;

/// The smaller of two numbers (neither NaN), `-0.0` below `0.0`: unlike `f64::min`, the same
/// whatever the order in which a column's values are folded.
#[inline(always)]
pub(crate) fn min_f64(a: f64, b: f64) -> f64 {
    if b < a || (b == a && b.is_sign_negative()) {
        b
    } else {
        a
    }
}

/// The larger of two numbers (neither NaN), `0.0` above `-0.0` (see [`min_f64`]).
#[inline(always)]
pub(crate) fn max_f64(a: f64, b: f64) -> f64 {
    if b > a || (b == a && b.is_sign_positive()) {
        b
    } else {
        a
    }
}

/// Integer and float bounds of some rows of one column, kept apart until the column's final
/// type picks how they combine (see [`ColumnInfer::stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct NumBounds {
    pub(crate) int: Option<(i64, i64)>,
    pub(crate) float: Option<(f64, f64)>,
}

impl NumBounds {
    /// True when no number was seen.
    pub(crate) fn is_empty(&self) -> bool {
        self.int.is_none() && self.float.is_none()
    }

    /// Joins `other` (bounds of other rows of the same column).
    pub(crate) fn merge(&mut self, other: &NumBounds) {
        if let Some((lo, hi)) = other.int {
            self.int = Some(match self.int {
                None => (lo, hi),
                Some((a, b)) => (a.min(lo), b.max(hi)),
            });
        }
        if let Some((lo, hi)) = other.float {
            self.float = Some(match self.float {
                None => (lo, hi),
                Some((a, b)) => (min_f64(a, lo), max_f64(b, hi)),
            });
        }
    }

    /// The statistics of these bounds for a column of type `ty` (Int64 or Float64; `None`
    /// for other types and when no value counts).
    pub(crate) fn stats(&self, ty: &DataType) -> Option<ColumnStats> {
        match ty {
            DataType::Int64 => self.int.map(|(min, max)| ColumnStats::Int { min, max }),
            DataType::Float64 => {
                // Rounding an i64 to the nearest f64 keeps order, so the bounds of the
                // converted integers are the converted integer bounds.
                let ints = self.int.map(|(lo, hi)| (lo as f64, hi as f64));
                let bounds = match (self.float, ints) {
                    (Some((a, b)), Some((c, d))) => Some((min_f64(a, c), max_f64(b, d))),
                    (f, i) => f.or(i),
                };
                // A zero is written unsigned: `-0` counts as an integer 0 on one path and as
                // the float -0.0 on another, and readers order both alike.
                bounds.map(|(min, max)| ColumnStats::float(min, max))
            }
            _ => None,
        }
    }
}

/// The numeric bounds of one block: `(column index, bounds)` for the columns that had any.
pub(crate) type BlockBounds = Vec<(usize, NumBounds)>;

/// The smallest and largest text seen, so that most updates decide with one integer
/// comparison instead of a byte-slice comparison.
#[derive(Debug, Clone)]
pub(crate) struct TextBounds {
    pub(super) lo: Bound,
    pub(super) hi: Bound,
}

impl TextBounds {
    /// Takes `text`, whose [`prefix_key`] is `key`, into `bounds`: the common case of a text
    /// inside the bounds is decided by key comparisons.
    #[inline(always)]
    pub(crate) fn add(bounds: &mut Option<TextBounds>, text: &[u8], key: u64) {
        use std::cmp::Ordering::{Greater, Less};
        match bounds {
            Some(b) => {
                if b.lo.cmp_text(text, key) == Less {
                    b.lo.set(text, key);
                } else if b.hi.cmp_text(text, key) == Greater {
                    b.hi.set(text, key);
                }
            }
            None => {
                *bounds = Some(TextBounds {
                    lo: Bound::new(text, key),
                    hi: Bound::new(text, key),
                })
            }
        }
    }

    /// The least and the greatest text, as bytes.
    pub(crate) fn texts(&self) -> (Vec<u8>, Vec<u8>) {
        let (lo, hi) = (self.lo.key.to_be_bytes(), self.hi.key.to_be_bytes());
        (self.lo.bytes(&lo).to_vec(), self.hi.bytes(&hi).to_vec())
    }
}

/// One text bound: its [`prefix_key`] and length, which are the whole text when it has at
/// most 8 bytes (numbers, codes); longer texts also keep their bytes.
#[derive(Debug, Clone)]
pub(super) struct Bound {
    pub(super) key: u64,
    len: usize,
    long: Vec<u8>,
}

impl Bound {
    fn new(text: &[u8], key: u64) -> Self {
        let mut b = Bound {
            key,
            len: 0,
            long: Vec::new(),
        };
        b.set(text, key);
        b
    }

    /// Becomes `text`; a short text is only a key and a length, without a copy.
    #[inline(always)]
    fn set(&mut self, text: &[u8], key: u64) {
        self.key = key;
        self.len = text.len();
        if text.len() > 8 {
            self.long.clear();
            self.long.extend_from_slice(text);
        }
    }

    /// How `text` (whose key is `key`) compares with this bound.
    #[inline(always)]
    fn cmp_text(&self, text: &[u8], key: u64) -> std::cmp::Ordering {
        if key != self.key {
            return key.cmp(&self.key);
        }
        // Equal keys of two texts of at most 8 bytes: the shorter is a prefix of the other.
        if text.len() <= 8 && self.len <= 8 {
            return text.len().cmp(&self.len);
        }
        let short = self.key.to_be_bytes();
        text.cmp(self.bytes(&short))
    }

    /// The bound's bytes (`short` holds the key's bytes for a short one).
    pub(super) fn bytes<'a>(&'a self, short: &'a [u8; 8]) -> &'a [u8] {
        if self.len <= 8 {
            &short[..self.len]
        } else {
            &self.long
        }
    }

    pub(super) fn to_text(&self) -> String {
        let short = self.key.to_be_bytes();
        String::from_utf8_lossy(self.bytes(&short)).into_owned()
    }
}

/// The first 8 bytes of `text`, zero-padded, as a big-endian integer. Keys order like the
/// texts wherever they differ: `prefix_key(a) < prefix_key(b)` implies `a < b` (a shorter
/// text padded with zeros sorts before any text it is a prefix of); equal keys say nothing.
#[inline(always)]
pub(crate) fn prefix_key(text: &[u8]) -> u64 {
    if let Some(head) = text.first_chunk::<8>() {
        return u64::from_be_bytes(*head);
    }
    // Fewer than 8 bytes: shifted in one by one (a copy of a variable length is a call).
    let mut key = 0u64;
    for (i, &b) in text.iter().enumerate() {
        key |= u64::from(b) << (56 - 8 * i);
    }
    key
}
