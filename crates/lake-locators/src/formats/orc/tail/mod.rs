//! The ORC file tail (postscript and footer) read without orc-rust's schema conversion, which
//! asserts that the root type is a struct: a file whose top-level type is another (a bare
//! `int`, `string`, `array<…>`, … as pyorc and the Java/C++ writers allow) is recognised here
//! before orc-rust sees it, so that it is counted from its stripes instead of panicking.
//!
//! The footer protobuf is walked by hand (only the stripes, the root type and the row count
//! are needed), by the one protobuf reader of the ORC locator ([`fields`], which the
//! postscript check of [`super`] uses too). A compressed footer is inflated by orc-rust's own `Decompressor`; its
//! `Compression` has no public constructor, so it is taken from the metadata of a tiny
//! in-memory ORC tail with the same codec and block size (whose footer is an uncompressed
//! "original" chunk, which every ORC codec allows).

use std::io::Read;

use bytes::Bytes;
use orc_rust::compression::{Compression, Decompressor};
use orc_rust::reader::ChunkReader;

/// `Type.Kind` of a struct (orc_proto.proto).
pub(super) const STRUCT: u64 = 12;

/// A footer larger than this is not walked here (orc-rust reads it, or refuses it).
const MAX_FOOTER: u64 = 64 * 1024 * 1024;

/// One stripe of the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stripe {
    pub(super) offset: u64,
    pub(super) index_length: u64,
    pub(super) data_length: u64,
    pub(super) footer_length: u64,
    pub(super) rows: u64,
}

/// What the tail says of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tail {
    /// `Type.Kind` of the root type (the footer's first type).
    pub(super) root_kind: u64,
    /// The root type's precision and scale (decimals), when written.
    pub(super) precision: Option<u64>,
    pub(super) scale: Option<u64>,
    pub(super) stripes: Vec<Stripe>,
    /// The footer's row count.
    pub(super) rows: u64,
}

/// The name of an ORC type kind, for messages.
pub(super) fn kind_name(kind: u64) -> String {
    const NAMES: [&str; 19] = [
        "boolean",
        "tinyint",
        "smallint",
        "int",
        "bigint",
        "float",
        "double",
        "string",
        "binary",
        "timestamp",
        "array",
        "map",
        "struct",
        "uniontype",
        "decimal",
        "date",
        "varchar",
        "char",
        "timestamp with local time zone",
    ];
    usize::try_from(kind)
        .ok()
        .and_then(|k| NAMES.get(k))
        .map_or_else(|| format!("type kind {kind}"), |n| (*n).to_string())
}

/// The file's tail, or `None` when it is not one this walker understands (orc-rust then reads
/// the file and reports what is wrong with it). May panic inside orc-rust's decompressor on a
/// damaged compressed footer: call it under the locators' guard.
pub(super) fn read_tail<R: ChunkReader>(r: &R) -> Option<Tail> {
    let len = r.len();
    let ps_len = u64::from(*r.get_bytes(len.checked_sub(1)?, 1).ok()?.first()?);
    let ps_start = len.checked_sub(1)?.checked_sub(ps_len)?;
    let ps = r.get_bytes(ps_start, ps_len).ok()?;
    let mut footer_len = None;
    let mut codec = 0;
    let mut block_size = None;
    for (field, v) in fields(&ps)? {
        match (field, v) {
            (1, Val::Int(n)) => footer_len = Some(n),
            (2, Val::Int(n)) => codec = n,
            (3, Val::Int(n)) => block_size = Some(n),
            _ => {}
        }
    }
    let footer_len = footer_len.filter(|&n| n <= MAX_FOOTER)?;
    let footer = r
        .get_bytes(ps_start.checked_sub(footer_len)?, footer_len)
        .ok()?;
    let footer = if codec == 0 {
        footer.to_vec()
    } else {
        let compression = compression(codec, block_size)?;
        let mut out = Vec::new();
        Decompressor::new(footer, Some(compression), Vec::new())
            .take(MAX_FOOTER + 1)
            .read_to_end(&mut out)
            .ok()?;
        if out.len() as u64 > MAX_FOOTER {
            return None;
        }
        out
    };
    parse_footer(&footer)
}

