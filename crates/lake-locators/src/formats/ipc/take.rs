//! [`Locator::read_rows`](crate::Locator::read_rows) of Arrow IPC files: the footer is read
//! and checked once, then only the record batches holding a wanted row are read: their bytes
//! are asked of the disk at once, then each is checked as a full read checks it, decoded in
//! place from the file's memory map by arrow-ipc's `FileDecoder` (no copy) and cut down to
//! the wanted rows, on the threads of the caller's pool.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::reader::FileDecoder;

use super::{
    CONTINUATION, FILE_FORMAT, FooterBlock, StreamMessage, batch_rows, check_block,
    check_buffers_with, lib, read_footer,
};
use crate::columnar::{self, Projection};
use crate::error::{Error, Result};
use crate::locator::RowsRequest;
use crate::take::{by_block, check_rows, take_rows};
use crate::text::scan::FileBytes;
use rayon::prelude::*;

/// The bytes of footer block `b` (checked here to lie inside the file) as a slice of the
/// file's memory map, without copying: IPC blocks start 8-byte aligned in a page-aligned map,
/// so arrow-ipc decodes the batch in place.
fn block_bytes(path: &Path, map: &bytes::Bytes, b: &FooterBlock) -> Result<Buffer> {
    let n = b.meta_len + b.body_len;
    let len = map.len() as u64;
    match b.offset.checked_add(n) {
        // Within the map, so both ends fit in usize.
        Some(end) if end <= len => Ok(Buffer::from(map.slice(b.offset as usize..end as usize))),
        _ => Err(Error::malformed(
            path,
            FILE_FORMAT,
            format!("a block of {n} bytes runs past the end of the file ({len} bytes)"),
        )
        .at_byte(b.offset)),
    }
}

/// The memory map of a file as `Bytes` whose slices become Arrow buffers.
struct Mapped(FileBytes);

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The checks of [`check_block`] on the block's bytes `buf`, already read: the message at
/// the block's offset has the footer's lengths, and its compressed buffers are sound.
fn check_in_memory(path: &Path, b: &FooterBlock, buf: &[u8]) -> Result<StreamMessage> {
    let bad = |m: String| Error::malformed(path, FILE_FORMAT, m).at_byte(b.offset);
    let meta = super::message_bytes(path, FILE_FORMAT, buf, b.offset)?;
    if meta.is_empty() {
        return Err(bad(
            "a footer block points at an end-of-stream marker".into()
        ));
    }
    let prefix = if buf.starts_with(&CONTINUATION) { 8 } else { 4 };
    let message =
        arrow_ipc::root_as_message(meta).map_err(|e| bad(format!("invalid message: {e}")))?;
    let body =
        u64::try_from(message.bodyLength()).map_err(|_| bad("negative body length".into()))?;
    let total = (prefix + meta.len()) as u64 + body;
    // arrow-ipc trusts the footer's lengths, so they must agree with the message.
    if total != b.meta_len + b.body_len {
        return Err(bad(format!(
            "footer block says {} + {} bytes, the message at its offset has {total}",
            b.meta_len, b.body_len
        )));
    }
    let m = StreamMessage {
        offset: b.offset,
        total,
        meta: meta.to_vec(),
    };
    check_buffers_with(path, FILE_FORMAT, &m, |at| {
        let from = (at - b.offset) as usize;
        buf.get(from..from + 8)
            .and_then(|p| p.try_into().ok())
            .ok_or_else(|| {
                bad(format!(
                    "buffer length prefix at byte {at} is outside the block"
                ))
            })
    })?;
    Ok(m)
}

fn ipc_block(b: &FooterBlock) -> arrow_ipc::Block {
    // The footer's values were read from these types and checked to be non-negative.
    arrow_ipc::Block::new(b.offset as i64, b.meta_len as i32, b.body_len as i64)
}

