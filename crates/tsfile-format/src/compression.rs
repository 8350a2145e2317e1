//! Page compression (reference §9): every codec decompresses with the page header's
//! uncompressed size as a hard bound — output past it is an error, never an allocation —
//! and compresses for every code a writer may use (LZO is read only: Java cannot read it).
//!
//! | code | on-disk form |
//! |---|---|
//! | UNCOMPRESSED | raw |
//! | SNAPPY | raw Snappy block |
//! | GZIP | one gzip member |
//! | LZ4 | raw LZ4 block, size from the page header |
//! | ZSTD | zstd frame |
//! | LZMA2 | `.xz` container |
//! | LZO | raw LZO1X stream (C++ only) |
//!
//! Each compressor sits behind a default-on cargo feature; a build without one reports
//! [`Error::Unsupported`] for that code.

use crate::error::{Error, Result};
use crate::types::CompressionType;

fn fail(codec: &'static str, offset: u64, reason: impl std::fmt::Display) -> Error {
    Error::Decompress {
        codec,
        offset,
        reason: reason.to_string(),
    }
}

fn size_mismatch(codec: &'static str, offset: u64, got: usize, declared: usize) -> Error {
    fail(
        codec,
        offset,
        format!("produced {got} bytes, the page header declares {declared}"),
    )
}

#[allow(dead_code)]
fn missing(codec: &'static str) -> Error {
    Error::Unsupported {
        what: "compression",
        reason: format!("{codec} support was not compiled in (enable the cargo feature)"),
    }
}

/// Reads a streaming decompressor into `out`, failing as soon as it would pass `limit`.
#[allow(dead_code)]
fn read_bounded(
    mut r: impl std::io::Read,
    out: &mut Vec<u8>,
    limit: usize,
    codec: &'static str,
    offset: u64,
) -> Result<()> {
    use std::io::Read;
    let start = out.len();
    // Grow with the real output (not the declared size): a lying header costs nothing.
    (&mut r)
        .take(limit as u64 + 1)
        .read_to_end(out)
        .map_err(|e| fail(codec, offset, e))?;
    let got = out.len() - start;
    if got != limit {
        return Err(size_mismatch(codec, offset, got, limit));
    }
    Ok(())
}

/// Decompresses a page payload. `uncompressed_size` comes from the page header; the
/// result has exactly that length or this is an error. `offset` is the payload's absolute
/// file offset, for messages.
pub fn decompress(
    codec: CompressionType,
    input: &[u8],
    uncompressed_size: usize,
    offset: u64,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    decompress_into(codec, input, uncompressed_size, offset, &mut out)?;
    Ok(out)
}

/// [`decompress`] appending to `out` (reusing its capacity across pages).
pub fn decompress_into(
    codec: CompressionType,
    input: &[u8],
    uncompressed_size: usize,
    offset: u64,
    out: &mut Vec<u8>,
) -> Result<()> {
    match codec {
        CompressionType::Uncompressed => {
            if input.len() != uncompressed_size {
                return Err(size_mismatch(
                    "UNCOMPRESSED",
                    offset,
                    input.len(),
                    uncompressed_size,
                ));
            }
            out.extend_from_slice(input);
            Ok(())
        }
        CompressionType::Snappy => snappy_decompress(input, uncompressed_size, offset, out),
        CompressionType::Gzip => gzip_decompress(input, uncompressed_size, offset, out),
        CompressionType::Lz4 => lz4_decompress(input, uncompressed_size, offset, out),
        CompressionType::Zstd => zstd_decompress(input, uncompressed_size, offset, out),
        CompressionType::Lzma2 => lzma2_decompress(input, uncompressed_size, offset, out),
        CompressionType::Lzo => lzo_decompress(input, uncompressed_size, offset, out),
    }
}

#[cfg(feature = "snappy")]
fn snappy_decompress(input: &[u8], size: usize, offset: u64, out: &mut Vec<u8>) -> Result<()> {
    let declared = snap::raw::decompress_len(input).map_err(|e| fail("SNAPPY", offset, e))?;
    if declared != size {
        return Err(size_mismatch("SNAPPY", offset, declared, size));
    }
    let start = out.len();
    out.resize(start + size, 0);
    let n = snap::raw::Decoder::new()
        .decompress(input, &mut out[start..])
        .map_err(|e| fail("SNAPPY", offset, e))?;
    if n != size {
        return Err(size_mismatch("SNAPPY", offset, n, size));
    }
    Ok(())
}

