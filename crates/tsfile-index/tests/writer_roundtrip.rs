//! Our writer read back by our reader: random tables and tree devices (proptest) come back
//! row for row; out-of-order and duplicate timestamps are refused with a clear error; a
//! writer that is dropped or fails leaves no file under the final name.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use proptest::prelude::*;
use serde_json::{Value, json};
use tsfile_format::schema::{MeasurementSchema, TableColumn, TableSchema};
use tsfile_format::types::{
    ColumnCategory, CompressionType as C, TSDataType as T, TSEncoding as E,
};
use tsfile_index::writer::{TsFileWriter, WriteError, WriterOptions};

use crate::writer_corpus::column;

const TYPES: [T; 10] = [
    T::Boolean,
    T::Int32,
    T::Int64,
    T::Float,
    T::Double,
    T::Text,
    T::String,
    T::Timestamp,
    T::Date,
    T::Blob,
];

/// Lossless encodings the writer accepts for each type.
fn encodings(t: T) -> Vec<E> {
    match t {
        T::Boolean => vec![E::Plain],
        T::Int32 | T::Int64 => vec![
            E::Plain,
            E::Rle,
            E::Ts2Diff,
            E::Gorilla,
            E::Zigzag,
            E::Chimp,
            E::Rlbe,
        ],
        T::Timestamp | T::Date => vec![E::Plain, E::Rle, E::Ts2Diff, E::Gorilla, E::Chimp, E::Rlbe],
        T::Float | T::Double => vec![E::Plain, E::Gorilla, E::Chimp, E::Rlbe],
        T::Text | T::String => vec![E::Plain, E::Dictionary],
        _ => vec![E::Plain],
    }
}

const CODECS: [C; 6] = [
    C::Uncompressed,
    C::Snappy,
    C::Gzip,
    C::Lz4,
    C::Zstd,
    C::Lzma2,
];

/// A JSON value of type `t` from a random seed, in the dump's representation.
fn value(t: T, s: u64) -> Value {
    match t {
        T::Boolean => json!(!s.is_multiple_of(2)),
        T::Int32 => json!((s as i32) >> (s % 31)),
        T::Int64 | T::Timestamp => json!((s as i64) >> (s % 63)),
        T::Float => json!(f64::from(((s % 20_000) as f32 - 10_000.0) / 16.0)),
        T::Double => json!(f64::from_bits(s >> 2) % 1e12),
        T::Text | T::String => json!(format!(
            "v{}{}",
            s % 97,
            if s.is_multiple_of(5) { "ü日" } else { "" }
        )),
        T::Date => json!(format!(
            "{:04}-{:02}-{:02}",
            1000 + s % 9000,
            1 + s % 12,
            1 + s % 28
        )),
        _ => json!(format!("{:06x}", s % 65_536 + 4096)),
    }
}

fn double_ok(v: &Value) -> Value {
    // NaN cannot appear in JSON: map it to a finite value first.
    match v.as_f64() {
        Some(x) if !x.is_finite() => json!(0.5),
        _ => v.clone(),
    }
}

/// One generated table case.
#[derive(Debug, Clone)]
struct Case {
    tags: usize,
    fields: Vec<(T, usize, usize)>,
    devices: Vec<Vec<(i64, Vec<Option<u64>>)>>,
    page_points: usize,
    degree: usize,
    flush_every: usize,
}

fn case() -> impl Strategy<Value = Case> {
    (
        0usize..3,
        proptest::collection::vec((0usize..10, 0usize..8, 0usize..6), 1..6),
        1usize..5,
        1usize..30,
        2usize..6,
        0usize..3,
    )
        .prop_flat_map(|(tags, fields, ndev, page_points, degree, flush_every)| {
            let width = fields.len();
            let dev = proptest::collection::vec(
                (
                    1i64..1000,
                    proptest::collection::vec(proptest::option::weighted(0.8, any::<u64>()), width),
                ),
                0..60,
            );
            let ndev = if tags == 0 { 1 } else { ndev };
            (proptest::collection::vec(dev, ndev..=ndev)).prop_map(move |devices| Case {
                tags,
                fields: fields
                    .iter()
                    .map(|&(t, e, c)| {
                        let ty = TYPES[t];
                        (ty, e % encodings(ty).len(), c)
                    })
                    .collect(),
                devices,
                page_points,
                degree,
                flush_every,
            })
        })
}

