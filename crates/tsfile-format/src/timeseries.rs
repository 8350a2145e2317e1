//! TimeseriesMetadata and its ChunkMetadata list (reference §7.1–§7.2).
//!
//! ```text
//! TimeseriesMetadata := u8 type, VarStr measurement_id, u8 data_type,
//!                       UVarInt chunk_meta_size, Statistics, chunk_meta_size bytes of ChunkMetadata
//! ChunkMetadata      := i64 offset_of_chunk_header, [Statistics iff (type & 0x3F) != 0]
//! ```
//!
//! The type byte is kept raw: Java sets the aligned masks (`0x80` time column, `0x40` value
//! column), the C++ writer never does, and both must re-encode unchanged. Use the methods
//! ([`TimeseriesMetadata::has_multiple_chunks`], [`TimeseriesMetadata::is_time_column`]) rather
//! than the raw bits.

use crate::cursor::{Cursor, Writer};
use crate::error::{Error, Result};
use crate::statistics::Statistics;
use crate::types::{TIME_COLUMN_MASK, TSDataType, VALUE_COLUMN_MASK};

/// The low six bits of the type byte that mean "more than one chunk".
pub const MULTI_CHUNK_TYPE: u8 = 0x01;

/// The metadata of one series of one device.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeseriesMetadata {
    /// The raw type byte: bits 0–5 = 0 (one chunk) or 1 (several chunks); Java also sets
    /// bit 7 for the aligned time column and bit 6 for an aligned value column.
    pub timeseries_type: u8,
    /// The measurement id; `""` for the aligned time column.
    pub measurement_id: String,
    /// The value type; `VECTOR` for the aligned time column.
    pub data_type: TSDataType,
    /// Series statistics (the merge of every chunk's).
    pub statistics: Statistics,
    /// The chunks of the series, in ascending offset order.
    pub chunk_metadata: Vec<ChunkMetadata>,
}

/// Where one chunk of a series starts, with its statistics when the series has several chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkMetadata {
    /// Absolute offset of the chunk's marker byte.
    pub offset_of_chunk_header: i64,
    /// The chunk statistics; `None` for a single-chunk series, whose chunk statistics are the
    /// series statistics.
    pub statistics: Option<Statistics>,
}

impl TimeseriesMetadata {
    /// Reads one TimeseriesMetadata, its whole ChunkMetadata list included. The list's size
    /// field is a byte length: the records must consume it exactly.
    pub fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        let timeseries_type = c.read_u8("timeseries metadata type")?;
        let id_at = c.offset();
        let measurement_id = c
            .read_var_str("timeseries measurement id")?
            .ok_or_else(|| Error::Invalid {
                what: "timeseries measurement id",
                offset: id_at,
                reason: "must not be null".into(),
            })?;
        let at = c.offset();
        let data_type = TSDataType::from_code(c.read_u8("timeseries data type")?, at)?;
        let size_at = c.offset();
        let size = c.read_uvarint("chunk metadata list size")?;
        let statistics = Statistics::decode(c, data_type)?;
        let n = c.check_len(i64::from(size), 1, "chunk metadata list size", size_at)?;
        let mut list = c.sub(n, "chunk metadata list")?;
        let with_statistics = timeseries_type & 0x3F != 0;
        let chunk_metadata = decode_chunk_metadata_list(&mut list, data_type, with_statistics)?;
        Ok(Self {
            timeseries_type,
            measurement_id,
            data_type,
            statistics,
            chunk_metadata,
        })
    }

    /// Writes the record; the list size is computed from the encoded ChunkMetadata.
    pub fn encode(&self, w: &mut Writer) {
        w.write_u8(self.timeseries_type);
        w.write_var_str(Some(&self.measurement_id));
        w.write_u8(self.data_type.code());
        let mut list = Writer::new();
        for cm in &self.chunk_metadata {
            cm.encode(&mut list);
        }
        w.write_uvarint(list.len() as u32);
        self.statistics.encode(w);
        w.write_bytes(list.as_bytes());
    }

    /// True when the series has more than one chunk (`type & 0x3F != 0`), so that every
    /// ChunkMetadata carries its own statistics.
    pub fn has_multiple_chunks(&self) -> bool {
        self.timeseries_type & 0x3F != 0
    }

    /// True for the aligned time column: recognised by its data type `VECTOR` (or Java's
    /// mask bit), since the C++ writer sets no mask.
    pub fn is_time_column(&self) -> bool {
        self.data_type == TSDataType::Vector || self.timeseries_type & TIME_COLUMN_MASK != 0
    }

    /// True when Java's aligned-value mask bit is set. The C++ writer never sets it, so a
    /// `false` does not prove the series is non-aligned.
    pub fn has_value_column_mask(&self) -> bool {
        self.timeseries_type & VALUE_COLUMN_MASK != 0
    }

    /// The statistics of chunk `i`: its own for a multi-chunk series, the series statistics
    /// for a single-chunk one.
    pub fn chunk_statistics(&self, i: usize) -> Option<&Statistics> {
        let cm = self.chunk_metadata.get(i)?;
        Some(cm.statistics.as_ref().unwrap_or(&self.statistics))
    }
}