#[cfg(not(feature = "snappy"))]
fn snappy_decompress(_: &[u8], _: usize, _: u64, _: &mut Vec<u8>) -> Result<()> {
    Err(missing("SNAPPY"))
}

#[cfg(feature = "gzip")]
fn gzip_decompress(input: &[u8], size: usize, offset: u64, out: &mut Vec<u8>) -> Result<()> {
    read_bounded(
        flate2::read::GzDecoder::new(input),
        out,
        size,
        "GZIP",
        offset,
    )
}

#[cfg(not(feature = "gzip"))]
fn gzip_decompress(_: &[u8], _: usize, _: u64, _: &mut Vec<u8>) -> Result<()> {
    Err(missing("GZIP"))
}

/// The largest expansion an LZ4 block can achieve (a 255-length run per extra byte).
const LZ4_MAX_RATIO: usize = 255;

#[cfg(feature = "lz4")]
fn lz4_decompress(input: &[u8], size: usize, offset: u64, out: &mut Vec<u8>) -> Result<()> {
    // The output buffer must be allocated up front; refuse sizes no LZ4 block of this
    // length can reach so that a lying header cannot make us allocate.
    if size > input.len().saturating_mul(LZ4_MAX_RATIO) + 16 {
        return Err(fail(
            "LZ4",
            offset,
            format!(
                "{} bytes cannot inflate to the declared {size}",
                input.len()
            ),
        ));
    }
    let start = out.len();
    out.resize(start + size, 0);
    let n = lz4_flex::block::decompress_into(input, &mut out[start..])
        .map_err(|e| fail("LZ4", offset, e))?;
    if n != size {
        return Err(size_mismatch("LZ4", offset, n, size));
    }
    Ok(())
}

#[cfg(not(feature = "lz4"))]
fn lz4_decompress(_: &[u8], _: usize, _: u64, _: &mut Vec<u8>) -> Result<()> {
    Err(missing("LZ4"))
}

#[cfg(feature = "zstd")]
fn zstd_decompress(input: &[u8], size: usize, offset: u64, out: &mut Vec<u8>) -> Result<()> {
    let d = zstd::stream::read::Decoder::with_buffer(input).map_err(|e| fail("ZSTD", offset, e))?;
    read_bounded(d, out, size, "ZSTD", offset)
}

#[cfg(not(feature = "zstd"))]
fn zstd_decompress(_: &[u8], _: usize, _: u64, _: &mut Vec<u8>) -> Result<()> {
    Err(missing("ZSTD"))
}

#[cfg(feature = "lzma2")]
fn lzma2_decompress(input: &[u8], size: usize, offset: u64, out: &mut Vec<u8>) -> Result<()> {
    read_bounded(
        lzma_rust2::XzReader::new(input, false),
        out,
        size,
        "LZMA2",
        offset,
    )
}

#[cfg(not(feature = "lzma2"))]
fn lzma2_decompress(_: &[u8], _: usize, _: u64, _: &mut Vec<u8>) -> Result<()> {
    Err(missing("LZMA2"))
}

#[cfg(feature = "lzo")]
fn lzo_decompress(input: &[u8], size: usize, offset: u64, out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    lzo1x_decompress(input, size, out).map_err(|reason| fail("LZO", offset, reason))?;
    let got = out.len() - start;
    if got != size {
        return Err(size_mismatch("LZO", offset, got, size));
    }
    Ok(())
}

#[cfg(not(feature = "lzo"))]
fn lzo_decompress(_: &[u8], _: usize, _: u64, _: &mut Vec<u8>) -> Result<()> {
    Err(missing("LZO"))
}

