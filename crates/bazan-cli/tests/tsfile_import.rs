//! `bazan tsfile import`: CSV and Parquet-free inputs (CSV, Arrow IPC) become table-model
//! TsFiles that `bazan tsfile query` reads back in device and time order; a duplicate
//! timestamp within a device is exit 2 naming the device and time, with no output file.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};

use crate::common::bazan;

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

#[test]
fn csv_rows_are_ordered_by_device_and_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("in.csv");
    std::fs::write(
        &csv,
        "ts,dev,temp,ok\n3,a,1.5,true\n1,b,2.5,false\n1,a,3.25,true\n2,a,,false\n",
    )
    .expect("write csv");
    let out = dir.path().join("out.tsfile");
    let r = bazan(&[
        "tsfile",
        "import",
        path(&csv),
        path(&out),
        "--table",
        "t",
        "--time",
        "ts",
        "--tags",
        "dev",
        "--encoding",
        "temp=PLAIN",
        "--compression",
        "zstd",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let q = bazan(&[
        "tsfile",
        "query",
        path(&out),
        "--table",
        "t",
        "--format",
        "ndjson",
    ]);
    assert!(q.status.success(), "{}", String::from_utf8_lossy(&q.stderr));
    assert_eq!(
        String::from_utf8_lossy(&q.stdout),
        "{\"time\":1,\"dev\":\"a\",\"temp\":3.25,\"ok\":true}\n\
         {\"time\":2,\"dev\":\"a\",\"temp\":null,\"ok\":false}\n\
         {\"time\":3,\"dev\":\"a\",\"temp\":1.5,\"ok\":true}\n\
         {\"time\":1,\"dev\":\"b\",\"temp\":2.5,\"ok\":false}\n"
    );
}

#[test]
fn a_duplicate_time_is_an_input_error_and_leaves_no_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("dup.csv");
    std::fs::write(&csv, "ts,dev,v\n1,a,1\n2,b,2\n1,a,3\n").expect("write csv");
    let out = dir.path().join("dup.tsfile");
    let r = bazan(&[
        "tsfile",
        "import",
        path(&csv),
        path(&out),
        "--table",
        "t",
        "--time",
        "ts",
        "--tags",
        "dev",
    ]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.starts_with("error: ") && err.contains("duplicate timestamp 1 in device t.a"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        1,
        "only the input is left"
    );
}

#[test]
fn arrow_ipc_input_and_bad_arguments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ipc = dir.path().join("in.arrow");
    let batch = RecordBatch::try_from_iter([
        (
            "time",
            Arc::new(Int64Array::from(vec![10, 20, 30])) as ArrayRef,
        ),
        (
            "site",
            Arc::new(StringArray::from(vec!["x", "x", "y"])) as ArrayRef,
        ),
        (
            "v",
            Arc::new(Float64Array::from(vec![0.5, 1.5, 2.5])) as ArrayRef,
        ),
    ])
    .expect("batch");
    let file = std::fs::File::create(&ipc).expect("create");
    let mut w = arrow_ipc::writer::FileWriter::try_new(file, &batch.schema()).expect("ipc");
    w.write(&batch).expect("write");
    w.finish().expect("finish");
    let out = dir.path().join("ipc.tsfile");
    let r = bazan(&[
        "tsfile",
        "import",
        path(&ipc),
        path(&out),
        "--table",
        "m",
        "--time",
        "time",
        "--tags",
        "site",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let q = bazan(&[
        "tsfile",
        "query",
        path(&out),
        "--table",
        "m",
        "--format",
        "csv",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&q.stdout),
        "time,site,v\n10,x,0.5\n20,x,1.5\n30,y,2.5\n"
    );
    let bad = bazan(&[
        "tsfile",
        "import",
        path(&ipc),
        path(&out),
        "--table",
        "m",
        "--time",
        "time",
        "--encoding",
        "v=DICTIONARY",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("DOUBLE cannot be written as DICTIONARY")
    );
    let no_time = bazan(&[
        "tsfile",
        "import",
        path(&ipc),
        path(&out),
        "--table",
        "m",
        "--time",
        "nope",
    ]);
    assert_eq!(no_time.status.code(), Some(2));
}
