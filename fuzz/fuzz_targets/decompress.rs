//! Fuzzes page decompression with the declared size as a hard bound: any payload gives
//! exactly `uncompressed_size` bytes or an error, and a payload that compresses back
//! decompresses to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tsfile_format::compression;
use tsfile_format::types::CompressionType;

const CODECS: [CompressionType; 6] = [
    CompressionType::Snappy,
    CompressionType::Gzip,
    CompressionType::Lzo,
    CompressionType::Lz4,
    CompressionType::Lzma2,
    CompressionType::Uncompressed,
];

fuzz_target!(|data: &[u8]| {
    let [sel, s0, s1, bytes @ ..] = data else {
        return;
    };
    let codec = CODECS[usize::from(sel % 6)];
    let size = usize::from(u16::from_le_bytes([*s0, *s1])) * 4;
    if let Ok(out) = compression::decompress(codec, bytes, size, 0) {
        assert_eq!(out.len(), size);
    }
    if sel & 0x80 != 0 && codec != CompressionType::Lzo {
        let z = compression::compress(codec, bytes).unwrap();
        assert_eq!(
            compression::decompress(codec, &z, bytes.len(), 0).unwrap(),
            bytes
        );
    }
});