/// A bounded LZO1X decompressor: the same instruction set as `lzokay` (whose compressor
/// the C++ library uses), with every length checked against the input left and the
/// output limit before anything is copied. Appends at most `limit` bytes to `out`.
#[cfg_attr(not(feature = "lzo"), allow(dead_code))]
fn lzo1x_decompress(
    input: &[u8],
    limit: usize,
    out: &mut Vec<u8>,
) -> std::result::Result<(), String> {
    let base = out.len();
    let mut ip = 0usize;
    let byte = |ip: &mut usize| -> std::result::Result<usize, String> {
        let b = *input.get(*ip).ok_or("input ended inside an instruction")?;
        *ip += 1;
        Ok(usize::from(b))
    };
    // A run of zero bytes extends a length by 255 each, then a final non-zero byte.
    let long_len = |ip: &mut usize, add: usize| -> std::result::Result<usize, String> {
        let mut zeros = 0usize;
        while input.get(*ip) == Some(&0) {
            zeros += 1;
            *ip += 1;
        }
        let b = byte(ip)?;
        zeros
            .checked_mul(255)
            .and_then(|z| z.checked_add(add + b))
            .ok_or_else(|| "length overflows".to_string())
    };
    let copy_literals =
        |ip: &mut usize, n: usize, out: &mut Vec<u8>| -> std::result::Result<(), String> {
            if n > input.len() - *ip {
                return Err(format!("literal run of {n} bytes past the input end"));
            }
            if out.len() - base + n > limit {
                return Err("output exceeds the declared size".into());
            }
            out.extend_from_slice(&input[*ip..*ip + n]);
            *ip += n;
            Ok(())
        };
    let mut state;
    let first = *input.first().ok_or("empty input")?;
    if first >= 22 {
        ip = 1;
        copy_literals(&mut ip, usize::from(first) - 17, out)?;
        state = 4;
    } else if first >= 18 {
        ip = 1;
        state = usize::from(first) - 17;
        copy_literals(&mut ip, state, out)?;
    } else {
        state = 0;
    }
    loop {
        let inst = byte(&mut ip)?;
        let (dist, len, next_state);
        if inst & 0xC0 != 0 {
            let h = byte(&mut ip)?;
            dist = (h << 3) + ((inst >> 2) & 7) + 1;
            len = (inst >> 5) + 1;
            next_state = inst & 3;
        } else if inst & 0x20 != 0 {
            let mut l = (inst & 0x1F) + 2;
            if l == 2 {
                l = long_len(&mut ip, 31)? + 2;
            }
            let d = byte(&mut ip)? | (byte(&mut ip)? << 8);
            dist = (d >> 2) + 1;
            len = l;
            next_state = d & 3;
        } else if inst & 0x10 != 0 {
            let mut l = (inst & 7) + 2;
            if l == 2 {
                l = long_len(&mut ip, 7)? + 2;
            }
            let d = byte(&mut ip)? | (byte(&mut ip)? << 8);
            let back = ((inst & 8) << 11) + (d >> 2);
            if back == 0 {
                // End of stream marker.
                return if ip == input.len() {
                    Ok(())
                } else {
                    Err(format!("{} bytes after the end marker", input.len() - ip))
                };
            }
            dist = back + 16384;
            len = l;
            next_state = d & 3;
        } else if state == 0 {
            let mut l = inst + 3;
            if l == 3 {
                l = long_len(&mut ip, 15)? + 3;
            }
            copy_literals(&mut ip, l, out)?;
            state = 4;
            continue;
        } else if state != 4 {
            let h = byte(&mut ip)?;
            dist = (inst >> 2) + (h << 2) + 1;
            len = 2;
            next_state = inst & 3;
        } else {
            let h = byte(&mut ip)?;
            dist = (inst >> 2) + (h << 2) + 2049;
            len = 3;
            next_state = inst & 3;
        }
        let produced = out.len() - base;
        if dist > produced {
            return Err(format!(
                "match distance {dist} before the start of the output"
            ));
        }
        if produced + len > limit {
            return Err("output exceeds the declared size".into());
        }
        let from = out.len() - dist;
        for i in 0..len {
            let b = out[from + i];
            out.push(b);
        }
        copy_literals(&mut ip, next_state, out)?;
        state = next_state;
    }
}

/// Compresses a page payload with `codec`. LZO is refused: only the C++ library writes it
/// and Java cannot read it.
pub fn compress(codec: CompressionType, input: &[u8]) -> Result<Vec<u8>> {
    match codec {
        CompressionType::Uncompressed => Ok(input.to_vec()),
        CompressionType::Snappy => snappy_compress(input),
        CompressionType::Gzip => gzip_compress(input),
        CompressionType::Lz4 => lz4_compress(input),
        CompressionType::Zstd => zstd_compress(input),
        CompressionType::Lzma2 => lzma2_compress(input),
        CompressionType::Lzo => Err(Error::Unsupported {
            what: "compression",
            reason: "LZO is read only: Java readers cannot decompress it".into(),
        }),
    }
}

