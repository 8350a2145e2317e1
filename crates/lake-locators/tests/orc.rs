//! ORC locator: stripes as blocks with their byte ranges, reads that start at the first touched
//! stripe (earlier stripes are never read), projections, and malformed files.

use crate::common;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use lake_locators::orc::OrcLocator;
use lake_locators::{ColumnStats, Error, FileIndex, IndexOptions, Locator, ReadRequest, rows};
use orc_rust::ArrowWriterBuilder;

const STRIPES: &[usize] = &[700, 1300, 1, 998];

fn batch(first: i64, n: usize) -> RecordBatch {
    let ids: Vec<i64> = (first..first + n as i64).collect();
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("x", DataType::Float64, true),
        Field::new("small", DataType::Int32, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(StringArray::from(
                ids.iter()
                    .map(|i| (i % 4 != 0).then(|| format!("n{i:04}")))
                    .collect::<Vec<_>>(),
            )),
            Arc::new(Float64Array::from(
                ids.iter()
                    .map(|i| (i % 6 != 0).then_some(*i as f64 / 8.0))
                    .collect::<Vec<_>>(),
            )),
            Arc::new(Int32Array::from(
                ids.iter().map(|i| (*i as i32) * 3).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn write(dir: &Path) -> PathBuf {
    let path = dir.join("s.orc");
    let schema = batch(0, 1).schema();
    let mut w = ArrowWriterBuilder::new(File::create(&path).unwrap(), schema)
        .try_build()
        .unwrap();
    let mut first = 0i64;
    for &n in STRIPES {
        w.write(&batch(first, n)).unwrap();
        w.flush_stripe().unwrap();
        first += n as i64;
    }
    w.close().unwrap();
    path
}

fn read_json(
    path: &Path,
    idx: Option<&FileIndex>,
    range: std::ops::Range<u64>,
    cols: Option<&[String]>,
) -> Vec<serde_json::Value> {
    let request = ReadRequest {
        rows: range,
        blocks: idx.map(|i| i.blocks.as_slice()),
        projection: cols,
        batch_size: 100,
        ..Default::default()
    };
    common::read_rows(&OrcLocator, path, &request)
}

#[test]
fn stripes_rows_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path());
    let idx = OrcLocator.index(&path, &IndexOptions::default()).unwrap();
    assert_eq!(idx.format, "orc");
    assert_eq!(idx.row_count, 2999);
    let counts: Vec<u64> = idx.blocks.iter().map(|b| b.row_count).collect();
    assert_eq!(counts, vec![700, 1300, 1, 998]);
    assert_eq!(
        idx.blocks[0].first_byte,
        Some(3),
        "the first stripe follows the magic"
    );
    for w in idx.blocks.windows(2) {
        assert_eq!(
            w[0].first_byte.unwrap() + w[0].total_byte_size.unwrap(),
            w[1].first_byte.unwrap()
        );
    }
    let stats = idx.stats.unwrap();
    assert_eq!(stats["id"], ColumnStats::Int { min: 0, max: 2998 });
    assert_eq!(
        stats["name"],
        ColumnStats::Str {
            min_str: "n0001".into(),
            max_str: "n2998".into()
        }
    );
    assert_eq!(
        stats["x"],
        ColumnStats::Float {
            min: 0.125,
            max: 2998.0 / 8.0
        }
    );
    assert!(
        !stats.contains_key("small"),
        "int32 columns have no statistics"
    );
}

#[test]
fn reads_match_the_written_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path());
    let idx = OrcLocator.index(&path, &IndexOptions::default()).unwrap();
    let all = batch(0, 2999);
    for range in [
        0..1,
        699..701,
        1999..2002,
        2000..2001,
        2500..2600,
        2990..3100,
        2999..3000,
        5..5,
    ] {
        let want: Vec<serde_json::Value> = (range.start..range.end.min(2999))
            .map(|r| rows::row_value(&all, r as usize))
            .collect();
        assert_eq!(
            read_json(&path, Some(&idx), range.clone(), None),
            want,
            "{range:?}"
        );
        assert_eq!(
            read_json(&path, None, range.clone(), None),
            want,
            "{range:?}"
        );
    }
    let cols = vec!["x".to_string(), "id".to_string()];
    let got = read_json(&path, Some(&idx), 1000..1002, Some(&cols));
    assert_eq!(got[0], serde_json::json!({"x": 125.0, "id": 1000}));
    assert_eq!(got[1], serde_json::json!({"x": 125.125, "id": 1001}));
}

#[test]
fn reads_never_touch_earlier_stripes() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path());
    let idx = OrcLocator.index(&path, &IndexOptions::default()).unwrap();
    // Ruin the first two stripes; rows of the last stripe still read.
    let mut bytes = std::fs::read(&path).unwrap();
    for b in &idx.blocks[..2] {
        let start = b.first_byte.unwrap() as usize;
        for x in &mut bytes[start..start + b.total_byte_size.unwrap() as usize] {
            *x = 0x77;
        }
    }
    let ruined = dir.path().join("ruined.orc");
    std::fs::write(&ruined, &bytes).unwrap();
    let got = read_json(&ruined, Some(&idx), 2500..2502, None);
    assert_eq!(got[0]["id"], 2500);
    assert_eq!(got[1]["id"], 2501);
    let request = ReadRequest {
        rows: 10..11,
        blocks: Some(&idx.blocks),
        ..Default::default()
    };
    let first: Result<Vec<_>, _> = OrcLocator.read(&ruined, &request).and_then(|i| i.collect());
    assert!(first.is_err(), "stripe 0 is ruined");
}

#[test]
fn malformed_orc_files_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(write(dir.path())).unwrap();
    let n = good.len();
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("one byte", vec![3]),
        ("truncated", good[..n / 2].to_vec()),
        ("tail cut", good[..n - 1].to_vec()),
    ];
    let mut ps = good.clone();
    ps[n - 1] = 0xff;
    cases.push(("postscript length past the file", ps));
    let mut garbage = good.clone();
    for b in &mut garbage[n - 40..n - 1] {
        *b = 0xee;
    }
    cases.push(("garbage tail", garbage));
    for (what, bytes) in cases {
        let bad = dir.path().join("bad.orc");
        std::fs::write(&bad, &bytes).unwrap();
        let err = OrcLocator
            .index(&bad, &IndexOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{what}: no error"));
        assert!(
            matches!(err, Error::Library { .. } | Error::Malformed { .. }),
            "{what}: {err}"
        );
        assert!(err.to_string().contains("bad.orc"), "{what}: {err}");
    }
}
