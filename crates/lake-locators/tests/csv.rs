//! The delimited locator on small hand-written files: checkpoints at stride boundaries (a
//! quoted field spanning one, empty lines exactly at one, a file of exactly `stride` rows),
//! reads that seek to checkpoints, projections, and typed errors for bad input.

use crate::common::{self, checkpoints, malformed, write};
use std::path::Path;

use lake_locators::{
    Error, FileIndex, IndexOptions, Locator, ReadRequest, StatsColumns, csv::DelimitedLocator,
    types,
};
use serde_json::{Value, json};

fn index(path: &Path, stride: u64) -> lake_locators::Result<FileIndex> {
    common::index_every(&DelimitedLocator, path, stride)
}

fn read(
    path: &Path,
    idx: Option<&FileIndex>,
    rows: std::ops::Range<u64>,
    projection: Option<&[String]>,
) -> Vec<Value> {
    common::read_rows(
        &DelimitedLocator,
        path,
        &common::request(idx, rows, projection, 2),
    )
}

fn offset(data: &[u8], needle: &[u8]) -> u64 {
    data.windows(needle.len())
        .position(|w| w == needle)
        .unwrap() as u64
}

/// Every read of every range, indexed or direct, agrees with a read of the whole file.
fn all_ranges_agree(path: &Path, idx: &FileIndex) {
    let whole = read(path, Some(idx), 0..idx.row_count, None);
    assert_eq!(whole.len() as u64, idx.row_count);
    for a in 0..=idx.row_count {
        for b in a..=idx.row_count + 1 {
            let want = &whole[a as usize..(b.min(idx.row_count)) as usize];
            assert_eq!(read(path, Some(idx), a..b, None), want, "indexed {a}..{b}");
            assert_eq!(read(path, None, a..b, None), want, "direct {a}..{b}");
        }
    }
}

#[test]
fn quoted_field_spanning_a_stride_boundary() {
    let dir = tempfile::tempdir().unwrap();
    // Row 1's quoted field holds a line break followed by text that looks like a record: a
    // line-based scanner would put the stride-2 checkpoint inside it.
    let data = b"id,name\n1,a\n2,\"b\n3,fake\"\n3,c\n4,\"d,\"\"e\"\"\"\n5,e\n";
    let path = write(&dir, "q.csv", data);
    let idx = index(&path, 2).unwrap();
    assert_eq!(idx.row_count, 5);
    assert_eq!(
        checkpoints(&idx),
        [(0, 8), (2, offset(data, b"3,c")), (4, offset(data, b"5,e"))]
    );
    assert_eq!(
        idx.blocks[0].total_byte_size,
        Some(offset(data, b"3,c") - 8)
    );
    assert_eq!(
        read(&path, Some(&idx), 1..4, None),
        [
            json!({"id": 2, "name": "b\n3,fake"}),
            json!({"id": 3, "name": "c"}),
            json!({"id": 4, "name": "d,\"e\""}),
        ]
    );
    all_ranges_agree(&path, &idx);
}

#[test]
fn empty_lines_exactly_at_a_stride_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let data = b"a,b\r\n\r\n1,x\r\n2,y\r\n\r\n\r\n3,z\r\n4,\"w\r\n\r\nv\"\r\n\r\n5,u";
    let path = write(&dir, "e.csv", data);
    let idx = index(&path, 2).unwrap();
    assert_eq!(idx.row_count, 5);
    assert_eq!(
        checkpoints(&idx),
        [
            (0, offset(data, b"1,x")),
            (2, offset(data, b"3,z")),
            (4, offset(data, b"5,u"))
        ]
    );
    assert_eq!(
        read(&path, Some(&idx), 3..5, None),
        [
            json!({"a": 4, "b": "w\r\n\r\nv"}),
            json!({"a": 5, "b": "u"})
        ]
    );
    all_ranges_agree(&path, &idx);
}

#[test]
fn a_file_of_exactly_stride_rows() {
    let dir = tempfile::tempdir().unwrap();
    for (name, data) in [
        ("nl.tsv", &b"x\ty\n1\t2\n3\t4\n5\t6\n"[..]),
        ("no_nl.tsv", &b"x\ty\n1\t2\n3\t4\n5\t6"[..]),
        ("trailing_empty.tsv", &b"x\ty\n1\t2\n3\t4\n5\t6\n\n\n"[..]),
    ] {
        let path = write(&dir, name, data);
        let idx = index(&path, 3).unwrap();
        assert_eq!(idx.row_count, 3, "{name}");
        assert_eq!(idx.format, "tsv");
        assert_eq!(checkpoints(&idx), [(0, 4)], "{name}");
        assert_eq!(idx.blocks[0].row_count, 3);
        assert_eq!(idx.blocks[0].total_byte_size, Some(data.len() as u64 - 4));
        assert_eq!(
            read(&path, Some(&idx), 2..9, None),
            [json!({"x": 5, "y": 6})]
        );
        all_ranges_agree(&path, &idx);
    }
}

