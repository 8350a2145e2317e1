//! The Arrow IPC locators: the IPC *file* format (`.arrow`, `.ipc`, `.feather` = Feather v2),
//! whose blocks are the record batches listed in the file's footer, and the IPC *stream* format
//! (`.arrows`), which has no footer, so each block also stores the byte offset and length of
//! its batch message.
//!
//! Row counts come from the record-batch message headers (the footer does not hold them), so
//! indexing reads the footer and a few hundred bytes per batch, never a batch body.

use std::fs::File;
use std::io::{BufReader, Cursor};
use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_ipc::reader::{FileReader, StreamReader};
use arrow_schema::{DataType, Schema, SchemaRef};

use crate::columnar::{self, Projection, Trim};
use crate::error::{Error, Result};
use crate::locator::{
    BatchIter, Block, FileIndex, IndexOptions, Locator, ReadRequest, RowsRequest,
};
use crate::text::scan::FileBytes;

const FILE_FORMAT: &str = "arrow_ipc";
const STREAM_FORMAT: &str = "arrow_stream";
const MAGIC: &[u8; 6] = b"ARROW1";
const CONTINUATION: [u8; 4] = [0xff; 4];

/// Locator of Arrow IPC files and Feather v2 (`.arrow`, `.ipc`, `.feather`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ArrowFileLocator;

/// Locator of Arrow IPC streams (`.arrows`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ArrowStreamLocator;

/// Where [`read_at`] reads: the file (a positional read per call), or a memory map of the
/// whole of it whose pages are already in (a page fault per header costs more than a
/// positional read; with the pages in, no kernel call at all).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Src<'a> {
    File(&'a File),
    /// The file's bytes, as long as the length the reads are checked against.
    Mapped(&'a [u8]),
    /// Parts of a file that is not on this machine, fetched by range: each part's bytes
    /// from its file offset on ([`ranged`]).
    Parts(&'a [(u64, bytes::Bytes)]),
}

impl<'a> From<&'a File> for Src<'a> {
    fn from(file: &'a File) -> Self {
        Src::File(file)
    }
}

/// Reads `len` bytes at `offset`, after checking that they lie inside the file.
pub(crate) fn read_at<'a>(
    path: &Path,
    format: &'static str,
    src: impl Into<Src<'a>>,
    file_len: u64,
    offset: u64,
    len: u64,
    what: &str,
) -> Result<Vec<u8>> {
    let past_end = || {
        Error::malformed(
            path,
            format,
            format!("{what} of {len} bytes at byte {offset} runs past the end of the file ({file_len} bytes)"),
        )
        .at_byte(offset)
    };
    let end = offset.checked_add(len).filter(|&e| e <= file_len);
    let Some(end) = end else {
        return Err(past_end());
    };
    match src.into() {
        Src::Mapped(bytes) => usize::try_from(offset)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(s, e)| bytes.get(s..e))
            .map(<[u8]>::to_vec)
            .ok_or_else(past_end),
        Src::Parts(parts) => ranged::part(parts, offset, end)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| ranged::not_fetched(path, offset, end)),
        Src::File(file) => {
            let mut buf = vec![0; len as usize];
            read_exact_at(file, &mut buf, offset).map_err(|e| Error::io(path, e))?;
            Ok(buf)
        }
    }
}

/// Fills `buf` from the file at `offset` (a positional read on Unix: one kernel call, and
/// the file's cursor is left alone).
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = file;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(buf)
    }
}

/// One record batch as the IPC file footer lists it.
#[derive(Debug, Clone, Copy)]
struct FooterBlock {
    offset: u64,
    meta_len: u64,
    body_len: u64,
}

/// What the footer of an IPC file lists.
struct Footer {
    schema: SchemaRef,
    /// The metadata version the footer declares (its messages must have the same).
    version: arrow_ipc::MetadataVersion,
    blocks: Vec<FooterBlock>,
    dictionaries: Vec<FooterBlock>,
}

