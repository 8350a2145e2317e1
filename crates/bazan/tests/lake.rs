//! A lake with CSV, NDJSON, Parquet-free text files and a TsFile, mapped, located, scanned,
//! taken and checked through the facade alone.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use bazan::{CancelToken, CreateOptions, ErrorKind, ScanOptions};

const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata");

/// A lake of three files: `a.csv` (id, name), `b.ndjson` (id, score), `c/t.tsfile`.
fn lake() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_path_buf();
    std::fs::write(root.join("a.csv"), "id,name\n1,ann\n2,\"b,ob\"\n3,cy\n").expect("csv");
    std::fs::write(
        root.join("b.ndjson"),
        "{\"id\":4,\"score\":0.5}\n{\"score\":1.5,\"id\":5}\n",
    )
    .expect("ndjson");
    std::fs::create_dir(root.join("c")).expect("dir");
    std::fs::copy(
        Path::new(TESTDATA).join("tsfile/table.tsfile"),
        root.join("c/t.tsfile"),
    )
    .expect("tsfile");
    (dir, root)
}

fn tsfile_rows(path: &Path) -> u64 {
    let names = bazan::tsfile::table_names(path).expect("tables");
    let mut rows = 0;
    for t in names {
        let q = bazan::tsfile::Query {
            table: Some(t),
            ..Default::default()
        };
        let (_, batches) = bazan::tsfile::query(path, &q).expect("query");
        rows += batches.iter().map(|b| b.num_rows() as u64).sum::<u64>();
    }
    rows
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

#[test]
fn a_lake_with_a_tsfile_is_mapped_and_read() {
    let (_dir, root) = lake();
    let ts_rows = tsfile_rows(&root.join("c/t.tsfile"));
    assert!(ts_rows > 0);
    let created = bazan::create_map(&root, &CreateOptions::default()).expect("created");
    assert!(created.failures.is_empty());
    assert!(root.join(".br_map.bazan").is_file());
    let lake = Arc::new(bazan::load_map(&root).expect("loaded"));
    assert_eq!(lake.total_files(), 3);
    assert_eq!(lake.total_rows(), 5 + ts_rows);
    let formats: Vec<String> = lake.map().entries().map(|e| e.format.to_string()).collect();
    assert_eq!(formats, vec!["csv", "ndjson", "tsfile"]);

    // Unified schema: id (Int64 in both), name, score, then the TsFile's columns.
    let schema = lake.schema().expect("schema");
    assert_eq!(schema.field(0).name(), "id");
    assert_eq!(schema.field(0).data_type(), &DataType::Int64);
    assert_eq!(schema.field(1).name(), "name");
    assert_eq!(schema.field(2).name(), "score");
    assert!(schema.fields().len() > 3);

    let at = lake.locate_row(3).expect("located");
    assert_eq!(
        (at.path.as_str(), at.local_row, at.index),
        ("b.ndjson", 0, 1)
    );
    let at = lake.locate_row(5).expect("located");
    assert_eq!((at.path.as_str(), at.local_row), ("c/t.tsfile", 0));

    // The whole lake as one stream, with global rows and paths.
    let options = ScanOptions {
        columns: Some(vec!["id".into(), "name".into(), "score".into()]),
        with_gid: true,
        with_path: true,
        batch_size: 2,
        ..Default::default()
    };
    let batches = lake
        .scan(0..lake.total_rows(), &options)
        .expect("scan")
        .collect_batches()
        .expect("batches");
    assert!(batches.iter().all(|b| b.num_rows() <= 2));
    assert_eq!(rows(&batches) as u64, lake.total_rows());
    let all = arrow_select::concat::concat_batches(&batches[0].schema(), &batches).expect("concat");
    let ids = all.column(0).as_primitive::<Int64Type>();
    assert_eq!(
        (0..5).map(|i| ids.value(i)).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );
    assert!(ids.is_null(5), "the TsFile has no id column");
    let names = all.column(1).as_string::<i32>();
    assert_eq!(names.value(1), "b,ob");
    assert!(names.is_null(3));
    let gids = all.column(3).as_primitive::<Int64Type>();
    assert_eq!(gids.value(6), 6);
    let paths =
        arrow_cast::display::ArrayFormatter::try_new(all.column(4).as_ref(), &Default::default())
            .expect("formatter");
    assert_eq!(paths.value(4).to_string(), "b.ndjson");
    assert_eq!(paths.value(5).to_string(), "c/t.tsfile");

    // take: any order, repeats, each file read once.
    let taken = lake
        .take(
            &[4, 0, 4, 2],
            &ScanOptions {
                columns: Some(vec!["_gid".into(), "id".into()]),
                ..Default::default()
            },
        )
        .expect("take");
    let g = taken.column(0).as_primitive::<Int64Type>();
    let id = taken.column(1).as_primitive::<Int64Type>();
    assert_eq!(g.values().to_vec(), vec![4, 0, 4, 2]);
    assert_eq!(id.values().to_vec(), vec![5, 1, 5, 3]);

    // The per-file slice of the CLI keeps each file's own schema.
    let files = lake.slice_files(1, 3, None).expect("slice");
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].path, "a.csv");
    assert_eq!(files[1].batches[0].schema().fields().len(), 2);

    // The doctor sees a healthy lake.
    let report = lake.doctor(&Default::default()).expect("doctor");
    assert_eq!(report.verdict(), bazan::Verdict::Healthy);
}

