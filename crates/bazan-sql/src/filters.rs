//! Filter analysis of a lake scan, on DataFusion's logical expressions.
//!
//! Two kinds of filters:
//! - **exact** ones select a [`RowSet`] of global rows from the map alone: comparisons,
//!   `BETWEEN` and `IN` on `_gid`; `=`, `<>`, comparisons, `IN`, `LIKE` and `starts_with`
//!   on `_path`; and `AND`/`OR`/`NOT` of those. The scan serves them by reading only those
//!   rows, so DataFusion drops them from the plan.
//! - **inexact** ones prune whole files whose min/max statistics (Int64, Float64, Utf8) prove
//!   that no row can match; DataFusion keeps the filter above the scan for the rest.
//!
//! Expressions holding a NULL literal are never exact (three-valued logic under `NOT` would
//! not be a set complement), and leave the work to DataFusion.

use std::cmp::Ordering;
use std::collections::HashSet;

use arrow_schema::DataType;
use bazan::{GID_COLUMN, PATH_COLUMN};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Like, Operator};

use crate::rowset::RowSet;

/// Min/max of one column of one file, as the map stores them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Bound {
    /// Int64 values.
    Int(i64, i64),
    /// Float64 values (NaN not counted).
    Float(f64, f64),
    /// Strings, by bytes.
    Str(String, String),
}

/// What the filters may know about one file of the lake.
#[derive(Debug, Clone)]
pub(crate) struct FileFacts {
    /// Relative path (the `_path` value).
    pub(crate) path: String,
    /// First global row.
    pub(crate) first: u64,
    /// Rows.
    pub(crate) rows: u64,
    /// The file's own column names, when the map stores its schema.
    pub(crate) columns: Option<HashSet<String>>,
    /// Per-column bounds from the map's statistics.
    pub(crate) bounds: Vec<(String, Bound)>,
}

impl FileFacts {
    fn bound(&self, column: &str) -> Option<&Bound> {
        self.bounds
            .iter()
            .find(|(c, _)| c == column)
            .map(|(_, b)| b)
    }

    /// The file's global rows.
    pub(crate) fn row_set(&self) -> RowSet {
        RowSet::range(self.first, self.first + self.rows)
    }
}

/// The lake as the filters see it: total rows, files in map order, unified column types.
#[derive(Debug, Clone)]
pub(crate) struct Catalog {
    pub(crate) total: u64,
    pub(crate) files: Vec<FileFacts>,
    /// `(name, type)` of the unified columns (virtual columns excluded).
    pub(crate) columns: Vec<(String, DataType)>,
}

