//! `Locator::read_rows` against one-by-one `Locator::read`: random sorted row sets (empty,
//! single, sparse, dense, every row) over files written here, with and without the stored
//! index, with projections, for every format with its own `read_rows` (Arrow IPC file,
//! Parquet, delimited text) and for the default by row ranges (JSON, and every format
//! through `take::read_rows_by_ranges`). Rows past the end and unsorted rows are errors.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, DictionaryArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow_ipc::CompressionType;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_schema::SchemaRef;
use lake_locators::{
    Error, FileIndex, IndexOptions, Locator, RowsRequest, StatsColumns, registry, take,
};

/// A small deterministic generator (the tests must not depend on a random seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// Row sets over `n` rows: empty, first, last, every row, and random ones of several
/// densities, each ascending and distinct.
fn row_sets(n: u64, rng: &mut Rng) -> Vec<Vec<u64>> {
    let mut sets = vec![vec![], vec![0], vec![n - 1], (0..n).collect()];
    for want in [2, 5, 17, n / 3, n / 2] {
        let mut rows: Vec<u64> = (0..want).map(|_| rng.next(n)).collect();
        rows.sort_unstable();
        rows.dedup();
        sets.push(rows);
    }
    // A run of neighbours (slices rather than gathers).
    let start = rng.next(n.saturating_sub(10));
    sets.push((start..(start + 10).min(n)).collect());
    sets
}

fn concat(schema: Option<SchemaRef>, batches: &[RecordBatch]) -> Option<RecordBatch> {
    let schema = schema.or_else(|| batches.first().map(RecordBatch::schema))?;
    Some(arrow_select::concat::concat_batches(&schema, batches).unwrap())
}

/// Rows `rows` read one at a time with `read`.
fn one_by_one(locator: &dyn Locator, path: &Path, request: &RowsRequest<'_>) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    for &r in request.rows {
        let batches: Vec<RecordBatch> = locator
            .read(path, &request.range(r..r + 1))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let got: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(got, 1, "{}: row {r}", path.display());
        out.extend(batches);
    }
    out
}

