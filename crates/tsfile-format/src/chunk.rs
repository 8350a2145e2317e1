//! The records of the data section (reference §5): chunk group headers, chunk headers with
//! their six markers, and operation index ranges.
//!
//! ```text
//! ChunkGroupHeader    := 0x00 DeviceID            (V3: 0x00 VarStr device_path)
//! ChunkHeader         := u8 marker, VarStr measurement_id, UVarInt data_size,
//!                        u8 data_type, u8 compression, u8 encoding
//! OperationIndexRange := 0x04 i64 min_plan_index, i64 max_plan_index
//! ```
//!
//! The data section runs from byte 7 to the `0x02` separator at `meta_offset` and is a flat
//! sequence of marker-prefixed records; [`DataRecord::decode`] reads the next one, so the
//! section can also be scanned without the index (e.g. to recover an unclosed file).

use crate::cursor::{Cursor, Writer};
use crate::device_id::DeviceKey;
use crate::error::{Error, Result};
use crate::types::{
    CompressionType, FormatVersion, Marker, TIME_COLUMN_MASK, TSDataType, TSEncoding,
    VALUE_COLUMN_MASK,
};

/// The header of a chunk group: the marker `0x00` and the device the chunks belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkGroupHeader {
    /// The device: a DeviceID in V4, a plain path in V3.
    pub device: DeviceKey,
}

impl ChunkGroupHeader {
    /// Reads a chunk group header, marker included, in the form of `version`.
    pub fn decode(c: &mut Cursor<'_>, version: FormatVersion) -> Result<Self> {
        expect_marker(c, Marker::ChunkGroupHeader)?;
        Ok(Self {
            device: DeviceKey::decode(c, version)?,
        })
    }

    /// Writes the header, marker included.
    pub fn encode(&self, w: &mut Writer) {
        w.write_u8(Marker::ChunkGroupHeader.code());
        self.device.encode(w);
    }
}

/// The header of a chunk: which series, how many bytes of pages follow, and how they are
/// typed, encoded and compressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkHeader {
    /// One of the six chunk markers (`0x01`, `0x05`, `0x41`, `0x45`, `0x81`, `0x85`).
    pub marker: Marker,
    /// The measurement id; empty for the aligned time chunk.
    pub measurement_id: String,
    /// Total bytes of all pages (headers and payloads) that follow the header.
    pub data_size: u32,
    /// The value type; `VECTOR` for the aligned time chunk.
    pub data_type: TSDataType,
    /// The compressor of every page payload.
    pub compression: CompressionType,
    /// The value encoding (for the time chunk: the time encoding).
    pub encoding: TSEncoding,
}

impl ChunkHeader {
    /// Reads a chunk header, marker included. A marker that is not one of the six chunk
    /// markers is an [`Error::Invalid`]; unknown type/compression/encoding codes are
    /// [`Error::UnknownCode`].
    pub fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        let at = c.offset();
        let marker = Marker::from_code(c.read_u8("chunk header marker")?, at)?;
        if !marker.is_chunk_header() {
            return Err(Error::Invalid {
                what: "chunk header marker",
                offset: at,
                reason: format!("{marker} is not a chunk header marker"),
            });
        }
        Self::decode_after_marker(c, marker)
    }

    /// Reads the rest of a chunk header whose marker was already read (by
    /// [`DataRecord::decode`], for example).
    pub fn decode_after_marker(c: &mut Cursor<'_>, marker: Marker) -> Result<Self> {
        let id_at = c.offset();
        let measurement_id =
            c.read_var_str("chunk measurement id")?
                .ok_or_else(|| Error::Invalid {
                    what: "chunk measurement id",
                    offset: id_at,
                    reason: "must not be null".into(),
                })?;
        let data_size = c.read_uvarint("chunk data size")?;
        let at = c.offset();
        let data_type = TSDataType::from_code(c.read_u8("chunk data type")?, at)?;
        let at = c.offset();
        let compression = CompressionType::from_code(c.read_u8("chunk compression")?, at)?;
        let at = c.offset();
        let encoding = TSEncoding::from_code(c.read_u8("chunk encoding")?, at)?;
        Ok(Self {
            marker,
            measurement_id,
            data_size,
            data_type,
            compression,
            encoding,
        })
    }

    /// Writes the header, marker included.
    pub fn encode(&self, w: &mut Writer) {
        w.write_u8(self.marker.code());
        w.write_var_str(Some(&self.measurement_id));
        w.write_uvarint(self.data_size);
        w.write_u8(self.data_type.code());
        w.write_u8(self.compression.code());
        w.write_u8(self.encoding.code());
    }

    /// The serialized size of this header in bytes.
    pub fn serialized_len(&self) -> usize {
        let mut w = Writer::new();
        self.encode(&mut w);
        w.len()
    }

    /// True when every page of the chunk carries statistics (a multi-page chunk,
    /// `marker & 0x3F == 0x01`); single-page chunks write none (§5.2).
    pub fn pages_have_statistics(&self) -> bool {
        self.marker.code() & 0x3F == 0x01
    }

    /// True for the aligned time chunk (`0x81` / `0x85`).
    pub fn is_time_chunk(&self) -> bool {
        self.marker.code() & TIME_COLUMN_MASK != 0
    }

    /// True for an aligned value chunk (`0x41` / `0x45`).
    pub fn is_value_chunk(&self) -> bool {
        self.marker.code() & VALUE_COLUMN_MASK != 0
    }
}