impl Footer {
    /// Checks the compressed buffers of the dictionaries and of the batches `batches`, which a
    /// `FileReader` is about to decode.
    fn check(
        &self,
        path: &Path,
        src: Src<'_>,
        len: u64,
        batches: std::ops::Range<usize>,
    ) -> Result<()> {
        for b in self.dictionaries.iter().chain(&self.blocks[batches]) {
            check_block(path, src, len, b)?;
        }
        Ok(())
    }
}

/// Checks one footer block (a dictionary or a record batch) before arrow-ipc decodes it: its
/// lengths agree with the message at its offset, and its compressed buffers are sound.
fn check_block(path: &Path, src: Src<'_>, len: u64, b: &FooterBlock) -> Result<()> {
    let mut walker = MessageWalker {
        path,
        format: FILE_FORMAT,
        src,
        len,
        at: b.offset,
    };
    let m = walker.next_message()?.ok_or_else(|| {
        Error::malformed(
            path,
            FILE_FORMAT,
            "a footer block points at an end-of-stream marker",
        )
        .at_byte(b.offset)
    })?;
    // arrow-ipc trusts the footer's lengths, so they must agree with the message.
    if m.total != b.meta_len + b.body_len {
        return Err(Error::malformed(
            path,
            FILE_FORMAT,
            format!(
                "footer block says {} + {} bytes, the message at its offset has {}",
                b.meta_len, b.body_len, m.total
            ),
        )
        .at_byte(b.offset));
    }
    check_buffers(path, FILE_FORMAT, src, len, &m)?;
    Ok(())
}

/// The footer of an IPC file: schema, dictionary and record batch blocks, every block checked
/// to lie inside the file.
fn read_footer<'a>(path: &Path, file: impl Into<Src<'a>>, len: u64) -> Result<Footer> {
    let file = file.into();
    let bad = |msg: String, at: u64| Error::malformed(path, FILE_FORMAT, msg).at_byte(at);
    if len < 18 {
        return Err(bad(
            format!("{len} bytes is too short for an Arrow IPC file"),
            0,
        ));
    }
    let head = read_at(path, FILE_FORMAT, file, len, 0, 6, "magic")?;
    if head != MAGIC {
        return Err(bad(
            "the file does not start with the magic ARROW1".into(),
            0,
        ));
    }
    let tail = read_at(path, FILE_FORMAT, file, len, len - 10, 10, "footer length")?;
    if &tail[4..] != MAGIC {
        return Err(bad(
            "the file does not end with the magic ARROW1".into(),
            len - 6,
        ));
    }
    let footer_len = i32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let footer_len = u64::try_from(footer_len)
        .ok()
        .filter(|&l| l <= len - 18)
        .ok_or_else(|| {
            bad(
                format!("footer length {footer_len} does not fit in a file of {len} bytes"),
                len - 10,
            )
        })?;
    let footer_at = len - 10 - footer_len;
    let bytes = read_at(
        path,
        FILE_FORMAT,
        file,
        len,
        footer_at,
        footer_len,
        "footer",
    )?;
    let footer = arrow_ipc::root_as_footer(&bytes)
        .map_err(|e| bad(format!("invalid footer: {e}"), footer_at))?;
    let fb_schema = footer
        .schema()
        .ok_or_else(|| bad("the footer has no schema".into(), footer_at))?;
    check::check_schema(fb_schema)
        .map_err(|m| check::schema_error(path, FILE_FORMAT, m, footer_at))?;
    let schema = Arc::new(arrow_ipc::convert::fb_to_schema(fb_schema));
    let mut blocks = Vec::new();
    let dictionaries = footer
        .dictionaries()
        .into_iter()
        .flatten()
        .map(|d| ("dictionary batch", d));
    let batches = footer
        .recordBatches()
        .into_iter()
        .flatten()
        .map(|b| ("record batch", b));
    let mut dictionary_blocks = Vec::new();
    for (i, (what, b)) in dictionaries.chain(batches).enumerate() {
        let offset = u64::try_from(b.offset()).ok();
        let meta_len = u64::try_from(b.metaDataLength()).ok();
        let body_len = u64::try_from(b.bodyLength()).ok();
        let (Some(offset), Some(meta_len), Some(body_len)) = (offset, meta_len, body_len) else {
            return Err(
                bad(format!("{what} {i} has a negative position"), footer_at).in_block(i as u64),
            );
        };
        let end = offset
            .checked_add(meta_len)
            .and_then(|e| e.checked_add(body_len));
        if end.is_none_or(|e| e > footer_at) {
            return Err(bad(
                format!(
                    "{what} {i} ({meta_len} + {body_len} bytes at byte {offset}) runs past the data section"
                ),
                offset,
            )
            .in_block(i as u64));
        }
        let block = FooterBlock {
            offset,
            meta_len,
            body_len,
        };
        if what == "record batch" {
            blocks.push(block);
        } else {
            dictionary_blocks.push(block);
        }
    }
    Ok(Footer {
        schema,
        version: footer.version(),
        blocks,
        dictionaries: dictionary_blocks,
    })
}

