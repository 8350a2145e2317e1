//! Reading chunks and pages (reference §5, §12 steps 4–6): chunk headers at the offsets of
//! ChunkMetadata, pages until `data_size` bytes are consumed, decompression, the split of
//! page payloads, and value decoding — aligned devices page by page in lockstep with their
//! time column, non-aligned series page by page with their own timestamps.
//!
//! A time filter skips whole chunks by their ChunkMetadata statistics and whole pages by
//! their page statistics, without reading (chunks) or decompressing (pages) them; a page cut
//! by the filter skips the values before the window with the decoder's `skip(n)`.

use std::borrow::Cow;

use bytes::Bytes;
use tsfile_format::chunk::{ChunkHeader, DataRecord};
use tsfile_format::cursor::Cursor;
use tsfile_format::encoding::{ValueDecoder, decoder};
use tsfile_format::page::PageHeader;
use tsfile_format::page_payload::{detect_time_encoding, split_aligned_value, split_non_aligned};
use tsfile_format::statistics::Statistics;
use tsfile_format::types::{CompressionType, TSDataType};

use crate::column::{ColumnBuilder, decode_values, present_before, skip_values};
use crate::error::{Error, Result};
use crate::reader::TsFileReader;
use crate::series_index::SeriesEntry;

/// An inclusive time range `[start, end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    /// Smallest time kept.
    pub start: i64,
    /// Largest time kept.
    pub end: i64,
}

impl Default for TimeRange {
    fn default() -> Self {
        TimeRange {
            start: i64::MIN,
            end: i64::MAX,
        }
    }
}

impl TimeRange {
    /// A range from optional bounds (absent = unbounded).
    pub fn new(start: Option<i64>, end: Option<i64>) -> Self {
        TimeRange {
            start: start.unwrap_or(i64::MIN),
            end: end.unwrap_or(i64::MAX),
        }
    }

    /// True when the range keeps every time.
    pub fn is_all(&self) -> bool {
        self.start == i64::MIN && self.end == i64::MAX
    }

    /// True when statistics prove that no counted value lies in the range.
    pub fn excludes(&self, stats: &Statistics) -> bool {
        stats.count > 0 && (stats.end_time < self.start || stats.start_time > self.end)
    }

    /// The window `[a, b)` of ascending `times` inside the range.
    pub fn window(&self, times: &[i64]) -> (usize, usize) {
        if self.is_all() {
            return (0, times.len());
        }
        let a = times.partition_point(|&t| t < self.start);
        let b = times.partition_point(|&t| t <= self.end);
        (a, b.max(a))
    }
}

/// What a sequential scan of the data section found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataSection {
    /// Chunk group headers.
    pub chunk_groups: usize,
    /// Chunk headers.
    pub chunks: usize,
    /// Offsets of the chunk headers, in file order.
    pub chunk_offsets: Vec<u64>,
    /// `0x04` operation index records.
    pub operation_index_records: usize,
}

/// One chunk read from the file: its header and the bytes of its pages.
#[derive(Debug, Clone)]
pub(crate) struct Chunk {
    pub header: ChunkHeader,
    /// Offset of the chunk's marker byte.
    pub offset: u64,
    /// The `data_size` bytes of pages.
    pub data: Bytes,
    /// Absolute offset of `data[0]`.
    pub data_offset: u64,
}

/// One page of a chunk, header decoded, payload not yet decompressed.
#[derive(Debug, Clone)]
pub(crate) struct RawPage<'a> {
    pub header: PageHeader,
    pub payload: &'a [u8],
    pub payload_offset: u64,
    /// Offset of the page header.
    pub offset: u64,
}

/// Iterates the pages of a chunk.
pub(crate) struct Pages<'a> {
    chunk: &'a Chunk,
    cursor: Cursor<'a>,
}

impl<'a> Pages<'a> {
    pub(crate) fn new(chunk: &'a Chunk) -> Self {
        Self {
            chunk,
            cursor: Cursor::new(&chunk.data, chunk.data_offset),
        }
    }

    pub(crate) fn next_page(&mut self) -> Result<Option<RawPage<'a>>> {
        if self.cursor.is_empty() {
            return Ok(None);
        }
        let offset = self.cursor.offset();
        let header = PageHeader::decode_for_chunk(&mut self.cursor, &self.chunk.header)?;
        let payload_offset = self.cursor.offset();
        let payload = header.take_payload(&mut self.cursor)?;
        Ok(Some(RawPage {
            header,
            payload,
            payload_offset,
            offset,
        }))
    }
}

