//! [`TsFileReader`]: opening a TsFile (head, tail, exact metadata length, TsFileMetadata of
//! V4 or V3) and the facts read from its footer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tsfile_format::bloom_filter::BloomFilter;
use tsfile_format::file::{
    FileTail, HEAD_LEN, NamedTableSchema, Property, TAIL_LEN, TsFileMetadata, TsFileMetadataV3,
    decode_head,
};
use tsfile_format::metadata_index::MetadataIndexNode;
use tsfile_format::schema::TableSchema;
use tsfile_format::types::{FormatVersion, Marker};

use crate::arrow_types::TimeRepr;
use crate::error::{Error, Result};
use crate::io::ChunkReader;

/// Options of a reader.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// How `time` and TIMESTAMP columns are represented (default `Timestamp(ms)`).
    pub time: TimeRepr,
}

/// An open TsFile: the parsed footer plus the byte source everything else is read from.
#[derive(Clone)]
pub struct TsFileReader {
    src: Arc<dyn ChunkReader>,
    path: Option<PathBuf>,
    version: FormatVersion,
    file_len: u64,
    metadata_start: u64,
    metadata_len: u64,
    meta_offset: u64,
    roots: Vec<(String, MetadataIndexNode)>,
    schemas: Vec<NamedTableSchema>,
    bloom: Option<BloomFilter>,
    properties: Vec<Property>,
    options: ReadOptions,
}

impl std::fmt::Debug for TsFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TsFileReader")
            .field("path", &self.path)
            .field("version", &self.version)
            .field("file_len", &self.file_len)
            .finish_non_exhaustive()
    }
}