/// The operation index range record (`0x04`, 17 bytes), which the C++ writer emits before the
/// separator and IoTDB may emit between chunk groups. Readers skip it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationIndexRange {
    /// Smallest plan index.
    pub min_plan_index: i64,
    /// Largest plan index.
    pub max_plan_index: i64,
}

impl OperationIndexRange {
    /// Size of the record, marker included.
    pub const LEN: usize = 17;

    /// Reads the record, marker included.
    pub fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        expect_marker(c, Marker::OperationIndexRange)?;
        Self::decode_after_marker(c)
    }

    fn decode_after_marker(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(Self {
            min_plan_index: c.read_i64("operation index range min")?,
            max_plan_index: c.read_i64("operation index range max")?,
        })
    }

    /// Writes the record, marker included.
    pub fn encode(&self, w: &mut Writer) {
        w.write_u8(Marker::OperationIndexRange.code());
        w.write_i64(self.min_plan_index);
        w.write_i64(self.max_plan_index);
    }
}

/// One record of the data section. A chunk header is followed by `data_size` bytes of pages,
/// which [`DataRecord::decode`] does not consume: the caller reads or skips them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataRecord {
    /// `0x00`: a chunk group starts.
    ChunkGroup(ChunkGroupHeader),
    /// A chunk header (any of the six chunk markers); its pages follow.
    Chunk(ChunkHeader),
    /// `0x04`: an operation index range.
    OperationIndex(OperationIndexRange),
    /// `0x02`: the separator; the index section follows.
    Separator,
}

impl DataRecord {
    /// Reads the next record. An unknown marker (including the pre-V3 `0x03`) is an
    /// [`Error::UnknownCode`].
    pub fn decode(c: &mut Cursor<'_>, version: FormatVersion) -> Result<Self> {
        let at = c.offset();
        let marker = Marker::from_code(c.read_u8("data section marker")?, at)?;
        Ok(match marker {
            Marker::ChunkGroupHeader => DataRecord::ChunkGroup(ChunkGroupHeader {
                device: DeviceKey::decode(c, version)?,
            }),
            Marker::Separator => DataRecord::Separator,
            Marker::OperationIndexRange => {
                DataRecord::OperationIndex(OperationIndexRange::decode_after_marker(c)?)
            }
            chunk => DataRecord::Chunk(ChunkHeader::decode_after_marker(c, chunk)?),
        })
    }

    /// Writes the record (for a chunk, only its header).
    pub fn encode(&self, w: &mut Writer) {
        match self {
            DataRecord::ChunkGroup(h) => h.encode(w),
            DataRecord::Chunk(h) => h.encode(w),
            DataRecord::OperationIndex(r) => r.encode(w),
            DataRecord::Separator => w.write_u8(Marker::Separator.code()),
        }
    }
}