#[test]
fn inference_bom_txt_and_projection() {
    let dir = tempfile::tempdir().unwrap();
    let data = "\u{feff}i|f|b|s|n\n1|2|true|x|\n-3|2.5|FALSE|7|\n|1e3||\"é\"|\n";
    let path = write(&dir, "p.psv", data.as_bytes());
    let idx = index(&path, 65_536).unwrap();
    let cols: Vec<(String, String)> = idx
        .schema
        .fields()
        .iter()
        .map(|f| (f.name().clone(), types::type_name(f.data_type())))
        .collect();
    assert_eq!(
        cols,
        [
            ("i".into(), "int64".into()),
            ("f".into(), "float64".into()),
            ("b".into(), "bool".into()),
            ("s".into(), "utf8".into()),
            ("n".into(), "utf8".into()),
        ]
    );
    let stats = serde_json::to_value(idx.stats.as_ref().unwrap()).unwrap();
    assert_eq!(
        stats,
        json!({"i": {"min": -3, "max": 1}, "f": {"min": 2.0, "max": 1000.0},
               "s": {"min_str": "7", "max_str": "é"}})
    );
    let projection = ["s".to_string(), "i".to_string()];
    assert_eq!(
        read(&path, Some(&idx), 1..3, Some(&projection)),
        [json!({"s": "7", "i": -3}), json!({"s": "é", "i": null})]
    );
    let request = ReadRequest {
        rows: 0..1,
        projection: Some(&["nope".to_string()]),
        ..ReadRequest::default()
    };
    assert!(matches!(
        DelimitedLocator.read(&path, &request).err(),
        Some(Error::UnknownColumn { .. })
    ));
    // A .txt file sniffs its delimiter; without one the record is a single column.
    let txt = write(&dir, "t.txt", b"text\nhello world\n\nbye\n");
    let idx = index(&txt, 1).unwrap();
    assert_eq!(idx.format, "txt");
    assert_eq!(idx.row_count, 2);
    assert_eq!(
        read(&txt, Some(&idx), 0..2, None),
        [json!({"text": "hello world"}), json!({"text": "bye"})]
    );
    let semi = write(&dir, "s.txt", b"a;b\n1;x\n");
    assert_eq!(read(&semi, None, 0..1, None), [json!({"a": 1, "b": "x"})]);
}

#[test]
fn empty_and_header_only_files() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(&dir, "empty.csv", b"");
    let idx = index(&empty, 10).unwrap();
    assert_eq!((idx.row_count, idx.blocks.len()), (0, 0));
    assert!(read(&empty, None, 0..5, None).is_empty());
    let header = write(&dir, "h.csv", b"a,b\n\n");
    let idx = index(&header, 10).unwrap();
    assert_eq!((idx.row_count, idx.schema.fields().len()), (0, 2));
    assert!(read(&header, Some(&idx), 0..5, None).is_empty());
}

#[test]
fn bad_input_gives_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let unterminated = write(&dir, "u.csv", b"a,b\n1,x\n2,\"never closes\n3,y\n");
    let (offset, _, text) = malformed(index(&unterminated, 10).unwrap_err());
    assert_eq!(offset, Some(10), "{text}");
    assert!(text.contains("never closes"), "{text}");

    // A record with more fields than the header is no error: it adds a column (see
    // real_world.rs); a byte that is not UTF-8 after it is still named by row and byte.
    let ragged = write(&dir, "r.csv", b"a,b\n1,x\n2,y,z\n3,\xff\n");
    let (offset, row, text) = malformed(index(&ragged, 10).unwrap_err());
    assert_eq!((offset, row), (Some(16), Some(2)), "{text}");

    let utf8 = write(&dir, "b.csv", b"a,b\n1,x\xff\n");
    let (offset, _, text) = malformed(index(&utf8, 10).unwrap_err());
    assert_eq!(offset, Some(7), "{text}");

    // Invalid UTF-8 in a quoted record, in a long unquoted record and in the header.
    let quoted = write(&dir, "bq.csv", b"a,b\n1,\"x\ny\xc3\"\n");
    assert_eq!(malformed(index(&quoted, 10).unwrap_err()).0, Some(10));
    let long = write(
        &dir,
        "bl.csv",
        b"a,b\n1,abcdefghijklmnopqrstuvwxyz\xe9\n2,x\n",
    );
    assert_eq!(malformed(index(&long, 10).unwrap_err()).0, Some(32));
    let head = write(&dir, "bh.csv", b"a,\xffb\n1,x\n");
    assert_eq!(malformed(index(&head, 10).unwrap_err()).0, Some(2));

    // Bytes after a closing quote join the field (see real_world.rs): no error.
    let after_quote = write(&dir, "aq.csv", b"a,b\n1,\"x\"y\n");
    assert_eq!(index(&after_quote, 10).unwrap().row_count, 1);

    // A direct read infers first, so it reports the same problems.
    assert!(
        DelimitedLocator
            .read(&ragged, &ReadRequest::default())
            .is_err()
    );
    let zero = DelimitedLocator.index(
        &ragged,
        &IndexOptions {
            stride: 0,
            stats: StatsColumns::None,
        },
    );
    assert!(zero.is_err());
}
