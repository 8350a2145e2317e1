//! Column statistics (`stats_json`) computed from decoded record batches: min/max of the
//! non-null values of Int64, Float64 and Utf8 columns (NaN ignored, strings by bytes).

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

use crate::locator::{ColumnStats, Stats, StatsColumns, repeated_names};
use crate::text::bounds::prefix_key;

/// Accumulates statistics over the batches of one file.
#[derive(Debug, Clone, Default)]
pub struct StatsBuilder {
    columns: Vec<(String, Acc)>,
}

#[derive(Debug, Clone)]
enum Acc {
    Int(Option<(i64, i64)>),
    Float(Option<(f64, f64)>),
    Str(Option<(String, String)>),
    Skip,
}

impl StatsBuilder {
    /// A builder for the columns of `schema` that `wanted` selects (a name the schema repeats
    /// gets none, see [`repeated_names`]).
    pub fn new(schema: &arrow_schema::Schema, wanted: &StatsColumns) -> Self {
        let repeated = repeated_names(schema.fields().iter().map(|f| f.name().as_str()));
        let columns = schema
            .fields()
            .iter()
            .map(|f| {
                let acc = if !wanted.wants(f.name()) || repeated.contains(f.name().as_str()) {
                    Acc::Skip
                } else {
                    match f.data_type() {
                        DataType::Int64 => Acc::Int(None),
                        DataType::Float64 => Acc::Float(None),
                        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Acc::Str(None),
                        _ => Acc::Skip,
                    }
                };
                (f.name().clone(), acc)
            })
            .collect();
        StatsBuilder { columns }
    }

    /// True when no column needs statistics (callers may skip decoding for them).
    pub fn is_empty(&self) -> bool {
        self.columns.iter().all(|(_, a)| matches!(a, Acc::Skip))
    }

    /// Folds one batch (with the builder's schema) into the statistics.
    pub fn update(&mut self, batch: &RecordBatch) {
        for ((_, acc), column) in self.columns.iter_mut().zip(batch.columns()) {
            update_column(acc, column.as_ref());
        }
    }

    /// Joins `other`, a builder of the same schema fed other rows of the same file (a range
    /// read on another thread): the bounds of both.
    pub fn merge(&mut self, other: StatsBuilder) {
        for ((_, mine), (_, theirs)) in self.columns.iter_mut().zip(other.columns) {
            match (mine, theirs) {
                (Acc::Int(b), Acc::Int(Some((lo, hi)))) => {
                    *b = Some(b.map_or((lo, hi), |(l, h)| (l.min(lo), h.max(hi))));
                }
                (Acc::Float(b), Acc::Float(Some((lo, hi)))) => {
                    *b = Some(b.map_or((lo, hi), |(l, h)| (l.min(lo), h.max(hi))));
                }
                (Acc::Str(b), Acc::Str(Some((lo, hi)))) => match b {
                    None => *b = Some((lo, hi)),
                    Some((l, h)) => {
                        if lo < *l {
                            *l = lo;
                        }
                        if hi > *h {
                            *h = hi;
                        }
                    }
                },
                _ => {}
            }
        }
    }

    /// The statistics: columns without any non-null value are left out.
    pub fn finish(self) -> Stats {
        let mut stats = Stats::new();
        for (name, acc) in self.columns {
            let s = match acc {
                Acc::Int(Some((min, max))) => ColumnStats::Int { min, max },
                Acc::Float(Some((min, max))) => ColumnStats::float(min, max),
                Acc::Str(Some((min_str, max_str))) => ColumnStats::Str { min_str, max_str },
                _ => continue,
            };
            stats.insert(name, s);
        }
        stats
    }
}

fn update_column(acc: &mut Acc, column: &dyn Array) {
    match acc {
        Acc::Int(bounds) => {
            if let Some(a) = column.as_primitive_opt::<Int64Type>() {
                let values = a.values();
                let fold = |(lo, hi): (i64, i64), v: i64| (lo.min(v), hi.max(v));
                // Without nulls the fold runs over the plain slice (it vectorises).
                let (lo, hi) = match a.nulls() {
                    None => values.iter().fold((i64::MAX, i64::MIN), |b, &v| fold(b, v)),
                    Some(n) => n
                        .valid_indices()
                        .fold((i64::MAX, i64::MIN), |b, i| fold(b, values[i])),
                };
                if lo <= hi {
                    *bounds = Some(match *bounds {
                        None => (lo, hi),
                        Some((l, h)) => (l.min(lo), h.max(hi)),
                    });
                }
            }
        }
        Acc::Float(bounds) => {
            if let Some(a) = column.as_primitive_opt::<Float64Type>() {
                let values = a.values();
                // `f64::min`/`max` return the other operand for a NaN: NaNs are ignored.
                let fold = |(lo, hi): (f64, f64), v: f64| (lo.min(v), hi.max(v));
                let start = (f64::INFINITY, f64::NEG_INFINITY);
                let (lo, hi) = match a.nulls() {
                    None => values.iter().fold(start, |b, &v| fold(b, v)),
                    Some(n) => n.valid_indices().fold(start, |b, i| fold(b, values[i])),
                };
                if lo <= hi {
                    *bounds = Some(match *bounds {
                        None => (lo, hi),
                        Some((l, h)) => (l.min(lo), h.max(hi)),
                    });
                }
            }
        }
        Acc::Str(bounds) => {
            let batch = match column.data_type() {
                DataType::Utf8 => str_bounds(column.as_string::<i32>().iter().flatten()),
                DataType::LargeUtf8 => str_bounds(column.as_string::<i64>().iter().flatten()),
                DataType::Utf8View => str_bounds(column.as_string_view().iter().flatten()),
                _ => None,
            };
            if let Some((lo, hi)) = batch {
                match bounds {
                    None => *bounds = Some((lo.to_string(), hi.to_string())),
                    Some((l, h)) => {
                        if lo < l.as_str() {
                            *l = lo.to_string();
                        }
                        if hi > h.as_str() {
                            *h = hi.to_string();
                        }
                    }
                }
            }
        }
        Acc::Skip => {}
    }
}

