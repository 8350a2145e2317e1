//! TsFile through the facade: describe, query, write and read back, check.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use bazan::ErrorKind;
use bazan::tsfile::{Query, WriteOptions};

const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata");

#[test]
fn written_tables_read_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("w.tsfile");
    let batch = RecordBatch::try_from_iter([
        (
            "ts",
            std::sync::Arc::new(Int64Array::from(vec![3, 1, 2])) as ArrayRef,
        ),
        (
            "dev",
            std::sync::Arc::new(StringArray::from(vec!["a", "a", "b"])) as ArrayRef,
        ),
        (
            "v",
            std::sync::Arc::new(Float64Array::from(vec![0.3, 0.1, 0.2])) as ArrayRef,
        ),
    ])
    .expect("batch");
    let written = bazan::tsfile::write_table(
        &path,
        &[batch],
        &WriteOptions {
            table: "t".into(),
            time: "ts".into(),
            tags: vec!["dev".into()],
            ..Default::default()
        },
    )
    .expect("written");
    assert_eq!(written.rows, 3);
    let info = bazan::tsfile::info(&path).expect("info");
    assert_eq!(info["model"], "table");
    assert_eq!(bazan::tsfile::table_names(&path).expect("names"), vec!["t"]);
    let (schema, batches) = bazan::tsfile::query(
        &path,
        &Query {
            table: Some("t".into()),
            start_time: Some(2),
            ..Default::default()
        },
    )
    .expect("query");
    assert_eq!(schema.field(0).name(), "time");
    let times: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let t = arrow_cast::cast(b.column(0), &arrow_schema::DataType::Int64).expect("cast");
            t.as_primitive::<Int64Type>().values().to_vec()
        })
        .collect();
    let mut sorted = times.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, vec![2, 3]);
    assert!(bazan::tsfile::check(&path).expect("checked").is_valid());
}

#[test]
fn bad_tsfiles_get_kinds_not_panics() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("none.tsfile");
    let e = bazan::tsfile::info(&missing).expect_err("missing");
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let bytes = std::fs::read(Path::new(TESTDATA).join("tsfile/table.tsfile")).expect("read");
    let cut = dir.path().join("cut.tsfile");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    let e = bazan::tsfile::info(&cut).expect_err("truncated");
    assert!(
        matches!(e.kind(), ErrorKind::Corrupt | ErrorKind::UnsupportedFormat),
        "{e}"
    );
    assert!(e.to_string().starts_with(&cut.display().to_string()), "{e}");
    let e = bazan::tsfile::query(
        &Path::new(TESTDATA).join("tsfile/table.tsfile"),
        &Query {
            table: Some("no_such_table".into()),
            ..Default::default()
        },
    )
    .expect_err("no table");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}
