//! The delimited-text locator: `.csv` (comma), `.tsv` (tab), `.psv` (pipe) and `.txt`
//! (delimiter sniffed from the header), with a byte checkpoint every `stride` records.
//!
//! Indexing is one pass over the memory-mapped file: each record's fields are split with
//! memchr and classified for the whole-file type inference (and bounded for statistics when
//! asked). Reading seeks to the checkpoint byte, skips records with the quote-aware scanner of
//! [`crate::text::scan`] and hands only the wanted records to arrow-csv with the stored schema.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use memchr::{memchr, memchr2};

use crate::error::{Error, Result};
use crate::locator::{
    BatchIter, Block, FileIndex, IndexOptions, Locator, ReadRequest, RowsRequest, StatsColumns,
};
use crate::simd::csv_class::{DELIM, HIGH, NEWLINE, NON_DIGIT, QUOTE};
use crate::simd::{CSV, Kernel, MaskCache, Window};
use crate::text::blocks::{BlockBounds, attach_stats, map_fine, regroup};
use crate::text::infer::{ColumnInfer, Columns};
use crate::text::rowread::{check_stride, finish_blocks, projection_indices};
use crate::text::scan::{
    FileBytes, ScanError, bom_len, check_utf8_at, from_bit, quoted_end, skip_empty_lines,
    unescape_into, zero_bytes,
};
use crate::text::skip::skip_records;

/// A file's bytes as the delimited scanners see them: the memory map itself, or, for a file
/// whose records end with lone carriage returns (old Mac line ends, see [`cr_line_ends`]), a
/// copy in which those carriage returns outside quotes are line feeds. The copy has the same
/// length, so byte checkpoints hold for both.
enum Text {
    Mapped(FileBytes),
    Owned(Vec<u8>),
}

impl Text {
    fn new(bytes: FileBytes) -> Self {
        if cr_line_ends(&bytes) {
            Text::Owned(cr_to_lf(&bytes))
        } else {
            Text::Mapped(bytes)
        }
    }
}

impl std::ops::Deref for Text {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Text::Mapped(m) => m,
            Text::Owned(v) => v,
        }
    }
}

/// An error at a byte offset without a row (invalid UTF-8) with the row of that byte added:
/// the records before it are counted from the header's end (the error path only).
fn with_row(path: &Path, data: &[u8], e: Error) -> Error {
    let Error::Malformed {
        offset: Some(at),
        row: None,
        ..
    } = &e
    else {
        return e;
    };
    let at = *at as usize;
    let Ok(h) = header(path, data) else {
        return e;
    };
    if at < h.body {
        return e;
    }
    let (mut pos, mut row) = (h.body, 0u64);
    while let Ok((end, 1)) = skip_records(data, pos, 1, h.delim) {
        if end > at {
            return e.at_row(row);
        }
        pos = end;
        row += 1;
    }
    e
}

/// True when the first record ends with a carriage return that no line feed follows: the
/// records end with lone carriage returns, which Python's csv module and DuckDB read as
/// record ends (a whole file seen as one header line would silently hold 0 rows).
fn cr_line_ends(data: &[u8]) -> bool {
    let mut in_quotes = false;
    for (i, &b) in data.iter().enumerate() {
        match b {
            b'"' => in_quotes = !in_quotes,
            b'\n' if !in_quotes => return false,
            b'\r' if !in_quotes => return i + 1 < data.len() && data[i + 1] != b'\n',
            _ => {}
        }
    }
    false
}

/// `data` with every carriage return outside quotes that no line feed follows turned into a
/// line feed (a carriage return before a line feed, or inside quotes, stays).
fn cr_to_lf(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut in_quotes = false;
    for i in 0..out.len() {
        match out[i] {
            b'"' => in_quotes = !in_quotes,
            b'\r' if !in_quotes && out.get(i + 1) != Some(&b'\n') => out[i] = b'\n',
            _ => {}
        }
    }
    out
}

/// The locator of the delimited formats.
#[derive(Debug, Clone, Copy, Default)]
pub struct DelimitedLocator;

const EXTENSIONS: &[&str] = &["csv", "tsv", "psv", "txt"];

/// The delimiter used for a `.txt` file whose header holds none of the candidates: a byte
/// that text files do not contain, so the whole record is one column.
const NO_DELIMITER: u8 = 0;

