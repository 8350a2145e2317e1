//! Parquet locator: footer-only indexing and row-group-only reads (traced), statistics from
//! the footer or the data, page-skipping reads, projections and malformed files.

use crate::common;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use lake_locators::parquet::ParquetLocator;
use lake_locators::trace::{ReadLog, TraceReader};
use lake_locators::{
    ColumnStats, Error, FileIndex, IndexOptions, Locator, ReadRequest, StatsColumns, rows,
};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

const GROUP: usize = 1000;

fn batch(first: i64, n: usize) -> RecordBatch {
    let ids: Vec<i64> = (first..first + n as i64).collect();
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("x", DataType::Float64, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(StringArray::from(
                ids.iter()
                    .map(|i| (i % 7 != 0).then(|| format!("name {i:05}")))
                    .collect::<Vec<_>>(),
            )),
            Arc::new(Float64Array::from(
                ids.iter()
                    .map(|i| (i % 5 != 0).then_some(*i as f64 * 0.5 - 100.25))
                    .collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

/// Writes `groups` row groups of [`GROUP`] rows with small pages.
fn write(dir: &Path, name: &str, groups: usize, stats: EnabledStatistics) -> PathBuf {
    let path = dir.join(name);
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(GROUP))
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .set_statistics_enabled(stats)
        .build();
    let b = batch(0, GROUP * groups);
    let mut w =
        ArrowWriter::try_new(File::create(&path).unwrap(), b.schema(), Some(props)).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    path
}

fn index(path: &Path) -> FileIndex {
    ParquetLocator
        .index(path, &IndexOptions::default())
        .unwrap()
}

fn read(
    path: &Path,
    idx: Option<&FileIndex>,
    rows: std::ops::Range<u64>,
    cols: Option<&[String]>,
) -> Vec<serde_json::Value> {
    let request = ReadRequest {
        rows,
        blocks: idx.map(|i| i.blocks.as_slice()),
        schema: None,
        projection: cols,
        batch_size: 64,
    };
    common::read_rows(&ParquetLocator, path, &request)
}

#[test]
fn blocks_come_from_the_footer_with_page_locations() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "a.parquet", 4, EnabledStatistics::Page);
    let idx = index(&path);
    assert_eq!(idx.format, "parquet");
    assert_eq!(idx.row_count, 4000);
    assert_eq!(idx.blocks.len(), 4);
    for (i, b) in idx.blocks.iter().enumerate() {
        assert_eq!(b.ordinal, i as u64);
        assert_eq!(b.first_row, (i * GROUP) as u64);
        assert_eq!(b.row_count, GROUP as u64);
        let cols = b.columns.as_ref().unwrap();
        assert_eq!(cols.len(), 3);
        assert_eq!(cols[0].path, "id");
        assert_eq!(b.first_byte, Some(cols[0].first_byte));
        let pages = cols[0].page_locations.as_ref().unwrap();
        assert_eq!(pages.len(), 10);
        assert_eq!(pages[1].first_row_index, 100);
    }
    // Row groups follow each other in the file.
    assert!(idx.blocks[1].first_byte.unwrap() > idx.blocks[0].first_byte.unwrap());
}

#[test]
fn indexing_reads_only_the_footer_and_reads_skip_earlier_groups() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "t.parquet", 4, EnabledStatistics::Page);
    let idx = index(&path);
    let data_end = common::parquet_data_end(&idx);

    // Footer statistics of all three columns are exact here, so no data page is needed.
    let (traced, ranges) = common::parquet_traced_index(&path);
    assert_eq!(traced.blocks, idx.blocks);
    assert!(!ranges.is_empty());
    for r in &ranges {
        assert!(
            r.start >= data_end,
            "indexing read {r:?}, data ends at {data_end}"
        );
    }

    let log = ReadLog::default();
    let reader = TraceReader::new(File::open(&path).unwrap(), log.clone()).unwrap();
    let request = ReadRequest {
        rows: 2100..2110,
        blocks: Some(&idx.blocks),
        ..Default::default()
    };
    let got: Vec<RecordBatch> = ParquetLocator
        .read_reader(&path, reader, &request)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let ids: Vec<i64> = got
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    assert_eq!(ids, (2100..2110).collect::<Vec<i64>>());
    let third = idx.blocks[2].first_byte.unwrap();
    let ranges = log.ranges();
    for r in &ranges {
        assert!(
            r.start >= third,
            "reading row group 2 read {r:?}, which lies before its first byte {third}"
        );
    }
    // Only the pages holding the rows are fetched: far less than the whole row group.
    let data_read: u64 = ranges
        .iter()
        .filter(|r| r.start < data_end)
        .map(|r| r.end - r.start)
        .sum();
    assert!(
        data_read < idx.blocks[2].compressed_size.unwrap(),
        "read {data_read} data bytes of a {} byte row group",
        idx.blocks[2].compressed_size.unwrap()
    );
}

