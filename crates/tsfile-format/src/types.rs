//! The on-disk enumerations of TsFile (reference §3): data types, value encodings,
//! compressions, data-section markers, index node types, column categories and the format
//! version.
//!
//! Every enumeration maps to exactly one wire code. `from_code(code, offset)` turns a code read
//! from a file into the enum or returns [`Error::UnknownCode`] naming the code and the absolute
//! offset where it was read; `code()` gives the code back for encoding.

use std::fmt;

use crate::error::{Error, Result};

/// Declares a `u8`-coded enumeration with `from_code`, `code`, `name` and `Display`.
macro_rules! code_enum {
    (
        $(#[$meta:meta])*
        $name:ident, $what:literal, $repr:ty {
            $( $(#[$vmeta:meta])* $variant:ident = $code:literal => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value of the enumeration, in code order.
            pub const ALL: &'static [$name] = &[ $( $name::$variant, )+ ];

            /// The enum for a code read at absolute `offset`, or [`Error::UnknownCode`].
            pub fn from_code(code: $repr, offset: u64) -> Result<Self> {
                match code {
                    $( $code => Ok($name::$variant), )+
                    other => Err(Error::UnknownCode {
                        what: $what,
                        code: i64::from(other),
                        offset,
                    }),
                }
            }

            /// The code written on disk.
            pub fn code(self) -> $repr {
                match self {
                    $( $name::$variant => $code, )+
                }
            }

            /// The name used by the Apache TsFile libraries (e.g. `INT32`, `TS_2DIFF`).
            pub fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }

            /// The enum whose [`name`](Self::name) is `name` (exact, upper-case match).
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( $text => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

code_enum! {
    /// `TSDataType`: the type of a series' values (one byte on disk).
    TSDataType, "data type", u8 {
        /// `BOOLEAN` (0).
        Boolean = 0 => "BOOLEAN",
        /// `INT32` (1).
        Int32 = 1 => "INT32",
        /// `INT64` (2).
        Int64 = 2 => "INT64",
        /// `FLOAT` (3), IEEE-754 single precision.
        Float = 3 => "FLOAT",
        /// `DOUBLE` (4), IEEE-754 double precision.
        Double = 4 => "DOUBLE",
        /// `TEXT` (5): UTF-8 text (statistics keep first/last only).
        Text = 5 => "TEXT",
        /// `VECTOR` (6): the aligned time column, which has no value type.
        Vector = 6 => "VECTOR",
        /// `UNKNOWN` (7): never written into a file by the libraries.
        Unknown = 7 => "UNKNOWN",
        /// `TIMESTAMP` (8): an INT64 holding a timestamp.
        Timestamp = 8 => "TIMESTAMP",
        /// `DATE` (9): an INT32 holding `yyyymmdd`.
        Date = 9 => "DATE",
        /// `BLOB` (10): raw bytes.
        Blob = 10 => "BLOB",
        /// `STRING` (11): UTF-8 text with min/max statistics.
        String = 11 => "STRING",
    }
}

impl TSDataType {
    /// True for the types whose values are stored as variable-length bytes (TEXT, STRING, BLOB).
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            TSDataType::Text | TSDataType::String | TSDataType::Blob
        )
    }
}

code_enum! {
    /// `TSEncoding`: the value encoding of a chunk (one byte on disk).
    TSEncoding, "encoding", u8 {
        /// `PLAIN` (0).
        Plain = 0 => "PLAIN",
        /// `DICTIONARY` (1), TEXT/STRING only.
        Dictionary = 1 => "DICTIONARY",
        /// `RLE` (2): run-length / bit-packing hybrid.
        Rle = 2 => "RLE",
        /// `DIFF` (3), legacy.
        Diff = 3 => "DIFF",
        /// `TS_2DIFF` (4): second-order delta in blocks, the default time encoding.
        Ts2Diff = 4 => "TS_2DIFF",
        /// `BITMAP` (5), legacy.
        Bitmap = 5 => "BITMAP",
        /// `GORILLA_V1` (6), legacy XOR encoding.
        GorillaV1 = 6 => "GORILLA_V1",
        /// `REGULAR` (7), legacy.
        Regular = 7 => "REGULAR",
        /// `GORILLA` (8): XOR encoding (Gorilla V2).
        Gorilla = 8 => "GORILLA",
        /// `ZIGZAG` (9).
        Zigzag = 9 => "ZIGZAG",
        /// `FREQ` (10), deprecated.
        Freq = 10 => "FREQ",
        /// `CHIMP` (11).
        Chimp = 11 => "CHIMP",
        /// `SPRINTZ` (12).
        Sprintz = 12 => "SPRINTZ",
        /// `RLBE` (13).
        Rlbe = 13 => "RLBE",
        /// `CAMEL` (14): written only by the C++ library, DOUBLE only, unknown to Java.
        Camel = 14 => "CAMEL",
    }
}

code_enum! {
    /// `CompressionType`: the compressor applied to each page payload (one byte on disk).
    CompressionType, "compression", u8 {
        /// `UNCOMPRESSED` (0).
        Uncompressed = 0 => "UNCOMPRESSED",
        /// `SNAPPY` (1).
        Snappy = 1 => "SNAPPY",
        /// `GZIP` (2).
        Gzip = 2 => "GZIP",
        /// `LZO` (3): written only by the C++ library; Java cannot read it.
        Lzo = 3 => "LZO",
        /// `LZ4` (7).
        Lz4 = 7 => "LZ4",
        /// `ZSTD` (8).
        Zstd = 8 => "ZSTD",
        /// `LZMA2` (9).
        Lzma2 = 9 => "LZMA2",
    }
}

code_enum! {
    /// The marker byte that starts every record of the data section (reference §3, §5).
    Marker, "data-section marker", u8 {
        /// `0x00`: a chunk group header (followed by the device).
        ChunkGroupHeader = 0x00 => "CHUNK_GROUP_HEADER",
        /// `0x01`: a chunk with two or more pages (every page carries statistics).
        ChunkHeader = 0x01 => "CHUNK_HEADER",
        /// `0x02`: the separator between the data section and the index section.
        Separator = 0x02 => "SEPARATOR",
        /// `0x04`: an operation index range (two `i64` plan indices follow).
        OperationIndexRange = 0x04 => "OPERATION_INDEX_RANGE",
        /// `0x05`: a chunk with a single page (the page has no statistics).
        OnlyOnePageChunkHeader = 0x05 => "ONLY_ONE_PAGE_CHUNK_HEADER",
        /// `0x41`: an aligned value chunk with two or more pages.
        ValueChunkHeader = 0x41 => "VALUE_CHUNK_HEADER",
        /// `0x45`: an aligned value chunk with a single page.
        OnlyOnePageValueChunkHeader = 0x45 => "ONLY_ONE_PAGE_VALUE_CHUNK_HEADER",
        /// `0x81`: an aligned time chunk with two or more pages.
        TimeChunkHeader = 0x81 => "TIME_CHUNK_HEADER",
        /// `0x85`: an aligned time chunk with a single page.
        OnlyOnePageTimeChunkHeader = 0x85 => "ONLY_ONE_PAGE_TIME_CHUNK_HEADER",
    }
}

/// Bit set in a chunk marker (and in Java's TimeseriesMetadata type byte) for the aligned time
/// column.
pub const TIME_COLUMN_MASK: u8 = 0x80;
/// Bit set in a chunk marker (and in Java's TimeseriesMetadata type byte) for an aligned value
/// column.
pub const VALUE_COLUMN_MASK: u8 = 0x40;

impl Marker {
    /// True for the six chunk-header markers.
    pub fn is_chunk_header(self) -> bool {
        matches!(self.code() & 0x3F, 0x01 | 0x05)
    }

    /// True for a chunk-header marker whose chunk has exactly one page (no page statistics).
    pub fn is_single_page_chunk(self) -> bool {
        self.is_chunk_header() && self.code() & 0x3F == 0x05
    }

    /// True for the aligned time chunk markers (`0x81`, `0x85`).
    pub fn is_time_chunk(self) -> bool {
        self.is_chunk_header() && self.code() & TIME_COLUMN_MASK != 0
    }

    /// True for the aligned value chunk markers (`0x41`, `0x45`).
    pub fn is_value_chunk(self) -> bool {
        self.is_chunk_header() && self.code() & VALUE_COLUMN_MASK != 0
    }
}

code_enum! {
    /// `MetadataIndexNodeType`: the level of a node in the metadata index tree (reference §7.4).
    MetadataIndexNodeType, "metadata index node type", u8 {
        /// `INTERNAL_DEVICE` (0): children are device-level nodes.
        InternalDevice = 0 => "INTERNAL_DEVICE",
        /// `LEAF_DEVICE` (1): child `i` is the measurement-level root of device `i`.
        LeafDevice = 1 => "LEAF_DEVICE",
        /// `INTERNAL_MEASUREMENT` (2): children are measurement-level nodes.
        InternalMeasurement = 2 => "INTERNAL_MEASUREMENT",
        /// `LEAF_MEASUREMENT` (3): children are ranges of TimeseriesMetadata records.
        LeafMeasurement = 3 => "LEAF_MEASUREMENT",
    }
}

/// Which of the two index levels a node belongs to; it decides the shape of the node's
/// entries (a device key or a measurement name), which the bytes do not self-describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexLevel {
    /// Device-level nodes (types 0 and 1): entries are keyed by devices.
    Device,
    /// Measurement-level nodes (types 2 and 3): entries are keyed by measurement names.
    Measurement,
}

impl MetadataIndexNodeType {
    /// The level this node type belongs to.
    pub fn level(self) -> IndexLevel {
        match self {
            MetadataIndexNodeType::InternalDevice | MetadataIndexNodeType::LeafDevice => {
                IndexLevel::Device
            }
            MetadataIndexNodeType::InternalMeasurement | MetadataIndexNodeType::LeafMeasurement => {
                IndexLevel::Measurement
            }
        }
    }

    /// True for the leaf types (1 and 3).
    pub fn is_leaf(self) -> bool {
        matches!(
            self,
            MetadataIndexNodeType::LeafDevice | MetadataIndexNodeType::LeafMeasurement
        )
    }
}

code_enum! {
    /// `ColumnCategory`: the role of a table column (an `i32` in TableSchema).
    ColumnCategory, "column category", i32 {
        /// `TAG` (0): part of the device id.
        Tag = 0 => "TAG",
        /// `FIELD` (1): a measured value.
        Field = 1 => "FIELD",
        /// `ATTRIBUTE` (2): describes an entity.
        Attribute = 2 => "ATTRIBUTE",
        /// `TIME` (3): a named time column (written by the C++ library).
        Time = 3 => "TIME",
    }
}

code_enum! {
    /// The format version byte after the head magic.
    FormatVersion, "format version", u8 {
        /// Version 3 (device paths as plain strings, no table model).
        V3 = 3 => "V3",
        /// Version 4 (DeviceID segments, tables, properties).
        V4 = 4 => "V4",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_codes_name_offset() {
        for t in TSDataType::ALL {
            assert_eq!(TSDataType::from_code(t.code(), 0).unwrap(), *t);
            assert_eq!(TSDataType::from_name(t.name()), Some(*t));
        }
        assert_eq!(TSEncoding::ALL.len(), 15);
        assert_eq!(
            CompressionType::from_code(7, 0).unwrap(),
            CompressionType::Lz4
        );
        assert_eq!(
            CompressionType::from_code(4, 99).unwrap_err(),
            Error::UnknownCode {
                what: "compression",
                code: 4,
                offset: 99
            }
        );
        assert_eq!(
            ColumnCategory::from_code(3, 0).unwrap(),
            ColumnCategory::Time
        );
        assert!(ColumnCategory::from_code(-1, 0).is_err());
        assert!(TSDataType::from_code(12, 0).is_err());
    }

    #[test]
    fn chunk_markers_are_classified() {
        let chunk: Vec<_> = Marker::ALL
            .iter()
            .filter(|m| m.is_chunk_header())
            .map(|m| m.code())
            .collect();
        assert_eq!(chunk, vec![0x01, 0x05, 0x41, 0x45, 0x81, 0x85]);
        assert!(Marker::OnlyOnePageTimeChunkHeader.is_single_page_chunk());
        assert!(Marker::OnlyOnePageTimeChunkHeader.is_time_chunk());
        assert!(!Marker::TimeChunkHeader.is_single_page_chunk());
        assert!(Marker::ValueChunkHeader.is_value_chunk());
        assert!(!Marker::Separator.is_chunk_header());
        assert!(!Marker::OperationIndexRange.is_chunk_header());
        assert!(Marker::from_code(0x03, 5).is_err());
    }
}
