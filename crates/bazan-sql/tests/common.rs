//! Shared helpers: copies of the conformance lake in temp dirs, mapped; the DuckDB peer;
//! record batches as JSON rows; result comparison.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use serde_json::{Value, json};

/// The conformance lake (`../shared/conformance/lake/lake`), or `None` with a printed reason.
pub(crate) fn conformance_lake() -> Option<PathBuf> {
    let shared = match std::env::var_os("BAZAN_SHARED") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    let lake = shared.join("conformance/lake/lake");
    if lake.is_dir() {
        Some(lake)
    } else {
        println!("skipped: no conformance lake at {}", lake.display());
        None
    }
}

/// Formats DuckDB reads itself.
pub(crate) const DUCKDB_FORMATS: &[&str] =
    &["csv", "tsv", "psv", "ndjson", "jsonl", "json", "parquet"];

/// Copies the files of the conformance lake whose relative path `keep` accepts (hidden
/// files and folders and map files left out) into a new temp dir, and maps it.
pub(crate) fn mapped_copy(
    keep: &dyn Fn(&str) -> bool,
) -> Option<(tempfile::TempDir, Arc<bazan::Lake>)> {
    let src = conformance_lake()?;
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&src, dir.path(), "", keep);
    bazan::create_map(dir.path(), &bazan::CreateOptions::default()).expect("map the copy");
    let lake = Arc::new(bazan::load_map(dir.path()).expect("load the map"));
    Some((dir, lake))
}

fn copy_tree(src: &Path, dst: &Path, rel: &str, keep: &dyn Fn(&str) -> bool) {
    for entry in std::fs::read_dir(src).expect("read conformance dir") {
        let entry = entry.expect("dir entry");
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        let r = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let path = entry.path();
        if path.is_dir() {
            copy_tree(&path, dst, &r, keep);
        } else if keep(&r) && !header_only(&path, &r) {
            let to = dst.join(&r);
            std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            std::fs::copy(&path, &to).expect("copy file");
        }
    }
}

/// A delimited file with a header and no row. The facade infers its columns as Utf8 (no
/// value to infer from), which the unified-schema rule then merges with the Int64/Float64 of
/// the other files into LargeUtf8: the query set would compare text where the columns are
/// numbers. Reported to the facade; left out of the copies until a zero-row file no longer
/// votes on the unified types.
fn header_only(path: &Path, rel: &str) -> bool {
    matches!(ext(rel), "csv" | "tsv" | "psv")
        && std::fs::read(path).is_ok_and(|b| b.iter().filter(|&&c| c == b'\n').count() <= 1)
}

/// The extension of a relative path.
pub(crate) fn ext(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.rsplit_once('.').map_or("", |(_, e)| e)
}

/// True for the files DuckDB reads (by extension).
pub(crate) fn duckdb_readable(rel: &str) -> bool {
    DUCKDB_FORMATS.contains(&ext(rel))
}

fn duck_type(t: &DataType) -> &'static str {
    match t {
        DataType::Int64 => "BIGINT",
        DataType::Int32 => "INTEGER",
        DataType::Int16 => "SMALLINT",
        DataType::Float64 => "DOUBLE",
        DataType::Float32 => "FLOAT",
        DataType::Boolean => "BOOLEAN",
        DataType::Date32 => "DATE",
        _ => "VARCHAR",
    }
}

