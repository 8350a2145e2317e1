//! `Lake::take` against the lake's own scan: a copy of `testdata/lake` (every format, mixed
//! schemas unified) with a small checkpoint stride, an Arrow IPC file of many batches and a
//! run-time handler added, taken in random order with repeats, with the virtual columns and
//! with a projection, through the decoded-block cache (on, off and small); a file changed
//! after the map is a stale error, also once its blocks are kept.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray, UInt64Array};
use bazan::{CreateOptions, ErrorKind, ScanOptions};

pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}

/// `batches.arrow`: 40 batches of 0 to 39 rows (`k`, `tag`).
fn write_arrow(path: &Path) {
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("k", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new("tag", arrow_schema::DataType::Utf8, true),
    ]));
    let file = std::fs::File::create(path).expect("create");
    let mut w = bazan::ipc::FileWriter::try_new(file, &schema).expect("writer");
    let mut k = 0i64;
    for n in 0..40i64 {
        let ks: Vec<i64> = (k..k + n).collect();
        k += n;
        let tags: StringArray = ks
            .iter()
            .map(|i| (i % 3 > 0).then(|| format!("t{i}")))
            .collect();
        let columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ks)), Arc::new(tags)];
        w.write(&RecordBatch::try_new(schema.clone(), columns).expect("batch"))
            .expect("write");
    }
    w.finish().expect("finish");
}

/// A run-time handler of `.tkl` files: one row per line, in one Utf8 column `line`; it
/// implements `read` only, so take goes through the trait's default.
struct Lines;

impl bazan::Locator for Lines {
    fn name(&self) -> &str {
        "tkl"
    }
    fn extensions(&self) -> &[&str] {
        &["tkl"]
    }
    fn formats(&self) -> &[&str] {
        &["tkl"]
    }
    fn index(
        &self,
        path: &Path,
        _: &bazan::IndexOptions,
    ) -> bazan::engine::lake_locators::Result<bazan::FileIndex> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| bazan::engine::lake_locators::Error::io(path, e))?;
        Ok(bazan::FileIndex {
            format: "tkl".into(),
            row_count: text.lines().count() as u64,
            blocks: Vec::new(),
            schema: Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
                "line",
                arrow_schema::DataType::Utf8,
                false,
            )])),
            stats: None,
        })
    }
    fn read(
        &self,
        path: &Path,
        request: &bazan::ReadRequest<'_>,
    ) -> bazan::engine::lake_locators::Result<bazan::BatchIter> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| bazan::engine::lake_locators::Error::io(path, e))?;
        let lines: Vec<&str> = text
            .lines()
            .skip(request.rows.start as usize)
            .take((request.rows.end - request.rows.start) as usize)
            .collect();
        let all =
            RecordBatch::try_from_iter([("line", Arc::new(StringArray::from(lines)) as ArrayRef)])
                .map_err(|e| bazan::engine::lake_locators::Error::library(path, "tkl", e))?;
        // Two batches, as a streaming handler returns them.
        let half = all.num_rows() / 2;
        let (a, b) = (all.slice(0, half), all.slice(half, all.num_rows() - half));
        let batch = |b: RecordBatch| match request.projection {
            Some([]) => b.project(&[]),
            _ => Ok(b),
        };
        let out: Vec<_> = [batch(a), batch(b)]
            .into_iter()
            .map(|r| r.map_err(|e| bazan::engine::lake_locators::Error::library(path, "tkl", e)))
            .collect();
        Ok(Box::new(out.into_iter()))
    }
}

fn row_order(total: u64) -> Vec<u64> {
    let mut seed = 7u64;
    let mut rows: Vec<u64> = (0..total).collect();
    for i in (1..rows.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        rows.swap(i, (seed >> 33) as usize % (i + 1));
    }
    // Repeats, a few of them next to each other.
    let repeats: Vec<u64> = rows.iter().step_by(97).copied().collect();
    rows.extend(repeats.iter().flat_map(|&r| [r, r]));
    rows
}