/// Writes `c` and returns the expected rows (time, tags…, fields…).
fn write_case(c: &Case, path: &Path) -> Vec<Vec<Value>> {
    let opts = WriterOptions {
        max_points_per_page: c.page_points,
        max_degree: c.degree,
        ..WriterOptions::default()
    };
    let mut columns: Vec<TableColumn> = (0..c.tags)
        .map(|k| opts.column(&format!("tag{k}"), T::String, ColumnCategory::Tag))
        .collect();
    for (i, (t, e, k)) in c.fields.iter().enumerate() {
        columns.push(TableColumn {
            schema: MeasurementSchema::new(format!("f{i}"), *t, encodings(*t)[*e], CODECS[*k]),
            category: ColumnCategory::Field,
        });
    }
    let mut w = TsFileWriter::create(path, opts).expect("create");
    w.register_table("t", TableSchema { columns })
        .expect("register");
    let mut all = Vec::new();
    for (d, rows) in c.devices.iter().enumerate() {
        let mut time = -500i64;
        let mut part: Vec<Vec<Value>> = Vec::new();
        for (step, vals) in rows {
            time += step;
            let mut row = vec![json!(time)];
            row.extend((0..c.tags).map(|k| json!(format!("d{d}-{k}"))));
            for ((t, _, _), v) in c.fields.iter().zip(vals) {
                row.push(match v {
                    None => Value::Null,
                    Some(s) if *t == T::Double => double_ok(&value(*t, *s)),
                    Some(s) => value(*t, *s),
                });
            }
            part.push(row);
        }
        let cut = if c.flush_every == 0 {
            part.len().max(1)
        } else {
            (part.len() / 2).max(1)
        };
        for chunk in part.chunks(cut) {
            let mut arrays: Vec<(String, ArrayRef)> = Vec::new();
            arrays.push((
                "time".into(),
                column(T::Int64, &chunk.iter().map(|r| &r[0]).collect::<Vec<_>>()),
            ));
            for k in 0..c.tags {
                arrays.push((
                    format!("tag{k}"),
                    column(
                        T::String,
                        &chunk.iter().map(|r| &r[1 + k]).collect::<Vec<_>>(),
                    ),
                ));
            }
            for (i, (t, _, _)) in c.fields.iter().enumerate() {
                arrays.push((
                    format!("f{i}"),
                    column(
                        *t,
                        &chunk.iter().map(|r| &r[1 + c.tags + i]).collect::<Vec<_>>(),
                    ),
                ));
            }
            w.write_table(
                "t",
                "time",
                &RecordBatch::try_from_iter(arrays).expect("batch"),
            )
            .expect("write");
            if c.flush_every > 0 {
                w.flush().expect("flush");
            }
        }
        all.extend(part);
    }
    w.close().expect("close");
    all
}

fn sorted(rows: impl IntoIterator<Item = Value>) -> Vec<String> {
    let mut v: Vec<String> = rows.into_iter().map(|r| r.to_string()).collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Arbitrary rows → our writer → our reader → the same rows.
    #[test]
    fn random_tables_round_trip(c in case()) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.tsfile");
        let expected = write_case(&c, &path);
        let dump = tsfile_index::dump::dump_path(&path).expect("our reader opens our file");
        let got: Vec<Value> = dump["data"]["tables"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| t["rows"].as_array().cloned().unwrap_or_default())
            .collect();
        prop_assert_eq!(sorted(expected.into_iter().map(Value::Array)), sorted(got));
    }
}

fn int_batch(times: &[i64], dev: &[&str]) -> RecordBatch {
    RecordBatch::try_from_iter([
        (
            "time",
            Arc::new(Int64Array::from(times.to_vec())) as ArrayRef,
        ),
        ("id", Arc::new(StringArray::from(dev.to_vec())) as ArrayRef),
        (
            "v",
            Arc::new(Int32Array::from(vec![1; times.len()])) as ArrayRef,
        ),
    ])
    .expect("batch")
}

fn table_writer(path: &Path) -> TsFileWriter {
    let opts = WriterOptions::default();
    let schema = opts.table_schema(&[
        ("id", T::String, ColumnCategory::Tag),
        ("v", T::Int32, ColumnCategory::Field),
    ]);
    let mut w = TsFileWriter::create(path, opts).expect("create");
    w.register_table("t", schema).expect("register");
    w
}

