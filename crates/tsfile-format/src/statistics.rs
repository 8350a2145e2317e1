//! Statistics (reference §6): the summary written in page headers, ChunkMetadata and
//! TimeseriesMetadata, identical in all three places.
//!
//! ```text
//! Statistics := UVarInt count, i64 start_time, i64 end_time, typed part (by data type)
//! ```
//!
//! The bytes carry no type tag: the data type comes from the enclosing chunk header or
//! TimeseriesMetadata, so [`Statistics::decode`] takes it as an argument. Values are kept
//! exactly as written (floats as their bit patterns, text as raw bytes) so that encoding a
//! decoded block reproduces it byte for byte.

use crate::cursor::{Cursor, Writer};
use crate::error::{Error, Result};
use crate::types::TSDataType;

/// One Statistics block.
#[derive(Debug, Clone, PartialEq)]
pub struct Statistics {
    /// Number of non-null values (rows, for the aligned time column).
    pub count: u32,
    /// Smallest timestamp among the counted values (meaningless when `count == 0`).
    pub start_time: i64,
    /// Largest timestamp among the counted values (meaningless when `count == 0`).
    pub end_time: i64,
    /// The typed part.
    pub values: StatisticsValues,
}

/// The typed part of a Statistics block, by data type.
#[derive(Debug, Clone, PartialEq)]
pub enum StatisticsValues {
    /// BOOLEAN: `u8 first, u8 last, i64 sum` (sum = number of `true` values).
    Boolean {
        /// Value at the smallest timestamp.
        first: bool,
        /// Value at the largest timestamp.
        last: bool,
        /// Number of `true` values.
        sum: i64,
    },
    /// INT32 and DATE: `i32 min, max, first, last, i64 sum`.
    Int32 {
        /// Smallest value.
        min: i32,
        /// Largest value.
        max: i32,
        /// Value at the smallest timestamp.
        first: i32,
        /// Value at the largest timestamp.
        last: i32,
        /// Sum of the values.
        sum: i64,
    },
    /// INT64 and TIMESTAMP: `i64 min, max, first, last, f64 sum`.
    Int64 {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
        /// Value at the smallest timestamp.
        first: i64,
        /// Value at the largest timestamp.
        last: i64,
        /// Sum of the values, as a double (may lose precision).
        sum: f64,
    },
    /// FLOAT: `f32 min, max, first, last, f64 sum`.
    Float {
        /// Smallest value.
        min: f32,
        /// Largest value.
        max: f32,
        /// Value at the smallest timestamp.
        first: f32,
        /// Value at the largest timestamp.
        last: f32,
        /// Sum of the values.
        sum: f64,
    },
    /// DOUBLE: `f64 min, max, first, last, sum`.
    Double {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
        /// Value at the smallest timestamp.
        first: f64,
        /// Value at the largest timestamp.
        last: f64,
        /// Sum of the values.
        sum: f64,
    },
    /// TEXT: `Bin32 first, Bin32 last` (a length of −1 is kept as `None`).
    Text {
        /// Value at the smallest timestamp.
        first: Option<Vec<u8>>,
        /// Value at the largest timestamp.
        last: Option<Vec<u8>>,
    },
    /// STRING: `Bin32 first, last, min, max` (min/max in unsigned byte order).
    String {
        /// Value at the smallest timestamp.
        first: Option<Vec<u8>>,
        /// Value at the largest timestamp.
        last: Option<Vec<u8>>,
        /// Smallest value (byte order).
        min: Option<Vec<u8>>,
        /// Largest value (byte order).
        max: Option<Vec<u8>>,
    },
    /// BLOB and VECTOR (the aligned time column): no typed part.
    None,
}

