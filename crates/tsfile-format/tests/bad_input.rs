//! Bad input: truncated footers and bit-flipped metadata never panic, always give `Ok` or a
//! typed error, and never allocate far beyond the input (hostile counts are checked against
//! the remaining bytes before any allocation).

use tsfile_format::Error;
use tsfile_format::cursor::{Cursor, Writer};
use tsfile_format::file::{FileTail, TAIL_LEN, TsFileMetadata, TsFileMetadataV3, decode_head};
use tsfile_format::metadata_index::MetadataIndexNode;
use tsfile_format::timeseries::TimeseriesMetadata;
use tsfile_format::types::{FormatVersion, IndexLevel};

use crate::alloc::largest_allocation;
use crate::walk::{corpus_dir, tsfiles, walk};

/// The largest single allocation allowed while decoding `len` input bytes. Decoded element
/// structs are bigger than their smallest encoding (a 1-byte null segment becomes a 24-byte
/// `Option<String>`), so the bound is a fixed multiple of the input, never a count read from
/// it.
fn allowed(len: usize) -> usize {
    32 * len + 1024
}

/// Decodes metadata as an opener would; any outcome but a panic is fine. Returns whether it
/// decoded, after checking that a decoded value re-encodes to something that decodes equal.
fn decode_metadata(version: FormatVersion, bytes: &[u8], base: u64) -> bool {
    let ((ok, detail), largest) = largest_allocation(|| match version {
        FormatVersion::V4 => match TsFileMetadata::decode(bytes, base) {
            Ok(m) => {
                for t in &m.table_roots {
                    let _ = t.root.validate(base, None);
                }
                let mut w = Writer::new();
                m.encode(&mut w);
                let again = TsFileMetadata::decode(w.as_bytes(), base);
                assert_eq!(
                    again.as_ref(),
                    Ok(&m),
                    "re-encoded metadata decodes differently"
                );
                (true, String::new())
            }
            Err(e) => (false, e.to_string()),
        },
        FormatVersion::V3 => match TsFileMetadataV3::decode(bytes, base) {
            Ok(m) => {
                let mut w = Writer::new();
                m.encode(&mut w);
                let again = TsFileMetadataV3::decode(w.as_bytes(), base);
                assert_eq!(
                    again.as_ref(),
                    Ok(&m),
                    "re-encoded metadata decodes differently"
                );
                (true, String::new())
            }
            Err(e) => (false, e.to_string()),
        },
    });
    assert!(
        largest <= allowed(bytes.len()),
        "decoding {} bytes allocated {largest} bytes at once ({detail})",
        bytes.len()
    );
    // Every error message names a byte offset or what is unsupported.
    assert!(
        ok || detail.contains("byte") || detail.contains("unsupported"),
        "{detail}"
    );
    ok
}

/// Opens a (possibly truncated) file the way a reader does: head, tail, metadata.
fn open(bytes: &[u8]) {
    let Ok(version) = decode_head(bytes.get(..7).unwrap_or(bytes)) else {
        return;
    };
    if (bytes.len() as u64) < TAIL_LEN {
        return;
    }
    let size = bytes.len() as u64;
    let Ok(tail) = FileTail::decode(&bytes[bytes.len() - TAIL_LEN as usize..], size) else {
        return;
    };
    let r = tail.metadata_range(size);
    decode_metadata(version, &bytes[r.start as usize..r.end as usize], r.start);
}

#[test]
fn truncated_footers_are_errors_not_panics() {
    let mut cuts = 0;
    for sub in ["tsfile", "tsfile-v3"] {
        let Some(dir) = corpus_dir(sub) else { return };
        for path in tsfiles(&dir) {
            let bytes = std::fs::read(&path).unwrap();
            let version = decode_head(&bytes[..7]).unwrap();
            let size = bytes.len() as u64;
            let tail = FileTail::decode(&bytes[bytes.len() - 10..], size).unwrap();
            let range = tail.metadata_range(size);
            let meta = &bytes[range.start as usize..range.end as usize];
            // V3 metadata without its optional Bloom part is complete after `meta_offset`.
            let v3_short = match version {
                FormatVersion::V3 => {
                    let m = TsFileMetadataV3::decode(meta, range.start).unwrap();
                    let mut w = Writer::new();
                    m.root.encode(&mut w);
                    Some(w.len() + 8)
                }
                FormatVersion::V4 => None,
            };
            // The metadata cut short at every byte: never a complete structure.
            for n in 0..meta.len() {
                assert!(
                    !decode_metadata(version, &meta[..n], range.start) || Some(n) == v3_short,
                    "{}: metadata prefix of {n} bytes decoded",
                    path.display()
                );
                cuts += 1;
            }
            // The file cut anywhere inside its footer (metadata or tail), then opened.
            for cut in range.start as usize..bytes.len() {
                open(&bytes[..cut]);
                cuts += 1;
            }
        }
    }
    println!("{cuts} truncations decoded without panic");
}