/// The rows `rows` of the whole-lake scan, the reference a take must equal.
fn reference(lake: &Arc<bazan::Lake>, rows: &[u64], o: &ScanOptions) -> RecordBatch {
    let total = lake.total_rows();
    let all = lake.scan(0..total, o).expect("scan").collect_batches();
    let all = all.expect("batches");
    let schema = lake.scan_schema(o).expect("schema");
    let all = arrow_select::concat::concat_batches(&schema, &all).expect("concat");
    let indices = UInt64Array::from(rows.to_vec());
    arrow_select::take::take_record_batch(&all, &indices).expect("take")
}

#[test]
fn take_equals_the_scan_of_every_format() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    copy_tree(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/lake")),
        root,
    );
    write_arrow(&root.join("batches.arrow"));
    let lines: String = (0..50).map(|i| format!("line {i}\n")).collect();
    std::fs::write(root.join("z.tkl"), lines).expect("tkl");
    bazan::register_handler("tkl", Arc::new(Lines)).expect("registered");
    let options = CreateOptions {
        stride: 7,
        ..CreateOptions::default()
    };
    let created = bazan::create_map(root, &options).expect("created");
    let lake = Arc::new(created.lake);
    let total = lake.total_rows();
    assert!(total > 5_000, "{total}");
    let rows = row_order(total);
    let columns = lake.schema().expect("schema");
    let some: Vec<String> = ["line", "_path", "k"]
        .into_iter()
        .chain(
            columns
                .fields()
                .iter()
                .rev()
                .take(3)
                .map(|f| f.name().as_str()),
        )
        .map(str::to_string)
        .collect();
    for o in [
        ScanOptions::default(),
        ScanOptions {
            with_gid: true,
            with_path: true,
            ..Default::default()
        },
        ScanOptions {
            columns: Some(some),
            with_gid: true,
            ..Default::default()
        },
        ScanOptions {
            columns: Some(vec!["_gid".into()]),
            ..Default::default()
        },
    ] {
        // The decoded-block cache on (blocks kept from the second touch, then read from
        // memory), off, and small enough that kept blocks leave while a take reads: the
        // same rows every time.
        for budget in [bazan::DEFAULT_CACHE_BYTES, 0, 16 << 10] {
            lake.set_cache_bytes(budget);
            for rows in [
                &rows[..],
                &rows[..1],
                &rows[..0],
                &rows[rows.len() - 300..],
                &rows[..],
                &rows[..],
            ] {
                let want = reference(&lake, rows, &o);
                let got = lake.take(rows, &o).expect("take");
                assert_eq!(got.num_rows(), rows.len());
                assert_eq!(
                    got,
                    want,
                    "{:?}, {} rows, budget {budget}",
                    o.columns,
                    rows.len()
                );
            }
            if budget == 0 {
                assert_eq!(lake.cached_bytes(), 0);
            } else if o.columns.as_deref() != Some(&["_gid".to_string()][..]) {
                // Parquet row groups and Arrow record batches were kept.
                assert!(lake.cached_bytes() > 0, "{:?}", o.columns);
                assert!(lake.cached_bytes() <= budget);
            }
        }
    }
    // Back to the default: blocks are kept again from their second touch.
    lake.set_cache_bytes(bazan::DEFAULT_CACHE_BYTES);
    for _ in 0..2 {
        let again = lake.take(&rows, &ScanOptions::default()).expect("take");
        assert_eq!(again, reference(&lake, &rows, &ScanOptions::default()));
    }
    assert!(lake.cached_bytes() > 0);
    bazan::unregister_handler("tkl").expect("unregistered");

    // A file changed since the map: its rows are a stale error, never other rows.
    let i = lake
        .map()
        .entries()
        .position(|e| e.path == "batches.arrow")
        .expect("entry");
    let g = lake.map().entry(i).first_global_row + 3;
    std::fs::write(root.join("batches.arrow"), b"ARROW1 changed").expect("write");
    let e = lake
        .take(&[0, g], &ScanOptions::default())
        .expect_err("stale");
    assert_eq!(e.kind(), ErrorKind::Stale, "{e}");
}