impl Statistics {
    /// Reads a Statistics block of `data_type`. `UNKNOWN` (7) has no defined layout and is
    /// refused with [`Error::Invalid`].
    pub fn decode(c: &mut Cursor<'_>, data_type: TSDataType) -> Result<Self> {
        let at = c.offset();
        let count = c.read_uvarint("statistics count")?;
        let start_time = c.read_i64("statistics start time")?;
        let end_time = c.read_i64("statistics end time")?;
        let values = match data_type {
            TSDataType::Boolean => StatisticsValues::Boolean {
                first: c.read_bool("boolean statistics first")?,
                last: c.read_bool("boolean statistics last")?,
                sum: c.read_i64("boolean statistics sum")?,
            },
            TSDataType::Int32 | TSDataType::Date => StatisticsValues::Int32 {
                min: c.read_i32("int32 statistics min")?,
                max: c.read_i32("int32 statistics max")?,
                first: c.read_i32("int32 statistics first")?,
                last: c.read_i32("int32 statistics last")?,
                sum: c.read_i64("int32 statistics sum")?,
            },
            TSDataType::Int64 | TSDataType::Timestamp => StatisticsValues::Int64 {
                min: c.read_i64("int64 statistics min")?,
                max: c.read_i64("int64 statistics max")?,
                first: c.read_i64("int64 statistics first")?,
                last: c.read_i64("int64 statistics last")?,
                sum: c.read_f64("int64 statistics sum")?,
            },
            TSDataType::Float => StatisticsValues::Float {
                min: c.read_f32("float statistics min")?,
                max: c.read_f32("float statistics max")?,
                first: c.read_f32("float statistics first")?,
                last: c.read_f32("float statistics last")?,
                sum: c.read_f64("float statistics sum")?,
            },
            TSDataType::Double => StatisticsValues::Double {
                min: c.read_f64("double statistics min")?,
                max: c.read_f64("double statistics max")?,
                first: c.read_f64("double statistics first")?,
                last: c.read_f64("double statistics last")?,
                sum: c.read_f64("double statistics sum")?,
            },
            TSDataType::Text => StatisticsValues::Text {
                first: read_bin(c, "text statistics first")?,
                last: read_bin(c, "text statistics last")?,
            },
            TSDataType::String => StatisticsValues::String {
                first: read_bin(c, "string statistics first")?,
                last: read_bin(c, "string statistics last")?,
                min: read_bin(c, "string statistics min")?,
                max: read_bin(c, "string statistics max")?,
            },
            TSDataType::Blob | TSDataType::Vector => StatisticsValues::None,
            TSDataType::Unknown => {
                return Err(Error::Invalid {
                    what: "statistics",
                    offset: at,
                    reason: "data type UNKNOWN has no statistics layout".into(),
                });
            }
        };
        Ok(Self {
            count,
            start_time,
            end_time,
            values,
        })
    }

    /// Writes the block exactly as held.
    pub fn encode(&self, w: &mut Writer) {
        w.write_uvarint(self.count);
        w.write_i64(self.start_time);
        w.write_i64(self.end_time);
        match &self.values {
            StatisticsValues::Boolean { first, last, sum } => {
                w.write_bool(*first);
                w.write_bool(*last);
                w.write_i64(*sum);
            }
            StatisticsValues::Int32 {
                min,
                max,
                first,
                last,
                sum,
            } => {
                for v in [min, max, first, last] {
                    w.write_i32(*v);
                }
                w.write_i64(*sum);
            }
            StatisticsValues::Int64 {
                min,
                max,
                first,
                last,
                sum,
            } => {
                for v in [min, max, first, last] {
                    w.write_i64(*v);
                }
                w.write_f64(*sum);
            }
            StatisticsValues::Float {
                min,
                max,
                first,
                last,
                sum,
            } => {
                for v in [min, max, first, last] {
                    w.write_f32(*v);
                }
                w.write_f64(*sum);
            }
            StatisticsValues::Double {
                min,
                max,
                first,
                last,
                sum,
            } => {
                for v in [min, max, first, last, sum] {
                    w.write_f64(*v);
                }
            }
            StatisticsValues::Text { first, last } => {
                w.write_bin32(first.as_deref());
                w.write_bin32(last.as_deref());
            }
            StatisticsValues::String {
                first,
                last,
                min,
                max,
            } => {
                for v in [first, last, min, max] {
                    w.write_bin32(v.as_deref());
                }
            }
            StatisticsValues::None => {}
        }
    }