impl Catalog {
    fn column_type(&self, name: &str) -> Option<&DataType> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }

    /// The rows an exact filter selects, or `None` when the filter is not exact here.
    pub(crate) fn exact_rows(&self, expr: &Expr) -> Option<RowSet> {
        match expr {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
                Operator::And => Some(self.exact_rows(left)?.intersect(&self.exact_rows(right)?)),
                Operator::Or => Some(self.exact_rows(left)?.union(&self.exact_rows(right)?)),
                _ => {
                    let (name, op, value) = column_op_literal(left, *op, right)?;
                    match name {
                        GID_COLUMN => Some(gid_compare(op, int_literal(value)?, self.total)),
                        PATH_COLUMN => {
                            let s = str_literal(value)?;
                            Some(self.path_rows(|p| compare_holds(op, p.cmp(s))))
                        }
                        _ => None,
                    }
                }
            },
            Expr::Not(inner) => Some(self.exact_rows(inner)?.complement(self.total)),
            Expr::Between(Between {
                expr,
                negated,
                low,
                high,
            }) => {
                let name = column_name(expr)?;
                let set = match name {
                    GID_COLUMN => {
                        let (lo, hi) = (int_literal(low)?, int_literal(high)?);
                        gid_compare(Operator::GtEq, lo, self.total).intersect(&gid_compare(
                            Operator::LtEq,
                            hi,
                            self.total,
                        ))
                    }
                    PATH_COLUMN => {
                        let (lo, hi) = (str_literal(low)?, str_literal(high)?);
                        self.path_rows(|p| p >= lo && p <= hi)
                    }
                    _ => return None,
                };
                Some(if *negated {
                    set.complement(self.total)
                } else {
                    set
                })
            }
            Expr::InList(list) => {
                let name = column_name(&list.expr)?;
                let set = match name {
                    GID_COLUMN => {
                        let mut ranges = Vec::with_capacity(list.list.len());
                        for v in &list.list {
                            let v = int_literal(v)?;
                            if v >= 0 && (v as u64) < self.total {
                                ranges.push(v as u64..v as u64 + 1);
                            }
                        }
                        RowSet::from_ranges(ranges)
                    }
                    PATH_COLUMN => {
                        let values: Option<Vec<&str>> = list.list.iter().map(str_literal).collect();
                        let values = values?;
                        self.path_rows(|p| values.contains(&p))
                    }
                    _ => return None,
                };
                Some(if list.negated {
                    set.complement(self.total)
                } else {
                    set
                })
            }
            Expr::Like(Like {
                negated,
                expr,
                pattern,
                escape_char,
                case_insensitive: false,
            }) => {
                if column_name(expr)? != PATH_COLUMN {
                    return None;
                }
                let pattern = str_literal(pattern)?;
                if escape_char.is_none() && pattern.contains('\\') {
                    // Arrow's kernel reads a backslash as an escape by default: leave it.
                    return None;
                }
                let set = self.path_rows(|p| like_match(pattern, *escape_char, p));
                Some(if *negated {
                    set.complement(self.total)
                } else {
                    set
                })
            }
            Expr::ScalarFunction(f) if f.name() == "starts_with" && f.args.len() == 2 => {
                if column_name(&f.args[0])? != PATH_COLUMN {
                    return None;
                }
                let prefix = str_literal(&f.args[1])?;
                Some(self.path_rows(|p| p.starts_with(prefix)))
            }
            Expr::IsNotNull(inner) => match column_name(inner)? {
                GID_COLUMN | PATH_COLUMN => Some(RowSet::all(self.total)),
                _ => None,
            },
            Expr::IsNull(inner) => match column_name(inner)? {
                GID_COLUMN | PATH_COLUMN => Some(RowSet::empty()),
                _ => None,
            },
            _ => None,
        }
    }

    fn path_rows(&self, keep: impl Fn(&str) -> bool) -> RowSet {
        RowSet::from_ranges(
            self.files
                .iter()
                .filter(|f| keep(&f.path))
                .map(|f| f.first..f.first + f.rows)
                .collect(),
        )
    }

    /// True when file statistics can prune files for this filter (some part of it is a
    /// comparison of a column with a literal, or an exact filter).
    pub(crate) fn can_prune(&self, expr: &Expr) -> bool {
        match expr {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
                Operator::And | Operator::Or => self.can_prune(left) || self.can_prune(right),
                _ => column_op_literal(left, *op, right)
                    .is_some_and(|(c, _, _)| self.column_type(c).is_some()),
            },
            Expr::Between(b) => column_name(&b.expr).is_some_and(|c| self.column_type(c).is_some()),
            Expr::InList(l) => column_name(&l.expr).is_some_and(|c| self.column_type(c).is_some()),
            _ => self.exact_rows(expr).is_some(),
        }
    }

    /// False when the statistics of `file` prove that no row of it satisfies `expr`.
    pub(crate) fn may_match(&self, expr: &Expr, file: &FileFacts) -> bool {
        if let Some(rows) = self.exact_rows(expr) {
            return rows.intersect(&file.row_set()).len() > 0;
        }
        match expr {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
                Operator::And => self.may_match(left, file) && self.may_match(right, file),
                Operator::Or => self.may_match(left, file) || self.may_match(right, file),
                _ => match column_op_literal(left, *op, right) {
                    Some((c, op, v)) => self.compare_may_hold(file, c, op, v),
                    None => true,
                },
            },
            Expr::Between(Between {
                expr,
                negated: false,
                low,
                high,
            }) => match column_name(expr) {
                Some(c) => {
                    self.compare_may_hold(file, c, Operator::GtEq, low)
                        && self.compare_may_hold(file, c, Operator::LtEq, high)
                }
                None => true,
            },
            Expr::InList(list) if !list.negated => match column_name(&list.expr) {
                Some(c) => list
                    .list
                    .iter()
                    .any(|v| self.compare_may_hold(file, c, Operator::Eq, v)),
                None => true,
            },
            _ => true,
        }
    }

    /// Whether `column op value` may hold for some row of `file`.
    fn compare_may_hold(&self, file: &FileFacts, column: &str, op: Operator, value: &Expr) -> bool {
        let Some(ty) = self.column_type(column) else {
            return true;
        };
        let Expr::Literal(value, _) = value else {
            return true;
        };
        if value.is_null() {
            // A comparison with NULL is never true.
            return false;
        }
        if let Some(cols) = &file.columns
            && !cols.contains(column)
        {
            // The file lacks the column: its rows hold NULL there, never a match.
            return false;
        }
        let Some(bound) = file.bound(column) else {
            return true;
        };
        match (ty, bound, value) {
            (DataType::Int64, Bound::Int(min, max), ScalarValue::Int64(Some(v))) => {
                range_may_hold(op, min.cmp(v), max.cmp(v))
            }
            (DataType::Float64, Bound::Float(min, max), ScalarValue::Float64(Some(v))) => {
                float_may_hold(op, *min, *max, *v)
            }
            (DataType::Float64, Bound::Int(min, max), ScalarValue::Float64(Some(v))) => {
                // Integers of the file were widened to Float64: exact while |x| <= 2^53.
                const EXACT: i64 = 1 << 53;
                if min.abs() > EXACT || max.abs() > EXACT {
                    return true;
                }
                float_may_hold(op, *min as f64, *max as f64, *v)
            }
            (
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View,
                Bound::Str(min, max),
                ScalarValue::Utf8(Some(v))
                | ScalarValue::LargeUtf8(Some(v))
                | ScalarValue::Utf8View(Some(v)),
            ) => range_may_hold(op, min.as_str().cmp(v), max.as_str().cmp(v)),
            _ => true,
        }
    }
}