/// Format name and delimiter of a file, from its extension (and, for `.txt`, its header).
fn dialect(path: &Path, data: &[u8]) -> (&'static str, u8) {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "tsv" => ("tsv", b'\t'),
        "psv" => ("psv", b'|'),
        "txt" => ("txt", sniff_delimiter(data)),
        _ => ("csv", b','),
    }
}

/// The most frequent of tab, comma, pipe and semicolon outside quotes in the header record
/// (ties go to that order); [`NO_DELIMITER`] when none occurs.
pub(crate) fn sniff_delimiter(data: &[u8]) -> u8 {
    let start = skip_empty_lines(data, bom_len(data));
    let mut counts = [0usize; 4];
    const CANDIDATES: [u8; 4] = [b'\t', b',', b'|', b';'];
    let mut in_quotes = false;
    for &b in &data[start..] {
        match b {
            b'"' => in_quotes = !in_quotes,
            b'\n' if !in_quotes => break,
            _ if !in_quotes => {
                if let Some(i) = CANDIDATES.iter().position(|&c| c == b) {
                    counts[i] += 1;
                }
            }
            _ => {}
        }
    }
    let mut best = NO_DELIMITER;
    let mut best_count = 0;
    for (i, &c) in counts.iter().enumerate() {
        if c > best_count {
            best = CANDIDATES[i];
            best_count = c;
        }
    }
    best
}

/// A field-level problem found while splitting a record.
enum FieldError {
    Scan(ScanError),
}

impl From<ScanError> for FieldError {
    fn from(e: ScanError) -> Self {
        FieldError::Scan(e)
    }
}

/// Splits the record starting at `start` into fields, calling `f(column, text, escaped)` for
/// each (`text` without its quotes; `escaped` when it still holds doubled quotes). Returns the
/// end of the record (past its line break) and its field count.
#[inline(always)]
fn split_record<F: FnMut(usize, &[u8], bool)>(
    data: &[u8],
    start: usize,
    delim: u8,
    mut f: F,
) -> Result<(usize, usize), FieldError> {
    let mut pos = start;
    let mut col = 0;
    loop {
        if data.get(pos) == Some(&b'"') {
            let end = quoted_end(data, pos)?;
            let inner = &data[pos + 1..end - 1];
            // The record goes on after the field at `next`, or ends just before `next`.
            let (next, goes_on) = match data.get(end) {
                None => (end, false),
                Some(&b) if b == delim => (end + 1, true),
                Some(b'\n') => (end + 1, false),
                Some(b'\r') if data.get(end + 1) == Some(&b'\n') => (end + 2, false),
                Some(b'\r') if end + 1 == data.len() => (end + 1, false),
                Some(_) => {
                    // Bytes after the closing quote join the field up to the next delimiter
                    // or line break, quotes there being plain bytes, as Python's csv module
                    // and csv-core (which decodes the reads) take them: `"ab"c` is `abc`.
                    let stop = memchr2(delim, b'\n', &data[end..]).map_or(data.len(), |i| end + i);
                    let mut tail = stop;
                    if data.get(stop) != Some(&delim) && tail > end && data[tail - 1] == b'\r' {
                        tail -= 1;
                    }
                    let mut joined = Vec::new();
                    unescape_into(inner, &mut joined);
                    joined.extend_from_slice(&data[end..tail]);
                    f(col, &joined, false);
                    col += 1;
                    match data.get(stop) {
                        None => return Ok((data.len(), col)),
                        Some(&b) if b == delim => {
                            pos = stop + 1;
                            continue;
                        }
                        Some(_) => return Ok((stop + 1, col)),
                    }
                }
            };
            f(col, inner, memchr(b'"', inner).is_some());
            col += 1;
            if !goes_on {
                return Ok((next, col));
            }
            pos = next;
        } else {
            match memchr2(delim, b'\n', &data[pos..]) {
                Some(i) => {
                    let p = pos + i;
                    if data[p] == delim {
                        f(col, &data[pos..p], false);
                        col += 1;
                        pos = p + 1;
                    } else {
                        let e = if p > pos && data[p - 1] == b'\r' {
                            p - 1
                        } else {
                            p
                        };
                        f(col, &data[pos..e], false);
                        return Ok((p + 1, col + 1));
                    }
                }
                None => {
                    let mut e = data.len();
                    if e > pos && data[e - 1] == b'\r' {
                        e -= 1;
                    }
                    f(col, &data[pos..e], false);
                    return Ok((data.len(), col + 1));
                }
            }
        }
    }
}

