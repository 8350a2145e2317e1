//! Lossy float encodings, for `check`: which series were stored with an encoding that does
//! not give back the written values, and how far a decoded value may lie from the value the
//! writer computed the statistics on.
//!
//! - TS_2DIFF and RLE on FLOAT/DOUBLE (§8.3) store `round(v · 10^p)`, `p` being the
//!   `max_point_number` written at the head of every page: a decoded value moves by up to
//!   half of `10^-p`, plus the rounding of the float arithmetic (a few units in the last
//!   place of the value).
//! - CAMEL on DOUBLE (C++ only) rebuilds values from a decimal form and may change their last
//!   bits.
//!
//! Every other encoding is lossless and its statistics are compared exactly.

use serde_json::{Value, json};
use tsfile_format::page_payload::{split_aligned_value, split_non_aligned};
use tsfile_format::types::{TSDataType, TSEncoding};

use crate::data::Pages;
use crate::error::Result;
use crate::reader::TsFileReader;
use crate::series_index::SeriesEntry;

/// How far a decoded value may lie from the written one: `abs + rel · |value|`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Precision {
    /// Absolute part.
    pub(crate) abs: f64,
    /// Relative part.
    pub(crate) rel: f64,
}

impl Precision {
    /// Lossless: decoded values are the written ones.
    pub(crate) const EXACT: Precision = Precision { abs: 0.0, rel: 0.0 };

    /// The larger of two precisions, part by part.
    fn max(self, other: Precision) -> Precision {
        Precision {
            abs: self.abs.max(other.abs),
            rel: self.rel.max(other.rel),
        }
    }

    /// The largest move of a value of magnitude `magnitude`.
    pub(crate) fn at(self, magnitude: f64) -> f64 {
        self.abs + self.rel * magnitude
    }
}

/// A series whose statistics `check` compared within the precision of a lossy encoding
/// instead of exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct Relaxed {
    /// The series (`series DEVICE.MEASUREMENT`, as in problems).
    pub structure: String,
    /// Absolute offset of its TimeseriesMetadata.
    pub offset: u64,
    /// The series' data type (`FLOAT`, `DOUBLE`).
    pub data_type: String,
    /// The lossy encoding(s) of its chunks (`TS_2DIFF`, `RLE`, `CAMEL`).
    pub encodings: Vec<String>,
    /// The comparisons relaxed: `min`, `max`, `first`, `last`, `sum`.
    pub comparisons: Vec<&'static str>,
    /// Absolute part of the allowed difference per value.
    pub tolerance_abs: f64,
    /// Relative part of the allowed difference per value (times the value's magnitude).
    pub tolerance_rel: f64,
    /// Why, in words.
    pub reason: String,
}

impl Relaxed {
    /// The JSON object `bazan tsfile check --json` prints in its `relaxed` list.
    pub fn to_json(&self) -> Value {
        json!({
            "structure": self.structure,
            "offset": self.offset,
            "data_type": self.data_type,
            "encodings": self.encodings,
            "comparisons": self.comparisons,
            "tolerance_abs": self.tolerance_abs,
            "tolerance_rel": self.tolerance_rel,
            "reason": self.reason,
        })
    }
}

/// UVarInt tags of the float wrapper's forms 2 and 3 (§8.3).
const FORM_ROUNDED: u32 = 0x7FFF_FFFF;
const FORM_RAW: u32 = 0x7FFF_FFFE;

/// Float arithmetic of the fixed-point wrapper and of CAMEL: a few units in the last place.
const ULPS_FLOAT: f64 = 4.0 / (1u64 << 23) as f64;
const ULPS_DOUBLE: f64 = 4.0 / (1u64 << 52) as f64;
/// CAMEL rebuilds a double from up to 15 decimals: its last bits may change.
const CAMEL_REL: f64 = 1e-12;