/// The flatbuffer of a message whose encapsulated form (continuation marker, length, message)
/// starts `buf`; returns the message bytes and the prefix length.
fn message_bytes<'a>(
    path: &Path,
    format: &'static str,
    buf: &'a [u8],
    at: u64,
) -> Result<&'a [u8]> {
    let bad = |msg: &str| Error::malformed(path, format, msg.to_string()).at_byte(at);
    let (len_bytes, start) = if buf.len() >= 8 && buf[..4] == CONTINUATION {
        (&buf[4..8], 8)
    } else if buf.len() >= 4 {
        (&buf[..4], 4)
    } else {
        return Err(bad("message prefix is truncated"));
    };
    let len = i32::from_le_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]]);
    let len = usize::try_from(len).map_err(|_| bad("negative message length"))?;
    buf.get(start..start + len)
        .ok_or_else(|| bad("message length runs past its block"))
}

/// Row counts of the footer's record batches, from their message headers.
/// Each batch header is checked against `schema` (see [`check::check_batch`]).
fn batch_rows<'a>(
    path: &Path,
    file: impl Into<Src<'a>>,
    len: u64,
    schema: &Schema,
    blocks: &[FooterBlock],
) -> Result<Vec<Block>> {
    let file = file.into();
    // From a cold cache each header read below would wait for the disk in turn: all of them
    // are asked for at once first (the headers are small and spread over the file).
    if blocks.len() > 1
        && matches!(file, Src::File(_))
        && let Ok(map) = FileBytes::open(path)
    {
        map.prefetch_ranges(blocks.iter().map(|b| {
            let at = usize::try_from(b.offset).unwrap_or(usize::MAX);
            at..at.saturating_add(b.meta_len as usize)
        }));
    }
    let mut out = Vec::with_capacity(blocks.len());
    let mut first_row = 0u64;
    for (i, b) in blocks.iter().enumerate() {
        let rows = header::batch_header_rows(path, file, len, schema, b, i)?;
        out.push(Block::rows(i as u64, first_row, rows));
        first_row += rows;
    }
    Ok(out)
}

/// The row count of a RecordBatch message.
fn record_batch_rows(path: &Path, format: &'static str, msg: &[u8], at: u64) -> Result<u64> {
    let bad = |m: String| Error::malformed(path, format, m).at_byte(at);
    let message =
        arrow_ipc::root_as_message(msg).map_err(|e| bad(format!("invalid message: {e}")))?;
    let batch = message
        .header_as_record_batch()
        .ok_or_else(|| bad("expected a record batch message".into()))?;
    u64::try_from(batch.length()).map_err(|_| bad(format!("negative row count {}", batch.length())))
}

/// The file positioned at its start again (the message walk moved it).
fn rewind(path: &Path, mut file: File) -> Result<File> {
    use std::io::Seek;
    file.rewind().map_err(|e| Error::io(path, e))?;
    Ok(file)
}

fn lib(path: &Path, format: &'static str, e: arrow_schema::ArrowError) -> Error {
    Error::library(path, format, e)
}

