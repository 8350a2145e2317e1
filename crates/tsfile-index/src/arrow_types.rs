//! The mapping from TsFile data types to Arrow types, and the DATE conversion.
//!
//! BOOLEAN→Boolean, INT32→Int32, INT64→Int64, FLOAT→Float32, DOUBLE→Float64,
//! TEXT/STRING→Utf8, BLOB→Binary, DATE→Date32, TIMESTAMP and the `time` column→Timestamp in the
//! unit chosen by [`TimeRepr`] (milliseconds by default; TsFile itself does not record a unit).

use arrow_schema::{DataType, TimeUnit};
use tsfile_format::types::TSDataType;

/// How `time` and TIMESTAMP columns are represented in Arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeRepr {
    /// `Timestamp(unit)`; the stored integers are taken to be in that unit.
    Timestamp(TimeUnit),
    /// The raw stored value as `Int64`.
    Int64,
}

impl Default for TimeRepr {
    /// `Timestamp(Millisecond)`, the unit of IoTDB's default configuration.
    fn default() -> Self {
        TimeRepr::Timestamp(TimeUnit::Millisecond)
    }
}

impl TimeRepr {
    /// The Arrow type of a time or TIMESTAMP column.
    pub fn data_type(self) -> DataType {
        match self {
            TimeRepr::Timestamp(unit) => DataType::Timestamp(unit, None),
            TimeRepr::Int64 => DataType::Int64,
        }
    }
}

/// The Arrow type of a column of TsFile type `ty`, or `None` for VECTOR/UNKNOWN, which never
/// carry values.
pub fn arrow_type(ty: TSDataType, time: TimeRepr) -> Option<DataType> {
    Some(match ty {
        TSDataType::Boolean => DataType::Boolean,
        TSDataType::Int32 => DataType::Int32,
        TSDataType::Int64 => DataType::Int64,
        TSDataType::Float => DataType::Float32,
        TSDataType::Double => DataType::Float64,
        TSDataType::Text | TSDataType::String => DataType::Utf8,
        TSDataType::Blob => DataType::Binary,
        TSDataType::Date => DataType::Date32,
        TSDataType::Timestamp => time.data_type(),
        TSDataType::Vector | TSDataType::Unknown => return None,
    })
}

/// Converts a stored DATE (`yyyy*10000 + mm*100 + dd`) to days since 1970-01-01, or `None`
/// when the integer is not a valid calendar date.
pub fn date_to_days(yyyymmdd: i32) -> Option<i32> {
    let year = yyyymmdd / 10000;
    let month = (yyyymmdd / 100) % 100;
    let day = yyyymmdd % 100;
    if yyyymmdd < 0 || !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// Converts days since 1970-01-01 back to the stored `yyyymmdd` form (years 0..=9999 only,
/// the range DATE can hold).
pub fn days_to_date(days: i32) -> Option<i32> {
    let (y, m, d) = civil_from_days(i64::from(days));
    if !(0..=9999).contains(&y) {
        return None;
    }
    Some(y as i32 * 10000 + m as i32 * 100 + d as i32)
}

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: i32) -> i32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's `days_from_civil`, proleptic Gregorian.
fn days_from_civil(y: i32, m: i32, d: i32) -> i32 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Howard Hinnant's `civil_from_days`, proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        for v in [19700101, 20240102, 10000101, 99991231, 20000229, 17260222] {
            let days = date_to_days(v).unwrap();
            assert_eq!(days_to_date(days), Some(v), "{v}");
        }
        assert_eq!(date_to_days(19700101), Some(0));
        assert_eq!(date_to_days(19700102), Some(1));
        assert_eq!(date_to_days(20230229), None);
        assert_eq!(date_to_days(20241301), None);
        assert_eq!(date_to_days(-5), None);
    }

    #[test]
    fn type_mapping() {
        assert_eq!(
            arrow_type(TSDataType::Float, TimeRepr::default()),
            Some(DataType::Float32)
        );
        assert_eq!(
            arrow_type(TSDataType::Timestamp, TimeRepr::default()),
            Some(DataType::Timestamp(TimeUnit::Millisecond, None))
        );
        assert_eq!(
            arrow_type(TSDataType::Timestamp, TimeRepr::Int64),
            Some(DataType::Int64)
        );
        assert_eq!(arrow_type(TSDataType::Vector, TimeRepr::default()), None);
    }
}