#[test]
fn errors_have_stable_kinds() {
    let (_dir, root) = lake();
    let missing = bazan::load_map(&root).expect_err("no map yet");
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    bazan::create_map(&root, &CreateOptions::default()).expect("created");
    let lake = Arc::new(bazan::load_map(&root).expect("loaded"));
    let e = lake.locate_row(10_000_000).expect_err("out of range");
    assert_eq!(e.kind(), ErrorKind::OutOfRange);
    let e = lake
        .take(&[10_000_000], &ScanOptions::default())
        .expect_err("out of range");
    assert_eq!(e.kind(), ErrorKind::OutOfRange);
    let e = lake
        .scan(
            0..2,
            &ScanOptions {
                columns: Some(vec!["nope".into()]),
                ..Default::default()
            },
        )
        .expect_err("unknown column");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("nope"), "{e}");
    let e = bazan::create_map(
        &root,
        &CreateOptions {
            stride: 0,
            ..Default::default()
        },
    )
    .expect_err("stride 0");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    // A file changed after mapping is stale: an error naming it, no rows.
    std::fs::write(root.join("a.csv"), "id,name\n1,ann\n2,bob\n3,cy\n9,z\n").expect("edit");
    let mut reader = lake.scan(0..5, &ScanOptions::default()).expect("planned");
    let e = reader.next_batch().expect("an item").expect_err("stale");
    assert_eq!(e.kind(), ErrorKind::Stale);
    assert!(e.to_string().contains("a.csv"), "{e}");
    assert!(
        reader.next_batch().is_none(),
        "the stream ends after an error"
    );
}

