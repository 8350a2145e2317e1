//! Statistics recomputed from decoded values, for `check`: a page whose bytes were damaged
//! but still decode (a flipped bit inside a compressed literal, a changed PLAIN value) gives
//! values that disagree with the statistics the writer stored for them.

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrowPrimitiveType};
use arrow_schema::DataType;
use tsfile_format::statistics::{Statistics, StatisticsValues};

use crate::arrow_types::days_to_date;
use crate::check_lossy::Precision;

/// Compares a series' stored statistics with its decoded column (`times[i]` is the time of
/// row `i`); returns what disagrees, or `None`. Float values are compared within
/// `precision` (exact unless the series' encoding is lossy, see [`crate::check_lossy`]).
pub(crate) fn mismatch(
    times: &[i64],
    col: &dyn Array,
    stats: &Statistics,
    precision: Precision,
) -> Option<String> {
    let rows: Vec<usize> = (0..col.len().min(times.len()))
        .filter(|&i| col.is_valid(i))
        .collect();
    if stats.count == 0 || rows.is_empty() {
        return None;
    }
    let (Some(&first_row), Some(&last_row)) = (rows.first(), rows.last()) else {
        return None;
    };
    let (start, end) = (times[first_row], times[last_row]);
    if start != stats.start_time || end != stats.end_time {
        return Some(format!(
            "decoded values span times [{start}, {end}], statistics say [{}, {}]",
            stats.start_time, stats.end_time
        ));
    }
    match (&stats.values, col.data_type()) {
        (StatisticsValues::Boolean { first, last, sum }, DataType::Boolean) => {
            let a = col.as_boolean();
            let trues = rows.iter().filter(|&&i| a.value(i)).count() as i64;
            differs(
                "first/last/sum",
                (a.value(first_row), a.value(last_row), trues),
                (*first, *last, *sum),
            )
        }
        (
            StatisticsValues::Int32 {
                min,
                max,
                first,
                last,
                sum,
            },
            DataType::Int32,
        ) => {
            let v = values::<Int32Type>(col, &rows);
            integers(&v, (*min, *max, *first, *last), *sum)
        }
        (
            StatisticsValues::Int32 {
                min,
                max,
                first,
                last,
                sum,
            },
            DataType::Date32,
        ) => {
            let v: Vec<i32> = values::<Date32Type>(col, &rows)
                .into_iter()
                .map(|d| days_to_date(d).unwrap_or(i32::MIN))
                .collect();
            integers(&v, (*min, *max, *first, *last), *sum)
        }
        (
            StatisticsValues::Int64 {
                min,
                max,
                first,
                last,
                sum,
            },
            DataType::Int64 | DataType::Timestamp(..),
        ) => {
            let v: Vec<i64> = match col.data_type() {
                DataType::Int64 => values::<Int64Type>(col, &rows),
                _ => {
                    let raw = arrow_cast_timestamp(col);
                    rows.iter().filter_map(|&i| raw.get(i).copied()).collect()
                }
            };
            let (lo, hi) = min_max(&v)?;
            differs(
                "min/max/first/last",
                (lo, hi, v[0], v[v.len() - 1]),
                (*min, *max, *first, *last),
            )
            .or_else(|| sum_differs(v.iter().map(|&x| x as f64), *sum, Precision::EXACT))
        }
        (
            StatisticsValues::Float {
                min,
                max,
                first,
                last,
                sum,
            },
            DataType::Float32,
        ) => {
            let v: Vec<f64> = values::<Float32Type>(col, &rows)
                .into_iter()
                .map(f64::from)
                .collect();
            let stored = (
                f64::from(*min),
                f64::from(*max),
                f64::from(*first),
                f64::from(*last),
            );
            floats(&v, stored, precision)
                .or_else(|| sum_differs(v.iter().copied(), *sum, precision))
        }
        (
            StatisticsValues::Double {
                min,
                max,
                first,
                last,
                sum,
            },
            DataType::Float64,
        ) => {
            let v = values::<Float64Type>(col, &rows);
            floats(&v, (*min, *max, *first, *last), precision)
                .or_else(|| sum_differs(v.iter().copied(), *sum, precision))
        }
        (StatisticsValues::Text { first, last }, _)
        | (StatisticsValues::String { first, last, .. }, _) => {
            let bytes = |i: usize| -> Option<Vec<u8>> {
                match col.data_type() {
                    DataType::Utf8 => Some(col.as_string::<i32>().value(i).as_bytes().to_vec()),
                    DataType::Binary => Some(col.as_binary::<i32>().value(i).to_vec()),
                    _ => None,
                }
            };
            let (f, l) = (bytes(first_row)?, bytes(last_row)?);
            if first.as_deref() != Some(f.as_slice()) || last.as_deref() != Some(l.as_slice()) {
                return Some("decoded first/last text differ from the statistics".into());
            }
            if let StatisticsValues::String {
                min: Some(min),
                max: Some(max),
                ..
            } = &stats.values
            {
                let all: Vec<Vec<u8>> = rows.iter().filter_map(|&i| bytes(i)).collect();
                let (lo, hi) = (all.iter().min()?, all.iter().max()?);
                if lo != min || hi != max {
                    return Some("decoded min/max text differ from the statistics".into());
                }
            }
            None
        }
        _ => None,
    }
}