/// `read_rows` and the default by ranges both equal the one-by-one reads, for every row set,
/// with and without the stored index, with and without a projection.
fn check(locator: &dyn Locator, path: &Path, stride: u64, projection: &[String], seed: u64) {
    let index: FileIndex = locator
        .index(
            path,
            &IndexOptions {
                stride,
                stats: StatsColumns::None,
            },
        )
        .unwrap();
    let n = index.row_count;
    assert!(n > 20, "{}: {n} rows", path.display());
    let mut rng = Rng(seed);
    for rows in row_sets(n, &mut rng) {
        for stored in [true, false] {
            for projection in [None, Some(projection), Some(&[][..])] {
                let request = RowsRequest {
                    rows: &rows,
                    blocks: stored.then_some(index.blocks.as_slice()),
                    schema: stored.then(|| index.schema.clone()),
                    projection,
                };
                let want = one_by_one(locator, path, &request);
                let fast = locator.read_rows(path, &request).unwrap();
                let by_ranges = take::read_rows_by_ranges(locator, path, &request).unwrap();
                let what = format!(
                    "{}: rows {rows:?}, stored index {stored}, projection {projection:?}",
                    path.display()
                );
                for got in [&fast, &by_ranges] {
                    let count: usize = got.iter().map(RecordBatch::num_rows).sum();
                    assert_eq!(count, rows.len(), "{what}");
                    if rows.is_empty() {
                        continue;
                    }
                    let schema = want.first().map(RecordBatch::schema);
                    let (w, g) = (concat(schema.clone(), &want), concat(schema, got));
                    assert_eq!(w, g, "{what}");
                    for b in got.iter() {
                        assert_eq!(b.schema(), want[0].schema(), "{what}");
                    }
                }
            }
        }
        let past = [n - 1, n];
        let request = RowsRequest {
            rows: &past,
            blocks: Some(&index.blocks),
            schema: Some(index.schema.clone()),
            projection: None,
        };
        for err in [
            locator.read_rows(path, &request).unwrap_err(),
            take::read_rows_by_ranges(locator, path, &request).unwrap_err(),
        ] {
            assert!(matches!(err, Error::StaleIndex { .. }), "{err}");
            assert!(err.to_string().contains(&format!("row {n} ")), "{err}");
        }
        let unsorted = [3, 1];
        let request = RowsRequest {
            rows: &unsorted,
            ..request
        };
        let err = locator.read_rows(path, &request).unwrap_err();
        assert!(matches!(err, Error::InvalidRequest { .. }), "{err}");
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn locator(ext: &str) -> Arc<dyn Locator> {
    registry::for_extension(ext).unwrap()
}

/// Batches of ids, nullable text, floats and a dictionary column, of uneven sizes (an empty
/// batch among them).
fn arrow_batches() -> Vec<RecordBatch> {
    let mut first = 0i64;
    let values: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c"]));
    [40usize, 0, 75, 1, 33, 51]
        .iter()
        .map(|&n| {
            let ids: Vec<i64> = (first..first + n as i64).collect();
            first += n as i64;
            let text: StringArray = ids
                .iter()
                .map(|i| (i % 4 != 0).then(|| format!("row \"{i}\", with, commas")))
                .collect();
            let floats: Float64Array = ids
                .iter()
                .map(|&i| (i % 5 != 1).then_some(i as f64 / 8.0))
                .collect();
            // One dictionary for the whole file (IPC files allow no replacement).
            let keys: Int32Array = ids.iter().map(|i| (*i % 3) as i32).collect();
            let dict = DictionaryArray::<Int32Type>::try_new(keys, values.clone()).unwrap();
            let columns: Vec<(&str, ArrayRef)> = vec![
                ("id", Arc::new(Int64Array::from(ids))),
                ("text", Arc::new(text)),
                ("f", Arc::new(floats)),
                ("d", Arc::new(dict)),
            ];
            RecordBatch::try_from_iter(columns).unwrap()
        })
        .collect()
}

fn write_arrow(dir: &Path, name: &str, compression: Option<CompressionType>) -> PathBuf {
    let path = dir.join(name);
    let batches = arrow_batches();
    let options = IpcWriteOptions::default()
        .try_with_compression(compression)
        .unwrap();
    let mut w = FileWriter::try_new_with_options(
        File::create(&path).unwrap(),
        &batches[0].schema(),
        options,
    )
    .unwrap();
    for b in &batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    path
}

#[test]
fn arrow_ipc_read_rows_equals_row_reads() {
    let dir = tempfile::tempdir().unwrap();
    let plain = write_arrow(dir.path(), "plain.arrow", None);
    let packed = write_arrow(dir.path(), "packed.feather", Some(CompressionType::ZSTD));
    let l = locator("arrow");
    check(l.as_ref(), &plain, 1, &names(&["d", "id"]), 1);
    check(l.as_ref(), &packed, 1, &names(&["text"]), 2);
}

#[test]
fn arrow_ipc_read_rows_reports_a_damaged_batch() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_arrow(dir.path(), "f.arrow", None);
    let l = locator("arrow");
    let index = l.index(&path, &IndexOptions::default()).unwrap();
    // Scribble over the body of the third record batch (its message header stays).
    let mut bytes = std::fs::read(&path).unwrap();
    let first = index.blocks[2].first_row;
    let rows = [first, first + 1];
    let request = RowsRequest {
        rows: &rows,
        blocks: Some(&index.blocks),
        schema: Some(index.schema.clone()),
        projection: None,
    };
    let good = l.read_rows(&path, &request).unwrap();
    assert_eq!(good.iter().map(RecordBatch::num_rows).sum::<usize>(), 2);
    // Every byte of the file after the magic, flipped in turn, is an error or a result,
    // never a panic.
    let len = bytes.len();
    for at in (8..len - 10).step_by(7) {
        bytes[at] ^= 0x5a;
        std::fs::write(&path, &bytes).unwrap();
        let _ = l.read_rows(&path, &request);
        bytes[at] ^= 0x5a;
    }
    // A footer block pointing past the data section is a typed error.
    std::fs::write(&path, &bytes[..len / 2]).unwrap();
    let err = l.read_rows(&path, &request).unwrap_err();
    assert!(matches!(err, Error::Malformed { .. }), "{err}");
}

/// A Parquet file of small row groups and pages, with the page index or without it (then
/// pages are skipped by their headers).
fn write_parquet(dir: &Path, page_index: bool) -> PathBuf {
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    let path = dir.join(format!("p{page_index}.parquet"));
    let batches = arrow_batches();
    let mut lists = ListBuilder::new(Int64Builder::new());
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    for i in 0..rows as i64 {
        if i % 7 == 3 {
            lists.append_null();
        } else {
            for k in 0..(i % 4) {
                lists.values().append_value(i * 10 + k);
            }
            lists.append(true);
        }
    }
    let one = arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap();
    let schema = one.schema();
    let mut columns: Vec<(&str, ArrayRef)> = schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .zip(one.columns().iter().cloned())
        .collect();
    columns.push(("list", Arc::new(lists.finish())));
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(64))
        .set_data_page_row_count_limit(9)
        .set_write_batch_size(9)
        .set_offset_index_disabled(!page_index)
        .set_statistics_enabled(if page_index {
            EnabledStatistics::Page
        } else {
            EnabledStatistics::Chunk
        })
        .build();
    let mut w =
        ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    path
}

