//! A lake of Latin-1 CSV files through the facade: `CreateOptions::text_encoding`, scans and
//! takes with the characters Python's csv module gives for `encoding="latin-1"`, the setting
//! kept by reload and update, and the UTF-8 default refusing the file with row and offset.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use bazan::{CreateOptions, ErrorKind, ScanOptions, TextEncoding};

/// Python: `csv.reader(open("a.csv", encoding="latin-1", newline=""))` after the header
/// gives `["José", "München"]`, `["Zoë", "São Paulo"]`, `["plain", "Zürich"]`.
const A: &[u8] = b"caf\xe9,city\nJos\xe9,M\xfcnchen\nZo\xeb,S\xe3o Paulo\nplain,Z\xfcrich\n";

fn column(batches: &[RecordBatch], name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        let c = b.column_by_name(name).expect("column");
        let c = arrow_cast::cast(c, &arrow_schema::DataType::Utf8).expect("cast");
        out.extend(
            c.as_string::<i32>()
                .iter()
                .map(|v| v.unwrap_or("").to_string()),
        );
    }
    out
}

fn latin1() -> CreateOptions {
    CreateOptions {
        stride: 2,
        text_encoding: bazan::text_encoding("latin-1").expect("name"),
        ..CreateOptions::default()
    }
}

#[test]
fn latin1_lake_scans_takes_reloads_and_updates() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::write(root.join("a.csv"), A).expect("csv");
    let lake = Arc::new(bazan::create_map(root, &latin1()).expect("created").lake);
    assert_eq!(lake.config().text_encoding, TextEncoding::Latin1);
    let all = lake
        .scan(0..3, &ScanOptions::default())
        .expect("scan")
        .collect_batches()
        .expect("rows");
    assert_eq!(column(&all, "café"), ["José", "Zoë", "plain"]);
    assert_eq!(column(&all, "city"), ["München", "São Paulo", "Zürich"]);
    let taken = lake.take(&[2, 0], &ScanOptions::default()).expect("take");
    assert_eq!(column(&[taken], "city"), ["Zürich", "München"]);

    let loaded = Arc::new(bazan::load_map(root).expect("loaded"));
    assert_eq!(loaded.config().text_encoding, TextEncoding::Latin1);
    let one = loaded
        .scan(1..2, &ScanOptions::default())
        .expect("scan")
        .collect_batches()
        .expect("rows");
    assert_eq!(column(&one, "café"), ["Zoë"]);

    // The update's own options say UTF-8: the map's stored Latin-1 wins for its files.
    std::fs::write(
        root.join("b.csv"),
        b"caf\xe9,city\n\xe6\xf8\xe5,\xd8sl\xf8\n",
    )
    .expect("csv");
    let u = bazan::update_map(root, &CreateOptions::default()).expect("updated");
    assert_eq!(u.added, ["b.csv"]);
    let lake = Arc::new(u.map);
    assert_eq!(lake.config().text_encoding, TextEncoding::Latin1);
    let all = lake
        .scan(0..4, &ScanOptions::default())
        .expect("scan")
        .collect_batches()
        .expect("rows");
    assert_eq!(
        column(&all, "city"),
        ["München", "São Paulo", "Zürich", "Øslø"]
    );
}

#[test]
fn utf8_default_refuses_and_unknown_names_are_invalid() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.csv"), b"name,city\nJos\xe9,x\n").expect("csv");
    let e = bazan::create_map(dir.path(), &CreateOptions::default()).expect_err("not UTF-8");
    assert_eq!(e.kind(), ErrorKind::Corrupt);
    assert_eq!(e.offset(), Some(13));
    assert!(
        e.to_string().contains("at row 0 at byte 13: invalid UTF-8"),
        "{e}"
    );
    let e = bazan::text_encoding("cp1252").expect_err("unknown");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("cp1252"), "{e}");
    assert_eq!(
        bazan::text_encoding("UTF8").expect("utf8"),
        TextEncoding::Utf8
    );
}