impl RawPage<'_> {
    /// The decompressed payload.
    pub(crate) fn decompress(&self, chunk: &ChunkHeader) -> Result<Cow<'_, [u8]>> {
        let size = self.header.uncompressed_size as usize;
        if chunk.compression == CompressionType::Uncompressed && self.payload.len() == size {
            // No copy for uncompressed pages; a size mismatch goes through the codec layer,
            // which reports it.
            return Ok(Cow::Borrowed(self.payload));
        }
        let out = tsfile_format::compression::decompress(
            chunk.compression,
            self.payload,
            size,
            self.payload_offset,
        )?;
        Ok(Cow::Owned(out))
    }
}

/// Bytes read for a chunk header before knowing its length: enough for names of up to
/// ~240 bytes; longer headers are read again whole.
const HEADER_PROBE: u64 = 256;

/// Largest chunk header read on the second try.
const HEADER_MAX: u64 = 1 << 20;

impl TsFileReader {
    /// Reads the header of the chunk at `offset` (from a ChunkMetadata) and its length.
    pub(crate) fn read_chunk_header_at(&self, offset: i64) -> Result<(ChunkHeader, u64)> {
        let data_end = self.meta_offset();
        if offset < 7 || offset as u64 >= data_end {
            return Err(Error::corrupt(
                "chunk metadata",
                offset.max(0) as u64,
                format!("chunk offset {offset} lies outside the data section [7, {data_end})"),
            ));
        }
        let offset = offset as u64;
        let avail = data_end - offset;
        let probe = self
            .source()
            .get_bytes(offset, avail.min(HEADER_PROBE) as usize)?;
        match parse_header(&probe, offset) {
            Ok(h) => Ok(h),
            Err(_) if avail > HEADER_PROBE => {
                // A longer measurement name: read again with room for names up to 1 MiB
                // (never the whole data section, which a lying header could make us copy).
                let all = self
                    .source()
                    .get_bytes(offset, avail.min(HEADER_MAX) as usize)?;
                parse_header(&all, offset)
            }
            Err(e) => Err(e),
        }
    }

    /// The header of the chunk at `offset`.
    pub fn read_chunk_header(&self, offset: i64) -> Result<ChunkHeader> {
        Ok(self.read_chunk_header_at(offset)?.0)
    }

    /// Reads the chunk whose header starts at `offset` (from a ChunkMetadata).
    pub(crate) fn read_chunk(&self, offset: i64) -> Result<Chunk> {
        let (header, header_len) = self.read_chunk_header_at(offset)?;
        let offset = offset as u64;
        let data_end = self.meta_offset();
        let data_offset = offset + header_len;
        let size = u64::from(header.data_size);
        if data_offset + size > data_end {
            return Err(Error::corrupt(
                "chunk header",
                offset,
                format!("data size {size} runs past the end of the data section at {data_end}"),
            ));
        }
        let data = self.source().get_bytes(data_offset, size as usize)?;
        Ok(Chunk {
            header,
            offset,
            data,
            data_offset,
        })
    }

    /// Scans the data section from byte 7 to the separator by its markers (§12, the
    /// sequential alternative to the index), skipping the pages of every chunk.
    pub fn scan_data_section(&self) -> Result<DataSection> {
        let end = self.meta_offset();
        let bytes = self.source().get_bytes(7, (end + 1 - 7) as usize)?;
        let mut c = Cursor::new(&bytes, 7);
        let mut out = DataSection::default();
        loop {
            let at = c.offset();
            match DataRecord::decode(&mut c, self.format_version())? {
                DataRecord::ChunkGroup(_) => out.chunk_groups += 1,
                DataRecord::Chunk(h) => {
                    if out.chunk_groups == 0 {
                        return Err(Error::corrupt(
                            "chunk header",
                            at,
                            "a chunk before any chunk group header",
                        ));
                    }
                    out.chunks += 1;
                    out.chunk_offsets.push(at);
                    let size_at = c.offset();
                    let n = c.check_len(i64::from(h.data_size), 1, "chunk data", size_at)?;
                    c.skip(n, "chunk data")?;
                }
                DataRecord::OperationIndex(_) => out.operation_index_records += 1,
                DataRecord::Separator => {
                    if at != end {
                        return Err(Error::corrupt(
                            "separator",
                            at,
                            format!("separator found before meta_offset {end}"),
                        ));
                    }
                    return Ok(out);
                }
            }
        }
    }

    /// Number of chunk groups in the data section (by a sequential scan).
    pub fn chunk_group_count(&self) -> Result<usize> {
        Ok(self.scan_data_section()?.chunk_groups)
    }