fn has_dictionaries(schema: &Schema) -> bool {
    schema
        .flattened_fields()
        .iter()
        .any(|f| matches!(f.data_type(), DataType::Dictionary(_, _)))
}

impl Locator for ArrowFileLocator {
    fn rows_cost(&self) -> crate::locator::RowsCost {
        crate::locator::RowsCost::WholeBlock
    }

    fn name(&self) -> &str {
        FILE_FORMAT
    }

    fn decodes_inline(&self) -> bool {
        true
    }

    fn extensions(&self) -> &[&str] {
        &["arrow", "ipc", "feather"]
    }

    fn byte_layout(&self) -> Option<crate::ByteLayout> {
        Some(crate::ByteLayout {
            head: true,
            tail: true,
            block_end: crate::BlockEnd::Total,
        })
    }

    fn formats(&self) -> &[&str] {
        &[FILE_FORMAT]
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        columnar::guard(path, FILE_FORMAT, || {
            let (file, len) = columnar::open(path)?;
            let footer = read_footer(path, &file, len)?;
            let schema = footer.schema.clone();
            let mut blocks = batch_rows(path, &file, len, &footer.schema, &footer.blocks)?;
            header::place_batches(&mut blocks, &footer);
            let row_count = blocks.last().map_or(0, |b| b.first_row + b.row_count);
            let stats = if options.stats.is_none() {
                None
            } else {
                Some(stats::file_stats(
                    path,
                    &file,
                    len,
                    &footer,
                    &options.stats,
                )?)
            };
            Ok(FileIndex {
                format: FILE_FORMAT.into(),
                row_count,
                blocks,
                schema,
                stats,
            })
        })
    }

    fn index_ranged(
        &self,
        path: &Path,
        size: u64,
        read: &crate::RangeRead,
        options: &IndexOptions,
    ) -> Option<Result<FileIndex>> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        Some(columnar::guard(path, FILE_FORMAT, || {
            ranged::index(path, size, read, options)
        }))
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        columnar::guard(path, FILE_FORMAT, || {
            let (file, len) = columnar::open(path)?;
            // The footer is always checked (cheap) so that no batch position from it can make the
            // reader allocate past the file.
            let footer = read_footer(path, &file, len)?;
            let (schema, footer_blocks) = (footer.schema.clone(), &footer.blocks);
            let blocks = match request.blocks {
                Some(stored) => {
                    if stored.len() != footer_blocks.len() {
                        return Err(Error::StaleIndex {
                            path: path.to_path_buf(),
                            message: format!(
                                "stored index has {} record batches, the file has {}",
                                stored.len(),
                                footer_blocks.len()
                            ),
                        });
                    }
                    stored.to_vec()
                }
                None => batch_rows(path, &file, len, &schema, footer_blocks)?,
            };
            let total = blocks.last().map_or(0, |b| b.first_row + b.row_count);
            columnar::check_blocks(path, &blocks, total)?;
            let projection = Projection::new(path, &schema, request.projection)?;
            let rows = columnar::clamp_rows(&request.rows, total);
            if rows.is_empty() {
                return Ok(columnar::empty());
            }
            let touched = columnar::touched_blocks(&blocks, &rows);
            footer.check(path, (&file).into(), len, touched.clone())?;
            let mut reader = FileReader::try_new(
                BufReader::new(file),
                projection.as_ref().map(|p| p.decode.clone()),
            )
            .map_err(|e| lib(path, FILE_FORMAT, e))?;
            let first_row = blocks[touched.start].first_row;
            let owned = path.to_path_buf();
            let expected: Vec<u64> = blocks[touched.clone()]
                .iter()
                .map(|b| b.row_count)
                .collect();
            let mut expected = expected.into_iter();
            let mut next_index = touched.start;
            let batches = std::iter::from_fn(move || {
                let want = expected.next()?;
                let index = next_index;
                next_index += 1;
                let batch = reader
                    .set_index(index)
                    .and_then(|_| reader.next().transpose())
                    .map_err(|e| Error::library(&owned, FILE_FORMAT, e).in_block(index as u64));
                Some(match batch {
                    Ok(Some(b)) if b.num_rows() as u64 == want => {
                        columnar::reorder(projection.as_ref(), b)
                            .map_err(|e| Error::library(&owned, FILE_FORMAT, e))
                    }
                    Ok(Some(b)) => Err(Error::StaleIndex {
                        path: owned.clone(),
                        message: format!(
                            "record batch {index} has {} rows, the index says {want}",
                            b.num_rows()
                        ),
                    }),
                    Ok(None) => {
                        Err(
                            Error::malformed(&owned, FILE_FORMAT, "record batch is missing")
                                .in_block(index as u64),
                        )
                    }
                    Err(e) => Err(e),
                })
            });
            Ok(Box::new(Trim::new(batches, first_row, rows)))
        })
        .map(|batches| columnar::guard_iter(path, FILE_FORMAT, batches))
    }

    fn read_rows(&self, path: &Path, request: &RowsRequest<'_>) -> Result<Vec<RecordBatch>> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        columnar::guard(path, FILE_FORMAT, || take::read_rows(path, request))
    }
}

