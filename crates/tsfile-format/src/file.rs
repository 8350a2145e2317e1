//! The file frame and the footer (reference §1, §7.5, §7.6): head, tail, TsFileMetadata (V4
//! and V3) and properties.
//!
//! ```text
//! 0      "TsFile" + version (0x04, or 0x03 for V3)
//! 7      data section … 0x02 separator at meta_offset, index section
//! M      TsFileMetadata                 M = F − 6 − 4 − L
//! F−10   i32 L                          byte length of TsFileMetadata
//! F−6    "TsFile"
//! ```
//!
//! TsFileMetadata (V4):
//!
//! ```text
//! UVarInt n, n × { VarStr table_name, MetadataIndexNode root (device level) }
//! UVarInt m, m × { VarStr table_name, TableSchema }
//! i64 meta_offset, BloomFilter, VarInt (ZigZag) p, p × { VarStr key, VarBin value }
//! ```
//!
//! V3: `MetadataIndexNode root, i64 meta_offset, [UVarInt nbytes, bytes, UVarInt size,
//! UVarInt k]` (the Bloom part present iff bytes remain). Both decoders must consume the
//! metadata's `L` bytes exactly.
//!
//! Writing an empty V4 file and opening it again:
//!
//! ```
//! use tsfile_format::cursor::Writer;
//! use tsfile_format::file::{self, FileTail, TsFileMetadata};
//! use tsfile_format::types::FormatVersion;
//!
//! let meta = TsFileMetadata {
//!     table_roots: Vec::new(),
//!     table_schemas: Vec::new(),
//!     meta_offset: 7,
//!     bloom_filter: Default::default(),
//!     properties: Vec::new(),
//! };
//! let mut w = Writer::new();
//! file::encode_head(FormatVersion::V4, &mut w);
//! w.write_u8(0x02); // the separator, at meta_offset 7
//! let start = w.len();
//! meta.encode(&mut w);
//! let metadata_length = (w.len() - start) as u32;
//! FileTail { metadata_length }.encode(&mut w);
//! let bytes = w.into_inner();
//!
//! assert_eq!(file::decode_head(&bytes)?, FormatVersion::V4);
//! let size = bytes.len() as u64;
//! let tail = FileTail::decode(&bytes[bytes.len() - 10..], size)?;
//! let range = tail.metadata_range(size);
//! let back = TsFileMetadata::decode(&bytes[range.start as usize..range.end as usize], range.start)?;
//! assert_eq!(back, meta);
//! # Ok::<(), tsfile_format::Error>(())
//! ```

use std::ops::Range;

use crate::bloom_filter::BloomFilter;
use crate::cursor::{Cursor, Writer};
use crate::error::{Error, Result};
use crate::metadata_index::MetadataIndexNode;
use crate::schema::TableSchema;
use crate::types::{FormatVersion, IndexLevel};

/// The magic at the head and the tail of every TsFile.
pub const MAGIC: &[u8; 6] = b"TsFile";
/// Bytes of the head: magic and version byte.
pub const HEAD_LEN: u64 = 7;
/// Bytes of the tail: the metadata length and the magic.
pub const TAIL_LEN: u64 = 10;

/// Reads the head (the first 7 bytes) and returns the format version. Pre-V3 files (whose
/// head is `"TsFile000002"`-style) and unknown versions are [`Error::Unsupported`].
pub fn decode_head(bytes: &[u8]) -> Result<FormatVersion> {
    let mut c = Cursor::new(bytes, 0);
    let magic = c.take(6, "head magic")?;
    if magic != MAGIC {
        return Err(Error::BadMagic {
            offset: 0,
            found: magic.to_vec(),
        });
    }
    let version = c.read_u8("format version")?;
    FormatVersion::from_code(version, 6).map_err(|_| Error::Unsupported {
        what: "format version",
        reason: format!(
            "version byte {version:#04x} at byte 6; only V4 (0x04) and V3 (0x03) are readable"
        ),
    })
}

/// Writes the head for `version`.
pub fn encode_head(version: FormatVersion, w: &mut Writer) {
    w.write_bytes(MAGIC);
    w.write_u8(version.code());
}

/// The tail of a file: the length of TsFileMetadata, followed by the magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileTail {
    /// `L`: byte length of TsFileMetadata.
    pub metadata_length: u32,
}

