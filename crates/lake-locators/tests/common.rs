//! Helpers shared by the integration test modules: the conformance corpus location, small
//! files in a temp dir, indexing with a stride, and reading a row range back as JSON rows.

use std::path::{Path, PathBuf};

use lake_locators::{
    ColumnStats, Error, FileIndex, IndexOptions, Locator, ReadRequest, Stats, StatsColumns, rows,
};
use serde_json::Value;

/// The lake corpus (`../shared/conformance/lake`), or `None` with a printed reason when it
/// is absent so the conformance tests skip instead of failing on a checkout without it.
pub(crate) fn corpus() -> Option<PathBuf> {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/lake"
    ));
    if dir.join("expected.json").is_file() {
        Some(dir.to_path_buf())
    } else {
        println!("skipped: {} is absent", dir.display());
        None
    }
}

/// The extension of a corpus path, which picks its locator from the registry.
pub(crate) fn ext(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or("")
}

/// Writes `data` to `name` in the temp dir and returns the path.
pub(crate) fn write(dir: &tempfile::TempDir, name: &str, data: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, data).unwrap();
    path
}

/// Indexes `path` with checkpoints every `stride` rows and statistics on every column.
pub(crate) fn index_every(
    locator: &dyn Locator,
    path: &Path,
    stride: u64,
) -> lake_locators::Result<FileIndex> {
    locator.index(
        path,
        &IndexOptions {
            stride,
            stats: StatsColumns::All,
        },
    )
}

/// A request for `rows` that seeks with the index's blocks and schema when one is given.
pub(crate) fn request<'a>(
    idx: Option<&'a FileIndex>,
    rows: std::ops::Range<u64>,
    projection: Option<&'a [String]>,
    batch_size: usize,
) -> ReadRequest<'a> {
    ReadRequest {
        rows,
        blocks: idx.map(|i| i.blocks.as_slice()),
        schema: idx.map(|i| i.schema.clone()),
        projection,
        batch_size,
    }
}

/// Runs `request` and returns every row as JSON; a read error panics naming the file, and
/// every batch must respect a non-zero `batch_size`.
pub(crate) fn read_rows(locator: &dyn Locator, path: &Path, request: &ReadRequest) -> Vec<Value> {
    let mut out = Vec::new();
    for batch in locator
        .read(path, request)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    {
        let batch = batch.unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        if request.batch_size > 0 {
            assert!(
                batch.num_rows() <= request.batch_size,
                "{}: a batch of {} rows for batch_size {}",
                path.display(),
                batch.num_rows(),
                request.batch_size
            );
        }
        out.extend((0..batch.num_rows()).map(|r| rows::row_value(&batch, r)));
    }
    out
}

/// The `(first_row, first_byte)` checkpoints of a row-format index.
pub(crate) fn checkpoints(idx: &FileIndex) -> Vec<(u64, u64)> {
    idx.blocks
        .iter()
        .map(|b| (b.first_row, b.first_byte.unwrap()))
        .collect()
}

/// Compares the corpus's expected statistics (`{type, min, max}` per column) with ours:
/// `agree(type, expected, ours)` judges one column, or returns `None` for a type the caller
/// does not check. Returns the mismatches, and every column we have statistics for that the
/// corpus has none for.
pub(crate) fn stats_mismatches(
    path: &str,
    expected: &serde_json::Map<String, Value>,
    ours: &Stats,
    agree: impl Fn(&str, &Value, Option<&ColumnStats>) -> Option<bool>,
) -> Vec<String> {
    let mut bad = Vec::new();
    for (column, e) in expected {
        let ty = e["type"].as_str().unwrap_or("");
        let got = ours.get(column);
        if agree(ty, e, got) == Some(false) {
            bad.push(format!(
                "{path}: stats of {column}: expected {e}, got {got:?}"
            ));
        }
    }
    for column in ours.keys() {
        if !expected.contains_key(column) {
            bad.push(format!("{path}: unexpected stats for {column}"));
        }
    }
    bad
}