mod check;
mod header;
mod ranged;
mod stats;
mod take;

/// One message of an IPC stream: where it starts, its total length, and its flatbuffer.
struct StreamMessage {
    offset: u64,
    total: u64,
    meta: Vec<u8>,
}

/// Walks the messages of an IPC stream without reading bodies.
struct MessageWalker<'a> {
    path: &'a Path,
    format: &'static str,
    src: Src<'a>,
    len: u64,
    at: u64,
}

impl MessageWalker<'_> {
    /// The next message, or `None` at the end-of-stream marker or the end of the file.
    fn next_message(&mut self) -> Result<Option<StreamMessage>> {
        let bad = |m: String, at: u64| Error::malformed(self.path, self.format, m).at_byte(at);
        if self.at + 4 > self.len {
            if self.at == self.len {
                return Ok(None);
            }
            return Err(bad("truncated message prefix".into(), self.at));
        }
        let first = read_at(
            self.path,
            self.format,
            self.src,
            self.len,
            self.at,
            4,
            "message prefix",
        )?;
        let (prefix, meta_len) = if first == CONTINUATION {
            let l = read_at(
                self.path,
                self.format,
                self.src,
                self.len,
                self.at + 4,
                4,
                "message length",
            )?;
            (8u64, i32::from_le_bytes([l[0], l[1], l[2], l[3]]))
        } else {
            (
                4u64,
                i32::from_le_bytes([first[0], first[1], first[2], first[3]]),
            )
        };
        let meta_len = u64::try_from(meta_len)
            .map_err(|_| bad(format!("negative message length {meta_len}"), self.at))?;
        if meta_len == 0 {
            return Ok(None);
        }
        let meta = read_at(
            self.path,
            self.format,
            self.src,
            self.len,
            self.at + prefix,
            meta_len,
            "message header",
        )?;
        let message = arrow_ipc::root_as_message(&meta)
            .map_err(|e| bad(format!("invalid message: {e}"), self.at))?;
        let body = u64::try_from(message.bodyLength())
            .map_err(|_| bad("negative body length".into(), self.at))?;
        let total = prefix + meta_len + body;
        if self.at.checked_add(total).is_none_or(|e| e > self.len) {
            return Err(bad(
                format!(
                    "message of {total} bytes runs past the end of the file ({} bytes)",
                    self.len
                ),
                self.at,
            ));
        }
        let m = StreamMessage {
            offset: self.at,
            total,
            meta,
        };
        self.at += total;
        Ok(Some(m))
    }
}

/// The largest uncompressed buffer a compressed batch may declare. arrow-ipc reserves the
/// declared length before decompressing, so a corrupt length would abort the process.
const MAX_UNCOMPRESSED: i64 = 1 << 32;

