//! Arrow IPC file and stream locators: batches as blocks (empty batches included), stream
//! byte offsets, reads that touch only the wanted batches, and malformed files.

use crate::common;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_ipc::CompressionType;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions, StreamWriter};
use arrow_schema::{DataType, Field, Schema};
use lake_locators::ipc::{ArrowFileLocator, ArrowStreamLocator};
use lake_locators::{ColumnStats, Error, FileIndex, IndexOptions, Locator, ReadRequest, rows};

const SIZES: &[usize] = &[100, 0, 250, 1, 149];

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
    ]))
}

fn batches() -> Vec<RecordBatch> {
    let mut first = 0i64;
    SIZES
        .iter()
        .map(|&n| {
            let ids: Vec<i64> = (first..first + n as i64).collect();
            first += n as i64;
            RecordBatch::try_new(
                schema(),
                vec![
                    Arc::new(Int64Array::from(ids.clone())),
                    Arc::new(StringArray::from(
                        ids.iter()
                            .map(|i| (i % 3 != 0).then(|| format!("s{i}")))
                            .collect::<Vec<_>>(),
                    )),
                ],
            )
            .unwrap()
        })
        .collect()
}

fn write_file(dir: &Path, compressed: bool) -> PathBuf {
    let path = dir.join(if compressed { "c.feather" } else { "f.arrow" });
    let mut options = IpcWriteOptions::default();
    if compressed {
        options = options
            .try_with_compression(Some(CompressionType::LZ4_FRAME))
            .unwrap();
    }
    let mut w =
        FileWriter::try_new_with_options(File::create(&path).unwrap(), &schema(), options).unwrap();
    for b in batches() {
        w.write(&b).unwrap();
    }
    w.finish().unwrap();
    path
}

fn write_stream(dir: &Path) -> PathBuf {
    let path = dir.join("s.arrows");
    let mut w = StreamWriter::try_new(File::create(&path).unwrap(), &schema()).unwrap();
    for b in batches() {
        w.write(&b).unwrap();
    }
    w.finish().unwrap();
    path
}

fn ids(
    locator: &dyn Locator,
    path: &Path,
    idx: Option<&FileIndex>,
    range: std::ops::Range<u64>,
) -> Vec<i64> {
    let request = ReadRequest {
        rows: range,
        blocks: idx.map(|i| i.blocks.as_slice()),
        ..Default::default()
    };
    common::read_rows(locator, path, &request)
        .iter()
        .map(|row| row["id"].as_i64().unwrap())
        .collect()
}

fn check_locator(locator: &dyn Locator, path: &Path) -> FileIndex {
    let idx = locator.index(path, &IndexOptions::default()).unwrap();
    assert_eq!(idx.row_count, 500);
    let counts: Vec<u64> = idx.blocks.iter().map(|b| b.row_count).collect();
    assert_eq!(counts, SIZES.iter().map(|&n| n as u64).collect::<Vec<_>>());
    let stats = idx.stats.clone().unwrap();
    assert_eq!(stats["id"], ColumnStats::Int { min: 0, max: 499 });
    assert_eq!(
        stats["s"],
        ColumnStats::Str {
            min_str: "s1".into(),
            max_str: "s98".into()
        }
    );
    for range in [
        0..500,
        99..101,
        100..101,
        350..351,
        351..352,
        499..700,
        500..501,
        7..7,
    ] {
        let want: Vec<i64> = (range.start as i64..range.end.min(500) as i64).collect();
        assert_eq!(
            ids(locator, path, Some(&idx), range.clone()),
            want,
            "{range:?}"
        );
        assert_eq!(ids(locator, path, None, range.clone()), want, "{range:?}");
    }
    idx
}

#[test]
fn ipc_file_and_feather_batches() {
    let dir = tempfile::tempdir().unwrap();
    for compressed in [false, true] {
        let path = write_file(dir.path(), compressed);
        let idx = check_locator(&ArrowFileLocator, &path);
        assert!(idx.blocks.iter().all(|b| b.columns.is_none()));
        // Each batch's byte span (for ranged reads of a file far away): after the schema,
        // one after the other, before the footer.
        let len = std::fs::metadata(&path).unwrap().len();
        let mut end = 8;
        for b in &idx.blocks {
            let first = b.first_byte.expect("a batch's first byte");
            assert!(first >= end, "batches do not overlap: {first} < {end}");
            end = first + b.total_byte_size.expect("a batch's size");
        }
        assert!(end < len, "the footer follows the last batch");
        // A read needs the schema, the touched batches and the footer only.
        crate::common::sparse_reads_match(
            &ArrowFileLocator,
            &path,
            &idx,
            &[0..1, 350..352, 499..500],
            &[3, 351, 499],
        );
    }
}

