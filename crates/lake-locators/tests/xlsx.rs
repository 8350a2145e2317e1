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
    zip_of(&[(name, content)])
}

/// A valid ZIP archive holding these files, stored (not compressed).
fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    let le16 = |v: u16, o: &mut Vec<u8>| o.extend_from_slice(&v.to_le_bytes());
    let le32 = |v: u32, o: &mut Vec<u8>| o.extend_from_slice(&v.to_le_bytes());
    for (name, content) in files {
        let crc = crc32(content);
        let local = out.len() as u32;
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
        le32(0x0201_4b50, &mut central);
        for v in [20u16, 20, 0, 0, 0, 0] {
            le16(v, &mut central);
        }
        le32(crc, &mut central);
        le32(content.len() as u32, &mut central);
        le32(content.len() as u32, &mut central);
        le16(name.len() as u16, &mut central);
        for v in [0u16, 0, 0, 0] {
            le16(v, &mut central);
        }
        le32(0, &mut central);
        le32(local, &mut central);
        central.extend_from_slice(name.as_bytes());
    }
    let central_at = out.len() as u32;
    out.extend_from_slice(&central);
    le32(0x0605_4b50, &mut out);
    let n = files.len() as u16;
    for v in [0u16, 0, n, n] {
        le16(v, &mut out);
    }
    le32(central.len() as u32, &mut out);
    le32(central_at, &mut out);
    le16(0, &mut out);
    out
}

/// A workbook of one worksheet whose `<sheetData>` is `rows`.
fn workbook_of(rows: &str) -> Vec<u8> {
    let rels = r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#;
    let workbook = r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>"#;
    let wb_rels = r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#;
    let sheet = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{rows}</sheetData></worksheet>"#
    );
    zip_of(&[
        ("_rels/.rels", rels.as_bytes()),
        ("xl/workbook.xml", workbook.as_bytes()),
        ("xl/_rels/workbook.xml.rels", wb_rels.as_bytes()),
        ("xl/worksheets/sheet1.xml", sheet.as_bytes()),
    ])
}

/// Values under an empty header cell, or right of the header, are kept in columns named as
/// pandas names them (`Unnamed: N`, N the 0-based sheet column), in sheet order; a row whose
/// only value is there counts. Reads with the stored schema, and without it, agree.
#[test]
fn columns_without_a_header_cell_are_kept() {
    let s = |r: &str, v: &str| format!(r#"<c r="{r}" t="inlineStr"><is><t>{v}</t></is></c>"#);
    let n = |r: &str, v: &str| format!(r#"<c r="{r}"><v>{v}</v></c>"#);
    let rows = [
        format!(r#"<row r="1">{}{}</row>"#, s("A1", "a"), s("C1", "c")),
        format!(
            r#"<row r="2">{}{}{}</row>"#,
            n("A2", "1"),
            n("B2", "10"),
            s("C2", "x")
        ),
        format!(r#"<row r="3">{}{}</row>"#, n("A3", "2"), s("C3", "y")),
        format!(r#"<row r="4">{}</row>"#, s("E4", "only here")),
    ]
    .concat();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unnamed.xlsx");
    std::fs::write(&path, workbook_of(&rows)).unwrap();
    let idx = XlsxLocator
        .index(&path, &IndexOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let names = common::names(idx.schema.fields());
    assert_eq!(names, ["a", "Unnamed: 1", "c", "Unnamed: 4"]);
    assert_eq!(idx.row_count, 3);
    let want = vec![
        serde_json::json!({"a": 1, "Unnamed: 1": 10, "c": "x", "Unnamed: 4": null}),
        serde_json::json!({"a": 2, "Unnamed: 1": null, "c": "y", "Unnamed: 4": null}),
        serde_json::json!({"a": null, "Unnamed: 1": null, "c": null, "Unnamed: 4": "only here"}),
    ];
    assert_eq!(read(&path, Some(&idx), 0..3), want);
    assert_eq!(read(&path, None, 0..3), want);
    assert_eq!(read(&path, Some(&idx), 2..3), want[2..].to_vec());
    assert_eq!(
        idx.stats.unwrap()["Unnamed: 1"],
        lake_locators::ColumnStats::Int { min: 10, max: 10 }
    );
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

/// Header names as openpyxl and pandas give them, from the sheet XML: a numeric `0.0`
/// header stays `0.0` (calamine reads it as the float 0), strings keep the leading and
/// trailing whitespace calamine trims; the data read under those names.
#[test]
fn header_names_as_stored() {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/external/calamine/tests"
    ));
    if !dir.is_dir() {
        println!("skipped: {} is absent", dir.display());
        return;
    }
    let names = |file: &str| -> Vec<String> {
        let idx = common::index_every(&XlsxLocator, &dir.join(file), 100).unwrap();
        idx.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    };
    assert_eq!(names("no-header.xlsx"), ["a", "0.0"]);
    assert_eq!(
        names("whitespace_trim.xlsx"),
        [
            "  trimmed value  ",
            "\t\n value with tabs \n",
            " \t\n",
            "clean text"
        ]
    );
    let rows = read(&dir.join("no-header.xlsx"), None, 0..1);
    assert_eq!(rows, [serde_json::json!({"a": "b", "0.0": 1})]);
}
