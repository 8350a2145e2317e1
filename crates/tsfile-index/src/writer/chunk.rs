//! Chunks of one series in one chunk group (`docs/tsfile.md` §5): page boundaries, value
//! encoding per page through the encoders of `tsfile-format`, page compression, page and chunk
//! statistics, and the chunk header with the single-page or multi-page marker.

use std::ops::Range;

use tsfile_format::chunk::ChunkHeader;
use tsfile_format::compression;
use tsfile_format::cursor::Writer;
use tsfile_format::encoding::{self, EncoderOptions, ValueEncoder};
use tsfile_format::page::PageHeader;
use tsfile_format::page_payload;
use tsfile_format::schema::MeasurementSchema;
use tsfile_format::statistics::Statistics;
use tsfile_format::types::{CompressionType, Marker, TSDataType, TSEncoding};

use super::buffer::Values;
use super::error::{WriteError, WriteResult};
use super::options::{Flavor, WriterOptions};
use super::stats::{self, PageSlice};

/// A serialized chunk (header and pages) with its statistics.
#[derive(Debug)]
pub(crate) struct ChunkBytes {
    /// The chunk header followed by every page.
    pub(crate) bytes: Vec<u8>,
    /// The chunk statistics (merge of its pages).
    pub(crate) statistics: Statistics,
}

/// How one column is stored: name, type, encoding and compression.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColumnCodec<'a> {
    pub(crate) name: &'a str,
    pub(crate) data_type: TSDataType,
    pub(crate) encoding: TSEncoding,
    pub(crate) compression: CompressionType,
}

/// The codec of a measurement column as its schema declares it.
pub(crate) fn codec_of(s: &MeasurementSchema) -> ColumnCodec<'_> {
    ColumnCodec {
        name: &s.name,
        data_type: s.data_type,
        encoding: s.encoding,
        compression: s.compression,
    }
}

/// Row ranges of the pages of an aligned chunk group: a page ends when it holds
/// `max_points_per_page` rows or when one column (the time column included) holds
/// `max_page_bytes` raw bytes. Time and value pages share these ranges (§5.5).
pub(crate) fn aligned_pages(
    rows: usize,
    columns: &[(&Values, &[bool])],
    opts: &WriterOptions,
) -> Vec<Range<usize>> {
    let max_points = opts.max_points_per_page.max(1);
    let max_bytes = opts.max_page_bytes.max(1);
    if points_only(columns.iter().map(|c| c.0), opts) {
        return (0..rows)
            .step_by(max_points)
            .map(|s| s..(s + max_points).min(rows))
            .collect();
    }
    let mut pages = Vec::new();
    let mut cursor = vec![0usize; columns.len()];
    let mut bytes = vec![0usize; columns.len()];
    let mut start = 0;
    for row in 0..rows {
        let mut full = (row + 1 - start) >= max_points || (row + 1 - start) * 8 >= max_bytes;
        for (c, (values, validity)) in columns.iter().enumerate() {
            if validity[row] {
                bytes[c] += values.raw_size(cursor[c]);
                cursor[c] += 1;
                full |= bytes[c] >= max_bytes;
            }
        }
        if full {
            pages.push(start..row + 1);
            start = row + 1;
            bytes.iter_mut().for_each(|b| *b = 0);
        }
    }
    if start < rows {
        pages.push(start..rows);
    }
    pages
}

/// True when pages are cut by the point count alone: fixed-width columns (at most 8 bytes a
/// value) cannot reach the byte limit within `max_points_per_page` rows.
pub(crate) fn points_only<'a>(
    mut columns: impl Iterator<Item = &'a Values>,
    opts: &WriterOptions,
) -> bool {
    columns.all(|v| !matches!(v, Values::Binary { .. }))
        && opts.max_points_per_page.max(1).saturating_mul(8) < opts.max_page_bytes.max(1)
}

/// Row ranges of the pages of a non-aligned series (time and value in the same page).
pub(crate) fn series_pages(values: &Values, opts: &WriterOptions) -> Vec<Range<usize>> {
    let max_points = opts.max_points_per_page.max(1);
    let max_bytes = opts.max_page_bytes.max(1);
    let mut pages = Vec::new();
    let mut start = 0;
    let mut bytes = 0;
    for i in 0..values.len() {
        bytes += 8 + values.raw_size(i);
        if i + 1 - start >= max_points || bytes >= max_bytes {
            pages.push(start..i + 1);
            start = i + 1;
            bytes = 0;
        }
    }
    if start < values.len() {
        pages.push(start..values.len());
    }
    pages
}

