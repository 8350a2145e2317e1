//! Footers whose schema carries an annotation newer than the parquet crate knows (a
//! `converted_type` value past the ones it decodes, such as the `NULL` converted type 24 that
//! old parquet-cpp and DuckDB write, or a `LogicalType` union variant it has no arm for):
//! pyarrow ignores such an annotation and reads the physical type as it is. The parquet crate
//! refuses the whole footer instead, so when its load fails the footer's Thrift compact bytes
//! are rewritten without those schema fields (the rest of the footer is copied byte for byte)
//! and the patched bytes are decoded by the crate's own metadata decoder.

use std::sync::Arc;

use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::basic::ConvertedType;
use parquet::errors::Result as PqResult;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};
use parquet::file::reader::ChunkReader;

/// Nesting depth at which a footer is given up as malformed (the parquet footer nests a few
/// levels; the limit only keeps a hostile footer from exhausting the stack).
const MAX_DEPTH: usize = 64;

/// `FileMetaData.schema`: the field holding the list of `SchemaElement`s.
const FILE_SCHEMA: i16 = 2;
/// `SchemaElement.converted_type` (an i32 enum).
const CONVERTED_TYPE: i16 = 6;
/// `SchemaElement.logicalType` (a union).
const LOGICAL_TYPE: i16 = 10;
/// The `LogicalType` union variants the parquet crate decodes (9 is reserved, never written).
const KNOWN_LOGICAL: [i16; 17] = [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18];

// Thrift compact protocol type codes.
const T_BOOL_TRUE: u8 = 1;
const T_BOOL_FALSE: u8 = 2;
const T_BYTE: u8 = 3;
const T_I16: u8 = 4;
const T_I32: u8 = 5;
const T_I64: u8 = 6;
const T_DOUBLE: u8 = 7;
const T_BINARY: u8 = 8;
const T_LIST: u8 = 9;
const T_SET: u8 = 10;
const T_MAP: u8 = 11;
const T_STRUCT: u8 = 12;

/// Loads the reader metadata from the footer with its unknown schema annotations dropped.
/// `None` when the footer cannot be walked or holds no unknown annotation (the caller then
/// reports the error it already has); otherwise the crate's answer on the patched footer.
pub(super) fn load_patched<R: ChunkReader>(
    reader: &R,
    options: ArrowReaderOptions,
    page_index: PageIndexPolicy,
) -> Option<PqResult<ArrowReaderMetadata>> {
    let len = reader.len();
    // "PAR1", the metadata, its 4-byte length and "PAR1".
    let tail = reader.get_bytes(len.checked_sub(8)?, 8).ok()?;
    if tail.get(4..8)? != b"PAR1" {
        return None;
    }
    let meta_len = u64::from(u32::from_le_bytes(tail.get(..4)?.try_into().ok()?));
    let start = len.checked_sub(8)?.checked_sub(meta_len)?;
    if start < 4 {
        return None;
    }
    let meta = reader
        .get_bytes(start, usize::try_from(meta_len).ok()?)
        .ok()?;
    let patched = drop_unknown_annotations(&meta)?;
    Some(decode(reader, &patched, options, page_index))
}

fn decode<R: ChunkReader>(
    reader: &R,
    footer: &[u8],
    options: ArrowReaderOptions,
    page_index: PageIndexPolicy,
) -> PqResult<ArrowReaderMetadata> {
    let metadata = ParquetMetaDataReader::decode_metadata(footer)?;
    let mut with_index =
        ParquetMetaDataReader::new_with_metadata(metadata).with_page_index_policy(page_index);
    with_index.read_page_indexes(reader)?;
    ArrowReaderMetadata::try_new(Arc::new(with_index.finish()?), options)
}

/// The Thrift compact bytes of a `FileMetaData` with every `SchemaElement`'s unknown
/// `converted_type` and unknown `logicalType` variant removed; `None` when there is none to
/// remove or the bytes are not a well-formed struct.
pub(super) fn drop_unknown_annotations(meta: &[u8]) -> Option<Vec<u8>> {
    let mut c = Cursor {
        buf: meta,
        pos: 0,
        header_start: 0,
    };
    let mut out = Vec::with_capacity(meta.len());
    let mut changed = false;
    let mut last = 0;
    // No top-level field is dropped, so the top-level headers are copied as they are.
    while let Some((id, ty)) = c.field(last)? {
        last = id;
        let header = c.header_start;
        if id == FILE_SCHEMA && ty == T_LIST {
            let (count, elem) = c.list_header()?;
            if elem != T_STRUCT {
                return None;
            }
            out.extend_from_slice(&meta[header..c.pos]);
            for _ in 0..count {
                changed |= rewrite_element(&mut c, &mut out)?;
            }
        } else {
            c.skip(ty, 0)?;
            out.extend_from_slice(&meta[header..c.pos]);
        }
    }
    out.push(0);
    out.extend_from_slice(&meta[c.pos..]);
    changed.then_some(out)
}