#[test]
fn stats_from_footer_equal_stats_from_data() {
    let dir = tempfile::tempdir().unwrap();
    let with = index(&write(dir.path(), "s.parquet", 3, EnabledStatistics::Chunk));
    let without = index(&write(dir.path(), "n.parquet", 3, EnabledStatistics::None));
    let a = with.stats.unwrap();
    let b = without.stats.unwrap();
    assert_eq!(a, b);
    assert_eq!(a["id"], ColumnStats::Int { min: 0, max: 2999 });
    assert_eq!(
        a["name"],
        ColumnStats::Str {
            min_str: "name 00001".into(),
            max_str: "name 02999".into()
        }
    );
    assert_eq!(
        a["x"],
        ColumnStats::Float {
            min: -99.75,
            max: 2999.0 * 0.5 - 100.25
        }
    );
    let only = ParquetLocator
        .index(
            &dir.path().join("n.parquet"),
            &IndexOptions {
                stride: 1,
                stats: StatsColumns::Only(vec!["x".into()]),
            },
        )
        .unwrap();
    assert_eq!(only.stats.unwrap().keys().collect::<Vec<_>>(), vec!["x"]);
    let none = ParquetLocator
        .index(
            &dir.path().join("n.parquet"),
            &IndexOptions {
                stride: 1,
                stats: StatsColumns::None,
            },
        )
        .unwrap();
    assert!(none.stats.is_none());
}

/// Writes the Float64 column `x` of `values` in row groups of two rows, with `stats`.
fn write_floats(dir: &Path, name: &str, values: &[f64], stats: EnabledStatistics) -> PathBuf {
    let path = dir.join(name);
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(2))
        .set_statistics_enabled(stats)
        .build();
    let written = (|| -> Result<(), Box<dyn std::error::Error>> {
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Float64Array::from(values.to_vec()))],
        )?;
        let mut w = ArrowWriter::try_new(File::create(&path)?, schema, Some(props))?;
        w.write(&b)?;
        w.close()?;
        Ok(())
    })();
    if let Err(e) = written {
        panic!("{}: cannot write the test file: {e}", path.display());
    }
    path
}

/// The Float64 bounds of `x`, as bits.
fn float_bits(idx: &FileIndex) -> (u64, u64) {
    match idx.stats.as_ref().and_then(|s| s.get("x")) {
        Some(ColumnStats::Float { min, max }) => (min.to_bits(), max.to_bits()),
        other => panic!("no float stats for x: {other:?}"),
    }
}

/// Zero bounds: writers store a zero minimum as `-0.0` and a zero maximum as `0.0` whatever
/// zero the data holds, and stats write zeros unsigned, so the footer's zero bounds are
/// exact. They come from the footer alone (no data page read) and equal the bounds the
/// data gives.
#[test]
fn zero_float_bounds_come_from_the_footer() {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("no temporary directory: {e}"),
    };
    // Row groups of two rows: a +0.0 minimum, a -0.0 minimum, a -0.0 maximum.
    let x = [0.0, 1.5, -0.0, 2.0, -3.0, -0.0];
    let with = write_floats(dir.path(), "z.parquet", &x, EnabledStatistics::Chunk);
    let (from_footer, ranges) = common::parquet_traced_index(&with);
    let data_end = common::parquet_data_end(&from_footer);
    assert!(data_end > 0);
    for r in ranges {
        assert!(
            r.start >= data_end,
            "indexing read {r:?}, data ends at {data_end}"
        );
    }
    let from_data = index(&write_floats(
        dir.path(),
        "zn.parquet",
        &x,
        EnabledStatistics::None,
    ));
    for idx in [&from_footer, &from_data] {
        assert_eq!(float_bits(idx), ((-3.0f64).to_bits(), 2.0f64.to_bits()));
    }
    // Zeros as the bounds themselves: unsigned, from the footer and from the data alike.
    let zeros = [0.0, -0.0, -0.0, 0.0];
    for (name, stats) in [
        ("zz.parquet", EnabledStatistics::Chunk),
        ("zzn.parquet", EnabledStatistics::None),
    ] {
        let idx = index(&write_floats(dir.path(), name, &zeros, stats));
        assert_eq!(float_bits(&idx), (0, 0), "{name}");
    }
}