/// Whether `x op v` may hold for some x in `[min, max]`, given `min.cmp(v)` and `max.cmp(v)`.
fn range_may_hold(op: Operator, min_v: Ordering, max_v: Ordering) -> bool {
    match op {
        Operator::Eq => min_v != Ordering::Greater && max_v != Ordering::Less,
        Operator::NotEq => !(min_v == Ordering::Equal && max_v == Ordering::Equal),
        Operator::Lt => min_v == Ordering::Less,
        Operator::LtEq => min_v != Ordering::Greater,
        Operator::Gt => max_v == Ordering::Greater,
        Operator::GtEq => max_v != Ordering::Less,
        _ => true,
    }
}

/// As [`range_may_hold`] for floats, where the bounds do not count NaN, which DataFusion
/// orders above every number: `>`, `>=` and `<>` may hold for a NaN row whatever the bounds.
fn float_may_hold(op: Operator, min: f64, max: f64, v: f64) -> bool {
    if v.is_nan() {
        return true;
    }
    match op {
        Operator::Gt | Operator::GtEq | Operator::NotEq => true,
        _ => range_may_hold(op, min.total_cmp(&v), max.total_cmp(&v)),
    }
}

/// `(column, op, literal)` from `column op literal` or `literal op column` (op mirrored).
fn column_op_literal<'a>(
    left: &'a Expr,
    op: Operator,
    right: &'a Expr,
) -> Option<(&'a str, Operator, &'a Expr)> {
    if !matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
    ) {
        return None;
    }
    if let (Some(c), Expr::Literal(..)) = (column_name(left), right) {
        return Some((c, op, right));
    }
    if let (Expr::Literal(..), Some(c)) = (left, column_name(right)) {
        return Some((c, op.swap()?, left));
    }
    None
}