impl ChunkMetadata {
    /// Reads one ChunkMetadata; `with_statistics` is `type & 0x3F != 0` of the series.
    pub fn decode(
        c: &mut Cursor<'_>,
        data_type: TSDataType,
        with_statistics: bool,
    ) -> Result<Self> {
        let offset_of_chunk_header = c.read_i64("chunk metadata offset")?;
        let statistics = if with_statistics {
            Some(Statistics::decode(c, data_type)?)
        } else {
            None
        };
        Ok(Self {
            offset_of_chunk_header,
            statistics,
        })
    }

    /// Writes the record.
    pub fn encode(&self, w: &mut Writer) {
        w.write_i64(self.offset_of_chunk_header);
        if let Some(s) = &self.statistics {
            s.encode(w);
        }
    }
}

/// Reads ChunkMetadata records until `list` is consumed; a record that runs past the end is
/// an error, so the list's byte length must be met exactly.
pub fn decode_chunk_metadata_list(
    list: &mut Cursor<'_>,
    data_type: TSDataType,
    with_statistics: bool,
) -> Result<Vec<ChunkMetadata>> {
    // Every record holds at least its 8-byte offset, which bounds the allocation.
    let mut out = Vec::with_capacity(list.remaining() / 8);
    while !list.is_empty() {
        out.push(ChunkMetadata::decode(list, data_type, with_statistics)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::hex;

    #[test]
    fn tv5_time_column() {
        let bytes = hex("00 00 06 08 03 0000000000000064 0000000000000066 000000000000000e");
        let t = TimeseriesMetadata::decode(&mut Cursor::new(&bytes, 81)).unwrap();
        assert!(t.is_time_column() && !t.has_multiple_chunks());
        assert_eq!(t.measurement_id, "");
        assert_eq!(t.statistics.count, 3);
        assert_eq!(t.chunk_metadata.len(), 1);
        assert_eq!(t.chunk_metadata[0].offset_of_chunk_header, 14);
        assert_eq!(t.chunk_statistics(0), Some(&t.statistics));
        let mut w = Writer::new();
        t.encode(&mut w);
        assert_eq!(w.as_bytes(), bytes);
    }

    #[test]
    fn tv7_value_column() {
        let bytes = hex(
            "00 02 76 01 08 03 0000000000000064 0000000000000066 00000007 00000009 00000007 \
             00000009 0000000000000018 000000000000002e",
        );
        let t = TimeseriesMetadata::decode(&mut Cursor::new(&bytes, 110)).unwrap();
        assert_eq!(
            (t.measurement_id.as_str(), t.data_type),
            ("v", TSDataType::Int32)
        );
        assert_eq!(t.chunk_metadata[0].offset_of_chunk_header, 46);
        let mut w = Writer::new();
        t.encode(&mut w);
        assert_eq!(w.as_bytes(), bytes);
    }

    #[test]
    fn java_masks_and_multi_chunk_lists_round_trip() {
        let stats = |count| Statistics {
            count,
            start_time: 1,
            end_time: 2,
            values: crate::statistics::StatisticsValues::None,
        };
        let t = TimeseriesMetadata {
            timeseries_type: TIME_COLUMN_MASK | MULTI_CHUNK_TYPE,
            measurement_id: String::new(),
            data_type: TSDataType::Vector,
            statistics: stats(5),
            chunk_metadata: vec![
                ChunkMetadata {
                    offset_of_chunk_header: 7,
                    statistics: Some(stats(2)),
                },
                ChunkMetadata {
                    offset_of_chunk_header: 90,
                    statistics: Some(stats(3)),
                },
            ],
        };
        let mut w = Writer::new();
        t.encode(&mut w);
        let back = TimeseriesMetadata::decode(&mut Cursor::new(w.as_bytes(), 0)).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.chunk_statistics(1).map(|s| s.count), Some(3));
    }

    #[test]
    fn list_size_that_splits_a_record_is_an_error() {
        // Type 0, "v", INT32, size 9 (one byte too many for a single offset), statistics,
        // then 9 bytes: the second record is truncated inside the declared list.
        let mut bytes = hex(
            "00 02 76 01 09 03 0000000000000064 0000000000000066 00000007 00000009 00000007 \
             00000009 0000000000000018 000000000000002e",
        );
        bytes.push(0);
        assert!(matches!(
            TimeseriesMetadata::decode(&mut Cursor::new(&bytes, 0)),
            Err(Error::Truncated { .. })
        ));
        bytes.pop();
        assert!(matches!(
            TimeseriesMetadata::decode(&mut Cursor::new(&bytes, 0)),
            Err(Error::LengthOutOfBounds { .. })
        ));
    }
}