/// The byte offset, row and message of an [`Error::Malformed`] (the message must name the
/// file); any other error fails the test.
pub(crate) fn malformed(err: Error) -> (Option<u64>, Option<u64>, String) {
    let text = err.to_string();
    match err {
        Error::Malformed {
            offset, row, path, ..
        } => {
            assert!(text.contains(path.to_str().unwrap()), "{text}");
            (offset, row, text)
        }
        other => panic!("expected a malformed-file error, got {other}"),
    }
}

/// The names of `fields` (a schema's or a struct's), in order.
pub(crate) fn names(fields: &arrow_schema::Fields) -> Vec<&str> {
    fields.iter().map(|f| f.name().as_str()).collect()
}

/// Where the column chunks of an indexed Parquet file end: reads from there on are footer
/// reads, before it data pages.
pub(crate) fn parquet_data_end(index: &FileIndex) -> u64 {
    index
        .blocks
        .iter()
        .flat_map(|b| b.columns.iter().flatten())
        .map(|c| c.first_byte + c.compressed_size)
        .max()
        .unwrap_or(0)
}

/// Indexes the Parquet file at `path` (default options) through a read trace: the index and
/// the byte ranges it read.
pub(crate) fn parquet_traced_index(path: &Path) -> (FileIndex, Vec<std::ops::Range<u64>>) {
    use lake_locators::trace::{ReadLog, TraceReader};
    let log = ReadLog::default();
    let reader = match std::fs::File::open(path).and_then(|f| TraceReader::new(f, log.clone())) {
        Ok(r) => r,
        Err(e) => panic!("{}: cannot open for tracing: {e}", path.display()),
    };
    match lake_locators::parquet::ParquetLocator.index_reader(
        path,
        reader,
        &IndexOptions::default(),
    ) {
        Ok(index) => (index, log.ranges()),
        Err(e) => panic!("{}: traced index failed: {e}", path.display()),
    }
}

/// Checks the byte ranges that [`lake_locators::locator::bytes::read_ranges`] names for the
/// reads of the file at `path` (indexed as `idx`): a copy of the file holding only those
/// bytes (zeros elsewhere, as the sparse local copy of an object in a bucket has) reads as
/// the file itself, for each row span of `spans` (`read`) and for the rows `rows`
/// (`read_rows`), and the ranges are a strict part of the file. Returns the bytes the rows'
/// read needs.
pub(crate) fn sparse_reads_match(
    locator: &dyn Locator,
    path: &Path,
    idx: &FileIndex,
    spans: &[std::ops::Range<u64>],
    rows: &[u64],
) -> u64 {
    use lake_locators::locator::bytes::{merge_ranges, read_ranges};
    let data = std::fs::read(path).unwrap();
    let size = data.len() as u64;
    let layout = locator.byte_layout().expect("a byte layout");
    let sparse = |ranges: Vec<std::ops::Range<u64>>| -> (PathBuf, u64) {
        let mut copy = vec![0u8; data.len()];
        let mut n = 0;
        for r in merge_ranges(ranges, 0) {
            copy[r.start as usize..r.end as usize]
                .copy_from_slice(&data[r.start as usize..r.end as usize]);
            n += r.end - r.start;
        }
        let name = format!("sparse-{}", path.file_name().unwrap().to_string_lossy());
        let to = path.with_file_name(name);
        std::fs::write(&to, copy).unwrap();
        (to, n)
    };
    for span in spans {
        let ranges = read_ranges(&layout, size, &idx.blocks, span.clone()).expect("ranges");
        let (copy, n) = sparse(ranges);
        assert!(n < size, "{span:?}: {n} of {size} bytes");
        let request = request(Some(idx), span.clone(), None, 0);
        assert_eq!(
            read_rows(locator, &copy, &request),
            read_rows(locator, path, &request),
            "{span:?}"
        );
    }
    let mut ranges = Vec::new();
    for &r in rows {
        ranges.extend(read_ranges(&layout, size, &idx.blocks, r..r + 1).expect("ranges"));
    }
    let (copy, n) = sparse(ranges);
    assert!(n < size, "rows: {n} of {size} bytes");
    let request = lake_locators::RowsRequest {
        rows,
        blocks: Some(&idx.blocks),
        schema: Some(idx.schema.clone()),
        projection: None,
    };
    let want = locator.read_rows(path, &request).unwrap();
    let got = locator.read_rows(&copy, &request).unwrap();
    assert_eq!(got, want);
    n
}
