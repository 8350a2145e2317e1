//! Column statistics (`stats_json`) computed from decoded record batches: min/max of the
//! non-null values of Int64, Float64 and Utf8 columns (NaN ignored, strings by bytes).

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

use crate::locator::{ColumnStats, Stats, StatsColumns};

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
    /// A builder for the columns of `schema` that `wanted` selects.
    pub fn new(schema: &arrow_schema::Schema, wanted: &StatsColumns) -> Self {
        let columns = schema
            .fields()
            .iter()
            .map(|f| {
                let acc = if !wanted.wants(f.name()) {
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

    /// The statistics: columns without any non-null value are left out.
    pub fn finish(self) -> Stats {
        let mut stats = Stats::new();
        for (name, acc) in self.columns {
            let s = match acc {
                Acc::Int(Some((min, max))) => ColumnStats::Int { min, max },
                Acc::Float(Some((min, max))) => ColumnStats::Float { min, max },
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
                for v in a.iter().flatten() {
                    *bounds = Some(match *bounds {
                        None => (v, v),
                        Some((lo, hi)) => (lo.min(v), hi.max(v)),
                    });
                }
            }
        }
        Acc::Float(bounds) => {
            if let Some(a) = column.as_primitive_opt::<Float64Type>() {
                for v in a.iter().flatten().filter(|v| !v.is_nan()) {
                    *bounds = Some(match *bounds {
                        None => (v, v),
                        Some((lo, hi)) => (lo.min(v), hi.max(v)),
                    });
                }
            }
        }
        Acc::Str(bounds) => {
            let mut fold = |v: &str| match bounds {
                None => *bounds = Some((v.to_string(), v.to_string())),
                Some((lo, hi)) => {
                    if v < lo.as_str() {
                        *lo = v.to_string();
                    }
                    if v > hi.as_str() {
                        *hi = v.to_string();
                    }
                }
            };
            match column.data_type() {
                DataType::Utf8 => column
                    .as_string::<i32>()
                    .iter()
                    .flatten()
                    .for_each(&mut fold),
                DataType::LargeUtf8 => column
                    .as_string::<i64>()
                    .iter()
                    .flatten()
                    .for_each(&mut fold),
                DataType::Utf8View => column.as_string_view().iter().flatten().for_each(&mut fold),
                _ => {}
            }
        }
        Acc::Skip => {}
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float64Array, Int32Array, Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    use super::*;

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