/// The DuckDB view of a lake: its unified columns and its files with their own columns.
pub(crate) fn duckdb_view(lake: &bazan::Lake) -> Value {
    let unified = lake.schema().expect("unified schema");
    let map = lake.map();
    let files: Vec<Value> = (0..map.total_files())
        .map(|i| {
            let e = map.entry(i);
            let own = lake.file_schema(i).expect("file schema");
            let delim = match e.format {
                "tsv" => "\t",
                "psv" => "|",
                _ => ",",
            };
            json!({
                "path": lake.root().join(e.path).display().to_string(),
                "rel": e.path,
                "format": ext(e.path),
                "delim": delim,
                "columns": own.fields().iter()
                    .map(|f| json!([f.name(), duck_type(f.data_type())]))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "columns": unified.fields().iter()
            .map(|f| json!([f.name(), duck_type(f.data_type())]))
            .collect::<Vec<_>>(),
        "files": files,
    })
}

/// Runs the queries in DuckDB over the views; `None` (with the reason printed) when DuckDB
/// is not importable.
pub(crate) fn duckdb(
    views: Value,
    queries: &[String],
) -> Option<Vec<Result<Vec<Vec<Value>>, String>>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/duckdb_peer.py");
    let mut child = match Command::new("python3")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            println!("skipped DuckDB comparisons: cannot run python3 ({e})");
            return None;
        }
    };
    let input = json!({"views": views, "queries": queries}).to_string();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(input.as_bytes())
            .expect("write to the peer");
    }
    let out = child.wait_with_output().expect("peer output");
    if out.status.code() == Some(3) {
        println!(
            "skipped DuckDB comparisons: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    assert!(
        out.status.success(),
        "DuckDB peer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "peer JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout[..out.stdout.len().min(2000)])
        )
    });
    Some(
        v.as_array()
            .expect("a list")
            .iter()
            .map(|r| match r.get("rows") {
                Some(rows) => Ok(rows
                    .as_array()
                    .expect("rows")
                    .iter()
                    .map(|row| row.as_array().expect("row").clone())
                    .collect()),
                None => Err(r["error"].as_str().unwrap_or("?").to_string()),
            })
            .collect(),
    )
}

/// A float as JSON; non-finite ones as Python prints them (JSON has no such numbers).
fn float(v: f64) -> Value {
    if v.is_nan() {
        json!("nan")
    } else if v.is_infinite() {
        json!(if v > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(v)
    }
}

/// One cell as JSON (ints, floats, strings, bools, null; dates as ISO text).
fn cell(array: &dyn Array, i: usize) -> Value {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    if array.is_null(i) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::Int64 => json!(array.as_primitive::<Int64Type>().value(i)),
        DataType::Int32 => json!(array.as_primitive::<Int32Type>().value(i)),
        DataType::Int16 => json!(array.as_primitive::<Int16Type>().value(i)),
        DataType::UInt64 => json!(array.as_primitive::<UInt64Type>().value(i)),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(i)),
        DataType::Float32 => float(array.as_primitive::<Float32Type>().value(i) as f64),
        DataType::Boolean => json!(array.as_boolean().value(i)),
        DataType::Utf8 => json!(array.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => json!(array.as_string::<i64>().value(i)),
        DataType::Utf8View => json!(array.as_string_view().value(i)),
        _ => {
            let f = arrow_cast::display::ArrayFormatter::try_new(array, &Default::default())
                .expect("formatter");
            json!(f.value(i).to_string())
        }
    }
}

/// Every row of the batches as JSON cells.
pub(crate) fn rows(batches: &[RecordBatch]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            out.push(b.columns().iter().map(|c| cell(c.as_ref(), i)).collect());
        }
    }
    out
}

fn same_cell(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                return x == y;
            }
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
        }
        _ => a == b,
    }
}

/// Asserts equal results; rows are compared as sorted lists unless `ordered`.
pub(crate) fn assert_same_rows(
    query: &str,
    ours: &[Vec<Value>],
    theirs: &[Vec<Value>],
    ordered: bool,
) {
    let mut a = ours.to_vec();
    let mut b = theirs.to_vec();
    if !ordered {
        let key = |r: &Vec<Value>| -> String {
            r.iter()
                .map(|v| match v {
                    // Floats only to 9 significant digits, so sums in another order sort alike.
                    Value::Number(n) if n.as_i64().is_none() => {
                        format!("{:.9e}", n.as_f64().unwrap_or(0.0))
                    }
                    _ => v.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\u{1}")
        };
        a.sort_by_key(key);
        b.sort_by_key(key);
    }
    assert_eq!(
        a.len(),
        b.len(),
        "{query}: {} rows here, {} in DuckDB",
        a.len(),
        b.len()
    );
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        let same = x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_cell(p, q));
        assert!(
            same,
            "{query}: row {i} differs:\n  bazan-sql: {x:?}\n  DuckDB:    {y:?}"
        );
    }
}