/// Checks the buffers of a compressed record batch or dictionary batch message: each lies in
/// the message body, and each declares an uncompressed length arrow-ipc can allocate.
fn check_buffers(
    path: &Path,
    format: &'static str,
    src: Src<'_>,
    len: u64,
    m: &StreamMessage,
) -> Result<()> {
    check_buffers_with(path, format, m, |at| {
        let b = read_at(path, format, src, len, at, 8, "buffer length prefix")?;
        Ok(b.try_into().unwrap_or([0; 8]))
    })
}

/// [`check_buffers`] with the 8 bytes at a file offset read by `prefix_at` (from the file,
/// or from bytes of the message already in memory).
fn check_buffers_with(
    path: &Path,
    format: &'static str,
    m: &StreamMessage,
    prefix_at: impl Fn(u64) -> Result<[u8; 8]>,
) -> Result<()> {
    let bad = |msg: String| Error::malformed(path, format, msg).at_byte(m.offset);
    let message =
        arrow_ipc::root_as_message(&m.meta).map_err(|e| bad(format!("invalid message: {e}")))?;
    let batch = message
        .header_as_record_batch()
        .or_else(|| message.header_as_dictionary_batch().and_then(|d| d.data()));
    let Some(batch) = batch else {
        return Ok(());
    };
    if batch.compression().is_none() {
        return Ok(());
    }
    let body_len =
        u64::try_from(message.bodyLength()).map_err(|_| bad("negative body length".into()))?;
    let body_start = m.offset + m.total - body_len;
    for (i, b) in batch.buffers().into_iter().flatten().enumerate() {
        let (Ok(offset), Ok(length)) = (u64::try_from(b.offset()), u64::try_from(b.length()))
        else {
            return Err(bad(format!("buffer {i} has a negative position")));
        };
        if offset.checked_add(length).is_none_or(|e| e > body_len) {
            return Err(bad(format!(
                "buffer {i} ({length} bytes at {offset}) runs past the message body"
            )));
        }
        if length >= 8 {
            let at = body_start + offset;
            let declared = i64::from_le_bytes(prefix_at(at)?);
            if !(-1..=MAX_UNCOMPRESSED).contains(&declared) {
                return Err(Error::malformed(
                    path,
                    format,
                    format!("compressed buffer {i} declares {declared} uncompressed bytes"),
                )
                .at_byte(at));
            }
        }
    }
    Ok(())
}

/// Checks the compressed buffers of the messages starting at `offsets` (file blocks or
/// stream batches).
fn check_messages(
    path: &Path,
    format: &'static str,
    file: &File,
    len: u64,
    offsets: impl IntoIterator<Item = u64>,
) -> Result<()> {
    for at in offsets {
        let mut walker = MessageWalker {
            path,
            format,
            src: file.into(),
            len,
            at,
        };
        if let Some(m) = walker.next_message()? {
            check_buffers(path, format, file.into(), len, &m)?;
        }
    }
    Ok(())
}

/// What a walk over a whole stream finds.
struct StreamLayout {
    schema: SchemaRef,
    schema_end: u64,
    blocks: Vec<Block>,
}