impl FileTail {
    /// Reads the last 10 bytes of a file of `file_size` bytes (`bytes` must be exactly
    /// those 10) and checks that the metadata they announce fits between the head and the
    /// tail.
    pub fn decode(bytes: &[u8], file_size: u64) -> Result<Self> {
        let base = file_size.saturating_sub(TAIL_LEN);
        if bytes.len() as u64 != TAIL_LEN {
            return Err(Error::LengthMismatch {
                what: "file tail",
                offset: base,
                expected: TAIL_LEN,
                actual: bytes.len() as u64,
            });
        }
        let mut c = Cursor::new(bytes, base);
        let len = c.read_i32("metadata length")?;
        let magic_at = c.offset();
        let magic = c.take(6, "tail magic")?;
        if magic != MAGIC {
            return Err(Error::BadMagic {
                offset: magic_at,
                found: magic.to_vec(),
            });
        }
        let room = file_size.saturating_sub(HEAD_LEN + TAIL_LEN);
        if len < 0 || len as u64 > room {
            return Err(Error::LengthOutOfBounds {
                what: "metadata length",
                offset: base,
                declared: i64::from(len),
                available: room,
            });
        }
        Ok(Self {
            metadata_length: len as u32,
        })
    }

    /// The absolute byte range of TsFileMetadata: `F − 10 − L .. F − 10`.
    pub fn metadata_range(&self, file_size: u64) -> Range<u64> {
        let end = file_size.saturating_sub(TAIL_LEN);
        end.saturating_sub(u64::from(self.metadata_length))..end
    }

    /// Writes the tail.
    pub fn encode(&self, w: &mut Writer) {
        w.write_i32(self.metadata_length as i32);
        w.write_bytes(MAGIC);
    }
}

/// A file-level property: a UTF-8 key and a nullable raw value, kept byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Property {
    /// The key.
    pub key: String,
    /// The value bytes; `None` for a null value (`VarBin` length −1), distinct from empty.
    pub value: Option<Vec<u8>>,
}

impl Property {
    /// The value as UTF-8 text, when it is present and valid UTF-8.
    pub fn value_str(&self) -> Option<&str> {
        self.value
            .as_deref()
            .and_then(|v| std::str::from_utf8(v).ok())
    }
}

/// The device-level root of one table's index (for tree-model files: one per path prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableIndexRoot {
    /// The table name (tree model: the DeviceID first segment, e.g. `root.sg`).
    pub table_name: String,
    /// The root node (INTERNAL_DEVICE or LEAF_DEVICE).
    pub root: MetadataIndexNode,
}

/// A table schema with its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedTableSchema {
    /// The table name.
    pub table_name: String,
    /// The schema.
    pub schema: TableSchema,
}

/// The V4 footer metadata: table index roots, table schemas, `meta_offset`, the Bloom filter
/// and the properties, each list in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsFileMetadata {
    /// One device-level index root per table, in ascending table name order.
    pub table_roots: Vec<TableIndexRoot>,
    /// Table schemas (empty for tree-model files), in file order.
    pub table_schemas: Vec<NamedTableSchema>,
    /// Absolute offset of the `0x02` separator that ends the data section.
    pub meta_offset: i64,
    /// The Bloom filter over series paths (empty when absent).
    pub bloom_filter: BloomFilter,
    /// File properties, in file order.
    pub properties: Vec<Property>,
}

impl TsFileMetadata {
    /// Decodes V4 TsFileMetadata from exactly its `L` bytes, which start at absolute
    /// `base_offset` in the file. Leftover bytes are an [`Error::LengthMismatch`]. Index roots
    /// are decoded but not validated (see [`MetadataIndexNode::validate`]).
    pub fn decode(bytes: &[u8], base_offset: u64) -> Result<Self> {
        let mut c = Cursor::new(bytes, base_offset);
        let at = c.offset();
        let n = c.read_uvarint("table root count")?;
        // A root needs a name length, a child count, an end offset and a type: 11 bytes.
        let n = c.check_len(i64::from(n), 11, "table root count", at)?;
        let mut table_roots = Vec::with_capacity(n);
        for _ in 0..n {
            let table_name = read_name(&mut c, "table root name")?;
            let root = MetadataIndexNode::decode(&mut c, FormatVersion::V4, IndexLevel::Device)?;
            table_roots.push(TableIndexRoot { table_name, root });
        }
        let at = c.offset();
        let m = c.read_uvarint("table schema count")?;
        // A schema needs a name length and a column count.
        let m = c.check_len(i64::from(m), 2, "table schema count", at)?;
        let mut table_schemas = Vec::with_capacity(m);
        for _ in 0..m {
            let table_name = read_name(&mut c, "table schema name")?;
            let schema = TableSchema::decode(&mut c)?;
            table_schemas.push(NamedTableSchema { table_name, schema });
        }
        let meta_offset = c.read_i64("meta offset")?;
        let bloom_filter = BloomFilter::decode(&mut c)?;
        let at = c.offset();
        let p = c.read_varint("property count")?;
        // A property needs a key length and a value length.
        let p = c.check_len(i64::from(p), 2, "property count", at)?;
        let mut properties = Vec::with_capacity(p);
        for _ in 0..p {
            let key = read_name(&mut c, "property key")?;
            let value = c.read_var_bin("property value")?.map(<[u8]>::to_vec);
            properties.push(Property { key, value });
        }
        expect_consumed(&c, "TsFileMetadata", base_offset, bytes.len())?;
        Ok(Self {
            table_roots,
            table_schemas,
            meta_offset,
            bloom_filter,
            properties,
        })
    }