/// The smallest and largest of `values`, compared by 8-byte prefix keys first so that most
/// values cost an integer comparison, and kept as borrowed slices until the end.
fn str_bounds<'a>(values: impl Iterator<Item = &'a str>) -> Option<(&'a str, &'a str)> {
    let mut lo: Option<(u64, &str)> = None;
    let mut hi: Option<(u64, &str)> = None;
    for v in values {
        let key = prefix_key(v.as_bytes());
        match (lo, hi) {
            (Some((lk, ls)), Some((hk, hs))) => {
                if key < lk || (key == lk && v < ls) {
                    lo = Some((key, v));
                } else if key > hk || (key == hk && v > hs) {
                    hi = Some((key, v));
                }
            }
            _ => {
                lo = Some((key, v));
                hi = Some((key, v));
            }
        }
    }
    Some((lo?.1, hi?.1))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float64Array, Int32Array, Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    use super::*;

    /// Random batches with nulls, NaNs and strings sharing long prefixes: the bounds equal a
    /// plain fold over every value.
    #[test]
    fn bounds_equal_a_plain_fold() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("i", DataType::Int64, true),
            Field::new("f", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
        ]));
        let mut rng = crate::testutil::XorShift(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next();
        let mut b = StatsBuilder::new(&schema, &StatsColumns::All);
        let (mut ints, mut floats, mut strs) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..20 {
            let n = (next() % 50) as usize;
            let nulls = next() % 3 == 0;
            let i: Vec<Option<i64>> = (0..n)
                .map(|_| (!nulls || next() % 2 == 0).then(|| next() as i64 >> (next() % 64)))
                .collect();
            let f: Vec<Option<f64>> = (0..n)
                .map(|_| match next() % 5 {
                    0 if nulls => None,
                    1 => Some(f64::NAN),
                    _ => Some((next() % 2001) as f64 - 1000.0),
                })
                .collect();
            let s: Vec<Option<String>> = (0..n)
                .map(|_| {
                    (!nulls || next() % 2 == 0).then(|| {
                        let len = (next() % 12) as usize;
                        (0..len)
                            .map(|_| ['a', 'b', '\0', '\u{e9}'][(next() % 4) as usize])
                            .collect()
                    })
                })
                .collect();
            ints.extend(i.iter().flatten().copied());
            floats.extend(f.iter().flatten().copied().filter(|v| !v.is_nan()));
            strs.extend(s.iter().flatten().cloned());
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(i)),
                    Arc::new(Float64Array::from(f)),
                    Arc::new(StringArray::from(s)),
                ],
            )
            .unwrap();
            b.update(&batch);
        }
        let stats = b.finish();
        let (imin, imax) = (*ints.iter().min().unwrap(), *ints.iter().max().unwrap());
        assert_eq!(
            stats["i"],
            ColumnStats::Int {
                min: imin,
                max: imax
            }
        );
        let fmin = floats.iter().copied().fold(f64::INFINITY, f64::min);
        let fmax = floats.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(
            stats["f"],
            ColumnStats::Float {
                min: fmin,
                max: fmax
            }
        );
        let smin = strs.iter().min().unwrap().clone();
        let smax = strs.iter().max().unwrap().clone();
        assert_eq!(
            stats["s"],
            ColumnStats::Str {
                min_str: smin,
                max_str: smax
            }
        );
    }

    #[test]
    fn min_max_of_supported_columns_only() {
        let schema = Schema::new(vec![
            Field::new("i", DataType::Int64, true),
            Field::new("f", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("n", DataType::Int32, true),
            Field::new("empty", DataType::Int64, true),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(schema.clone()),
            vec![
                Arc::new(Int64Array::from(vec![Some(3), None, Some(i64::MIN)])),
                Arc::new(Float64Array::from(vec![
                    Some(f64::NAN),
                    Some(-0.5),
                    Some(2.0),
                ])),
                Arc::new(StringArray::from(vec![Some("b"), Some("É"), Some("a")])),
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(Int64Array::from(vec![None, None, None])),
            ],
        )
        .unwrap();
        let mut b = StatsBuilder::new(&schema, &StatsColumns::All);
        b.update(&batch);
        let stats = b.finish();
        assert_eq!(stats.len(), 3);
        assert_eq!(
            stats["i"],
            ColumnStats::Int {
                min: i64::MIN,
                max: 3
            }
        );
        assert_eq!(
            stats["f"],
            ColumnStats::Float {
                min: -0.5,
                max: 2.0
            }
        );
        assert_eq!(
            stats["s"],
            ColumnStats::Str {
                min_str: "a".into(),
                max_str: "É".into()
            }
        );
    }
}
