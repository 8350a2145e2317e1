//! `bazan read`: the three output formats, sniffing files without an extension, clamping,
//! the corpus's sampled rows, and `error: …` with exit 2 for bad input.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use arrow_array::{BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_ipc::writer::FileWriter;
use arrow_schema::{DataType, Field, Schema};

use crate::common::bazan;

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// An Arrow IPC file with two batches of awkward values.
fn sample(dir: &Path, name: &str) -> PathBuf {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("text", DataType::Utf8, true),
        Field::new("x", DataType::Float64, true),
        Field::new("ok", DataType::Boolean, true),
    ]));
    let path = dir.join(name);
    let mut w = FileWriter::try_new(File::create(&path).unwrap(), &schema).unwrap();
    let b1 = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![i64::MIN, 0])),
            Arc::new(StringArray::from(vec![Some("a, \"quoted\""), None])),
            Arc::new(Float64Array::from(vec![Some(0.1 + 0.2), Some(f64::NAN)])),
            Arc::new(BooleanArray::from(vec![Some(true), None])),
        ],
    )
    .unwrap();
    let b2 = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![i64::MAX])),
            Arc::new(StringArray::from(vec![Some("two\nlines")])),
            Arc::new(Float64Array::from(vec![Some(5e-324)])),
            Arc::new(BooleanArray::from(vec![Some(false)])),
        ],
    )
    .unwrap();
    w.write(&b1).unwrap();
    w.write(&b2).unwrap();
    w.finish().unwrap();
    path
}

#[test]
fn output_formats() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path(), "s.arrow");
    let p = path.to_str().unwrap();
    let table = bazan(&["read", p]);
    assert!(table.status.success());
    insta::assert_snapshot!("read_table", stdout(&table));
    let ndjson = bazan(&["read", p, "--format", "ndjson"]);
    insta::assert_snapshot!("read_ndjson", stdout(&ndjson));
    let csv = bazan(&[
        "read",
        p,
        "--format",
        "csv",
        "--start",
        "1",
        "--columns",
        "text,id",
    ]);
    insta::assert_snapshot!("read_csv", stdout(&csv));
}

#[test]
fn sniffs_files_without_a_known_extension_and_clamps() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path(), "data_without_extension");
    let p = path.to_str().unwrap();
    let out = bazan(&["read", p, "--start", "2", "--format", "ndjson"]);
    assert!(out.status.success());
    assert_eq!(
        stdout(&out),
        "{\"id\":9223372036854775807,\"text\":\"two\\nlines\",\"x\":5e-324,\"ok\":false}\n"
    );
    for args in [["--start", "3"], ["--len", "0"]] {
        let out = bazan(&["read", p, args[0], args[1], "--format", "ndjson"]);
        assert!(out.status.success());
        assert_eq!(stdout(&out), "");
    }
}

#[test]
fn bad_input_is_exit_2_with_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.parquet");
    std::fs::write(&junk, b"PAR1 this is not parquet PAR1").unwrap();
    let unknown = dir.path().join("notes");
    std::fs::write(&unknown, b"hello").unwrap();
    let good = sample(dir.path(), "g.arrow");
    let cases: Vec<Vec<&str>> = vec![
        vec!["read", junk.to_str().unwrap()],
        vec!["read", unknown.to_str().unwrap()],
        vec!["read", "/nonexistent/file.orc"],
        vec!["read", good.to_str().unwrap(), "--columns", "nope"],
        vec!["read", good.to_str().unwrap(), "--start", "x"],
    ];
    for args in cases {
        let out = bazan(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn corpus_samples_of_columnar_files() {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/lake"
    ));
    let Ok(text) = std::fs::read_to_string(dir.join("expected.json")) else {
        println!("skipped: {} is absent", dir.display());
        return;
    };
    let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    for s in expected["samples"].as_array().unwrap() {
        let path = s["path"].as_str().unwrap();
        let ext = path.rsplit('.').next().unwrap();
        if !["parquet", "orc", "avro", "arrow", "feather", "arrows"].contains(&ext) {
            continue;
        }
        let file = dir.join("lake").join(path);
        let start = s["local_row"].to_string();
        let out = bazan(&[
            "read",
            file.to_str().unwrap(),
            "--start",
            &start,
            "--len",
            "1",
            "--format",
            "ndjson",
        ]);
        assert!(out.status.success(), "{path}");
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(got, s["values"], "{path} row {start}");
        checked += 1;
    }
    assert!(checked > 0);
}