/// Buffers one page's values in `enc`.
fn put_slice(enc: &mut ValueEncoder, slice: PageSlice<'_>) {
    match (enc, slice) {
        (ValueEncoder::Boolean(e), PageSlice::Boolean(v)) => e.put_slice(v),
        (ValueEncoder::Int32(e), PageSlice::Int32(v)) => e.put_slice(v),
        (ValueEncoder::Int64(e), PageSlice::Int64(v)) => e.put_slice(v),
        (ValueEncoder::Float(e), PageSlice::Float(v)) => e.put_slice(v),
        (ValueEncoder::Double(e), PageSlice::Double(v)) => e.put_slice(v),
        (ValueEncoder::Binary(e), PageSlice::Binary(offsets, data)) => {
            for w in offsets.windows(2) {
                e.put(&data[w[0]..w[1]]);
            }
        }
        // The encoder is chosen from the same data type as the buffer, so the kinds match.
        _ => {}
    }
}

/// Encodes and flushes one page's values.
fn encode_page(
    codec: ColumnCodec<'_>,
    enc: &mut ValueEncoder,
    slice: PageSlice<'_>,
    out: &mut Vec<u8>,
) -> WriteResult<()> {
    check_terminator(codec, slice)?;
    put_slice(enc, slice);
    enc.flush(out);
    Ok(())
}

/// GORILLA and CHIMP end their streams at an in-band terminator (INT_MIN, LONG_MIN, the
/// canonical NaN; §8.5, §8.8). A value equal to it would silently cut the page short for every
/// reader, the official ones included, so it is refused with a way out.
fn check_terminator(codec: ColumnCodec<'_>, slice: PageSlice<'_>) -> WriteResult<()> {
    if !matches!(codec.encoding, TSEncoding::Gorilla | TSEncoding::Chimp) {
        return Ok(());
    }
    let found = match slice {
        PageSlice::Int32(v) => v.contains(&i32::MIN).then(|| i32::MIN.to_string()),
        PageSlice::Int64(v) => v.contains(&i64::MIN).then(|| i64::MIN.to_string()),
        PageSlice::Float(v) => v
            .iter()
            .any(|x| x.to_bits() == 0x7fc0_0000)
            .then(|| "NaN".into()),
        PageSlice::Double(v) => v
            .iter()
            .any(|x| x.to_bits() == 0x7ff8_0000_0000_0000)
            .then(|| "NaN".into()),
        PageSlice::Boolean(_) | PageSlice::Binary(..) => None,
    };
    match found {
        None => Ok(()),
        Some(value) => Err(WriteError::schema(format!(
            "column {:?}: the value {value} is the stream terminator of {} and cannot be \
             stored with it; choose PLAIN or TS_2DIFF for this column",
            codec.name,
            codec.encoding.name()
        ))),
    }
}

/// The C++ writer stores `min_delta = 0` in a TS_2DIFF block holding a single value, where
/// the Java encoder of `tsfile-format` stores `MAX` (§8.2, difference 6 of §14). Both decode
/// the same; this rewrites the field in place so that C++-flavoured files are byte-identical.
/// `width` is 4 for 32-bit and 8 for 64-bit streams. Streams that do not parse as plain
/// TS_2DIFF blocks are left untouched.
fn cpp_single_value_blocks(stream: &mut [u8], width: usize) {
    let mut pos = 0;
    while pos + 8 + 2 * width <= stream.len() {
        let n = i32::from_be_bytes([
            stream[pos],
            stream[pos + 1],
            stream[pos + 2],
            stream[pos + 3],
        ]);
        let w = i32::from_be_bytes([
            stream[pos + 4],
            stream[pos + 5],
            stream[pos + 6],
            stream[pos + 7],
        ]);
        if !(0..=128).contains(&n) || !(0..=64).contains(&w) {
            return;
        }
        if n == 0 {
            stream[pos + 8..pos + 8 + width].fill(0);
        }
        pos += 8 + 2 * width + (n as usize * w as usize).div_ceil(8);
    }
}