    /// Writes the metadata (without the tail).
    pub fn encode(&self, w: &mut Writer) {
        w.write_uvarint(self.table_roots.len() as u32);
        for t in &self.table_roots {
            w.write_var_str(Some(&t.table_name));
            t.root.encode(w);
        }
        w.write_uvarint(self.table_schemas.len() as u32);
        for s in &self.table_schemas {
            w.write_var_str(Some(&s.table_name));
            s.schema.encode(w);
        }
        w.write_i64(self.meta_offset);
        self.bloom_filter.encode(w);
        w.write_varint(self.properties.len() as i32);
        for p in &self.properties {
            w.write_var_str(Some(&p.key));
            w.write_var_bin(p.value.as_deref());
        }
    }

    /// The schema of table `name`, if the file has one.
    pub fn table_schema(&self, name: &str) -> Option<&TableSchema> {
        self.table_schemas
            .iter()
            .find(|s| s.table_name == name)
            .map(|s| &s.schema)
    }

    /// The index root of table `name`, if the file has one.
    pub fn table_root(&self, name: &str) -> Option<&MetadataIndexNode> {
        self.table_roots
            .iter()
            .find(|t| t.table_name == name)
            .map(|t| &t.root)
    }

    /// The property `key`, if present (`Some(None)` for a null value).
    pub fn property(&self, key: &str) -> Option<Option<&[u8]>> {
        self.properties
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.value.as_deref())
    }

    /// True when the `encryptLevel` property exists and is not `"0"`: page payloads are then
    /// encrypted, which this crate does not implement.
    pub fn is_encrypted(&self) -> bool {
        matches!(self.property("encryptLevel"), Some(Some(v)) if v != b"0")
    }
}

/// The V3 footer metadata: one device-level root (treated as the table `""`), `meta_offset`
/// and an optional Bloom filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsFileMetadataV3 {
    /// The device-level index root; its device entries are V3 path strings.
    pub root: MetadataIndexNode,
    /// Absolute offset of the `0x02` separator.
    pub meta_offset: i64,
    /// The Bloom filter, when the metadata has bytes after `meta_offset`.
    pub bloom_filter: Option<BloomFilter>,
}

impl TsFileMetadataV3 {
    /// Decodes V3 TsFileMetadata from exactly its `L` bytes starting at `base_offset`.
    pub fn decode(bytes: &[u8], base_offset: u64) -> Result<Self> {
        let mut c = Cursor::new(bytes, base_offset);
        let root = MetadataIndexNode::decode(&mut c, FormatVersion::V3, IndexLevel::Device)?;
        let meta_offset = c.read_i64("meta offset")?;
        let bloom_filter = if c.is_empty() {
            None
        } else {
            Some(BloomFilter::decode_v3(&mut c)?)
        };
        expect_consumed(&c, "TsFileMetadata (V3)", base_offset, bytes.len())?;
        Ok(Self {
            root,
            meta_offset,
            bloom_filter,
        })
    }

    /// Writes the metadata (without the tail).
    pub fn encode(&self, w: &mut Writer) {
        self.root.encode(w);
        w.write_i64(self.meta_offset);
        if let Some(b) = &self.bloom_filter {
            b.encode_v3(w);
        }
    }
}

fn read_name(c: &mut Cursor<'_>, what: &'static str) -> Result<String> {
    let at = c.offset();
    c.read_var_str(what)?.ok_or_else(|| Error::Invalid {
        what,
        offset: at,
        reason: "must not be null".into(),
    })
}