fn arrow_cast_timestamp(col: &dyn Array) -> Vec<i64> {
    // Every Timestamp unit stores i64; read the buffer whatever the unit.
    let data = col.to_data();
    data.buffers().first().map_or_else(Vec::new, |b| {
        b.typed_data::<i64>()
            .get(data.offset()..data.offset() + data.len())
            .map_or_else(Vec::new, <[i64]>::to_vec)
    })
}

fn values<T: ArrowPrimitiveType>(col: &dyn Array, rows: &[usize]) -> Vec<T::Native> {
    let a = col.as_primitive::<T>();
    rows.iter().map(|&i| a.value(i)).collect()
}

fn min_max<T: PartialOrd + Copy>(v: &[T]) -> Option<(T, T)> {
    let mut it = v.iter().copied();
    let first = it.next()?;
    Some(it.fold((first, first), |(lo, hi), x| {
        (if x < lo { x } else { lo }, if x > hi { x } else { hi })
    }))
}

fn integers(v: &[i32], stored: (i32, i32, i32, i32), sum: i64) -> Option<String> {
    let (lo, hi) = min_max(v)?;
    let total: i64 = v.iter().map(|&x| i64::from(x)).sum();
    differs(
        "min/max/first/last/sum",
        (lo, hi, v[0], v[v.len() - 1], total),
        (stored.0, stored.1, stored.2, stored.3, sum),
    )
}

fn close(a: f64, b: f64, precision: Precision) -> bool {
    a == b || (a - b).abs() <= precision.at(a.abs().max(b.abs()))
}

/// Floats compare within the precision of their encoding (NaN makes min/max
/// writer-specific: not checked).
fn floats(v: &[f64], stored: (f64, f64, f64, f64), precision: Precision) -> Option<String> {
    if v.iter().any(|x| x.is_nan()) {
        return None;
    }
    let (lo, hi) = min_max(v)?;
    let decoded = (lo, hi, v[0], v[v.len() - 1]);
    let ok = close(decoded.0, stored.0, precision)
        && close(decoded.1, stored.1, precision)
        && close(decoded.2, stored.2, precision)
        && close(decoded.3, stored.3, precision);
    (!ok).then(|| {
        format!("decoded min/max/first/last {decoded:?} differ from the statistics {stored:?}")
    })
}

/// A sum stored as a double: each value within `precision`, plus a relative epsilon for the
/// order and width of the writer's additions.
fn sum_differs(v: impl Iterator<Item = f64>, stored: f64, precision: Precision) -> Option<String> {
    let mut total = 0.0;
    let mut allowed = 0.0;
    let mut magnitude: f64 = 0.0;
    for x in v {
        if !x.is_finite() {
            return None;
        }
        total += x;
        allowed += precision.at(x.abs());
        magnitude += x.abs();
    }
    let ok = (total - stored).abs() <= allowed + 1e-9 * magnitude.max(stored.abs()) + 1e-9;
    (!ok).then(|| format!("decoded sum {total} differs from the statistics {stored}"))
}

fn differs<T: PartialEq + std::fmt::Debug>(what: &str, decoded: T, stored: T) -> Option<String> {
    (decoded != stored)
        .then(|| format!("decoded {what} {decoded:?} differ from the statistics {stored:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int32Array};

    fn stats(count: u32, values: StatisticsValues) -> Statistics {
        Statistics {
            count,
            start_time: 10,
            end_time: 30,
            values,
        }
    }

    #[test]
    fn int32_statistics_agree_or_name_the_difference() {
        let col = Int32Array::from(vec![Some(7), None, Some(9), Some(8)]);
        let times = [10, 15, 20, 30];
        let good = StatisticsValues::Int32 {
            min: 7,
            max: 9,
            first: 7,
            last: 8,
            sum: 24,
        };
        assert_eq!(
            mismatch(&times, &col, &stats(3, good), Precision::EXACT),
            None
        );
        let bad = StatisticsValues::Int32 {
            min: 7,
            max: 9,
            first: 7,
            last: 8,
            sum: 25,
        };
        assert!(
            mismatch(&times, &col, &stats(3, bad), Precision::EXACT)
                .unwrap()
                .contains("sum")
        );
        let late = Statistics {
            start_time: 11,
            ..stats(3, StatisticsValues::None)
        };
        assert!(
            mismatch(&times, &col, &late, Precision::EXACT)
                .unwrap()
                .contains("times")
        );
    }

    #[test]
    fn lossy_doubles_pass_within_their_step_only() {
        let col = Float64Array::from(vec![1.5, 100.13]);
        let times = [10, 30];
        let stored = StatisticsValues::Double {
            min: 1.5,
            max: 100.125,
            first: 1.5,
            last: 100.125,
            sum: 101.625,
        };
        let step = Precision {
            abs: 0.005,
            rel: 1e-15,
        };
        assert_eq!(
            mismatch(&times, &col, &stats(2, stored.clone()), step),
            None
        );
        // The same values from a lossless encoding must match exactly.
        assert!(
            mismatch(&times, &col, &stats(2, stored), Precision::EXACT)
                .unwrap()
                .contains("min/max")
        );
        let far = StatisticsValues::Double {
            min: 1.5,
            max: 100.5,
            first: 1.5,
            last: 100.5,
            sum: 102.0,
        };
        assert!(mismatch(&times, &col, &stats(2, far), step).is_some());
    }
}