/// The value width of a TS_2DIFF stream of `data_type` when the C++ fix-up applies to it.
fn ts2diff_width(encoding: TSEncoding, data_type: TSDataType) -> Option<usize> {
    if encoding != TSEncoding::Ts2Diff {
        return None;
    }
    match data_type {
        TSDataType::Int32 | TSDataType::Date => Some(4),
        TSDataType::Int64 | TSDataType::Timestamp | TSDataType::Vector => Some(8),
        _ => None,
    }
}

/// A page ready to be written: its uncompressed payload (empty = empty page) and statistics.
struct Page {
    payload: Vec<u8>,
    statistics: Statistics,
}

/// A compressed page: `uncompressed == 0` is the empty page `00`.
#[derive(Debug)]
pub(crate) struct EncodedPage {
    uncompressed: u32,
    data: Vec<u8>,
    statistics: Statistics,
}

impl EncodedPage {
    /// Bytes held, for the chunk-group memory threshold.
    pub(crate) fn memory(&self) -> usize {
        self.data.len() + 64
    }

    fn is_empty(&self) -> bool {
        self.uncompressed == 0
    }
}

/// Compresses one page.
fn seal(compression: CompressionType, page: Page) -> WriteResult<EncodedPage> {
    if page.payload.is_empty() {
        return Ok(EncodedPage {
            uncompressed: 0,
            data: Vec::new(),
            statistics: page.statistics,
        });
    }
    Ok(EncodedPage {
        uncompressed: page.payload.len() as u32,
        data: compression::compress(compression, &page.payload)?,
        statistics: page.statistics,
    })
}

/// Assembles the chunk: single-page marker and no page statistics for one page, multi-page
/// marker and statistics on every non-empty page otherwise.
fn assemble(
    codec: ColumnCodec<'_>,
    kind: ChunkKind,
    pages: Vec<EncodedPage>,
    empty_stats: Statistics,
) -> ChunkBytes {
    let multi = pages.len() > 1;
    // The page headers first, to know the body's size; then header, page headers and page
    // bytes go to the output once each.
    let mut statistics = empty_stats;
    let mut heads = Writer::new();
    let mut ends = Vec::with_capacity(pages.len());
    let mut data_size = 0;
    for page in &pages {
        stats::merge(&mut statistics, &page.statistics);
        if page.is_empty() {
            PageHeader::EMPTY.encode(&mut heads);
        } else {
            PageHeader {
                uncompressed_size: page.uncompressed,
                compressed_size: page.data.len() as u32,
                statistics: multi.then(|| page.statistics.clone()),
            }
            .encode(&mut heads);
        }
        ends.push(heads.len());
        data_size += page.data.len();
    }
    let marker = match (kind, multi) {
        (ChunkKind::Time, false) => Marker::OnlyOnePageTimeChunkHeader,
        (ChunkKind::Time, true) => Marker::TimeChunkHeader,
        (ChunkKind::Value, false) => Marker::OnlyOnePageValueChunkHeader,
        (ChunkKind::Value, true) => Marker::ValueChunkHeader,
        (ChunkKind::Plain, false) => Marker::OnlyOnePageChunkHeader,
        (ChunkKind::Plain, true) => Marker::ChunkHeader,
    };
    let header = ChunkHeader {
        marker,
        measurement_id: codec.name.to_string(),
        data_size: (heads.len() + data_size) as u32,
        data_type: codec.data_type,
        compression: codec.compression,
        encoding: codec.encoding,
    };
    let mut w = Writer::from_vec(Vec::with_capacity(64 + heads.len() + data_size));
    header.encode(&mut w);
    let heads = heads.as_bytes();
    let mut start = 0;
    for (page, end) in pages.iter().zip(ends) {
        w.write_bytes(&heads[start..end]);
        // An empty page is its header alone.
        if !page.is_empty() {
            w.write_bytes(&page.data);
        }
        start = end;
    }
    ChunkBytes {
        bytes: w.into_inner(),
        statistics,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkKind {
    Time,
    Value,
    Plain,
}

fn time_stream(times: &[i64], encoding: TSEncoding, flavor: Flavor) -> WriteResult<Vec<u8>> {
    let mut s = page_payload::encode_times(encoding, times)?;
    if flavor == Flavor::Cpp && encoding == TSEncoding::Ts2Diff {
        cpp_single_value_blocks(&mut s, 8);
    }
    Ok(s)
}

fn value_encoder(codec: ColumnCodec<'_>) -> WriteResult<ValueEncoder> {
    Ok(encoding::encoder_with(
        codec.encoding,
        codec.data_type,
        EncoderOptions::default(),
    )?)
}

fn time_codec(opts: &WriterOptions) -> ColumnCodec<'static> {
    ColumnCodec {
        name: "",
        data_type: TSDataType::Vector,
        encoding: opts.time_encoding,
        compression: opts.time_compression,
    }
}

/// The encoded pages of the aligned time column for the row ranges `pages`.
pub(crate) fn time_pages(
    times: &[i64],
    pages: &[Range<usize>],
    opts: &WriterOptions,
) -> WriteResult<Vec<EncodedPage>> {
    let mut out = Vec::with_capacity(pages.len());
    for r in pages {
        let t = &times[r.clone()];
        let page = Page {
            payload: time_stream(t, opts.time_encoding, opts.flavor)?,
            statistics: stats::of_times(t),
        };
        out.push(seal(opts.time_compression, page)?);
    }
    Ok(out)
}

/// The aligned time chunk of a chunk group (`""`, VECTOR, markers 0x81/0x85) from its pages.
pub(crate) fn time_chunk(pages: Vec<EncodedPage>, opts: &WriterOptions) -> ChunkBytes {
    let empty = stats::empty(TSDataType::Vector, 0, 0);
    assemble(time_codec(opts), ChunkKind::Time, pages, empty)
}

/// The encoded pages of one aligned value column for the row ranges `pages` (those of the
/// time column); a page whose rows are all null is the empty page `00`.
pub(crate) fn value_pages(
    codec: ColumnCodec<'_>,
    values: &Values,
    validity: &[bool],
    times: &[i64],
    pages: &[Range<usize>],
    opts: &WriterOptions,
) -> WriteResult<Vec<EncodedPage>> {
    let mut vi = 0;
    let inputs: Vec<PageInput<'_>> = pages
        .iter()
        .map(|r| {
            let rows = &validity[r.clone()];
            let n = rows.iter().filter(|p| **p).count();
            let slice = values.slice(vi..vi + n);
            vi += n;
            PageInput {
                rows,
                values: slice,
                times: &times[r.clone()],
            }
        })
        .collect();
    let mut out = Vec::with_capacity(pages.len());
    ValuePager::new(codec, opts)?.encode(&inputs, &mut out)?;
    Ok(out)
}

/// One aligned value page to encode: the presence flag of each row, the present values and
/// the times of all the rows.
pub(crate) struct PageInput<'a> {
    pub(crate) rows: &'a [bool],
    pub(crate) values: PageSlice<'a>,
    pub(crate) times: &'a [i64],
}