    /// Reads the rows of an aligned device: its time series and value series (`None` = a
    /// column the device does not have, all null), appending the kept times to `times` and
    /// one value per kept row to each builder.
    pub(crate) fn read_aligned(
        &self,
        time: &SeriesEntry,
        values: &[Option<&SeriesEntry>],
        range: TimeRange,
        times: &mut Vec<i64>,
        builders: &mut [ColumnBuilder],
    ) -> Result<()> {
        for (i, cm) in time.meta.chunk_metadata.iter().enumerate() {
            if let Some(stats) = time.meta.chunk_statistics(i)
                && range.excludes(stats)
            {
                continue;
            }
            let time_chunk = self.read_chunk(cm.offset_of_chunk_header)?;
            if !time_chunk.header.is_time_chunk()
                && time_chunk.header.data_type != TSDataType::Vector
            {
                return Err(Error::corrupt(
                    "chunk header",
                    time_chunk.offset,
                    "the time column's chunk is not an aligned time chunk",
                ));
            }
            let mut value_chunks = Vec::with_capacity(values.len());
            for series in values {
                value_chunks.push(match series {
                    None => None,
                    Some(s) => {
                        let vcm = s.meta.chunk_metadata.get(i).ok_or_else(|| {
                            Error::corrupt(
                                "timeseries metadata",
                                s.offset,
                                format!(
                                    "value column {:?} has {} chunks, the time column {}",
                                    s.meta.measurement_id,
                                    s.meta.chunk_metadata.len(),
                                    time.meta.chunk_metadata.len()
                                ),
                            )
                        })?;
                        let chunk = self.read_chunk(vcm.offset_of_chunk_header)?;
                        if chunk.header.data_type != s.meta.data_type {
                            return Err(Error::corrupt(
                                "chunk header",
                                chunk.offset,
                                format!(
                                    "chunk type {} differs from the series type {}",
                                    chunk.header.data_type, s.meta.data_type
                                ),
                            ));
                        }
                        Some(chunk)
                    }
                });
            }
            let chunk_count = time.meta.chunk_statistics(i).map_or(0, |s| s.count);
            self.read_aligned_chunk(
                &time_chunk,
                chunk_count,
                &value_chunks,
                range,
                times,
                builders,
            )?;
        }
        Ok(())
    }

    fn read_aligned_chunk(
        &self,
        time_chunk: &Chunk,
        chunk_rows: u32,
        value_chunks: &[Option<Chunk>],
        range: TimeRange,
        times: &mut Vec<i64>,
        builders: &mut [ColumnBuilder],
    ) -> Result<()> {
        let mut time_pages = Pages::new(time_chunk);
        let mut value_pages: Vec<Option<Pages<'_>>> = value_chunks
            .iter()
            .map(|c| c.as_ref().map(Pages::new))
            .collect();
        let single = !time_chunk.header.pages_have_statistics();
        let mut page_times: Vec<i64> = Vec::new();
        while let Some(tp) = time_pages.next_page()? {
            let skip_page = tp
                .header
                .statistics
                .as_ref()
                .is_some_and(|s| range.excludes(s));
            // Value pages follow their time page one to one; advance them in every case.
            let mut vps = Vec::with_capacity(value_pages.len());
            for pages in value_pages.iter_mut() {
                vps.push(match pages {
                    Some(p) => p.next_page()?,
                    None => None,
                });
            }
            if skip_page {
                continue;
            }
            let rows = match (&tp.header.statistics, single) {
                (Some(s), _) => s.count as usize,
                (None, true) => chunk_rows as usize,
                (None, false) => {
                    return Err(Error::corrupt(
                        "page header",
                        tp.offset,
                        "page of a multi-page chunk without statistics",
                    ));
                }
            };
            let raw = tp.decompress(&time_chunk.header)?;
            check_rows(rows, raw.len(), tp.offset)?;
            let mut dec = decoder(
                time_chunk.header.encoding,
                TSDataType::Int64,
                &raw,
                tp.payload_offset,
            )?;
            // The page's times go straight into a buffer kept across pages.
            page_times.clear();
            let ValueDecoder::Int64(tdec) = &mut dec else {
                return Err(Error::corrupt(
                    "time page",
                    tp.offset,
                    "time values are not INT64",
                ));
            };
            let got = tdec.decode_all(&mut page_times, rows)?;
            if got < rows {
                return Err(Error::corrupt(
                    "page values",
                    tp.payload_offset,
                    format!("the value stream ends after {got} of {rows} values"),
                ));
            }
            let (a, b) = range.window(&page_times);
            if a == b {
                continue;
            }
            times.extend_from_slice(&page_times[a..b]);
            for ((builder, vp), chunk) in builders.iter_mut().zip(vps).zip(value_chunks) {
                let (Some(vp), Some(chunk)) = (vp, chunk) else {
                    builder.append_nulls(b - a);
                    continue;
                };
                if vp.header.is_empty() {
                    builder.append_nulls(b - a);
                    continue;
                }
                builder.at_page(vp.offset);
                let raw = vp.decompress(&chunk.header)?;
                let page = split_aligned_value(&raw, vp.payload_offset)?;
                if page.row_count != page_times.len() {
                    return Err(Error::corrupt(
                        "value page",
                        vp.offset,
                        format!(
                            "{} rows where the time page has {}",
                            page.row_count,
                            page_times.len()
                        ),
                    ));
                }
                let before = present_before(page.bitmap, a);
                let inside = present_before(page.bitmap, b) - before;
                let mut dec = decoder(
                    chunk.header.encoding,
                    chunk.header.data_type,
                    page.values,
                    page.values_offset,
                )?;
                skip_values(&mut dec, before, page.values_offset)?;
                builder.decode_masked(&mut dec, inside, page.bitmap, a..b, page.values_offset)?;
            }
        }
        Ok(())
    }