fn column_name(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Column(c) => Some(c.name.as_str()),
        _ => None,
    }
}

/// A non-null integer literal, widened to i128.
fn int_literal(expr: &Expr) -> Option<i128> {
    let Expr::Literal(v, _) = expr else {
        return None;
    };
    Some(match v {
        ScalarValue::Int64(Some(x)) => *x as i128,
        ScalarValue::Int32(Some(x)) => *x as i128,
        ScalarValue::Int16(Some(x)) => *x as i128,
        ScalarValue::Int8(Some(x)) => *x as i128,
        ScalarValue::UInt64(Some(x)) => *x as i128,
        ScalarValue::UInt32(Some(x)) => *x as i128,
        ScalarValue::UInt16(Some(x)) => *x as i128,
        ScalarValue::UInt8(Some(x)) => *x as i128,
        _ => return None,
    })
}

/// A non-null string literal.
fn str_literal(expr: &Expr) -> Option<&str> {
    let Expr::Literal(v, _) = expr else {
        return None;
    };
    match v {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// The global rows `[0, total)` where `_gid op v` holds.
fn gid_compare(op: Operator, v: i128, total: u64) -> RowSet {
    let clamp = |x: i128| x.clamp(0, total as i128) as u64;
    match op {
        Operator::Eq => RowSet::range(clamp(v), clamp(v + 1)),
        Operator::NotEq => RowSet::range(clamp(v), clamp(v + 1)).complement(total),
        Operator::Lt => RowSet::range(0, clamp(v)),
        Operator::LtEq => RowSet::range(0, clamp(v + 1)),
        Operator::Gt => RowSet::range(clamp(v + 1), total),
        Operator::GtEq => RowSet::range(clamp(v), total),
        _ => RowSet::empty(),
    }
}

fn compare_holds(op: Operator, ord: Ordering) -> bool {
    match op {
        Operator::Eq => ord == Ordering::Equal,
        Operator::NotEq => ord != Ordering::Equal,
        Operator::Lt => ord == Ordering::Less,
        Operator::LtEq => ord != Ordering::Greater,
        Operator::Gt => ord == Ordering::Greater,
        Operator::GtEq => ord != Ordering::Less,
        _ => false,
    }
}

/// SQL `LIKE`: `%` any run of characters, `_` one character, `escape` makes the next
/// character literal (a backslash pattern without an explicit escape is left to DataFusion).
pub(crate) fn like_match(pattern: &str, escape: Option<char>, s: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Any,
        One,
        Lit(char),
    }
    let mut toks = Vec::new();
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        if Some(c) == escape {
            match it.next() {
                Some(n) => toks.push(Tok::Lit(n)),
                None => toks.push(Tok::Lit(c)),
            }
        } else if c == '%' {
            toks.push(Tok::Any);
        } else if c == '_' {
            toks.push(Tok::One);
        } else {
            toks.push(Tok::Lit(c));
        }
    }
    let chars: Vec<char> = s.chars().collect();
    // Classic wildcard matching with backtracking to the last `%`.
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < chars.len() {
        match toks.get(p) {
            Some(Tok::Any) => {
                star = Some((p, i));
                p += 1;
            }
            Some(Tok::One) => {
                p += 1;
                i += 1;
            }
            Some(Tok::Lit(c)) if *c == chars[i] => {
                p += 1;
                i += 1;
            }
            _ => match star {
                Some((sp, si)) => {
                    p = sp + 1;
                    i = si + 1;
                    star = Some((sp, si + 1));
                }
                None => return false,
            },
        }
    }
    toks[p..].iter().all(|t| *t == Tok::Any)
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use datafusion::prelude::{col, lit};

    fn catalog() -> Catalog {
        let file = |path: &str, first, rows, bounds: Vec<(String, Bound)>| FileFacts {
            path: path.into(),
            first,
            rows,
            columns: Some(bounds.iter().map(|(c, _)| c.clone()).collect()),
            bounds,
        };
        Catalog {
            total: 30,
            files: vec![
                file("a/x.csv", 0, 10, vec![("v".into(), Bound::Int(0, 9))]),
                file("a/y.csv", 10, 10, vec![("v".into(), Bound::Int(10, 19))]),
                file(
                    "b.parquet",
                    20,
                    10,
                    vec![("s".into(), Bound::Str("k".into(), "m".into()))],
                ),
            ],
            columns: vec![("v".into(), DataType::Int64), ("s".into(), DataType::Utf8)],
        }
    }

    #[test]
    fn gid_and_path_filters_are_exact_row_sets() {
        let c = catalog();
        let rows = |e: Expr| c.exact_rows(&e).map(|s| s.ranges().to_vec());
        assert_eq!(
            rows(
                col(GID_COLUMN)
                    .gt_eq(lit(5i64))
                    .and(col(GID_COLUMN).lt(lit(7i64)))
            ),
            Some(vec![5..7])
        );
        assert_eq!(
            rows(col(GID_COLUMN).between(lit(28i64), lit(99i64))),
            Some(vec![28..30])
        );
        assert_eq!(rows(lit(3i64).gt(col(GID_COLUMN))), Some(vec![0..3]));
        assert_eq!(
            rows(col(GID_COLUMN).in_list(vec![lit(4i64), lit(2i64), lit(3i64), lit(77i64)], false)),
            Some(vec![2..5])
        );
        assert_eq!(rows(col(GID_COLUMN).not_eq(lit(0i64))), Some(vec![1..30]));
        assert_eq!(
            rows(col(PATH_COLUMN).eq(lit("a/y.csv"))),
            Some(vec![10..20])
        );
        assert_eq!(rows(col(PATH_COLUMN).like(lit("a/%"))), Some(vec![0..20]));
        assert_eq!(
            rows(col(PATH_COLUMN).not_like(lit("a/%"))),
            Some(vec![20..30])
        );
        assert_eq!(
            rows(
                col(PATH_COLUMN)
                    .eq(lit("b.parquet"))
                    .or(col(GID_COLUMN).lt(lit(2i64)))
            ),
            Some(vec![0..2, 20..30])
        );
        assert_eq!(
            rows(col(GID_COLUMN).eq(lit(ScalarValue::Int64(None)))),
            None
        );
        assert_eq!(rows(col("v").gt(lit(3i64))), None);
    }

    #[test]
    fn statistics_prune_files() {
        let c = catalog();
        let keep = |e: Expr| {
            c.files
                .iter()
                .map(|f| c.may_match(&e, f))
                .collect::<Vec<_>>()
        };
        assert_eq!(keep(col("v").gt(lit(12i64))), vec![false, true, false]);
        assert_eq!(
            keep(col("v").eq(lit(5i64)).or(col("s").eq(lit("l")))),
            vec![true, false, true]
        );
        assert_eq!(
            keep(col("v").between(lit(9i64), lit(10i64))),
            vec![true, true, false]
        );
        assert_eq!(keep(col("s").lt(lit("a"))), vec![false, false, false]);
        assert_eq!(
            keep(col("v").in_list(vec![lit(15i64)], false)),
            vec![false, true, false]
        );
    }

    #[test]
    fn like_patterns() {
        assert!(like_match("a%", None, "abc"));
        assert!(like_match("%c", None, "abc"));
        assert!(like_match("a_c", None, "abc"));
        assert!(!like_match("a_c", None, "abbc"));
        assert!(like_match("%b%", None, "abc"));
        assert!(like_match("a\\%", Some('\\'), "a%"));
        assert!(!like_match("a\\%", Some('\\'), "ab"));
        assert!(like_match("", None, ""));
        assert!(!like_match("", None, "x"));
    }
}