#[test]
fn parquet_read_rows_equals_row_reads() {
    let dir = tempfile::tempdir().unwrap();
    let l = locator("parquet");
    for page_index in [true, false] {
        let path = write_parquet(dir.path(), page_index);
        check(l.as_ref(), &path, 1, &names(&["list", "id"]), 3);
    }
}

/// Quoted fields with delimiters, doubled quotes and line breaks, empty lines, CRLF line
/// ends, a short record, a record with an extra field, and no line feed after the last.
fn delimited(d: char, rows: usize) -> String {
    let mut s = format!("id{d}name{d}note{d}x\r\n");
    for i in 0..rows {
        let note = match i % 5 {
            0 => format!("\"line one\nline \"\"two\"\"{d} end\""),
            1 => String::new(),
            2 => format!("plain {i}"),
            3 => format!("\"{d}{d}\""),
            _ => "\"\"".to_string(),
        };
        match i % 11 {
            4 => s.push_str(&format!("{i}{d}n{i}\n")),
            7 => s.push_str(&format!("{i}{d}n{i}{d}{note}{d}{}{d}extra\n", i * 3)),
            9 => s.push_str(&format!("{i}{d}n{i}{d}{note}{d}{}\r\n\n", i as f64 / 2.0)),
            _ => s.push_str(&format!("{i}{d}n{i}{d}{note}{d}{}\n", i * 3)),
        }
    }
    let n = rows;
    s.push_str(&format!("{n}{d}last{d}\"quoted\nend\"{d}1"));
    s
}

#[test]
fn delimited_read_rows_equals_row_reads() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("q.csv");
    std::fs::write(&csv, delimited(',', 140)).unwrap();
    let tsv = dir.path().join("q.tsv");
    std::fs::write(&tsv, delimited('\t', 90)).unwrap();
    let l = locator("csv");
    for stride in [1, 7, 1000] {
        check(l.as_ref(), &csv, stride, &names(&["note", "id"]), stride);
    }
    check(l.as_ref(), &tsv, 4, &names(&["x"]), 9);
}

#[test]
fn json_read_rows_by_ranges_equals_row_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.ndjson");
    let mut text = String::new();
    for i in 0..120 {
        if i % 3 == 0 {
            text.push_str(&format!("{{\"b\": {{\"k\": [{i}]}}, \"a\": {i}}}\n"));
        } else {
            text.push_str(&format!("{{\"a\": {i}, \"s\": \"t{i}\"}}\n"));
        }
    }
    std::fs::write(&path, text).unwrap();
    check(locator("ndjson").as_ref(), &path, 16, &names(&["s"]), 5);
}

#[test]
fn read_rows_of_a_direct_request_without_rows_reads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_arrow(dir.path(), "f.arrow", None);
    let request = RowsRequest::default();
    assert!(
        locator("arrow")
            .read_rows(&path, &request)
            .unwrap()
            .is_empty()
    );
}