fn expect_consumed(c: &Cursor<'_>, what: &'static str, base: u64, len: usize) -> Result<()> {
    if c.is_empty() {
        return Ok(());
    }
    Err(Error::LengthMismatch {
        what,
        offset: base,
        expected: len as u64,
        actual: c.position() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::hex;
    use crate::device_id::{DeviceId, DeviceKey};
    use crate::metadata_index::IndexKey;
    use crate::types::{ColumnCategory, MetadataIndexNodeType};

    /// TV9: the TsFileMetadata of the 378-byte reference file, with its tail.
    fn tv9() -> Vec<u8> {
        let mut b = hex(
            "01 02 74 01 02 02 74 04 64 31 00000000000000a4 00000000000000b7 01 \
             01 02 74 02 00000002 6964 0b 00 00 00000000 00000000 \
             00000001 76 01 00 00 00000000 00000001 0000000000000050 \
             1f 00000010000000422000000000000000098000001000000000800000000040 80 02 05 06",
        );
        for (k, v) in [
            ("encryptKey", None),
            ("encryptType", Some("org.apache.tsfile.encrypt.UNENCRYPTED")),
            ("encryptLevel", Some("0")),
        ] {
            let mut w = Writer::new();
            w.write_var_str(Some(k));
            w.write_var_str(v);
            b.extend(w.as_bytes());
        }
        b
    }

    #[test]
    fn tv9_tsfile_metadata() {
        let bytes = tv9();
        assert_eq!(bytes.len(), 185);
        let m = TsFileMetadata::decode(&bytes, 183).unwrap();
        assert_eq!(m.meta_offset, 80);
        assert_eq!(m.table_roots.len(), 1);
        let root = m.table_root("t").unwrap();
        assert_eq!(root.node_type, MetadataIndexNodeType::LeafDevice);
        assert_eq!(
            root.children[0].key,
            IndexKey::Device(DeviceKey::Id(DeviceId::from_strs(&["t", "d1"])))
        );
        assert_eq!((root.children[0].offset, root.end_offset), (164, 183));
        let schema = m.table_schema("t").unwrap();
        assert_eq!(schema.columns[0].category, ColumnCategory::Tag);
        assert!(m.bloom_filter.might_contain("t.d1.v"));
        assert_eq!(m.property("encryptKey"), Some(None));
        assert_eq!(m.property("encryptLevel"), Some(Some(&b"0"[..])));
        assert!(!m.is_encrypted());
        let mut w = Writer::new();
        m.encode(&mut w);
        assert_eq!(w.as_bytes(), bytes);

        let mut tail = Writer::new();
        FileTail {
            metadata_length: 185,
        }
        .encode(&mut tail);
        assert_eq!(tail.as_bytes(), hex("000000b9 54 73 46 69 6c 65"));
        let t = FileTail::decode(tail.as_bytes(), 378).unwrap();
        assert_eq!(t.metadata_range(378), 183..368);
    }

    #[test]
    fn metadata_must_span_exactly_its_length() {
        let mut bytes = tv9();
        bytes.push(0);
        assert!(matches!(
            TsFileMetadata::decode(&bytes, 183),
            Err(Error::LengthMismatch {
                expected: 186,
                actual: 185,
                ..
            })
        ));
        bytes.truncate(184);
        assert!(TsFileMetadata::decode(&bytes, 183).is_err());
    }

    #[test]
    fn head_and_tail_checks() {
        assert_eq!(decode_head(b"TsFile\x04").unwrap(), FormatVersion::V4);
        assert_eq!(decode_head(b"TsFile\x03").unwrap(), FormatVersion::V3);
        assert!(matches!(
            decode_head(b"TsFile000002"),
            Err(Error::Unsupported { .. })
        ));
        assert!(matches!(
            decode_head(b"PAR1abc"),
            Err(Error::BadMagic { offset: 0, .. })
        ));
        assert!(matches!(decode_head(b"TsF"), Err(Error::Truncated { .. })));
        let mut w = Writer::new();
        encode_head(FormatVersion::V4, &mut w);
        assert_eq!(w.as_bytes(), b"TsFile\x04");
        assert!(matches!(
            FileTail::decode(b"\x00\x00\x00\x05TsFilx", 100),
            Err(Error::BadMagic { offset: 94, .. })
        ));
        // L larger than what lies between head and tail.
        assert!(matches!(
            FileTail::decode(b"\x00\x00\x00\x10TsFile", 30),
            Err(Error::LengthOutOfBounds {
                declared: 16,
                available: 13,
                ..
            })
        ));
        assert!(FileTail::decode(b"\xff\xff\xff\xffTsFile", 30).is_err());
        assert!(FileTail::decode(b"TsFile", 30).is_err());
    }

    #[test]
    fn properties_keep_raw_bytes() {
        let m = TsFileMetadata {
            table_roots: Vec::new(),
            table_schemas: Vec::new(),
            meta_offset: 24,
            bloom_filter: BloomFilter::default(),
            properties: vec![
                Property {
                    key: "bin".into(),
                    value: Some(vec![0xff, 0xfe, 0x00, 0x80]),
                },
                Property {
                    key: "empty".into(),
                    value: Some(Vec::new()),
                },
                Property {
                    key: "encryptLevel".into(),
                    value: Some(b"2".to_vec()),
                },
            ],
        };
        let mut w = Writer::new();
        m.encode(&mut w);
        let bytes = w.into_inner();
        // The value ff fe 00 80 serializes as 08 ff fe 00 80.
        assert!(
            bytes
                .windows(5)
                .any(|x| x == [0x08, 0xff, 0xfe, 0x00, 0x80])
        );
        let back = TsFileMetadata::decode(&bytes, 0).unwrap();
        assert_eq!(back, m);
        assert!(back.is_encrypted());
        assert_eq!(back.properties[0].value_str(), None);
    }
}