/// The precision of a series' values and, when it is not exact, what was relaxed. Reads the
/// head of every page of the series' lossy chunks for `max_point_number`.
pub(crate) fn series_precision(
    reader: &TsFileReader,
    s: &SeriesEntry,
    structure: &str,
) -> Result<(Precision, Option<Relaxed>)> {
    let ty = s.meta.data_type;
    if !matches!(ty, TSDataType::Float | TSDataType::Double) {
        return Ok((Precision::EXACT, None));
    }
    let ulps = if ty == TSDataType::Float {
        ULPS_FLOAT
    } else {
        ULPS_DOUBLE
    };
    let mut precision = Precision::EXACT;
    let mut encodings: Vec<String> = Vec::new();
    let mut points: Option<u32> = None;
    for cm in &s.meta.chunk_metadata {
        let chunk = reader.read_chunk(cm.offset_of_chunk_header)?;
        let encoding = chunk.header.encoding;
        let this = match encoding {
            TSEncoding::Ts2Diff | TSEncoding::Rle => {
                let p = min_point_number(&chunk)?;
                points = Some(points.map_or(p, |q| q.min(p)));
                Precision {
                    abs: 0.5 / scale(p),
                    rel: ulps,
                }
            }
            TSEncoding::Camel => Precision {
                abs: 0.0,
                rel: CAMEL_REL,
            },
            _ => continue,
        };
        precision = precision.max(this);
        let name = encoding.to_string();
        if !encodings.contains(&name) {
            encodings.push(name);
        }
    }
    if encodings.is_empty() {
        return Ok((Precision::EXACT, None));
    }
    let mut reason = String::new();
    if let Some(p) = points {
        reason.push_str(&format!(
            "{} on {ty} is lossy: values are stored as round(v * 10^{p}) (max_point_number {p} \
             in the pages), while the writer computed the statistics on the original values",
            encodings
                .iter()
                .filter(|e| *e != "CAMEL")
                .cloned()
                .collect::<Vec<_>>()
                .join("/"),
        ));
    }
    if encodings.iter().any(|e| e == "CAMEL") {
        if !reason.is_empty() {
            reason.push_str("; ");
        }
        reason.push_str(
            "CAMEL on DOUBLE is lossy: values are rebuilt from a decimal form whose last bits \
             may differ from the written value the statistics were computed on",
        );
    }
    let relaxed = Relaxed {
        structure: structure.to_string(),
        offset: s.offset,
        data_type: ty.to_string(),
        encodings,
        comparisons: vec!["min", "max", "first", "last", "sum"],
        tolerance_abs: precision.abs,
        tolerance_rel: precision.rel,
        reason,
    };
    Ok((precision, Some(relaxed)))
}

/// `10^p`, or 1 when the wrapper does not scale (`p` 0 or absurd), as the decoder does.
fn scale(p: u32) -> f64 {
    if p == 0 || p > 300 {
        1.0
    } else {
        10f64.powi(p as i32)
    }
}

/// The smallest `max_point_number` of a chunk's pages (the coarsest precision). A page whose
/// value stream is empty (all nulls) has none; a stream without the wrapper's prefix (the
/// legacy C++ raw form) is read as p = 0, the coarsest step, since its values are exact.
fn min_point_number(chunk: &crate::data::Chunk) -> Result<u32> {
    let mut pages = Pages::new(chunk);
    let mut min: Option<u32> = None;
    while let Some(page) = pages.next_page()? {
        let payload = page.decompress(&chunk.header)?;
        let values = if chunk.header.is_value_chunk() {
            split_aligned_value(&payload, page.payload_offset)?.values
        } else {
            split_non_aligned(&payload, page.payload_offset)?.values
        };
        let Some(p) = point_number(values) else {
            continue;
        };
        min = Some(min.map_or(p, |m| m.min(p)));
    }
    Ok(min.unwrap_or(0))
}

/// The `max_point_number` at the head of a float wrapper stream (§8.3), `None` for an empty
/// or unreadable stream.
fn point_number(stream: &[u8]) -> Option<u32> {
    let mut pos = 0;
    let tag = uvarint(stream, &mut pos)?;
    if tag == FORM_ROUNDED || tag == FORM_RAW {
        let count = uvarint(stream, &mut pos)? as usize;
        let bitmaps = if tag == FORM_RAW { 2 } else { 1 };
        pos = pos.checked_add((count / 8 + 1).checked_mul(bitmaps)?)?;
        return uvarint(stream, &mut pos);
    }
    Some(tag)
}

/// An unsigned LEB128 of at most five bytes.
fn uvarint(bytes: &[u8], pos: &mut usize) -> Option<u32> {
    let mut v: u32 = 0;
    for k in 0..5 {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        v |= u32::from(b & 0x7F) << (7 * k);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_number_of_the_three_forms() {
        // Form 1: `02 | blocks`; form 2: tag, count 3, one bitmap byte, p 2; form 3: tag,
        // count 4, two bitmap bytes, p 2 (§8.3's verified examples).
        assert_eq!(point_number(&[0x02, 0, 0, 0, 9]), Some(2));
        assert_eq!(
            point_number(&[0xff, 0xff, 0xff, 0xff, 0x07, 0x03, 0x05, 0x02, 0]),
            Some(2)
        );
        assert_eq!(
            point_number(&[0xfe, 0xff, 0xff, 0xff, 0x07, 0x04, 0x09, 0x06, 0x03]),
            Some(3)
        );
        assert_eq!(point_number(&[]), None);
        assert_eq!(point_number(&[0xff, 0xff, 0xff, 0xff, 0x07, 0x03]), None);
    }

    #[test]
    fn precision_grows_with_magnitude() {
        let p = Precision {
            abs: 0.005,
            rel: ULPS_FLOAT,
        };
        assert_eq!(p.at(0.0), 0.005);
        // At 1e5 a float's unit in the last place is 1/128: the decoded value may be off by
        // more than the decimal step alone.
        assert!(p.at(1e5) > 0.005 + 1.0 / 128.0);
        assert_eq!(Precision::EXACT.at(1e300), 0.0);
    }
}
