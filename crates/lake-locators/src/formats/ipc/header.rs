//! The row count of a record batch of an IPC file, from its message header, and the byte
//! spans of the batches an index stores.

use std::path::Path;

use arrow_schema::Schema;

use super::{
    FILE_FORMAT, Footer, FooterBlock, Src, check, message_bytes, read_at, record_batch_rows,
};
use crate::Block;
use crate::error::{Error, Result};

/// The row count of footer record batch `i` (`b`), from its message header, checked against
/// `schema` (see [`check::check_batch`]).
pub(super) fn batch_header_rows(
    path: &Path,
    file: Src<'_>,
    len: u64,
    schema: &Schema,
    b: &FooterBlock,
    i: usize,
) -> Result<u64> {
    let meta = read_at(
        path,
        FILE_FORMAT,
        file,
        len,
        b.offset,
        b.meta_len,
        "batch header",
    )?;
    let msg = message_bytes(path, FILE_FORMAT, &meta, b.offset)?;
    let rows =
        record_batch_rows(path, FILE_FORMAT, msg, b.offset).map_err(|e| e.in_block(i as u64))?;
    if let Ok(message) = arrow_ipc::root_as_message(msg) {
        check::check_batch(schema, &message, b.body_len).map_err(|m| {
            Error::malformed(path, FILE_FORMAT, m)
                .at_byte(b.offset)
                .in_block(i as u64)
        })?;
    }
    Ok(rows)
}

/// Gives each block of `blocks` (one per footer record batch, in footer order) its batch's
/// byte span (`first_byte`, `total_byte_size`: the message and its body), so that a file far
/// away is read by the ranges of the batches a read touches, plus the bytes before the first
/// batch (magic, schema) and after the last (the footer) ([`crate::ByteLayout`]). Only when
/// every dictionary lies before the first batch, since a read decodes all of them: otherwise
/// the blocks keep no position and such a read fetches the whole file.
pub(super) fn place_batches(blocks: &mut [Block], footer: &Footer) {
    let first = footer.blocks.iter().map(|b| b.offset).min().unwrap_or(0);
    let dictionaries_first = footer.dictionaries.iter().all(|d| {
        d.offset
            .checked_add(d.meta_len)
            .and_then(|e| e.checked_add(d.body_len))
            .is_some_and(|end| end <= first)
    });
    if !dictionaries_first || blocks.len() != footer.blocks.len() {
        return;
    }
    for (block, b) in blocks.iter_mut().zip(&footer.blocks) {
        block.first_byte = Some(b.offset);
        block.total_byte_size = b.meta_len.checked_add(b.body_len);
    }
}