/// The wanted rows `request.rows` of the IPC file at `path`.
pub(super) fn read_rows(path: &Path, request: &RowsRequest<'_>) -> Result<Vec<RecordBatch>> {
    let (file, len) = columnar::open(path)?;
    let footer = read_footer(path, &file, len)?;
    let schema = footer.schema.clone();
    let blocks = match request.blocks {
        Some(stored) => {
            if stored.len() != footer.blocks.len() {
                return Err(Error::StaleIndex {
                    path: path.to_path_buf(),
                    message: format!(
                        "stored index has {} record batches, the file has {}",
                        stored.len(),
                        footer.blocks.len()
                    ),
                });
            }
            stored.to_vec()
        }
        None => batch_rows(path, &file, len, &schema, &footer.blocks)?,
    };
    let total = blocks.last().map_or(0, |b| b.first_row + b.row_count);
    columnar::check_blocks(path, &blocks, total)?;
    let projection = Projection::new(path, &schema, request.projection)?;
    check_rows(path, request.rows, Some(total))?;
    if request.rows.is_empty() {
        return Ok(Vec::new());
    }
    let mut decoder = FileDecoder::new(schema.clone(), footer.version);
    if let Some(p) = &projection {
        decoder = decoder.with_projection(p.decode.clone());
    }
    let file_bytes = FileBytes::open(path)?;
    if file_bytes.len() as u64 != len {
        return Err(Error::StaleIndex {
            path: path.to_path_buf(),
            message: format!(
                "the file changed while it was read ({len} bytes, then {})",
                file_bytes.len()
            ),
        });
    }
    let groups = by_block(request.rows, &blocks);
    // Only the wanted batches are asked of the disk, all at once (a cold take).
    file_bytes.prepare_ranges(groups.iter().filter_map(|(index, _)| {
        let fb = footer.blocks.get(*index)?;
        let start = usize::try_from(fb.offset).ok()?;
        let n = usize::try_from(fb.meta_len.checked_add(fb.body_len)?).ok()?;
        Some(start..start.checked_add(n)?.min(file_bytes.len()))
    }));
    let map = bytes::Bytes::from_owner(Mapped(file_bytes));
    for d in &footer.dictionaries {
        check_block(path, (&file).into(), len, d)?;
        let buf = block_bytes(path, &map, d)?;
        decoder
            .read_dictionary(&ipc_block(d), &buf)
            .map_err(|e| lib(path, FILE_FORMAT, e))?;
    }
    let one = |(index, range): &(usize, std::ops::Range<usize>)| -> Result<RecordBatch> {
        let index = *index;
        let (block, fb) = (&blocks[index], &footer.blocks[index]);
        let buf = block_bytes(path, &map, fb)?;
        let msg = check_in_memory(path, fb, &buf).map_err(|e| e.in_block(index as u64))?;
        // The header must fit the schema before arrow-ipc trusts its buffers and lengths.
        let message = arrow_ipc::root_as_message(&msg.meta).map_err(|e| {
            Error::malformed(path, FILE_FORMAT, format!("invalid message: {e}"))
                .at_byte(fb.offset)
                .in_block(index as u64)
        })?;
        super::check::check_batch(&schema, &message, fb.body_len).map_err(|m| {
            Error::malformed(path, FILE_FORMAT, m)
                .at_byte(fb.offset)
                .in_block(index as u64)
        })?;
        let batch = decoder
            .read_record_batch(&ipc_block(fb), &buf)
            .map_err(|e| Error::library(path, FILE_FORMAT, e).in_block(index as u64))?
            .ok_or_else(|| {
                Error::malformed(path, FILE_FORMAT, "record batch is missing")
                    .in_block(index as u64)
            })?;
        if batch.num_rows() as u64 != block.row_count {
            return Err(Error::StaleIndex {
                path: path.to_path_buf(),
                message: format!(
                    "record batch {index} has {} rows, the index says {}",
                    batch.num_rows(),
                    block.row_count
                ),
            });
        }
        let picked = take_rows(&batch, block.first_row, &request.rows[range.clone()])?;
        columnar::reorder(projection.as_ref(), picked).map_err(|e| lib(path, FILE_FORMAT, e))
    };
    // The batches are checked and decoded on the threads of the caller's pool, in order.
    groups.par_iter().map(one).collect()
}