/// Corrupted copies of the corpus's ORC and Arrow files (whose libraries panic on some bad
/// bytes) give exit 0 or exit 2 with exactly one `error:` line: caught panics print nothing.
#[test]
fn corrupted_files_give_one_error_line() {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/lake"
    ));
    let Ok(text) = std::fs::read_to_string(dir.join("expected.json")) else {
        println!("skipped: {} is absent", dir.display());
        return;
    };
    let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut errors = 0;
    for f in expected["files"].as_array().unwrap() {
        let format = f["format"].as_str().unwrap();
        if !["orc", "feather"].contains(&format) {
            continue;
        }
        let good = std::fs::read(dir.join("lake").join(f["path"].as_str().unwrap())).unwrap();
        let n = good.len();
        for i in 0..40 {
            let mut bad = good.clone();
            // Bytes spread over the whole file, every 7th one near the tail (footers).
            let at = if i % 7 == 0 {
                n - 1 - i * 3
            } else {
                n * i / 40
            };
            bad[at] ^= 0x5a;
            let path = tmp.path().join(format!("bad.{format}"));
            std::fs::write(&path, &bad).unwrap();
            let out = bazan(&["read", path.to_str().unwrap(), "--format", "ndjson"]);
            let err = String::from_utf8(out.stderr).unwrap();
            match out.status.code() {
                Some(0) => assert!(err.is_empty(), "{format} byte {at}: {err}"),
                Some(2) => {
                    assert_eq!(err.lines().count(), 1, "{format} byte {at}: {err}");
                    assert!(err.starts_with("error: "), "{format} byte {at}: {err}");
                    errors += 1;
                }
                other => panic!("{format} byte {at}: exit {other:?}: {err}"),
            }
        }
    }
    println!("{errors} corrupted files reported as errors");
}

/// `bazan read` takes the handler `map create` indexes a file with: a `.tsfile` (and a
/// TsFile without its extension, by its magic bytes) reads as the rows `slice` prints of it.
#[test]
fn reads_a_tsfile_with_the_handler_map_create_uses() {
    let src = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tsfile-official/float_ts2diff_snappy.tsfile"
    ));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let file = dir.path().join("t.tsfile");
    std::fs::copy(src, &file).unwrap();
    let map = bazan(&["map", "create", root, "--json"]);
    assert!(
        map.status.success(),
        "{}",
        String::from_utf8_lossy(&map.stderr)
    );
    let shown: serde_json::Value = serde_json::from_slice(&map.stdout).unwrap();
    let rows = shown["total_rows"].as_u64().unwrap();
    assert!(rows > 0);

    let read = bazan(&["read", file.to_str().unwrap(), "--format", "ndjson"]);
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let text = stdout(&read);
    assert_eq!(text.lines().count() as u64, rows);
    let len = rows.to_string();
    let slice = bazan(&[
        "slice", root, "--start", "0", "--len", &len, "--format", "ndjson",
    ]);
    assert!(slice.status.success());
    assert_eq!(text, stdout(&slice));

    let bare = dir.path().join("no_extension");
    std::fs::copy(src, &bare).unwrap();
    let sniffed = bazan(&["read", bare.to_str().unwrap(), "--format", "ndjson"]);
    assert!(
        sniffed.status.success(),
        "{}",
        String::from_utf8_lossy(&sniffed.stderr)
    );
    assert_eq!(stdout(&sniffed), text);
}