#[test]
fn a_cancelled_build_writes_nothing() {
    let (_dir, root) = lake();
    let cancel = CancelToken::new();
    cancel.cancel();
    let e = bazan::create_map(
        &root,
        &CreateOptions {
            cancel: Some(cancel),
            ..Default::default()
        },
    )
    .expect_err("cancelled");
    assert_eq!(e.kind(), ErrorKind::Interrupted);
    let left: Vec<_> = std::fs::read_dir(&root)
        .expect("dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".br_map"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn threads_bound_the_build() {
    let (_dir, root) = lake();
    let seen = Arc::new(AtomicUsize::new(0));
    let s = Arc::clone(&seen);
    let progress: bazan::ProgressFn = Arc::new(move |_| {
        assert_eq!(rayon::current_num_threads(), 1);
        s.fetch_add(1, Ordering::Relaxed);
    });
    bazan::create_map(
        &root,
        &CreateOptions {
            threads: Some(1),
            progress: Some(progress),
            ..Default::default()
        },
    )
    .expect("created");
    assert_eq!(seen.load(Ordering::Relaxed), 3);
    let e = bazan::create_map(
        &root,
        &CreateOptions {
            threads: Some(0),
            ..Default::default()
        },
    )
    .expect_err("zero threads");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

/// A run-time handler: `.lines` files, one row per line, in one Utf8 column `line`.
struct Lines;

impl bazan::Locator for Lines {
    fn name(&self) -> &str {
        "lines"
    }
    fn extensions(&self) -> &[&str] {
        &["lines"]
    }
    fn formats(&self) -> &[&str] {
        &["lines"]
    }
    fn index(
        &self,
        path: &Path,
        _: &bazan::IndexOptions,
    ) -> bazan::engine::lake_locators::Result<bazan::FileIndex> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| bazan::engine::lake_locators::Error::io(path, e))?;
        Ok(bazan::FileIndex {
            format: "lines".into(),
            row_count: text.lines().count() as u64,
            blocks: Vec::new(),
            schema: Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
                "line",
                DataType::Utf8,
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
        let batch = RecordBatch::try_from_iter([(
            "line",
            Arc::new(arrow_array::StringArray::from(lines)) as arrow_array::ArrayRef,
        )])
        .map_err(|e| bazan::engine::lake_locators::Error::library(path, "lines", e))?;
        let batch = match request.projection {
            Some([]) => batch
                .project(&[])
                .map_err(|e| bazan::engine::lake_locators::Error::library(path, "lines", e))?,
            _ => batch,
        };
        Ok(Box::new(std::iter::once(Ok(batch))))
    }
}

#[test]
fn run_time_handlers_are_indexed_and_read() {
    let (_dir, root) = lake();
    std::fs::write(root.join("d.lines"), "x\ny\nz\n").expect("lines");
    bazan::register_handler(".lines", Arc::new(Lines)).expect("registered");
    let created = bazan::create_map(&root, &CreateOptions::default());
    assert!(bazan::unregister_handler("lines").expect("unregistered"));
    let lake = Arc::new(created.expect("created").lake);
    assert_eq!(lake.total_files(), 4);
    let i = lake
        .map()
        .entries()
        .position(|e| e.path == "d.lines")
        .expect("entry");
    assert!(lake.blocks(i).expect("blocks").is_empty());
    bazan::register_handler("lines", Arc::new(Lines)).expect("registered");
    let start = lake.map().entry(i).first_global_row;
    let batches = lake
        .scan(
            start + 1..start + 3,
            &ScanOptions {
                columns: Some(vec!["line".into()]),
                ..Default::default()
            },
        )
        .expect("scan")
        .collect_batches();
    bazan::unregister_handler("lines").expect("unregistered");
    let batches = batches.expect("batches");
    let line = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<arrow_array::StringArray>();
    let line = line.expect("utf8");
    assert_eq!((line.value(0), line.value(1)), ("y", "z"));
    assert_eq!(
        bazan::register_handler("a/b", Arc::new(Lines))
            .expect_err("bad extension")
            .kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn files_without_values_do_not_vote_on_types() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::write(root.join("a.csv"), "id,qty\n1,5\n2,7\n").expect("csv");
    std::fs::write(root.join("b_header_only.csv"), "id,qty\n").expect("header only");
    std::fs::write(root.join("c_empty_qty.csv"), "id,qty,note\n3,,x\n4,,y\n").expect("csv");
    bazan::create_map(root, &CreateOptions::default()).expect("created");
    let lake = Arc::new(bazan::load_map(root).expect("loaded"));
    let schema = lake.schema().expect("schema");
    assert_eq!(
        schema.field_with_name("id").expect("id").data_type(),
        &DataType::Int64
    );
    assert_eq!(
        schema.field_with_name("qty").expect("qty").data_type(),
        &DataType::Int64
    );
    assert_eq!(
        schema.field_with_name("note").expect("note").data_type(),
        &DataType::Utf8
    );
    let batches = lake
        .scan(0..4, &ScanOptions::default())
        .expect("scan")
        .collect_batches()
        .expect("batches");
    let all = arrow_select::concat::concat_batches(&batches[0].schema(), &batches).expect("concat");
    let qty = all.column(1).as_primitive::<Int64Type>();
    assert_eq!((qty.value(0), qty.value(1)), (5, 7));
    assert!(qty.is_null(2) && qty.is_null(3));
}

/// Every slice of the conformance lake's answer key, with its columns and `_path`: the rows
/// and the files they come from (`segments`). Its files differ in columns and types, and some
/// readers declare a column non-nullable in one block and nullable in the next, so the short
/// batches a scan joins before adding missing columns must be joined at the wider
/// nullability.
#[test]
fn every_slice_of_the_conformance_answer_key() {
    let corpus = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/lake"
    ));
    let Ok(text) = std::fs::read_to_string(corpus.join("expected.json")) else {
        println!("skipped: {} is absent", corpus.display());
        return;
    };
    let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    crate::take::copy_tree(&corpus.join("lake"), dir.path());
    let lake = Arc::new(
        bazan::create_map(dir.path(), &CreateOptions::default())
            .unwrap()
            .lake,
    );
    let slices = expected["slices"].as_array().unwrap();
    for s in slices {
        let why = s["why"].as_str().unwrap_or("?");
        let start = s["start"].as_u64().unwrap();
        let len = s["len"].as_u64().unwrap();
        let columns = s["columns"].as_array().map(|c| {
            c.iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        });
        let options = ScanOptions {
            columns,
            with_path: true,
            ..ScanOptions::default()
        };
        let batches = lake
            .scan(start..start + len, &options)
            .and_then(|r| r.collect_batches())
            .unwrap_or_else(|e| panic!("{why}: {e}"));
        let mut paths: Vec<(String, u64)> = Vec::new();
        for b in &batches {
            let col = b.column(b.num_columns() - 1);
            let col = arrow_cast::cast(col, &DataType::Utf8).unwrap();
            for p in col.as_string::<i32>().iter() {
                let p = p.unwrap().to_string();
                match paths.last_mut() {
                    Some((last, n)) if *last == p => *n += 1,
                    _ => paths.push((p, 1)),
                }
            }
        }
        let want: Vec<(String, u64)> = s["segments"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["len"].as_u64().unwrap() > 0)
            .map(|g| {
                (
                    g["path"].as_str().unwrap().to_string(),
                    g["len"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(paths, want, "{why}");
    }
    assert!(!slices.is_empty());
}