#[test]
fn reads_ranges_across_groups_with_and_without_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "r.parquet", 4, EnabledStatistics::Page);
    let idx = index(&path);
    let want = batch(0, 4000);
    for range in [
        0..1,
        999..1001,
        1234..3456,
        3999..4000,
        3990..9999,
        4000..4010,
        10..10,
    ] {
        let expected: Vec<serde_json::Value> = (range.start..range.end.min(4000))
            .map(|r| rows::row_value(&want, r as usize))
            .collect();
        assert_eq!(
            read(&path, Some(&idx), range.clone(), None),
            expected,
            "{range:?}"
        );
        assert_eq!(
            read(&path, None, range.clone(), None),
            expected,
            "{range:?}"
        );
    }
    // The projection's order is kept (checked on the written text: JSON objects compare
    // without order).
    let cols = vec!["x".to_string(), "id".to_string()];
    let request = ReadRequest {
        rows: 1500..1502,
        blocks: Some(&idx.blocks),
        projection: Some(&cols),
        ..Default::default()
    };
    let mut text = Vec::new();
    for b in ParquetLocator.read(&path, &request).unwrap() {
        rows::write_ndjson(&b.unwrap(), &mut text);
    }
    assert_eq!(
        String::from_utf8(text).unwrap(),
        "{\"x\":null,\"id\":1500}\n{\"x\":650.25,\"id\":1501}\n"
    );
}

#[test]
fn unknown_column_and_stale_blocks_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "u.parquet", 2, EnabledStatistics::Page);
    let cols = vec!["nope".to_string()];
    let request = ReadRequest {
        rows: 0..1,
        projection: Some(&cols),
        ..Default::default()
    };
    let err = ParquetLocator.read(&path, &request).err().unwrap();
    assert!(matches!(err, Error::UnknownColumn { .. }), "{err}");
    let mut idx = index(&path);
    idx.blocks.pop();
    let request = ReadRequest {
        rows: 0..1,
        blocks: Some(&idx.blocks),
        ..Default::default()
    };
    let err = ParquetLocator.read(&path, &request).err().unwrap();
    assert!(matches!(err, Error::StaleIndex { .. }), "{err}");
}

#[test]
fn malformed_files_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "m.parquet", 2, EnabledStatistics::Page);
    let good = std::fs::read(&path).unwrap();
    let n = good.len();
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("truncated", good[..n / 2].to_vec()),
        ("tail cut", good[..n - 3].to_vec()),
    ];
    let mut magic = good.clone();
    magic[n - 4..].copy_from_slice(b"PARX");
    cases.push(("wrong magic", magic));
    let mut long = good.clone();
    long[n - 8..n - 4].copy_from_slice(&(u32::MAX / 2).to_le_bytes());
    cases.push(("footer length past the file", long));
    let mut garbage = good.clone();
    let footer_len = u32::from_le_bytes(good[n - 8..n - 4].try_into().unwrap()) as usize;
    for b in &mut garbage[n - 8 - footer_len..n - 8] {
        *b = 0xa5;
    }
    cases.push(("garbage footer", garbage));
    for (what, bytes) in cases {
        let bad = dir.path().join("bad.parquet");
        std::fs::write(&bad, &bytes).unwrap();
        let err = ParquetLocator
            .index(&bad, &IndexOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{what}: no error"));
        assert!(err.to_string().contains("bad.parquet"), "{what}: {err}");
        assert!(
            matches!(err, Error::Library { .. } | Error::Malformed { .. }),
            "{what}: {err}"
        );
        assert!(
            ParquetLocator
                .read(
                    &bad,
                    &ReadRequest {
                        rows: 0..10,
                        ..Default::default()
                    }
                )
                .is_err()
        );
    }
}

#[test]
fn the_pages_of_the_byte_layout_are_all_a_read_needs() {
    // What a lake in a bucket fetches of a Parquet file: per touched row group, each
    // chunk's dictionary page and the data pages holding the rows (10 pages of 100 rows per
    // chunk here), then the footer and page index.
    let dir = tempfile::tempdir().unwrap();
    let spans = [0..1, 150..170, 999..1001, 2345..2600, 3990..4000];
    let rows = [5, 1234, 1299, 2500, 3999];
    let path = write(dir.path(), "p.parquet", 4, EnabledStatistics::Page);
    common::sparse_reads_match(&ParquetLocator, &path, &index(&path), &spans, &rows);
    // Without dictionaries (which hold most of a chunk of distinct values) the pages are
    // most of the bytes: five rows in four row groups touch five pages of each column.
    let path = dir.path().join("plain.parquet");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(GROUP))
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .set_dictionary_enabled(false)
        .build();
    let b = batch(0, GROUP * 4);
    let mut w =
        ArrowWriter::try_new(File::create(&path).unwrap(), b.schema(), Some(props)).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    let idx = index(&path);
    let n = common::sparse_reads_match(&ParquetLocator, &path, &idx, &spans, &rows);
    let size = std::fs::metadata(&path).unwrap().len();
    let data_end = common::parquet_data_end(&idx);
    let first = idx.blocks[0].first_byte.unwrap();
    let tail = size - data_end;
    assert!(
        (n - tail) * 4 < data_end - first,
        "{n} of {size} bytes, tail {tail}"
    );
}