#[test]
fn ipc_stream_blocks_carry_byte_ranges_and_reads_touch_only_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_stream(dir.path());
    let idx = check_locator(&ArrowStreamLocator, &path);
    let len = std::fs::metadata(&path).unwrap().len();
    let mut end = idx.blocks[0].first_byte.unwrap();
    for b in &idx.blocks {
        assert_eq!(b.first_byte, Some(end), "batches are contiguous");
        end += b.total_byte_size.unwrap();
    }
    assert_eq!(
        end + 8,
        len,
        "the end-of-stream marker follows the last batch"
    );

    // Ruin the bodies of batches 0 and 4: a read of batch 2 with the index still works
    // because it decodes the schema message and batch 2 only.
    let mut bytes = std::fs::read(&path).unwrap();
    for ordinal in [0usize, 4] {
        let b = &idx.blocks[ordinal];
        let start = b.first_byte.unwrap() as usize;
        for x in &mut bytes[start..start + b.total_byte_size.unwrap() as usize] {
            *x = 0x5a;
        }
    }
    let ruined = dir.path().join("ruined.arrows");
    std::fs::write(&ruined, &bytes).unwrap();
    assert_eq!(
        ids(&ArrowStreamLocator, &ruined, Some(&idx), 120..125),
        (120..125).collect::<Vec<i64>>()
    );
    let request = ReadRequest {
        rows: 0..1,
        blocks: Some(&idx.blocks),
        ..Default::default()
    };
    let first: Result<Vec<_>, _> = ArrowStreamLocator
        .read(&ruined, &request)
        .and_then(|i| i.collect());
    assert!(first.is_err(), "batch 0 is ruined");
}

#[test]
fn projections_keep_the_requested_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), false);
    let cols = vec!["s".to_string(), "id".to_string()];
    let request = ReadRequest {
        rows: 101..103,
        projection: Some(&cols),
        ..Default::default()
    };
    let mut text = Vec::new();
    for b in ArrowFileLocator.read(&path, &request).unwrap() {
        rows::write_ndjson(&b.unwrap(), &mut text);
    }
    assert_eq!(
        String::from_utf8(text).unwrap(),
        "{\"s\":\"s101\",\"id\":101}\n{\"s\":null,\"id\":102}\n"
    );
    let bad = vec!["zz".to_string()];
    let request = ReadRequest {
        rows: 0..1,
        projection: Some(&bad),
        ..Default::default()
    };
    assert!(matches!(
        ArrowFileLocator.read(&path, &request).err().unwrap(),
        Error::UnknownColumn { .. }
    ));
}

#[test]
fn malformed_ipc_files_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(write_file(dir.path(), false)).unwrap();
    let n = good.len();
    let mut cases: Vec<(&str, Vec<u8>)> =
        vec![("empty", Vec::new()), ("truncated", good[..n / 2].to_vec())];
    let mut magic = good.clone();
    magic[..6].copy_from_slice(b"ARROWX");
    cases.push(("wrong magic", magic));
    let mut long = good.clone();
    long[n - 10..n - 6].copy_from_slice(&(i32::MAX).to_le_bytes());
    cases.push(("footer length past the file", long));
    let mut neg = good.clone();
    neg[n - 10..n - 6].copy_from_slice(&(-5i32).to_le_bytes());
    cases.push(("negative footer length", neg));
    let mut garbage = good.clone();
    let footer_len = i32::from_le_bytes(good[n - 10..n - 6].try_into().unwrap()) as usize;
    for b in &mut garbage[n - 10 - footer_len..n - 10] {
        *b = 0x33;
    }
    cases.push(("garbage footer", garbage));
    for (what, bytes) in cases {
        let bad = dir.path().join("bad.arrow");
        std::fs::write(&bad, &bytes).unwrap();
        let err = ArrowFileLocator
            .index(&bad, &IndexOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{what}: no error"));
        assert!(matches!(err, Error::Malformed { .. }), "{what}: {err}");
        assert!(err.to_string().contains("bad.arrow"), "{what}: {err}");
    }

    let good = std::fs::read(write_stream(dir.path())).unwrap();
    let n = good.len();
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty stream", Vec::new()),
        ("truncated stream", good[..n - 100].to_vec()),
    ];
    let mut huge = good.clone();
    huge[4..8].copy_from_slice(&(i32::MAX).to_le_bytes());
    cases.push(("message length past the file", huge));
    for (what, bytes) in cases {
        let bad = dir.path().join("bad.arrows");
        std::fs::write(&bad, &bytes).unwrap();
        let err = ArrowStreamLocator
            .index(&bad, &IndexOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{what}: no error"));
        assert!(matches!(err, Error::Malformed { .. }), "{what}: {err}");
    }
}

/// A file with dictionary batches: statistics of the plain columns are decoded next to them
/// (the dictionary column itself has none).
#[test]
fn stats_of_a_file_with_dictionaries() {
    use arrow_array::DictionaryArray;
    use arrow_array::types::Int32Type;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.arrow");
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new(
            "tag",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            true,
        ),
        Field::new("s", DataType::Utf8, true),
    ]));
    let mut w = FileWriter::try_new(File::create(&path).unwrap(), &schema).unwrap();
    for (first, tags) in [(0i64, ["b", "a", "b"]), (3, ["b", "a", "a"])] {
        let tags: DictionaryArray<Int32Type> = tags.into_iter().collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(first..first + 3)),
                Arc::new(tags),
                Arc::new(StringArray::from(vec![Some("x"), None, Some("m")])),
            ],
        )
        .unwrap();
        w.write(&batch).unwrap();
    }
    w.finish().unwrap();
    let index = ArrowFileLocator
        .index(&path, &IndexOptions::default())
        .unwrap();
    assert_eq!(index.row_count, 6);
    let stats = index.stats.unwrap();
    assert_eq!(stats["id"], ColumnStats::Int { min: 0, max: 5 });
    assert_eq!(
        stats["s"],
        ColumnStats::Str {
            min_str: "m".into(),
            max_str: "x".into()
        }
    );
    assert!(!stats.contains_key("tag"));
}