fn walk_stream(path: &Path, file: &File, len: u64, all: bool) -> Result<StreamLayout> {
    let mut walker = MessageWalker {
        path,
        format: STREAM_FORMAT,
        src: file.into(),
        len,
        at: 0,
    };
    let first = walker.next_message()?.ok_or_else(|| {
        Error::malformed(path, STREAM_FORMAT, "the stream has no schema message").at_byte(0)
    })?;
    let message = arrow_ipc::root_as_message(&first.meta).map_err(|e| {
        Error::malformed(path, STREAM_FORMAT, format!("invalid message: {e}")).at_byte(0)
    })?;
    let fb_schema = message.header_as_schema().ok_or_else(|| {
        Error::malformed(path, STREAM_FORMAT, "the first message is not a schema").at_byte(0)
    })?;
    check::check_schema(fb_schema).map_err(|m| check::schema_error(path, STREAM_FORMAT, m, 0))?;
    let schema = Arc::new(arrow_ipc::convert::fb_to_schema(fb_schema));
    let schema_end = first.offset + first.total;
    let mut blocks = Vec::new();
    let mut first_row = 0u64;
    // Reads need the schema message only.
    if !all {
        return Ok(StreamLayout {
            schema,
            schema_end,
            blocks,
        });
    }
    loop {
        let Some(m) = walker.next_message()? else {
            break;
        };
        let msg = arrow_ipc::root_as_message(&m.meta).map_err(|e| {
            Error::malformed(path, STREAM_FORMAT, format!("invalid message: {e}")).at_byte(m.offset)
        })?;
        check_buffers(path, STREAM_FORMAT, file.into(), len, &m)?;
        let body = u64::try_from(msg.bodyLength()).unwrap_or(0);
        check::check_batch(&schema, &msg, body)
            .map_err(|e| Error::malformed(path, STREAM_FORMAT, e).at_byte(m.offset))?;
        if msg.header_as_record_batch().is_none() {
            continue;
        }
        let rows = record_batch_rows(path, STREAM_FORMAT, &m.meta, m.offset)?;
        blocks.push(Block {
            ordinal: blocks.len() as u64,
            first_row,
            row_count: rows,
            first_byte: Some(m.offset),
            total_byte_size: Some(m.total),
            compressed_size: None,
            columns: None,
            stats: None,
            fine: None,
        });
        first_row += rows;
    }
    Ok(StreamLayout {
        schema,
        schema_end,
        blocks,
    })
}

impl Locator for ArrowStreamLocator {
    fn name(&self) -> &str {
        STREAM_FORMAT
    }

    fn decodes_inline(&self) -> bool {
        true
    }

    fn extensions(&self) -> &[&str] {
        &["arrows"]
    }

    fn byte_layout(&self) -> Option<crate::ByteLayout> {
        Some(crate::ByteLayout::HEAD_AND_BLOCKS)
    }

