//! The row count of a record batch of an IPC file, from its message header.

use std::path::Path;

use arrow_schema::Schema;

use super::{FILE_FORMAT, FooterBlock, Src, check, message_bytes, read_at, record_batch_rows};
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
