//! PageHeader (reference §5.2): the sizes (and, in multi-page chunks, the statistics) in front
//! of every page payload.
//!
//! ```text
//! UVarInt uncompressed_size      0 → empty page: nothing else follows
//! UVarInt compressed_size
//! [Statistics]                   iff (chunk marker & 0x3F) == 0x01
//! compressed_size bytes          the payload (not part of the header)
//! ```

use crate::chunk::ChunkHeader;
use crate::cursor::{Cursor, Writer};
use crate::error::Result;
use crate::statistics::Statistics;
use crate::types::TSDataType;

/// The header of one page. An empty page (a value page whose rows are all null) is the single
/// byte `00`: `uncompressed_size == 0`, `compressed_size == 0`, no statistics, no payload.
#[derive(Debug, Clone, PartialEq)]
pub struct PageHeader {
    /// Size of the payload after decompression.
    pub uncompressed_size: u32,
    /// Size of the payload as stored.
    pub compressed_size: u32,
    /// The page statistics; present in multi-page chunks, absent in single-page chunks and in
    /// empty pages.
    pub statistics: Option<Statistics>,
}

impl PageHeader {
    /// The header of an empty page.
    pub const EMPTY: PageHeader = PageHeader {
        uncompressed_size: 0,
        compressed_size: 0,
        statistics: None,
    };

    /// Reads a page header of a chunk of `data_type`; `with_statistics` comes from the chunk
    /// header ([`ChunkHeader::pages_have_statistics`]). The payload is not consumed.
    pub fn decode(
        c: &mut Cursor<'_>,
        data_type: TSDataType,
        with_statistics: bool,
    ) -> Result<Self> {
        let uncompressed_size = c.read_uvarint("page uncompressed size")?;
        if uncompressed_size == 0 {
            return Ok(Self::EMPTY);
        }
        let compressed_size = c.read_uvarint("page compressed size")?;
        let statistics = if with_statistics {
            Some(Statistics::decode(c, data_type)?)
        } else {
            None
        };
        Ok(Self {
            uncompressed_size,
            compressed_size,
            statistics,
        })
    }

    /// Reads a page header of the chunk described by `chunk`.
    pub fn decode_for_chunk(c: &mut Cursor<'_>, chunk: &ChunkHeader) -> Result<Self> {
        Self::decode(c, chunk.data_type, chunk.pages_have_statistics())
    }

    /// Takes this page's payload (`compressed_size` bytes) from the cursor, checking that
    /// they are there.
    pub fn take_payload<'a>(&self, c: &mut Cursor<'a>) -> Result<&'a [u8]> {
        let at = c.offset();
        let n = c.check_len(i64::from(self.compressed_size), 1, "page payload", at)?;
        c.take(n, "page payload")
    }

    /// True for the empty page (`00`).
    pub fn is_empty(&self) -> bool {
        self.uncompressed_size == 0
    }

    /// Writes the header (not the payload). An empty page writes the single byte `00`.
    pub fn encode(&self, w: &mut Writer) {
        w.write_uvarint(self.uncompressed_size);
        if self.uncompressed_size == 0 {
            return;
        }
        w.write_uvarint(self.compressed_size);
        if let Some(s) = &self.statistics {
            s.encode(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statistics::StatisticsValues;

    #[test]
    fn tv3_single_page_header_without_statistics() {
        let bytes = [0x18, 0x18, 0xaa];
        let mut c = Cursor::new(&bytes, 20);
        let h = PageHeader::decode(&mut c, TSDataType::Vector, false).unwrap();
        assert_eq!((h.uncompressed_size, h.compressed_size), (24, 24));
        assert!(h.statistics.is_none());
        assert_eq!(c.offset(), 22);
        let mut w = Writer::new();
        h.encode(&mut w);
        assert_eq!(w.as_bytes(), &bytes[..2]);
        assert_eq!(
            h.take_payload(&mut c).unwrap_err(),
            crate::Error::LengthOutOfBounds {
                what: "page payload",
                offset: 22,
                declared: 24,
                available: 1
            }
        );
    }

    #[test]
    fn tv10_multi_page_header_with_statistics_and_empty_page() {
        // 06 06 | count 1, start 1, end 1, min/max/first/last 10, sum 10 | payload.
        let mut bytes = vec![0x06, 0x06, 0x01];
        bytes.extend(1i64.to_be_bytes());
        bytes.extend(1i64.to_be_bytes());
        for _ in 0..4 {
            bytes.extend(10i32.to_be_bytes());
        }
        bytes.extend(10i64.to_be_bytes());
        let payload = [0, 0, 0, 2, 0x80, 0x14];
        bytes.extend(payload);
        bytes.push(0x00);
        let mut c = Cursor::new(&bytes, 0);
        let h = PageHeader::decode(&mut c, TSDataType::Int32, true).unwrap();
        let stats = h.statistics.clone().unwrap();
        assert_eq!(stats.count, 1);
        assert_eq!(
            stats.values,
            StatisticsValues::Int32 {
                min: 10,
                max: 10,
                first: 10,
                last: 10,
                sum: 10
            }
        );
        assert_eq!(h.take_payload(&mut c).unwrap(), payload);
        let empty = PageHeader::decode(&mut c, TSDataType::Int32, true).unwrap();
        assert!(empty.is_empty() && c.is_empty());
        let mut w = Writer::new();
        h.encode(&mut w);
        w.write_bytes(&payload);
        empty.encode(&mut w);
        assert_eq!(w.as_bytes(), bytes);
    }
}