/// Delimiter positions [`scan_plain_record`] buffers; wider records take the general path.
const MAX_CUTS: usize = 64;

/// The high bit of every byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// One word-at-a-time pass over the record starting at `start` that finds its line end and
/// its delimiters, for records without any quote: `Some((line_end, delimiter_count,
/// maybe_non_ascii))` with the delimiter positions in `cuts` (`line_end` is the `\n` or the end of the data). `None`
/// when a quote comes before the line end or the record has more than [`MAX_CUTS`]
/// delimiters: the caller then splits it with the quote-aware [`split_record`].
#[inline(always)]
fn scan_plain_record(
    data: &[u8],
    start: usize,
    delim: u8,
    cuts: &mut [usize; MAX_CUTS],
) -> Option<(usize, usize, bool)> {
    let pd = u64::from_ne_bytes([delim; 8]);
    let pn = u64::from_ne_bytes([b'\n'; 8]);
    let pq = u64::from_ne_bytes([b'"'; 8]);
    let mut n = 0;
    let mut i = start;
    let mut word = [0u8; 8];
    // The OR of every word read: a set high bit means a non-ASCII byte may be in the record.
    let mut high = 0u64;
    while i + 8 <= data.len() {
        word.copy_from_slice(&data[i..i + 8]);
        let w = u64::from_le_bytes(word);
        high |= w;
        let mut d = zero_bytes(w ^ pd);
        let newline = zero_bytes(w ^ pn);
        let quote = zero_bytes(w ^ pq);
        let stop = newline | quote;
        if stop != 0 {
            let first = stop.trailing_zeros();
            if quote & (1u64 << first) != 0 {
                return None;
            }
            // Only the delimiters before the line end belong to this record.
            d &= (1u64 << first) - 1;
            while d != 0 {
                *cuts.get_mut(n)? = i + (d.trailing_zeros() / 8) as usize;
                n += 1;
                d &= d - 1;
            }
            return Some((i + (first / 8) as usize, n, high & HIGH_BITS != 0));
        }
        while d != 0 {
            *cuts.get_mut(n)? = i + (d.trailing_zeros() / 8) as usize;
            n += 1;
            d &= d - 1;
        }
        i += 8;
    }
    for (k, &b) in data.iter().enumerate().skip(i) {
        high |= u64::from(b);
        if b == b'\n' {
            return Some((k, n, high & HIGH_BITS != 0));
        }
        if b == b'"' {
            return None;
        }
        if b == delim {
            *cuts.get_mut(n)? = k;
            n += 1;
        }
    }
    Some((data.len(), n, high & HIGH_BITS != 0))
}

/// The parsed header of a delimited file.
struct Header {
    format: &'static str,
    delim: u8,
    names: Vec<String>,
    /// First byte after the header record.
    body: usize,
}

fn field_error(path: &Path, format: &'static str, e: FieldError, row: Option<u64>) -> Error {
    let err = match e {
        FieldError::Scan(ScanError::UnterminatedQuote(at)) => {
            Error::malformed(path, format, "quoted field never closes").at_byte(at as u64)
        }
    };
    match row {
        Some(r) => err.at_row(r),
        None => err,
    }
}

fn header(path: &Path, data: &[u8]) -> Result<Header> {
    let (format, delim) = dialect(path, data);
    let start = skip_empty_lines(data, bom_len(data));
    if start >= data.len() {
        return Ok(Header {
            format,
            delim,
            names: Vec::new(),
            body: data.len(),
        });
    }
    let mut names = Vec::new();
    let mut scratch = Vec::new();
    let (end, _) = split_record(data, start, delim, |_, text, escaped| {
        let text = if escaped {
            unescape_into(text, &mut scratch);
            &scratch[..]
        } else {
            text
        };
        names.push(String::from_utf8_lossy(text).into_owned());
    })
    .map_err(|e| field_error(path, format, e, None))?;
    Ok(Header {
        format,
        delim,
        names,
        body: end,
    })
}

