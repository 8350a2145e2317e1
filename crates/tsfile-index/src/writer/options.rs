//! Writer configuration: page and chunk-group limits, index degree, Bloom error rate, time
//! column codecs, per-type default encodings and the compatibility flavour (`docs/tsfile.md`
//! §10 defaults, §14 Java vs C++ differences).

use tsfile_format::file::Property;
use tsfile_format::types::{CompressionType, TSDataType, TSEncoding};

/// Which official library's deterministic choices the writer reproduces where the two differ
/// (§14). Both flavours are read by both libraries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flavor {
    /// The C++ library behind the Python package `tsfile` 2.5: TimeseriesMetadata type bytes
    /// without mask bits, TS_2DIFF single-value blocks with `min_delta = 0`, Bloom filter sized
    /// by the TimeseriesMetadata count minus one (hashing: [`BloomHashing`]), the `0x04` operation
    /// index record before the separator, properties in the order `encryptKey, encryptType,
    /// encryptLevel`. Byte-identical output for the same rows and configuration.
    #[default]
    Cpp,
    /// The Java library: mask bits `0x80`/`0x40` on aligned TimeseriesMetadata, TS_2DIFF
    /// single-value blocks with `min_delta = MAX`, Bloom filter sized by all chunk metadata
    /// (hashing: [`BloomHashing`]), no operation index record, properties in the
    /// order `encryptLevel, encryptKey, encryptType`.
    Java,
}

/// How Bloom filter positions are hashed (§7.7): the two libraries differ for paths with
/// bytes ≥ 0x80 in the last `len % 16` bytes (Java sign-extends them, C++ zero-extends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BloomHashing {
    /// Java's variant only.
    Java,
    /// The C++ variant only (byte-identical with the C++ writer for non-ASCII paths).
    Cpp,
    /// Both variants' bits: Java and C++ readers both find every path (the default; the
    /// same bits as either variant for ASCII paths).
    #[default]
    Both,
}

/// Everything configurable about a [`super::TsFileWriter`]. `Default` gives the official
/// writers' defaults (§10).
#[derive(Debug, Clone, PartialEq)]
pub struct WriterOptions {
    /// A page is sealed when it holds this many points (default 10,000).
    pub max_points_per_page: usize,
    /// A page is sealed when one of its columns holds about this many raw bytes (default
    /// 128 KiB, the C++ default).
    pub max_page_bytes: usize,
    /// Buffered data is flushed as chunk groups when it exceeds this many bytes (default
    /// 128 MiB).
    pub chunk_group_size_threshold: usize,
    /// Maximum entries of a metadata index node (default 256).
    pub max_degree: usize,
    /// Bloom filter error rate (default 0.05; clamped to [0.01, 0.1] by the format).
    pub bloom_error_rate: f64,
    /// Encoding of the time column (default TS_2DIFF).
    pub time_encoding: TSEncoding,
    /// Compression of the time column (default LZ4).
    pub time_compression: CompressionType,
    /// Compression of value columns that do not name one (default LZ4).
    pub default_compression: CompressionType,
    /// Drop trailing null TAG values from table-model DeviceIDs, as Java does (default true;
    /// the C++ writer keeps them).
    pub trim_trailing_null_tags: bool,
    /// Whose deterministic choices to reproduce.
    pub flavor: Flavor,
    /// Bloom filter hashing of non-ASCII paths (default: both variants).
    pub bloom_hashing: BloomHashing,
    /// User properties written after the writer's own encryption properties.
    pub properties: Vec<Property>,
    /// Flush the file to stable storage before the rename of `close` (default true), so
    /// that a crash right after `close` cannot leave a truncated file under the final name.
    pub sync_on_close: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            max_points_per_page: 10_000,
            max_page_bytes: 128 * 1024,
            chunk_group_size_threshold: 128 * 1024 * 1024,
            max_degree: 256,
            bloom_error_rate: 0.05,
            time_encoding: TSEncoding::Ts2Diff,
            time_compression: CompressionType::Lz4,
            default_compression: CompressionType::Lz4,
            trim_trailing_null_tags: true,
            flavor: Flavor::Cpp,
            bloom_hashing: BloomHashing::Both,
            properties: Vec::new(),
            sync_on_close: true,
        }
    }
}

/// The official default value encoding of a data type (§10, C++ 2.5 column): TS_2DIFF for
/// integers, dates and timestamps, GORILLA for floats, PLAIN for everything else.
pub fn default_encoding(data_type: TSDataType) -> TSEncoding {
    match data_type {
        TSDataType::Int32 | TSDataType::Int64 | TSDataType::Date | TSDataType::Timestamp => {
            TSEncoding::Ts2Diff
        }
        TSDataType::Float | TSDataType::Double => TSEncoding::Gorilla,
        _ => TSEncoding::Plain,
    }
}

/// True when the official readers can decode `encoding` for `data_type` and our encoders
/// write it: LZO and CAMEL are never written, GORILLA_V1 and the legacy codecs neither.
pub fn encoding_is_writable(encoding: TSEncoding, data_type: TSDataType) -> bool {
    use TSDataType as T;
    use TSEncoding as E;
    match data_type {
        // Java's default RLE for booleans makes the C++ reader (the Python package) fail with
        // "Out of memory"; PLAIN is what the C++ writer writes.
        T::Boolean => encoding == E::Plain,
        // SPRINTZ is never written: `tsfile-format`'s SPRINTZ encoder does not round-trip
        // extreme values (INT32 [MAX, MIN, 0, -1, MAX, 5, MIN, 7, 2^30] decodes as
        // [MAX, MIN, MIN, …]; INT64 residuals overflow likewise) and the C++ reader flips
        // signs of its FLOAT/DOUBLE pages.
        T::Int32 | T::Int64 => matches!(
            encoding,
            E::Plain | E::Rle | E::Ts2Diff | E::Gorilla | E::Zigzag | E::Chimp | E::Rlbe
        ),
        T::Date | T::Timestamp => matches!(
            encoding,
            E::Plain | E::Rle | E::Ts2Diff | E::Gorilla | E::Chimp | E::Rlbe
        ),
        // RLE on floats exists in Java only; the C++ reader cannot decode it.
        T::Float | T::Double => matches!(
            encoding,
            E::Plain | E::Ts2Diff | E::Gorilla | E::Chimp | E::Rlbe
        ),
        T::Text | T::String => matches!(encoding, E::Plain | E::Dictionary),
        T::Blob => encoding == E::Plain,
        T::Vector | T::Unknown => false,
    }
}