    fn formats(&self) -> &[&str] {
        &[STREAM_FORMAT]
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        columnar::guard(path, STREAM_FORMAT, || {
            let (file, len) = columnar::open(path)?;
            let layout = walk_stream(path, &file, len, true)?;
            let row_count = layout
                .blocks
                .last()
                .map_or(0, |b| b.first_row + b.row_count);
            let stats = if options.stats.is_none() {
                None
            } else {
                let cols = stats::stats_projection(&layout.schema, &options.stats);
                if cols.is_empty() {
                    Some(Default::default())
                } else {
                    let file = rewind(path, file)?;
                    let reader = StreamReader::try_new(BufReader::new(file), Some(cols.clone()))
                        .map_err(|e| lib(path, STREAM_FORMAT, e))?;
                    let projected = Arc::new(
                        layout
                            .schema
                            .project(&cols)
                            .map_err(|e| Error::Schema(e.to_string()))?,
                    );
                    let batches = reader.map(|r| r.map_err(|e| lib(path, STREAM_FORMAT, e)));
                    Some(stats::data_stats(&projected, &options.stats, batches)?)
                }
            };
            Ok(FileIndex {
                format: STREAM_FORMAT.into(),
                row_count,
                blocks: layout.blocks,
                schema: layout.schema,
                stats,
            })
        })
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        columnar::guard(path, STREAM_FORMAT, || {
            let (file, len) = columnar::open(path)?;
            let Some(stored) = request.blocks else {
                return read_stream_from_start(path, file, len, request);
            };
            let layout = walk_stream(path, &file, len, false)?;
            let total = stored.last().map_or(0, |b| b.first_row + b.row_count);
            columnar::check_blocks(path, stored, total)?;
            let projection = Projection::new(path, &layout.schema, request.projection)?;
            let rows = columnar::clamp_rows(&request.rows, total);
            if rows.is_empty() {
                return Ok(columnar::empty());
            }
            let touched = columnar::touched_blocks(stored, &rows);
            let first = &stored[touched.start];
            let last = &stored[touched.end - 1];
            let stale = |m: String| Error::StaleIndex {
                path: path.to_path_buf(),
                message: m,
            };
            let (Some(start), Some(last_start), Some(last_len)) =
                (first.first_byte, last.first_byte, last.total_byte_size)
            else {
                return Err(stale(
                    "stream blocks need first_byte and total_byte_size".into(),
                ));
            };
            let end = last_start
                .checked_add(last_len)
                .filter(|&e| e <= len && start >= layout.schema_end && start <= e)
                .ok_or_else(|| {
                    stale(format!(
                        "stored batch bytes {start}..{last_start}+{last_len} do not fit the file"
                    ))
                })?;
            // The schema message, then (only when the schema has dictionaries, whose batches may
            // come anywhere before) every message up to the first batch, then the wanted batches.
            let mut bytes = read_at(
                path,
                STREAM_FORMAT,
                &file,
                len,
                0,
                layout.schema_end,
                "schema message",
            )?;
            let from = if has_dictionaries(&layout.schema) {
                // Every message before the batch may be decoded: check them all.
                walk_stream(path, &file, len, true)?;
                layout.schema_end
            } else {
                let starts = stored[touched.clone()].iter().filter_map(|b| b.first_byte);
                check_messages(path, STREAM_FORMAT, &file, len, starts)?;
                start
            };
            bytes.extend(read_at(
                path,
                STREAM_FORMAT,
                &file,
                len,
                from,
                end - from,
                "record batches",
            )?);
            // The end-of-stream marker.
            bytes.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
            let reader = StreamReader::try_new(
                Cursor::new(bytes),
                projection.as_ref().map(|p| p.decode.clone()),
            )
            .map_err(|e| lib(path, STREAM_FORMAT, e))?;
            let owned = path.to_path_buf();
            let counts: Vec<u64> = stored.iter().map(|b| b.row_count).collect();
            // Without dictionaries the first decoded batch is block `touched.start`; with them,
            // batches before it are decoded too and skipped by the trim below.
            let (mut ordinal, first_row) = if from == start {
                (touched.start, first.first_row)
            } else {
                (0, 0)
            };
            let batches = reader.map(move |r| {
                let b = r.map_err(|e| Error::library(&owned, STREAM_FORMAT, e))?;
                let want = counts.get(ordinal).copied();
                ordinal += 1;
                if want != Some(b.num_rows() as u64) {
                    return Err(Error::StaleIndex {
                        path: owned.clone(),
                        message: format!(
                            "record batch {} has {} rows, the index says {want:?}",
                            ordinal - 1,
                            b.num_rows()
                        ),
                    });
                }
                columnar::reorder(projection.as_ref(), b)
                    .map_err(|e| Error::library(&owned, STREAM_FORMAT, e))
            });
            Ok(Box::new(Trim::new(batches, first_row, rows)))
        })
        .map(|batches| columnar::guard_iter(path, STREAM_FORMAT, batches))
    }
}

/// A stream read without stored blocks: decode from the first batch and trim.
fn read_stream_from_start(
    path: &Path,
    file: File,
    len: u64,
    request: &ReadRequest<'_>,
) -> Result<BatchIter> {
    // The walk checks every message against the file length before the reader allocates.
    let layout = walk_stream(path, &file, len, true)?;
    let total = layout
        .blocks
        .last()
        .map_or(0, |b| b.first_row + b.row_count);
    let projection = Projection::new(path, &layout.schema, request.projection)?;
    let rows = columnar::clamp_rows(&request.rows, total);
    if rows.is_empty() {
        return Ok(columnar::empty());
    }
    let file = rewind(path, file)?;
    let reader = StreamReader::try_new(
        BufReader::new(file),
        projection.as_ref().map(|p| p.decode.clone()),
    )
    .map_err(|e| lib(path, STREAM_FORMAT, e))?;
    let owned = path.to_path_buf();
    let batches = reader.map(move |r| {
        r.map_err(|e| Error::library(&owned, STREAM_FORMAT, e))
            .and_then(|b| {
                columnar::reorder(projection.as_ref(), b)
                    .map_err(|e| Error::library(&owned, STREAM_FORMAT, e))
            })
    });
    Ok(Box::new(Trim::new(batches, 0, rows)))
}