/// The name of column `i` (0-based) of a record with more fields than the header:
/// `column{i}`, as DuckDB names it (`null_padding`), with `_1`, `_2`... appended while a
/// header field has that name. It depends on the header and `i` alone, so that ranges of a
/// split file name the columns they add alike.
fn extra_name(header: &[String], i: usize) -> String {
    let base = format!("column{i}");
    let mut name = base.clone();
    let mut k = 0;
    while header.contains(&name) {
        k += 1;
        name = format!("{base}_{k}");
    }
    name
}

/// Adds the columns of a record of `n` fields that the header and earlier records lack,
/// named by [`extra_name`]; their values are typed by the same inference, and the records
/// before hold nulls in them.
fn widen(cols: &mut Columns, header: &[String], n: usize, wanted: &StatsColumns) {
    for i in cols.cols.len()..n {
        cols.index_of(extra_name(header, i).as_bytes(), i, wanted);
    }
}

/// The one indexing pass: checkpoints, row count, inferred columns and statistics.
fn index_bytes(path: &Path, data: &[u8], options: &IndexOptions) -> Result<(Header, FileIndex)> {
    crate::simd::dispatch(Indexer {
        path,
        data,
        options,
    })
}

/// The arguments of one indexing pass, run by [`crate::simd::dispatch`] over the window masks
/// of this CPU.
#[derive(Clone, Copy)]
struct Indexer<'a> {
    path: &'a Path,
    data: &'a [u8],
    options: &'a IndexOptions,
}

impl Kernel<CSV> for Indexer<'_> {
    type Output = Result<(Header, FileIndex)>;

    #[inline(always)]
    fn run<W: Window<CSV>>(self) -> Self::Output {
        index_with::<W>(self.path, self.data, self.options)
    }
}

/// The record starting at `pos` read from the masks of the 64 bytes there: `Some((end,
/// fields))` when the record ends inside the window, holds no quote and has one field per
/// column, after every field was observed. `None`, with nothing observed, sends the record
/// to the general path (which also reads records of fewer or more fields).
#[inline(always)]
fn record_in_window(
    path: &Path,
    format: &'static str,
    data: &[u8],
    pos: usize,
    m: &[u64; CSV],
    cols: &mut [ColumnInfer],
) -> Result<Option<(usize, usize)>> {
    if m[NEWLINE] == 0 {
        return Ok(None);
    }
    let e = m[NEWLINE].trailing_zeros();
    let before = (1u64 << e) - 1;
    if m[QUOTE] & before != 0 {
        return Ok(None);
    }
    if m[HIGH] & before != 0 {
        check_utf8_at(path, format, data, pos, pos + e as usize)?;
    }
    let end = pos + e as usize + 1;
    let mut cuts = m[DELIM] & before;
    let n = cuts.count_ones() as usize + 1;
    if n != cols.len() {
        return Ok(None);
    }
    let last = if e > 0 && data[pos + e as usize - 1] == b'\r' {
        e - 1
    } else {
        e
    };
    let mut s = 0;
    for c in cols.iter_mut() {
        let t = if cuts == 0 {
            last
        } else {
            cuts.trailing_zeros()
        };
        cuts &= cuts.wrapping_sub(1);
        c.observe_masked(data, pos, s, t, m[NON_DIGIT]);
        s = t + 1;
    }
    Ok(Some((end, n)))
}