fn compress_fail(codec: &'static str, e: impl std::fmt::Display) -> Error {
    Error::Unsupported {
        what: "compression",
        reason: format!("{codec} compression failed: {e}"),
    }
}

#[cfg(feature = "snappy")]
fn snappy_compress(input: &[u8]) -> Result<Vec<u8>> {
    snap::raw::Encoder::new()
        .compress_vec(input)
        .map_err(|e| compress_fail("SNAPPY", e))
}

#[cfg(not(feature = "snappy"))]
fn snappy_compress(_: &[u8]) -> Result<Vec<u8>> {
    Err(missing("SNAPPY"))
}

#[cfg(feature = "gzip")]
fn gzip_compress(input: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(input).map_err(|e| compress_fail("GZIP", e))?;
    e.finish().map_err(|e| compress_fail("GZIP", e))
}

#[cfg(not(feature = "gzip"))]
fn gzip_compress(_: &[u8]) -> Result<Vec<u8>> {
    Err(missing("GZIP"))
}

#[cfg(feature = "lz4")]
fn lz4_compress(input: &[u8]) -> Result<Vec<u8>> {
    // liblz4's match choices, not lz4_flex's, so that pages equal the C++ writer's.
    crate::lz4::compress(input).ok_or_else(|| {
        compress_fail(
            "LZ4",
            format!(
                "{} bytes exceed the {} bytes an LZ4 block can hold",
                input.len(),
                crate::lz4::MAX_INPUT_SIZE
            ),
        )
    })
}

#[cfg(not(feature = "lz4"))]
fn lz4_compress(_: &[u8]) -> Result<Vec<u8>> {
    Err(missing("LZ4"))
}

#[cfg(feature = "zstd")]
fn zstd_compress(input: &[u8]) -> Result<Vec<u8>> {
    zstd::bulk::compress(input, 3).map_err(|e| compress_fail("ZSTD", e))
}

#[cfg(not(feature = "zstd"))]
fn zstd_compress(_: &[u8]) -> Result<Vec<u8>> {
    Err(missing("ZSTD"))
}

#[cfg(feature = "lzma2")]
fn lzma2_compress(input: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut w = lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(6))
        .map_err(|e| compress_fail("LZMA2", e))?;
    w.write_all(input).map_err(|e| compress_fail("LZMA2", e))?;
    w.finish().map_err(|e| compress_fail("LZMA2", e))
}

#[cfg(not(feature = "lzma2"))]
fn lzma2_compress(_: &[u8]) -> Result<Vec<u8>> {
    Err(missing("LZMA2"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [CompressionType; 6] = [
        CompressionType::Uncompressed,
        CompressionType::Snappy,
        CompressionType::Gzip,
        CompressionType::Lz4,
        CompressionType::Zstd,
        CompressionType::Lzma2,
    ];

    fn sample() -> Vec<u8> {
        (0..5000u32).flat_map(|i| (i % 97).to_be_bytes()).collect()
    }

    #[test]
    fn every_writable_codec_round_trips() {
        let data = sample();
        for c in ALL {
            let z = compress(c, &data).unwrap();
            assert_eq!(decompress(c, &z, data.len(), 0).unwrap(), data, "{c:?}");
        }
    }

    #[test]
    fn a_payload_larger_than_declared_is_refused() {
        let data = sample();
        for c in ALL {
            let z = compress(c, &data).unwrap();
            let err = decompress(c, &z, data.len() - 1, 9).unwrap_err();
            assert!(
                matches!(err, Error::Decompress { offset: 9, .. }),
                "{c:?}: {err}"
            );
        }
    }

    #[cfg(feature = "lzo")]
    #[test]
    fn lzo_reads_lzokay_output_and_refuses_bombs() {
        let data = sample();
        let z = lzokay_native::compress(&data).unwrap();
        assert_eq!(
            decompress(CompressionType::Lzo, &z, data.len(), 0).unwrap(),
            data
        );
        assert!(decompress(CompressionType::Lzo, &z, data.len() - 1, 0).is_err());
        assert!(decompress(CompressionType::Lzo, &z[..z.len() / 2], data.len(), 0).is_err());
        assert!(compress(CompressionType::Lzo, &data).is_err());
    }

    #[test]
    fn lying_lz4_size_is_refused_before_allocating() {
        let err =
            decompress(CompressionType::Lz4, &[0x10, b'a'], u32::MAX as usize, 0).unwrap_err();
        assert!(matches!(err, Error::Decompress { .. }));
    }
}