#[test]
fn out_of_order_and_duplicate_times_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("o.tsfile");
    let mut w = table_writer(&path);
    let err = w
        .write_table("t", "time", &int_batch(&[5, 3], &["a", "a"]))
        .expect_err("out of order");
    assert!(
        matches!(
            err,
            WriteError::TimeOrder {
                kind: "out-of-order",
                time: 3,
                previous: 5,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "out-of-order timestamp 3 in device t.a: the previous timestamp is 5"
    );
    // Different devices may share times; a later batch must continue each device.
    w.write_table("t", "time", &int_batch(&[1, 1, 2], &["a", "b", "a"]))
        .expect("valid rows");
    let err = w
        .write_table("t", "time", &int_batch(&[2], &["a"]))
        .expect_err("duplicate");
    assert_eq!(
        err.to_string(),
        "duplicate timestamp 2 in device t.a: the previous timestamp is 2"
    );
    // Across a flush too.
    w.flush().expect("flush");
    assert!(
        w.write_table("t", "time", &int_batch(&[0], &["b"]))
            .is_err()
    );
    w.close().expect("close");
    assert!(path.exists());
}

#[test]
fn tree_series_reject_going_back_in_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tree.tsfile");
    let opts = WriterOptions::default();
    let mut w = TsFileWriter::create(&path, opts.clone()).expect("create");
    w.register_device("root.sg.d1", false, vec![opts.measurement("s", T::Int64)])
        .expect("register");
    let b = |t: Vec<i64>| {
        RecordBatch::try_from_iter([
            ("time", Arc::new(Int64Array::from(t.clone())) as ArrayRef),
            ("s", Arc::new(Int64Array::from(t)) as ArrayRef),
        ])
        .expect("batch")
    };
    w.write_tree("root.sg.d1", "time", &b(vec![10, 20]))
        .expect("write");
    let err = w
        .write_tree("root.sg.d1", "time", &b(vec![15]))
        .expect_err("back in time");
    assert_eq!(
        err.to_string(),
        "out-of-order timestamp 15 in device root.sg.d1, series s: the previous timestamp is 20"
    );
}

#[test]
fn unsorted_import_orders_rows_and_names_duplicates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("u.tsfile");
    let mut w = table_writer(&path);
    w.write_table_unsorted(
        "t",
        "time",
        &[
            int_batch(&[3, 1], &["b", "a"]),
            int_batch(&[2, 1], &["a", "b"]),
        ],
    )
    .expect("unsorted rows are ordered");
    w.close().expect("close");
    let dump = tsfile_index::dump::dump_path(&path).expect("readable");
    assert_eq!(dump["data"]["tables"][0]["row_count"], json!(4));
    let path = dir.path().join("dup.tsfile");
    let mut w = table_writer(&path);
    let err = w
        .write_table_unsorted("t", "time", &[int_batch(&[7, 7], &["a", "a"])])
        .expect_err("duplicate");
    assert_eq!(
        err.to_string(),
        "duplicate timestamp 7 in device t.a: the previous timestamp is 7"
    );
}

#[test]
fn nothing_appears_under_the_final_name_before_close() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("f.tsfile");
    let mut w = table_writer(&path);
    w.write_table("t", "time", &int_batch(&[1, 2], &["a", "a"]))
        .expect("write");
    w.flush().expect("flush");
    assert!(!path.exists(), "the data goes to a temporary file first");
    drop(w);
    assert!(!path.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        0,
        "the temporary file is removed"
    );
    let w = table_writer(&path);
    assert_eq!(w.close().expect("close"), path);
    assert!(path.exists());
}

#[test]
fn schema_mistakes_are_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = WriterOptions::default();
    let mut w = TsFileWriter::create(dir.path().join("s.tsfile"), opts.clone()).expect("create");
    let mut bad = opts.table_schema(&[("v", T::Boolean, ColumnCategory::Field)]);
    bad.columns[0].schema.encoding = E::Gorilla;
    let err = w.register_table("t", bad).expect_err("GORILLA booleans");
    assert_eq!(
        err.to_string(),
        "schema: column \"v\": BOOLEAN cannot be written as GORILLA"
    );
    let mut lzo = opts.table_schema(&[("v", T::Int32, ColumnCategory::Field)]);
    lzo.columns[0].schema.compression = C::Lzo;
    assert!(w.register_table("t", lzo).is_err());
    w.register_table(
        "t",
        opts.table_schema(&[("v", T::Int32, ColumnCategory::Field)]),
    )
    .expect("register");
    let wrong = RecordBatch::try_from_iter([
        ("time", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("v", Arc::new(StringArray::from(vec!["x"])) as ArrayRef),
    ])
    .expect("batch");
    let err = w
        .write_table("t", "time", &wrong)
        .expect_err("type mismatch");
    assert!(
        err.to_string().contains("cannot be stored as FIELD INT32"),
        "{err}"
    );
    assert!(w.write_table("nope", "time", &wrong).is_err());
}