/// A record starting at `pos` that does not end inside its first window, read from window
/// masks field by field: a field that runs past its window is read again from a window
/// starting at it. `Some(end)` (past the line
/// break) when the record holds no quote and exactly one field per column, after every field
/// was observed. `None` sends the record to the general path, which observes it again
/// (harmless: types and bounds only grow) and reports any error in it.
#[inline(always)]
fn long_record<W: Window<CSV>>(
    path: &Path,
    format: &'static str,
    data: &[u8],
    pos: usize,
    delim: u8,
    cache: &mut MaskCache<CSV>,
    cols: &mut [ColumnInfer],
) -> Result<Option<usize>> {
    let ncols = cols.len();
    if ncols == 0 {
        return Ok(None);
    }
    let Some(mut m) = cache.window::<W>(data, pos, delim) else {
        return Ok(None);
    };
    let mut base = pos;
    // The field being read starts at window offset `s`.
    let mut s = 0;
    let mut high = false;
    let mut c = 0;
    while c < ncols {
        let t = ((m[DELIM] | m[NEWLINE]) & from_bit(s)).trailing_zeros() as usize;
        if t >= 64 {
            if s == 0 {
                return Ok(None);
            }
            base += s;
            s = 0;
            match cache.window::<W>(data, base, delim) {
                Some(next) => m = next,
                None => return Ok(None),
            }
            continue;
        }
        let field = from_bit(s) & !from_bit(t);
        let line_end = m[NEWLINE] & (1 << t) != 0;
        // A quote, or a line ending before the last column or going on after it.
        if m[QUOTE] & field != 0 || line_end != (c + 1 == ncols) {
            return Ok(None);
        }
        high |= m[HIGH] & field != 0;
        let mut end = t;
        if line_end && t > s && data[base + t - 1] == b'\r' {
            end = t - 1;
        }
        cols[c].observe_masked(data, base, s as u32, end as u32, m[NON_DIGIT]);
        c += 1;
        s = t + 1;
    }
    // `s` is just past the line break.
    let end = base + s;
    if high {
        check_utf8_at(path, format, data, pos, end - 1)?;
    }
    Ok(Some(end))
}

/// The indexing loop, generic over how window masks are computed.
#[inline(always)]
fn index_with<W: Window<CSV>>(
    path: &Path,
    data: &[u8],
    options: &IndexOptions,
) -> Result<(Header, FileIndex)> {
    check_stride(path, options)?;
    let (h, mut cols, blocks, rows) = scan_records::<W>(path, data, &scan_options(options), true)?;
    // A column that turned Utf8 after numbers left out their text bounds: the records
    // before its turn are read again for them (rare: most columns keep one type).
    if let Some(cut) = cols.pending_end(data.len()) {
        let (_, rescan, _, _) = scan_records::<W>(path, &data[..cut], options, false)?;
        cols.join_pending(&rescan);
    }
    Ok(finish(h, cols, blocks, rows, data.len(), options))
}

/// The options of a whole-file scan for `options`: with fine checkpoints in the map, the
/// scan checkpoints every fine stride and [`finish`] groups the blocks from those.
fn scan_options(options: &IndexOptions) -> IndexOptions {
    IndexOptions {
        stride: map_fine(options.stride).unwrap_or(options.stride),
        stats: options.stats.clone(),
    }
}

/// The index by the portable path, every text bound taken as it comes: the reference of the
/// differential tests and of the fuzz check.
fn portable_index(path: &Path, data: &[u8], options: &IndexOptions) -> Result<(Header, FileIndex)> {
    scan_records::<crate::simd::NoWindow>(path, data, &scan_options(options), false)
        .map(|(h, cols, blocks, rows)| finish(h, cols, blocks, rows, data.len(), options))
}

/// The index of a whole-file scan made with [`scan_options`].
fn finish(
    h: Header,
    mut cols: Columns,
    blocks: Vec<Block>,
    rows: u64,
    len: usize,
    options: &IndexOptions,
) -> (Header, FileIndex) {
    let bounds = std::mem::take(&mut cols.block_bounds);
    let (blocks, bounds) = regroup(blocks, bounds, options.stride, map_fine(options.stride));
    assemble(h, &cols, blocks, bounds, rows, len, options)
}

/// The index of a scanned file.
fn assemble(
    h: Header,
    cols: &Columns,
    mut blocks: Vec<Block>,
    bounds: Vec<BlockBounds>,
    rows: u64,
    len: usize,
    options: &IndexOptions,
) -> (Header, FileIndex) {
    finish_blocks(&mut blocks, rows, len as u64);
    attach_stats(&mut blocks, &cols.cols, &bounds);
    let stats = (!options.stats.is_none()).then(|| cols.stats());
    let index = FileIndex {
        format: h.format.to_string(),
        row_count: rows,
        blocks,
        schema: cols.schema(),
        stats,
    };
    (h, index)
}