fn expect_marker(c: &mut Cursor<'_>, expected: Marker) -> Result<()> {
    let at = c.offset();
    let found = c.read_u8(expected.name())?;
    if found != expected.code() {
        return Err(Error::Invalid {
            what: expected.name(),
            offset: at,
            reason: format!(
                "expected marker {:#04x}, found {found:#04x}",
                expected.code()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device_id::DeviceId;

    fn encoded(f: impl FnOnce(&mut Writer)) -> Vec<u8> {
        let mut w = Writer::new();
        f(&mut w);
        w.into_inner()
    }

    #[test]
    fn tv2_chunk_group_header() {
        let bytes = [0x00, 0x02, 0x02, b't', 0x04, b'd', b'1'];
        let h = ChunkGroupHeader::decode(&mut Cursor::new(&bytes, 7), FormatVersion::V4).unwrap();
        assert_eq!(h.device, DeviceKey::Id(DeviceId::from_strs(&["t", "d1"])));
        assert_eq!(encoded(|w| h.encode(w)), bytes);
    }

    #[test]
    fn tv3_tv4_chunk_headers() {
        let time = [0x85, 0x00, 0x1a, 0x06, 0x00, 0x00];
        let h = ChunkHeader::decode(&mut Cursor::new(&time, 14)).unwrap();
        assert_eq!(h.marker, Marker::OnlyOnePageTimeChunkHeader);
        assert_eq!((h.measurement_id.as_str(), h.data_size), ("", 26));
        assert_eq!(h.data_type, TSDataType::Vector);
        assert!(h.is_time_chunk() && !h.pages_have_statistics());
        assert_eq!(encoded(|w| h.encode(w)), time);
        assert_eq!(h.serialized_len(), 6);

        let value = [0x45, 0x02, b'v', 0x0a, 0x01, 0x00, 0x00];
        let h = ChunkHeader::decode(&mut Cursor::new(&value, 46)).unwrap();
        assert_eq!(h.data_type, TSDataType::Int32);
        assert!(h.is_value_chunk() && !h.is_time_chunk());
        assert_eq!(encoded(|w| h.encode(w)), value);
    }

    #[test]
    fn tv4_operation_index_and_separator() {
        let mut bytes = vec![0x04];
        bytes.extend([0u8; 16]);
        bytes.push(0x02);
        let mut c = Cursor::new(&bytes, 63);
        let r = DataRecord::decode(&mut c, FormatVersion::V4).unwrap();
        assert_eq!(
            r,
            DataRecord::OperationIndex(OperationIndexRange {
                min_plan_index: 0,
                max_plan_index: 0
            })
        );
        assert_eq!(c.offset(), 80);
        assert_eq!(
            DataRecord::decode(&mut c, FormatVersion::V4).unwrap(),
            DataRecord::Separator
        );
        assert_eq!(encoded(|w| r.encode(w)), bytes[..17]);
    }

    #[test]
    fn all_six_chunk_markers_round_trip() {
        for code in [0x01u8, 0x05, 0x41, 0x45, 0x81, 0x85] {
            let h = ChunkHeader {
                marker: Marker::from_code(code, 0).unwrap(),
                measurement_id: "s".into(),
                data_size: 300,
                data_type: TSDataType::Double,
                compression: CompressionType::Lz4,
                encoding: TSEncoding::Gorilla,
            };
            let bytes = encoded(|w| h.encode(w));
            let back = DataRecord::decode(&mut Cursor::new(&bytes, 0), FormatVersion::V4).unwrap();
            assert_eq!(back, DataRecord::Chunk(h));
        }
    }

    #[test]
    fn bad_markers_and_codes_are_typed_errors() {
        assert!(matches!(
            ChunkHeader::decode(&mut Cursor::new(&[0x02], 9)),
            Err(Error::Invalid { offset: 9, .. })
        ));
        assert!(matches!(
            DataRecord::decode(&mut Cursor::new(&[0x03], 9), FormatVersion::V4),
            Err(Error::UnknownCode {
                code: 3,
                offset: 9,
                ..
            })
        ));
        assert!(matches!(
            ChunkHeader::decode(&mut Cursor::new(&[0x05, 0x00, 0x01, 0x01, 0x04, 0x00], 0)),
            Err(Error::UnknownCode {
                what: "compression",
                code: 4,
                offset: 4
            })
        ));
    }

    #[test]
    fn v3_chunk_group_header_keeps_the_path() {
        let mut bytes = vec![0x00];
        bytes.extend(encoded(|w| w.write_var_str(Some("root.sg.d1"))));
        let h = ChunkGroupHeader::decode(&mut Cursor::new(&bytes, 7), FormatVersion::V3).unwrap();
        assert_eq!(h.device, DeviceKey::Path("root.sg.d1".into()));
        assert_eq!(
            h.device.device_id(),
            DeviceId::from_strs(&["root.sg", "d1"])
        );
        assert_eq!(encoded(|w| h.encode(w)), bytes);
    }
}