impl TsFileReader {
    /// Opens the file at `path` through a memory map (see [`crate::mmap`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = crate::mmap::map_file(path)?;
        let mut reader = Self::from_reader(Arc::new(bytes))?;
        reader.path = Some(path.to_path_buf());
        Ok(reader)
    }

    /// Opens the file at `path` through positional reads of a [`std::fs::File`] instead of a
    /// memory map: slower (every range is copied), but safe against another process
    /// truncating the file while it is read.
    pub fn open_unmapped(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|source| Error::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let mut reader = Self::from_reader(Arc::new(file))?;
        reader.path = Some(path.to_path_buf());
        Ok(reader)
    }

    /// Opens a TsFile served by any [`ChunkReader`] (a file, bytes, a recording wrapper).
    pub fn from_reader(src: Arc<dyn ChunkReader>) -> Result<Self> {
        let file_len = src.len();
        // The smallest closed file: head (7), separator (1), metadata length (4), magic (6).
        if file_len < HEAD_LEN + 1 + TAIL_LEN {
            return Err(Error::NotTsFile {
                reason: format!("{file_len} bytes is too short for a TsFile (at least 18)"),
            });
        }
        let head = src.get_bytes(0, HEAD_LEN as usize)?;
        let version = decode_head(&head)?;
        let tail = src.get_bytes(file_len - TAIL_LEN, TAIL_LEN as usize)?;
        let tail = FileTail::decode(&tail, file_len)?;
        let range = tail.metadata_range(file_len);
        let metadata_start = range.start;
        let metadata_len = range.end - range.start;
        let bytes = src.get_bytes(metadata_start, metadata_len as usize)?;
        let (roots, schemas, meta_offset, bloom, properties) = match version {
            FormatVersion::V4 => {
                let m = TsFileMetadata::decode(&bytes, metadata_start)?;
                let roots = m
                    .table_roots
                    .into_iter()
                    .map(|t| (t.table_name, t.root))
                    .collect();
                let bloom = (!m.bloom_filter.is_empty()).then_some(m.bloom_filter);
                (roots, m.table_schemas, m.meta_offset, bloom, m.properties)
            }
            FormatVersion::V3 => {
                let m = TsFileMetadataV3::decode(&bytes, metadata_start)?;
                (
                    vec![(String::new(), m.root)],
                    Vec::new(),
                    m.meta_offset,
                    m.bloom_filter,
                    Vec::new(),
                )
            }
        };
        if meta_offset < HEAD_LEN as i64 || meta_offset as u64 >= metadata_start {
            return Err(Error::corrupt(
                "TsFileMetadata meta_offset",
                metadata_start,
                format!(
                    "separator offset {meta_offset} lies outside [{HEAD_LEN}, {metadata_start})"
                ),
            ));
        }
        let meta_offset = meta_offset as u64;
        for (name, root) in &roots {
            root.validate(metadata_start, None)?;
            if root.children.is_empty() {
                return Err(Error::corrupt(
                    "table index root",
                    metadata_start,
                    format!("table {name:?} has an index root without entries"),
                ));
            }
        }
        let reader = Self {
            src,
            path: None,
            version,
            file_len,
            metadata_start,
            metadata_len,
            meta_offset,
            roots,
            schemas,
            bloom,
            properties,
            options: ReadOptions::default(),
        };
        if reader.is_encrypted() {
            return Err(Error::Unsupported {
                what: "encryption",
                offset: reader.metadata_start,
                reason: "property encryptLevel of TsFileMetadata is not \"0\"; encrypted pages cannot be read".into(),
            });
        }
        let separator = reader.src.get_bytes(meta_offset, 1)?;
        if separator.first() != Some(&Marker::Separator.code()) {
            return Err(Error::corrupt(
                "separator",
                meta_offset,
                format!(
                    "expected the 0x02 separator, found {:#04x}",
                    separator.first().copied().unwrap_or(0)
                ),
            ));
        }
        Ok(reader)
    }

    /// The same reader with other options.
    pub fn with_options(mut self, options: ReadOptions) -> Self {
        self.options = options;
        self
    }

    /// A copy of this reader (sharing its byte source) with other options.
    pub fn clone_with_options(&self, options: ReadOptions) -> Self {
        let mut r = self.clone();
        r.options = options;
        r
    }

    /// The reader's options.
    pub fn options(&self) -> ReadOptions {
        self.options
    }

    /// The path the reader was opened from, when it was opened from a path.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The byte source.
    pub fn source(&self) -> &dyn ChunkReader {
        self.src.as_ref()
    }

    /// The format version.
    pub fn format_version(&self) -> FormatVersion {
        self.version
    }

    /// The format version byte (3 or 4).
    pub fn version(&self) -> u8 {
        self.version.code()
    }

    /// File size in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Offset of TsFileMetadata (`M`).
    pub fn metadata_start(&self) -> u64 {
        self.metadata_start
    }

    /// Length of TsFileMetadata (`L`).
    pub fn metadata_len(&self) -> u64 {
        self.metadata_len
    }

    /// Offset of the `0x02` separator that ends the data section.
    pub fn meta_offset(&self) -> u64 {
        self.meta_offset
    }

    /// First byte of the index area (`meta_offset + 1`).
    pub fn index_start(&self) -> u64 {
        self.meta_offset + 1
    }

    /// The index roots, one per table (tree model: per path prefix; V3: one root `""`).
    pub fn table_roots(&self) -> &[(String, MetadataIndexNode)] {
        &self.roots
    }

    /// Table names of the index, in index order.
    pub fn table_names(&self) -> Vec<&str> {
        self.roots.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The table schemas as written (any order; empty for tree-model files).
    pub fn table_schemas(&self) -> &[NamedTableSchema] {
        &self.schemas
    }

    /// The schema of one table.
    pub fn table_schema(&self, name: &str) -> Option<&TableSchema> {
        self.schemas
            .iter()
            .find(|s| s.table_name == name)
            .map(|s| &s.schema)
    }

    /// True when the file has table schemas (table model).
    pub fn is_table_model(&self) -> bool {
        !self.schemas.is_empty()
    }

    /// The Bloom filter, when the file has one.
    pub fn bloom_filter(&self) -> Option<&BloomFilter> {
        self.bloom.as_ref()
    }

    /// The file properties as written.
    pub fn properties(&self) -> &[Property] {
        &self.properties
    }

    /// True when the properties say the pages are encrypted.
    pub fn is_encrypted(&self) -> bool {
        self.properties
            .iter()
            .any(|p| p.key == "encryptLevel" && p.value.as_deref().is_some_and(|v| v != b"0"))
    }

    /// False only when the Bloom filter proves that the series `path` (`device.measurement`)
    /// is absent. A miss is trusted only for ASCII paths: the Java and C++ writers hash
    /// non-ASCII tails differently (§7.7).
    pub(crate) fn bloom_may_contain_path(&self, path: &str) -> bool {
        let Some(bloom) = &self.bloom else {
            return true;
        };
        !path.is_ascii() || bloom.might_contain(path)
    }
}