/// The records of `data`: header, inferred columns, checkpoint blocks (sizes not filled
/// in) and row count. With `lazy`, numbers of numeric columns leave their text bounds out
/// (see [`Columns::lazy_text_bounds`]).
#[inline(always)]
fn scan_records<W: Window<CSV>>(
    path: &Path,
    data: &[u8],
    options: &IndexOptions,
    lazy: bool,
) -> Result<(Header, Columns, Vec<Block>, u64)> {
    let h = header(path, data)?;
    // UTF-8 is checked record by record as the scan goes (only records that may hold
    // non-ASCII bytes), so the file is streamed once.
    check_utf8_at(path, h.format, data, 0, h.body)?;
    let body = scan_body::<W>(path, data, &h, h.body, options, lazy, 0)?;
    Ok((h, body.cols, body.blocks, body.rows))
}

/// A delimited file opened for reading: its bytes, header, schema (the stored one, or
/// inferred by an index of the file when none is given, with that index's blocks) and the
/// column indices of the projection.
struct Opened {
    data: Text,
    h: Header,
    schema: SchemaRef,
    own_blocks: Option<Vec<Block>>,
    projection: Option<Vec<usize>>,
    encoding: TextEncoding,
}

/// Opens the delimited file at `path` for [`Locator::read`] and [`Locator::read_rows`].
fn open_for_read(
    path: &Path,
    schema: Option<&SchemaRef>,
    projection: Option<&[String]>,
    encoding: TextEncoding,
) -> Result<Opened> {
    open_mapped(path, FileBytes::open(path)?, schema, projection, encoding)
}

/// [`open_for_read`] of the file mapped as `bytes`.
fn open_mapped(
    path: &Path,
    bytes: FileBytes,
    schema: Option<&SchemaRef>,
    projection: Option<&[String]>,
    encoding: TextEncoding,
) -> Result<Opened> {
    let data = Text::new(bytes);
    let (h, schema, own_blocks) = match schema {
        Some(schema) => (header(path, &data)?, schema.clone(), None),
        None => {
            let options = IndexOptions {
                stats: StatsColumns::None,
                ..IndexOptions::default()
            };
            let (h, index) = encoding::index_text(path, &data, &options, encoding)?;
            (h, index.schema, Some(index.blocks))
        }
    };
    // Records with more fields than the header add columns after the header's.
    if schema.fields().len() < h.names.len() {
        return Err(Error::StaleIndex {
            path: path.to_path_buf(),
            message: format!(
                "the stored schema has {} columns, the header {}",
                schema.fields().len(),
                h.names.len()
            ),
        });
    }
    let projection = projection_indices(path, &schema, projection)?;
    Ok(Opened {
        data,
        h,
        schema,
        own_blocks,
        projection,
        encoding,
    })
}

impl Locator for DelimitedLocator {
    fn name(&self) -> &str {
        "csv"
    }

    fn infers_schema(&self) -> bool {
        true
    }

    fn with_text_encoding(&self, encoding: TextEncoding) -> Option<std::sync::Arc<dyn Locator>> {
        Some(std::sync::Arc::new(DelimitedTextLocator::new(encoding)))
    }

    fn extensions(&self) -> &[&str] {
        EXTENSIONS
    }

    fn reads_whole_file(&self) -> bool {
        true
    }

    fn byte_layout(&self) -> Option<crate::ByteLayout> {
        Some(crate::ByteLayout::HEAD_AND_BLOCKS)
    }

    fn formats(&self) -> &[&str] {
        EXTENSIONS
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        // A large file is read in ranges on every thread of the caller's pool.
        if let Some(index) = split::index_split(path, options)? {
            return Ok(index);
        }
        let data = Text::new(FileBytes::open_whole(path)?);
        index_bytes(path, &data, options)
            .map(|(_, index)| index)
            .map_err(|e| with_row(path, &data, e))
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        read_file(path, request, TextEncoding::Utf8)
    }

    fn read_rows(&self, path: &Path, request: &RowsRequest<'_>) -> Result<Vec<RecordBatch>> {
        take::read_rows(path, request, TextEncoding::Utf8)
    }
}

mod body;
use body::scan_body;

mod read;
use read::read_file;

mod take;

mod encoding;
pub use crate::text::encoding::{TextEncoding, UnknownEncoding, latin1_to_utf8};
pub use encoding::DelimitedTextLocator;

mod split;
pub(crate) use split::fuzz_check;

#[cfg(test)]
mod tests;