    /// True when the block counts no value (an all-null value chunk): its time range and
    /// typed part carry no meaning then (§6).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

fn read_bin(c: &mut Cursor<'_>, what: &'static str) -> Result<Option<Vec<u8>>> {
    Ok(c.read_bin32(what)?.map(<[u8]>::to_vec))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TV6: INT32 statistics of 7, 8, 9 at t = 100..102.
    const TV6: &[u8] = &[
        0x03, 0, 0, 0, 0, 0, 0, 0, 0x64, 0, 0, 0, 0, 0, 0, 0, 0x66, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0,
        0, 7, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0x18,
    ];

    #[test]
    fn tv6_int32_statistics() {
        let s = Statistics::decode(&mut Cursor::new(TV6, 0), TSDataType::Int32).unwrap();
        assert_eq!(
            s,
            Statistics {
                count: 3,
                start_time: 100,
                end_time: 102,
                values: StatisticsValues::Int32 {
                    min: 7,
                    max: 9,
                    first: 7,
                    last: 9,
                    sum: 24
                }
            }
        );
        let mut w = Writer::new();
        s.encode(&mut w);
        assert_eq!(w.as_bytes(), TV6);
    }

    #[test]
    fn every_type_round_trips() {
        let bin = |s: &str| Some(s.as_bytes().to_vec());
        let cases = [
            (
                TSDataType::Boolean,
                StatisticsValues::Boolean {
                    first: true,
                    last: false,
                    sum: 1,
                },
                10,
            ),
            (
                TSDataType::Int64,
                StatisticsValues::Int64 {
                    min: -1,
                    max: 5,
                    first: 5,
                    last: -1,
                    sum: 24.0,
                },
                40,
            ),
            (
                TSDataType::Float,
                StatisticsValues::Float {
                    min: -2.25,
                    max: 1.5,
                    first: 1.5,
                    last: -2.25,
                    sum: -0.75,
                },
                24,
            ),
            (
                TSDataType::Double,
                StatisticsValues::Double {
                    min: -0.0,
                    max: f64::MAX,
                    first: 1.0,
                    last: 2.0,
                    sum: 3.0,
                },
                40,
            ),
            (
                TSDataType::Text,
                StatisticsValues::Text {
                    first: bin("a"),
                    last: None,
                },
                4 + 1 + 4,
            ),
            (
                TSDataType::String,
                StatisticsValues::String {
                    first: bin("b"),
                    last: bin(""),
                    min: bin(""),
                    max: bin("b"),
                },
                4 * 4 + 2,
            ),
            (TSDataType::Blob, StatisticsValues::None, 0),
            (TSDataType::Vector, StatisticsValues::None, 0),
        ];
        for (ty, values, typed_len) in cases {
            let s = Statistics {
                count: 2,
                start_time: -5,
                end_time: 7,
                values,
            };
            let mut w = Writer::new();
            s.encode(&mut w);
            assert_eq!(w.len(), 17 + typed_len, "{ty}");
            let mut c = Cursor::new(w.as_bytes(), 0);
            assert_eq!(Statistics::decode(&mut c, ty).unwrap(), s, "{ty}");
            assert!(c.is_empty());
        }
    }

    #[test]
    fn truncated_and_unknown_are_errors() {
        for n in 0..TV6.len() {
            assert!(Statistics::decode(&mut Cursor::new(&TV6[..n], 0), TSDataType::Int32).is_err());
        }
        assert!(Statistics::decode(&mut Cursor::new(TV6, 0), TSDataType::Unknown).is_err());
    }
}