fn parse_footer(footer: &[u8]) -> Option<Tail> {
    let mut tail = Tail {
        root_kind: STRUCT,
        precision: None,
        scale: None,
        stripes: Vec::new(),
        rows: 0,
    };
    let mut seen_type = false;
    for (field, v) in fields(footer)? {
        match (field, v) {
            (3, Val::Bytes(b)) => {
                let mut s = Stripe {
                    offset: 0,
                    index_length: 0,
                    data_length: 0,
                    footer_length: 0,
                    rows: 0,
                };
                for (f, v) in fields(b)? {
                    let Val::Int(n) = v else { continue };
                    match f {
                        1 => s.offset = n,
                        2 => s.index_length = n,
                        3 => s.data_length = n,
                        4 => s.footer_length = n,
                        5 => s.rows = n,
                        _ => {}
                    }
                }
                tail.stripes.push(s);
            }
            (4, Val::Bytes(b)) if !seen_type => {
                seen_type = true;
                for (f, v) in fields(b)? {
                    match (f, v) {
                        (1, Val::Int(n)) => tail.root_kind = n,
                        (5, Val::Int(n)) => tail.precision = Some(n),
                        (6, Val::Int(n)) => tail.scale = Some(n),
                        _ => {}
                    }
                }
            }
            (6, Val::Int(n)) => tail.rows = n,
            _ => {}
        }
    }
    seen_type.then_some(tail)
}

/// orc-rust's `Compression` for codec `codec` (the postscript's `CompressionKind`) and block
/// size, from the metadata of a minimal tail: "ORC", a footer with one struct type stored as
/// an original chunk, an empty metadata section, and the postscript.
fn compression(codec: u64, block_size: Option<u64>) -> Option<Compression> {
    // Footer { headerLength: 3, contentLength: 3, types: [Type { kind: STRUCT }], numberOfRows: 0 }
    let footer = [0x08, 0x03, 0x10, 0x03, 0x22, 0x02, 0x08, 0x0c, 0x30, 0x00];
    let mut file = b"ORC".to_vec();
    // A chunk header: length << 1 | 1 (original, not compressed), 3 bytes little-endian.
    let header = ((footer.len() as u32) << 1) | 1;
    file.extend_from_slice(&header.to_le_bytes()[..3]);
    file.extend_from_slice(&footer);
    let mut ps = vec![0x08];
    write_varint(3 + footer.len() as u64, &mut ps);
    ps.push(0x10);
    write_varint(codec, &mut ps);
    if let Some(size) = block_size {
        ps.push(0x18);
        write_varint(size, &mut ps);
    }
    // metadataLength 0, then magic "ORC" (field 8000).
    ps.extend_from_slice(&[0x28, 0x00, 0x82, 0xf4, 0x03, 0x03, b'O', b'R', b'C']);
    file.extend_from_slice(&ps);
    file.push(u8::try_from(ps.len()).ok()?);
    let meta = orc_rust::reader::metadata::read_metadata(&mut Bytes::from(file)).ok()?;
    meta.compression()
}

/// Appends `v` as a protobuf varint.
fn write_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The protobuf varint at the start of `b`, which moves past it; `None` when `b` ends inside
/// it or it runs over ten bytes.
fn read_varint(b: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = b.split_first()?;
        *b = rest;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The field numbers of a protobuf message in order, or `None` when it does not parse.
pub(super) fn field_numbers(b: &[u8]) -> Option<Vec<u64>> {
    Some(fields(b)?.into_iter().map(|(n, _)| n).collect())
}

/// A protobuf field value.
pub(super) enum Val<'a> {
    Int(u64),
    Bytes(&'a [u8]),
    /// A 64- or 32-bit value (no field read here has one).
    Fixed,
}

/// The fields of a protobuf message in order, or `None` when it does not parse.
pub(super) fn fields(mut b: &[u8]) -> Option<Vec<(u64, Val<'_>)>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let key = read_varint(&mut b)?;
        let v = match key & 7 {
            0 => Val::Int(read_varint(&mut b)?),
            1 => {
                b = b.get(8..)?;
                Val::Fixed
            }
            2 => {
                let n = usize::try_from(read_varint(&mut b)?).ok()?;
                let (v, rest) = (b.get(..n)?, b.get(n..)?);
                b = rest;
                Val::Bytes(v)
            }
            5 => {
                b = b.get(4..)?;
                Val::Fixed
            }
            _ => return None,
        };
        out.push((key >> 3, v));
    }
    Some(out)
}

#[cfg(test)]
mod tests;