/// Copies one `SchemaElement` struct from `c` to `out` without its unknown annotations
/// (re-encoding the field headers, whose ids are deltas from the previous field written).
/// Returns whether a field was dropped.
fn rewrite_element(c: &mut Cursor<'_>, out: &mut Vec<u8>) -> Option<bool> {
    let mut changed = false;
    let (mut last_in, mut last_out) = (0, 0);
    while let Some((id, ty)) = c.field(last_in)? {
        last_in = id;
        let start = c.pos;
        let drop = match (id, ty) {
            (CONVERTED_TYPE, T_I32) => {
                let v = zigzag(c.varint()?);
                !ConvertedType::VARIANTS.iter().any(|k| *k as i64 == v)
            }
            (LOGICAL_TYPE, T_STRUCT) => {
                let variant = c.clone().field(0)?;
                c.skip(ty, 0)?;
                variant.is_some_and(|(v, _)| !KNOWN_LOGICAL.contains(&v))
            }
            _ => {
                c.skip(ty, 0)?;
                false
            }
        };
        if drop {
            changed = true;
            continue;
        }
        write_header(out, id, last_out, ty);
        last_out = id;
        out.extend_from_slice(&c.buf[start..c.pos]);
    }
    out.push(0);
    Some(changed)
}

fn write_header(out: &mut Vec<u8>, id: i16, last: i16, ty: u8) {
    let delta = i32::from(id) - i32::from(last);
    if (1..=15).contains(&delta) {
        out.push(((delta as u8) << 4) | ty);
    } else {
        out.push(ty);
        let mut v = u64::from(((id << 1) ^ (id >> 15)) as u16);
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
}

fn zigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A read position in Thrift compact bytes; every read is bounds-checked (`None` past the end).
#[derive(Clone)]
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Where the last field header read began.
    header_start: usize,
}

impl<'a> Cursor<'a> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn bytes(&mut self, n: u64) -> Option<()> {
        let end = self.pos.checked_add(usize::try_from(n).ok()?)?;
        if end > self.buf.len() {
            return None;
        }
        self.pos = end;
        Some(())
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// The next field header: `Some(None)` at the struct's stop byte, `None` when malformed.
    fn field(&mut self, last: i16) -> Option<Option<(i16, u8)>> {
        self.header_start = self.pos;
        let b = self.byte()?;
        if b == 0 {
            return Some(None);
        }
        let ty = b & 0x0f;
        let delta = i16::from(b >> 4);
        let id = if delta == 0 {
            i16::try_from(zigzag(self.varint()?)).ok()?
        } else {
            last.checked_add(delta)?
        };
        Some(Some((id, ty)))
    }

    /// A list or set header: element count and element type.
    fn list_header(&mut self) -> Option<(u64, u8)> {
        let b = self.byte()?;
        let count = match b >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        Some((count, b & 0x0f))
    }

    /// Skips a value of type `ty` (a field's: booleans carry no byte).
    fn skip(&mut self, ty: u8, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match ty {
            T_BOOL_TRUE | T_BOOL_FALSE => Some(()),
            _ => self.skip_value(ty, depth),
        }
    }

    /// Skips a value of type `ty` as a collection element (booleans take one byte).
    fn skip_value(&mut self, ty: u8, depth: usize) -> Option<()> {
        match ty {
            T_BOOL_TRUE | T_BOOL_FALSE | T_BYTE => self.bytes(1),
            T_I16 | T_I32 | T_I64 => self.varint().map(drop),
            T_DOUBLE => self.bytes(8),
            T_BINARY => {
                let n = self.varint()?;
                self.bytes(n)
            }
            T_LIST | T_SET => {
                let (count, elem) = self.list_header()?;
                // Every element takes at least one byte, so a huge count ends at the buffer's end.
                for _ in 0..count {
                    self.skip_value(elem, depth + 1)?;
                }
                Some(())
            }
            T_MAP => {
                let count = self.varint()?;
                if count > 0 {
                    let kv = self.byte()?;
                    for _ in 0..count {
                        self.skip_value(kv >> 4, depth + 1)?;
                        self.skip_value(kv & 0x0f, depth + 1)?;
                    }
                }
                Some(())
            }
            T_STRUCT => {
                if depth > MAX_DEPTH {
                    return None;
                }
                let mut last = 0;
                while let Some((id, ty)) = self.field(last)? {
                    last = id;
                    self.skip(ty, depth + 1)?;
                }
                Some(())
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
