//! Numeric bounds kept apart by kind until a column's final type picks how they combine: the
//! integer and float bounds of some rows of one column ([`NumBounds`]), and the order-stable
//! float minimum and maximum they fold with.

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
                bounds.map(|(min, max)| ColumnStats::Float {
                    min: min + 0.0,
                    max: max + 0.0,
                })
            }
            _ => None,
        }
    }
}

/// The numeric bounds of one block: `(column index, bounds)` for the columns that had any.
pub(crate) type BlockBounds = Vec<(usize, NumBounds)>;