/// Encodes the pages of one aligned value column, a few at a time, with one encoder.
pub(crate) struct ValuePager<'c> {
    codec: ColumnCodec<'c>,
    enc: ValueEncoder,
    /// The value width of the C++ single-value TS_2DIFF fix-up, when it applies.
    width: Option<usize>,
    stream: Vec<u8>,
}

impl<'c> ValuePager<'c> {
    pub(crate) fn new(codec: ColumnCodec<'c>, opts: &WriterOptions) -> WriteResult<Self> {
        Ok(Self {
            codec,
            enc: value_encoder(codec)?,
            width: ts2diff_width(codec.encoding, codec.data_type)
                .filter(|_| opts.flavor == Flavor::Cpp),
            stream: Vec::new(),
        })
    }

    /// Encodes `pages` in order and appends them to `out`.
    pub(crate) fn encode(
        &mut self,
        pages: &[PageInput<'_>],
        out: &mut Vec<EncodedPage>,
    ) -> WriteResult<()> {
        let codec = self.codec;
        // The present values of each page with the times of its first and last present
        // rows, which bound the page's statistics (None for a page without values).
        let parts: Vec<Option<(PageSlice<'_>, i64, i64)>> = pages
            .iter()
            .map(|p| {
                let first = p.rows.iter().position(|v| *v)?;
                let last = p.rows.iter().rposition(|v| *v).unwrap_or(first);
                Some((p.values, p.times[first], p.times[last]))
            })
            .collect();
        let present: Vec<(PageSlice<'_>, i64, i64)> = parts.iter().flatten().copied().collect();
        let mut statistics = stats::of_pages(&present, codec.data_type).into_iter();
        for (p, part) in pages.iter().zip(&parts) {
            // `statistics` has one entry per page with values, in order.
            let Some(((slice, _, _), statistics)) =
                part.and_then(|p| Some((p, statistics.next()?)))
            else {
                // The C++ writer leaves the time range of a count-0 block at zero.
                out.push(EncodedPage {
                    uncompressed: 0,
                    data: Vec::new(),
                    statistics: stats::empty(codec.data_type, 0, 0),
                });
                continue;
            };
            self.stream.clear();
            encode_page(codec, &mut self.enc, slice, &mut self.stream)?;
            if let Some(w) = self.width {
                cpp_single_value_blocks(&mut self.stream, w);
            }
            let mut payload = Vec::with_capacity(self.stream.len() + 4 + p.rows.len() / 8 + 1);
            page_payload::join_aligned_value(p.rows, &self.stream, &mut payload);
            out.push(seal(
                codec.compression,
                Page {
                    payload,
                    statistics,
                },
            )?);
        }
        Ok(())
    }
}

/// One aligned value chunk from its pages; a chunk without any value is a single empty page
/// (as the C++ writer does).
pub(crate) fn value_chunk(codec: ColumnCodec<'_>, mut pages: Vec<EncodedPage>) -> ChunkBytes {
    let empty = stats::empty(codec.data_type, 0, 0);
    if pages.iter().all(EncodedPage::is_empty) {
        pages = vec![EncodedPage {
            uncompressed: 0,
            data: Vec::new(),
            statistics: empty.clone(),
        }];
    }
    assemble(codec, ChunkKind::Value, pages, empty)
}

/// One non-aligned chunk (markers 0x01/0x05): each page holds the encoded times and values.
pub(crate) fn series_chunk(
    codec: ColumnCodec<'_>,
    values: &Values,
    times: &[i64],
    opts: &WriterOptions,
) -> WriteResult<ChunkBytes> {
    let pages = series_pages(values, opts);
    let mut enc = value_encoder(codec)?;
    let width =
        ts2diff_width(codec.encoding, codec.data_type).filter(|_| opts.flavor == Flavor::Cpp);
    let mut out = Vec::with_capacity(pages.len());
    for r in pages {
        let t = &times[r.clone()];
        let slice = values.slice(r);
        let time_part = time_stream(t, opts.time_encoding, opts.flavor)?;
        let mut stream = Vec::new();
        encode_page(codec, &mut enc, slice, &mut stream)?;
        if let Some(w) = width {
            cpp_single_value_blocks(&mut stream, w);
        }
        let mut payload = Vec::with_capacity(time_part.len() + stream.len() + 5);
        page_payload::join_non_aligned(&time_part, &stream, &mut payload);
        let page = Page {
            payload,
            statistics: stats::of_page(
                slice,
                t.first().copied().unwrap_or(0),
                t.last().copied().unwrap_or(0),
                codec.data_type,
            ),
        };
        out.push(seal(codec.compression, page)?);
    }
    let empty = stats::empty(codec.data_type, 0, 0);
    Ok(assemble(codec, ChunkKind::Plain, out, empty))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_value_block_min_delta_is_zeroed_only_there() {
        let mut s = page_payload::encode_times(TSEncoding::Ts2Diff, &[5]).unwrap();
        cpp_single_value_blocks(&mut s, 8);
        assert_eq!(&s[8..16], &[0; 8]);
        let mut two = page_payload::encode_times(TSEncoding::Ts2Diff, &[5, 7]).unwrap();
        let before = two.clone();
        cpp_single_value_blocks(&mut two, 8);
        assert_eq!(two, before);
    }

    #[test]
    fn aligned_pages_cut_by_points_and_bytes() {
        let v = Values::Int32((0..10).collect());
        let valid = vec![true; 10];
        let opts = WriterOptions {
            max_points_per_page: 4,
            ..WriterOptions::default()
        };
        let p = aligned_pages(10, &[(&v, &valid)], &opts);
        assert_eq!(p, vec![0..4, 4..8, 8..10]);
        let opts = WriterOptions {
            max_page_bytes: 12,
            ..WriterOptions::default()
        };
        let p = aligned_pages(10, &[(&v, &valid)], &opts);
        assert_eq!(p, vec![0..2, 2..4, 4..6, 6..8, 8..10]);
    }
}
