//! The XLSX locator: logical blocks on the corpus workbook (first sheet in workbook order),
//! ranged reads that stop after the range, and typed errors for files that are not XLSX.

use crate::common;
use std::path::{Path, PathBuf};

use lake_locators::{
    Error, FileIndex, IndexOptions, Locator, ReadRequest, StatsColumns, xlsx::XlsxLocator,
};
use serde_json::Value;

fn workbook() -> Option<PathBuf> {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/lake/lake/sheets/report.xlsx"
    ));
    if path.is_file() {
        Some(path.to_path_buf())
    } else {
        println!("skipped: {} is absent", path.display());
        None
    }
}

fn read(path: &Path, idx: Option<&FileIndex>, rows: std::ops::Range<u64>) -> Vec<Value> {
    common::read_rows(&XlsxLocator, path, &common::request(idx, rows, None, 7))
}

#[test]
fn logical_blocks_and_ranged_reads() {
    let Some(path) = workbook() else { return };
    let idx = XlsxLocator
        .index(
            &path,
            &IndexOptions {
                stride: 1000,
                stats: StatsColumns::None,
            },
        )
        .unwrap();
    assert!(idx.stats.is_none());
    let blocks: Vec<(u64, u64, Option<u64>)> = idx
        .blocks
        .iter()
        .map(|b| (b.first_row, b.row_count, b.first_byte))
        .collect();
    assert_eq!(
        blocks,
        [
            (0, 1000, None),
            (1000, 1000, None),
            (2000, idx.row_count - 2000, None)
        ]
    );
    let whole = read(&path, Some(&idx), 0..idx.row_count);
    assert_eq!(whole.len() as u64, idx.row_count);
    // `gid` counts up from the file's first global row, so it checks the row order.
    let gid0 = whole[0]["gid"].as_i64().unwrap();
    for (k, r) in whole.iter().enumerate() {
        assert_eq!(r["gid"].as_i64(), Some(gid0 + k as i64));
    }
    let n = idx.row_count;
    for (a, b) in [(0, 1), (999, 1001), (n - 3, n + 5), (n, n + 1), (5, 5)] {
        let want = &whole[a as usize..b.min(n) as usize];
        assert_eq!(read(&path, Some(&idx), a..b), want, "indexed {a}..{b}");
        assert_eq!(read(&path, None, a..b), want, "direct {a}..{b}");
        let schema_only = ReadRequest {
            rows: a..b,
            schema: Some(idx.schema.clone()),
            ..ReadRequest::default()
        };
        let got: usize = XlsxLocator
            .read(&path, &schema_only)
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum();
        assert_eq!(got, want.len(), "schema only {a}..{b}");
    }
}

/// CRC-32 (IEEE) of `data`, for the hand-made ZIP below.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A valid ZIP archive holding one stored file.
fn zip_with(name: &str, content: &[u8]) -> Vec<u8> {
    let crc = crc32(content);
    let mut out = Vec::new();
    let le16 = |v: u16, o: &mut Vec<u8>| o.extend_from_slice(&v.to_le_bytes());
    let le32 = |v: u32, o: &mut Vec<u8>| o.extend_from_slice(&v.to_le_bytes());
    le32(0x0403_4b50, &mut out);
    for v in [20u16, 0, 0, 0, 0] {
        le16(v, &mut out);
    }
    le32(crc, &mut out);
    le32(content.len() as u32, &mut out);
    le32(content.len() as u32, &mut out);
    le16(name.len() as u16, &mut out);
    le16(0, &mut out);
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(content);
    let central = out.len() as u32;
    le32(0x0201_4b50, &mut out);
    for v in [20u16, 20, 0, 0, 0, 0] {
        le16(v, &mut out);
    }
    le32(crc, &mut out);
    le32(content.len() as u32, &mut out);
    le32(content.len() as u32, &mut out);
    le16(name.len() as u16, &mut out);
    for v in [0u16, 0, 0, 0] {
        le16(v, &mut out);
    }
    le32(0, &mut out);
    le32(0, &mut out);
    out.extend_from_slice(name.as_bytes());
    let central_len = out.len() as u32 - central;
    le32(0x0605_4b50, &mut out);
    for v in [0u16, 0, 1, 1] {
        le16(v, &mut out);
    }
    le32(central_len, &mut out);
    le32(central, &mut out);
    le16(0, &mut out);
    out
}

#[test]
fn files_that_are_not_xlsx_give_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    for (name, data) in [
        ("zip.xlsx", zip_with("hello.txt", b"hello")),
        ("junk.xlsx", b"PK\x03\x04 not really a zip".to_vec()),
        ("empty.xlsx", Vec::new()),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &data).unwrap();
        let err = XlsxLocator
            .index(&path, &IndexOptions::default())
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains(path.to_str().unwrap()), "{text}");
        assert!(
            matches!(
                err,
                Error::Malformed {
                    offset: Some(0),
                    ..
                }
            ),
            "{name}: {text}"
        );
        assert!(XlsxLocator.read(&path, &ReadRequest::default()).is_err());
    }
}