/// Pages are encoded as soon as they are full; the bytes do not depend on how the rows were
/// split into batches.
#[test]
fn batch_boundaries_do_not_change_the_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rows = 2_345usize;
    let times: Vec<i64> = (0..rows as i64).map(|i| i * 3 - 1000).collect();
    let devs: Vec<&str> = (0..rows)
        .map(|i| if i < 1500 { "a" } else { "b" })
        .collect();
    let vals: Vec<Option<i32>> = (0..rows)
        .map(|i| (i % 7 != 0).then_some(i as i32))
        .collect();
    let write = |name: &str, parts: &[usize]| -> Vec<u8> {
        let path = dir.path().join(name);
        let opts = WriterOptions {
            max_points_per_page: 100,
            ..WriterOptions::default()
        };
        let schema = opts.table_schema(&[
            ("id", T::String, ColumnCategory::Tag),
            ("v", T::Int32, ColumnCategory::Field),
        ]);
        let mut w = TsFileWriter::create(&path, opts).expect("create");
        w.register_table("t", schema).expect("register");
        let mut start = 0;
        for &end in parts.iter().chain(std::iter::once(&rows)) {
            let b = RecordBatch::try_from_iter([
                (
                    "time",
                    Arc::new(Int64Array::from(times[start..end].to_vec())) as ArrayRef,
                ),
                (
                    "id",
                    Arc::new(StringArray::from(devs[start..end].to_vec())) as ArrayRef,
                ),
                (
                    "v",
                    Arc::new(Int32Array::from(vals[start..end].to_vec())) as ArrayRef,
                ),
            ])
            .expect("batch");
            w.write_table("t", "time", &b).expect("write");
            start = end;
        }
        w.close().expect("close");
        std::fs::read(&path).expect("read back")
    };
    let whole = write("whole.tsfile", &[]);
    assert_eq!(
        whole,
        write("parts.tsfile", &[1, 99, 100, 250, 1499, 1500, 1601, 2300])
    );
    let dump = tsfile_index::dump::dump_path(&dir.path().join("whole.tsfile")).expect("readable");
    assert_eq!(dump["data"]["tables"][0]["row_count"], json!(rows));
}

/// GORILLA's stream terminator for DOUBLE is the canonical NaN: the writer refuses it (a
/// reader would stop the page there) and names the column, while PLAIN stores it.
#[test]
fn values_equal_to_a_stream_terminator_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let batch = RecordBatch::try_from_iter([
        (
            "time",
            Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef,
        ),
        (
            "s",
            Arc::new(arrow_array::Float64Array::from(vec![1.0, f64::NAN, 2.0])) as ArrayRef,
        ),
    ])
    .expect("batch");
    let write = |encoding: E, name: &str| {
        let path = dir.path().join(name);
        let opts = WriterOptions::default();
        let mut m = opts.measurement("s", T::Double);
        m.encoding = encoding;
        let mut w = TsFileWriter::create(&path, opts).expect("create");
        w.register_device("root.sg.d1", false, vec![m])
            .expect("register");
        let result = w
            .write_tree("root.sg.d1", "time", &batch)
            .and_then(|()| w.close().map(drop));
        (result, path)
    };
    let (result, path) = write(E::Gorilla, "gorilla.tsfile");
    let err = result.expect_err("NaN with GORILLA");
    assert!(err.to_string().contains("column \"s\""), "{err}");
    assert!(err.to_string().contains("GORILLA"), "{err}");
    assert!(
        !path.exists(),
        "no file under the final name after a refused write"
    );
    let (result, path) = write(E::Plain, "plain.tsfile");
    result.expect("NaN with PLAIN");
    assert!(path.exists());
}