    /// Reads one non-aligned series: its kept times and values.
    pub(crate) fn read_plain_series(
        &self,
        series: &SeriesEntry,
        range: TimeRange,
        times: &mut Vec<i64>,
        builder: &mut ColumnBuilder,
    ) -> Result<()> {
        for (i, cm) in series.meta.chunk_metadata.iter().enumerate() {
            let stats = series.meta.chunk_statistics(i);
            if stats.is_some_and(|s| range.excludes(s)) {
                continue;
            }
            let chunk = self.read_chunk(cm.offset_of_chunk_header)?;
            if chunk.header.data_type != series.meta.data_type {
                return Err(Error::corrupt(
                    "chunk header",
                    chunk.offset,
                    format!(
                        "chunk type {} differs from the series type {}",
                        chunk.header.data_type, series.meta.data_type
                    ),
                ));
            }
            let single = !chunk.header.pages_have_statistics();
            let mut pages = Pages::new(&chunk);
            while let Some(p) = pages.next_page()? {
                if p.header.is_empty() {
                    continue;
                }
                if p.header
                    .statistics
                    .as_ref()
                    .is_some_and(|s| range.excludes(s))
                {
                    continue;
                }
                let rows = match (&p.header.statistics, single) {
                    (Some(s), _) => s.count as usize,
                    (None, true) => stats.map_or(0, |s| s.count as usize),
                    (None, false) => {
                        return Err(Error::corrupt(
                            "page header",
                            p.offset,
                            "page of a multi-page chunk without statistics",
                        ));
                    }
                };
                let raw = p.decompress(&chunk.header)?;
                let split = split_non_aligned(&raw, p.payload_offset)?;
                check_rows(rows, split.times.len(), p.offset)?;
                let time_encoding = detect_time_encoding(split.times);
                let mut tdec = decoder(
                    time_encoding,
                    TSDataType::Int64,
                    split.times,
                    split.times_offset,
                )?;
                let tv = decode_values(&mut tdec, rows, split.times_offset)?;
                let crate::column::PageValues::Int64(tv) = tv else {
                    return Err(Error::corrupt(
                        "page",
                        p.offset,
                        "time values are not INT64",
                    ));
                };
                let (a, b) = range.window(&tv);
                if a == b {
                    continue;
                }
                times.extend_from_slice(&tv[a..b]);
                builder.at_page(p.offset);
                let mut vdec = decoder(
                    chunk.header.encoding,
                    chunk.header.data_type,
                    split.values,
                    split.values_offset,
                )?;
                skip_values(&mut vdec, a, split.values_offset)?;
                let vals = decode_values(&mut vdec, b - a, split.values_offset)?;
                builder.append_values(&vals, 0..b - a)?;
            }
        }
        Ok(())
    }
}

fn parse_header(bytes: &[u8], offset: u64) -> Result<(ChunkHeader, u64)> {
    let mut c = Cursor::new(bytes, offset);
    let header = ChunkHeader::decode(&mut c)?;
    Ok((header, c.offset() - offset))
}

/// Refuses a row count (from statistics) that no time stream of `bytes` bytes can hold:
/// the densest time encoding, TS_2DIFF, packs at most 129 values into a 24-byte block.
/// This keeps a lying count from driving allocations.
fn check_rows(rows: usize, bytes: usize, at: u64) -> Result<()> {
    if rows > bytes.saturating_mul(6).saturating_add(1) {
        return Err(Error::corrupt(
            "page statistics",
            at,
            format!("count {rows} cannot fit in a time stream of {bytes} bytes"),
        ));
    }
    Ok(())
}