#[test]
fn bit_flips_in_metadata_never_panic() {
    let Some(dir) = corpus_dir("tsfile") else {
        return;
    };
    let mut flips = 0;
    let mut decoded = 0;
    for name in [
        "table_all_types",
        "table_null_tags",
        "file_properties",
        "tree_path_depths",
        "tree_many_devices",
    ] {
        let bytes = std::fs::read(dir.join(format!("{name}.tsfile"))).unwrap();
        let size = bytes.len() as u64;
        let tail = FileTail::decode(&bytes[bytes.len() - 10..], size).unwrap();
        let range = tail.metadata_range(size);
        let mut meta = bytes[range.start as usize..range.end as usize].to_vec();
        for bit in 0..meta.len() * 8 {
            meta[bit / 8] ^= 1 << (bit % 8);
            if decode_metadata(FormatVersion::V4, &meta, range.start) {
                decoded += 1;
            }
            meta[bit / 8] ^= 1 << (bit % 8);
            flips += 1;
        }
    }
    println!("{flips} bit flips, {decoded} still decoded");
    assert!(flips > 10_000);
}

#[test]
fn truncated_and_flipped_index_structures_are_typed_errors() {
    let Some(dir) = corpus_dir("tsfile") else {
        return;
    };
    for name in ["table_wide", "tree_mixed_aligned", "table_null_tags"] {
        let bytes = std::fs::read(dir.join(format!("{name}.tsfile"))).unwrap();
        let w = walk(name, &bytes);
        for s in w.series.iter().take(40) {
            let raw = &bytes[s.offset as usize..s.offset as usize + s.len];
            for n in 0..raw.len() {
                let (r, largest) = largest_allocation(|| {
                    TimeseriesMetadata::decode(&mut Cursor::new(&raw[..n], s.offset))
                });
                assert!(r.is_err(), "{name}: TimeseriesMetadata prefix {n} decoded");
                assert!(largest <= allowed(n));
            }
            let mut flipped = raw.to_vec();
            for bit in 0..flipped.len() * 8 {
                flipped[bit / 8] ^= 1 << (bit % 8);
                let (_, largest) = largest_allocation(|| {
                    TimeseriesMetadata::decode(&mut Cursor::new(&flipped, s.offset))
                });
                assert!(largest <= allowed(flipped.len()));
                flipped[bit / 8] ^= 1 << (bit % 8);
            }
        }
    }
}

#[test]
fn hostile_counts_do_not_allocate() {
    // A node claiming 2^32 − 1 entries, a DeviceID claiming as many segments, a schema and a
    // Bloom filter claiming huge sizes: each is refused before allocating.
    let cases: &[(&[u8], IndexLevel)] = &[
        (&[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0], IndexLevel::Device),
        (&[0x01, 0xff, 0xff, 0xff, 0xff, 0x0f, 0], IndexLevel::Device),
        (
            &[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0],
            IndexLevel::Measurement,
        ),
    ];
    for (bytes, level) in cases {
        let (r, largest) = largest_allocation(|| {
            MetadataIndexNode::decode(&mut Cursor::new(bytes, 0), FormatVersion::V4, *level)
        });
        assert!(matches!(r, Err(Error::LengthOutOfBounds { .. })), "{r:?}");
        assert!(largest <= allowed(bytes.len()));
    }
    let meta: &[&[u8]] = &[
        &[0x00, 0xff, 0xff, 0xff, 0xff, 0x0f],
        &[
            0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f,
        ],
        &[
            0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0xfe, 0xff, 0xff, 0xff, 0x0f,
        ],
    ];
    for bytes in meta {
        assert!(!decode_metadata(FormatVersion::V4, bytes, 0));
    }
}
