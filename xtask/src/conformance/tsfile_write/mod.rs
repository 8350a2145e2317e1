//! Conformance suite `tsfile-write`: files written by our `TsFileWriter` (both models, every
//! data type, nulls, multi-page, multi-chunk, many devices with index degree 3–5, every
//! encoding × compression we write) are read back by the official reader (`xtask/
//! tsfile_read.py`, Python package `tsfile` 2.5.0) and by our own reader, and both must
//! return exactly the rows that were written. Without the Python package the suite fails
//! with "peer unavailable".

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use anyhow::{Context, bail, ensure};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Float32Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray,
};
use serde_json::{Value, json};
use tsfile_format::file::Property;
use tsfile_format::schema::{MeasurementSchema, TableColumn, TableSchema};
use tsfile_format::types::{
    ColumnCategory, CompressionType as C, TSDataType as T, TSEncoding as E,
};
use tsfile_index::writer::{BloomHashing, Flavor, TsFileWriter, WriterOptions};

use super::CaseResult;

mod cases;

use cases::{table_cases, tree_cases};

/// The deterministic generator, so every run writes the same files.
use crate::rng::XorShift as Rng;

/// One column: name, type, encoding, compression.
type Col = (&'static str, T, E, C);

/// A random value of `t` as (JSON as the readers report it, the value for Arrow).
fn value(rng: &mut Rng, t: T, i: usize) -> Value {
    match t {
        T::Boolean => json!(rng.below(2) == 1),
        T::Int32 => {
            json!((rng.below(2001) as i32 - 1000) * if i.is_multiple_of(7) { 100_000 } else { 1 })
        }
        T::Date => {
            let y = 1990 + rng.below(60);
            let m = 1 + rng.below(12);
            let d = 1 + rng.below(28);
            json!(format!("{y:04}-{m:02}-{d:02}"))
        }
        T::Int64 | T::Timestamp => {
            json!(1_600_000_000_000i64 + (i as i64) * 997 - rng.below(500) as i64)
        }
        T::Float => json!(f64::from((rng.below(100_000) as f32 - 50_000.0) / 8.0)),
        T::Double => json!((rng.below(10_000_000) as f64 - 5e6) / 1024.0),
        T::Text | T::String => {
            let words = [
                "alpha",
                "beta",
                "γάμμα",
                "δ",
                "",
                "long-value-with-some-length",
                "日本",
            ];
            json!(format!(
                "{}{}",
                words[rng.below(words.len() as u64) as usize],
                rng.below(50)
            ))
        }
        // No NUL byte: the official reader's row API (tree model) truncates values there.
        T::Blob => json!(
            rng.next_u64()
                .to_be_bytes()
                .iter()
                .map(|b| format!("{:02x}", (*b).max(1)))
                .collect::<String>()
        ),
        _ => Value::Null,
    }
}

fn date_int(s: &str) -> i32 {
    let p: Vec<i32> = s.split('-').filter_map(|x| x.parse().ok()).collect();
    p.first().copied().unwrap_or(0) * 10_000
        + p.get(1).copied().unwrap_or(0) * 100
        + p.get(2).copied().unwrap_or(0)
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok())
        .collect()
}

/// An Arrow column of `t` from JSON values (null = null).
fn array(t: T, vals: &[&Value]) -> ArrayRef {
    match t {
        T::Boolean => Arc::new(BooleanArray::from(
            vals.iter().map(|v| v.as_bool()).collect::<Vec<_>>(),
        )),
        T::Int32 => Arc::new(Int32Array::from(
            vals.iter()
                .map(|v| v.as_i64().map(|x| x as i32))
                .collect::<Vec<_>>(),
        )),
        T::Date => Arc::new(Int32Array::from(
            vals.iter()
                .map(|v| v.as_str().map(date_int))
                .collect::<Vec<_>>(),
        )),
        T::Int64 | T::Timestamp => Arc::new(Int64Array::from(
            vals.iter().map(|v| v.as_i64()).collect::<Vec<_>>(),
        )),
        T::Float => Arc::new(Float32Array::from(
            vals.iter()
                .map(|v| v.as_f64().map(|x| x as f32))
                .collect::<Vec<_>>(),
        )),
        T::Double => Arc::new(Float64Array::from(
            vals.iter().map(|v| v.as_f64()).collect::<Vec<_>>(),
        )),
        T::Blob => {
            let owned: Vec<Option<Vec<u8>>> = vals.iter().map(|v| v.as_str().map(hex)).collect();
            Arc::new(BinaryArray::from(
                owned.iter().map(|v| v.as_deref()).collect::<Vec<_>>(),
            ))
        }
        _ => Arc::new(StringArray::from(
            vals.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
        )),
    }
}

/// A table-model case: tables, tag values per device, rows per device, null rate.
struct TableCase {
    name: &'static str,
    opts: WriterOptions,
    tables: Vec<(&'static str, usize, Vec<Col>)>,
    devices: usize,
    rows: usize,
    nulls: f64,
    flushes: usize,
    /// Write calls per table (without explicit flushes; 0 = one per flush).
    parts: usize,
    null_tags: bool,
    start: i64,
}

/// A tree-model case: devices (path, aligned, measurements), rows per device.
struct TreeCase {
    name: &'static str,
    opts: WriterOptions,
    devices: Vec<(String, bool, Vec<Col>)>,
    rows: usize,
    nulls: f64,
}

fn write_table_case(c: &TableCase, path: &Path, rng: &mut Rng) -> anyhow::Result<Value> {
    let mut w = TsFileWriter::create(path, c.opts.clone())?;
    let mut expected = serde_json::Map::new();
    for (table, tags, fields) in &c.tables {
        let mut columns: Vec<TableColumn> = (0..*tags)
            .map(|k| {
                c.opts
                    .column(&format!("tag{k}"), T::String, ColumnCategory::Tag)
            })
            .collect();
        for (n, t, e, k) in fields {
            columns.push(TableColumn {
                schema: MeasurementSchema::new(*n, *t, *e, *k),
                category: ColumnCategory::Field,
            });
        }
        w.register_table(table, TableSchema { columns })?;
        let mut rows: Vec<Vec<Value>> = Vec::new();
        // A table without TAG columns has a single device.
        let devices = if *tags == 0 { 1 } else { c.devices };
        for d in 0..devices {
            let tag_vals: Vec<Value> = (0..*tags)
                .map(|k| {
                    if c.null_tags && (d + k).is_multiple_of(3) {
                        Value::Null
                    } else {
                        json!(format!("{table}-d{}-{k}", d / (k + 1)))
                    }
                })
                .collect();
            let mut t = c.start + rng.below(1000) as i64;
            for i in 0..c.rows {
                t += 1 + rng.below(if i.is_multiple_of(50) { 100_000 } else { 1000 }) as i64;
                let mut row = vec![json!(t)];
                row.extend(tag_vals.iter().cloned());
                for (_, ty, _, _) in fields {
                    row.push(if rng.chance(c.nulls) {
                        Value::Null
                    } else {
                        value(rng, *ty, i)
                    });
                }
                rows.push(row);
            }
        }
        // Devices whose tag values coincide would get duplicate times: keep them distinct.
        let mut seen = std::collections::HashSet::new();
        rows.retain(|r| seen.insert(serde_json::to_string(&r[..=*tags]).unwrap_or_default()));
        let chunk = rows.len().div_ceil(c.flushes.max(c.parts).max(1)).max(1);
        for part in rows.chunks(chunk) {
            let mut arrays: Vec<(String, ArrayRef)> = vec![(
                "time".into(),
                array(T::Int64, &part.iter().map(|r| &r[0]).collect::<Vec<_>>()),
            )];
            for k in 0..*tags {
                arrays.push((
                    format!("tag{k}"),
                    array(
                        T::String,
                        &part.iter().map(|r| &r[1 + k]).collect::<Vec<_>>(),
                    ),
                ));
            }
            for (j, (n, ty, _, _)) in fields.iter().enumerate() {
                arrays.push((
                    n.to_string(),
                    array(
                        *ty,
                        &part.iter().map(|r| &r[1 + tags + j]).collect::<Vec<_>>(),
                    ),
                ));
            }
            w.write_table(table, "time", &RecordBatch::try_from_iter(arrays)?)?;
            if c.flushes > 1 {
                w.flush()?;
            }
        }
        expected.insert(table.to_string(), json!(rows));
    }
    w.close()?;
    Ok(json!({"tables": expected}))
}

fn write_tree_case(c: &TreeCase, path: &Path, rng: &mut Rng) -> anyhow::Result<Value> {
    let mut w = TsFileWriter::create(path, c.opts.clone())?;
    let mut expected = serde_json::Map::new();
    for (dev, aligned, cols) in &c.devices {
        let ms = cols
            .iter()
            .map(|(n, t, e, k)| MeasurementSchema::new(*n, *t, *e, *k))
            .collect();
        w.register_device(dev, *aligned, ms)?;
        let mut rows: Vec<Vec<Value>> = Vec::new();
        let mut t = -5_000 + rng.below(1000) as i64;
        for i in 0..c.rows {
            t += 1 + rng.below(1000) as i64;
            let mut row = vec![json!(t)];
            for (_, ty, _, _) in cols {
                row.push(if rng.chance(c.nulls) {
                    Value::Null
                } else {
                    value(rng, *ty, i)
                });
            }
            // A non-aligned row whose values are all missing does not exist.
            if !aligned && row[1..].iter().all(Value::is_null) {
                continue;
            }
            rows.push(row);
        }
        let mut arrays: Vec<(String, ArrayRef)> = vec![(
            "time".into(),
            array(T::Int64, &rows.iter().map(|r| &r[0]).collect::<Vec<_>>()),
        )];
        for (j, (n, ty, _, _)) in cols.iter().enumerate() {
            arrays.push((
                n.to_string(),
                array(*ty, &rows.iter().map(|r| &r[1 + j]).collect::<Vec<_>>()),
            ));
        }
        w.write_tree(dev, "time", &RecordBatch::try_from_iter(arrays)?)?;
        let names: Vec<&str> = std::iter::once("time")
            .chain(cols.iter().map(|c| c.0))
            .collect();
        expected.insert(dev.clone(), json!({"columns": names, "rows": rows}));
    }
    w.close()?;
    Ok(json!({"devices": expected}))
}

/// Sorted rows (the readers return devices in index order, not in writing order).
fn sorted(rows: &Value) -> Vec<String> {
    let mut v: Vec<String> = rows
        .as_array()
        .map(|a| a.iter().map(|r| r.to_string()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn compare(what: &str, expected: &Value, got: &Value) -> anyhow::Result<()> {
    let (e, g) = (sorted(expected), sorted(got));
    ensure!(
        e.len() == g.len(),
        "{what}: {} rows read, {} written",
        g.len(),
        e.len()
    );
    if let Some((a, b)) = e.iter().zip(&g).find(|(a, b)| a != b) {
        bail!("{what}: row written {a}, read {b}");
    }
    Ok(())
}

/// The rows of a reader's device answer (`{"columns", "rows"}`) with their columns put in
/// the order of `expected`'s columns (the readers order measurements by name).
fn reorder(expected: &Value, got: &Value) -> Value {
    let want: Vec<&str> = expected["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let have: Vec<&str> = got["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let idx: Vec<Option<usize>> = want
        .iter()
        .map(|w| have.iter().position(|h| h == w))
        .collect();
    let rows = got["rows"].as_array().into_iter().flatten().map(|r| {
        Value::Array(
            idx.iter()
                .map(|i| i.and_then(|i| r.get(i).cloned()).unwrap_or(Value::Null))
                .collect(),
        )
    });
    Value::Array(rows.collect())
}

/// Compares the official reader's answer (one JSON line of `tsfile_read.py`) with the rows.
fn check_official(expected: &Value, got: &Value) -> anyhow::Result<()> {
    if let Some(err) = got.get("error") {
        bail!("official reader: {err}");
    }
    if let Some(tables) = expected.get("tables").and_then(Value::as_object) {
        for (name, rows) in tables {
            compare(
                &format!("official reader, table {name}"),
                rows,
                &got["tables"][name]["rows"],
            )?;
        }
    }
    if let Some(devs) = expected.get("devices").and_then(Value::as_object) {
        for (name, rows) in devs {
            let got = reorder(rows, &got["devices"][name]);
            compare(
                &format!("official reader, device {name}"),
                &rows["rows"],
                &got,
            )?;
        }
    }
    Ok(())
}

/// Compares our reader's dump with the rows.
fn check_ours(expected: &Value, path: &Path) -> anyhow::Result<()> {
    let dump = tsfile_index::dump::dump_path(path)
        .with_context(|| format!("our reader on {}", path.display()))?;
    let data = &dump["data"];
    if let Some(tables) = expected.get("tables").and_then(Value::as_object) {
        for (name, rows) in tables {
            let got = data["tables"]
                .as_array()
                .and_then(|a| a.iter().find(|t| t["table"] == name.as_str()))
                .map(|t| t["rows"].clone())
                .unwrap_or(Value::Null);
            compare(&format!("our reader, table {name}"), rows, &got)?;
        }
    }
    if let Some(devs) = expected.get("devices").and_then(Value::as_object) {
        for (name, rows) in devs {
            let got = data["devices"]
                .as_array()
                .and_then(|a| a.iter().find(|t| t["device"] == name.as_str()))
                .map(|t| reorder(rows, t))
                .unwrap_or(Value::Null);
            compare(&format!("our reader, device {name}"), &rows["rows"], &got)?;
        }
    }
    Ok(())
}

/// Runs the official reader script over `files`; one JSON answer per file.
fn official(files: &[PathBuf], plain_time: bool) -> anyhow::Result<Vec<Value>> {
    let script = crate::workspace_root().join("xtask/tsfile_read.py");
    let mut cmd = Command::new("python3");
    cmd.arg(&script);
    if plain_time {
        // The official reader decodes time columns with a process-wide setting instead of
        // the encoding in the chunk header (README "official reader quirks").
        cmd.arg("--plain-time");
    }
    let out = crate::run_peer(
        cmd.args(files),
        "tsfile_read.py failed",
        " (pip install -r xtask/requirements.txt)",
    )?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).context("tsfile_read.py printed invalid JSON"))
        .collect()
}

/// Corpus cases whose rows are written again by the official writer (live, with the case's
/// configuration but UNCOMPRESSED pages) and by ours; the files must be byte-identical.
/// Compression is left out because `lz4_flex` and the reference LZ4 library choose
/// different matches at block ends (see the closing note of the writer).
const IDENTITY_CASES: &[&str] = &[
    "table_one_row",
    "table_tags_only",
    "table_null_tags",
    "table_extremes",
    "table_all_types",
    "table_unicode",
    "table_all_null_column",
    "table_nul_bytes",
    "table_negative_time",
    // `table_many_devices` is left out: it differs only in the last bits of 20 DOUBLE sums;
    // the C++ writer adds values in an order that depends on how it batches rows.
    "table_wide",
    "table_multi_page",
];

/// The encoding the C++ configuration gives a data type.
fn configured_encoding(cfg: &Value, t: T) -> anyhow::Result<E> {
    let key = match t {
        T::Boolean => "boolean_encoding_type_",
        T::Int32 | T::Date => "int32_encoding_type_",
        T::Int64 | T::Timestamp => "int64_encoding_type_",
        T::Float => "float_encoding_type_",
        T::Double => "double_encoding_type_",
        _ => "string_encoding_type_",
    };
    let name = cfg[key].as_str().context("encoding in the configuration")?;
    E::from_name(name).with_context(|| format!("unknown encoding {name}"))
}

/// Our file for the rows and configuration of corpus case `exp`, with `compression`.
fn write_like_cpp(exp: &Value, compression: C, out: &Path) -> anyhow::Result<()> {
    let cfg = &exp["writer"]["config"];
    let num = |k: &str, d: u64| cfg[k].as_u64().unwrap_or(d) as usize;
    let opts = WriterOptions {
        max_points_per_page: num("page_writer_max_point_num_", 10_000),
        max_page_bytes: num("page_writer_max_memory_bytes_", 131_072),
        max_degree: num("max_degree_of_index_node_", 256),
        time_encoding: E::from_name(cfg["time_encoding_type_"].as_str().unwrap_or("TS_2DIFF"))
            .context("time encoding")?,
        time_compression: compression,
        default_compression: compression,
        trim_trailing_null_tags: false,
        bloom_hashing: BloomHashing::Cpp,
        ..WriterOptions::default()
    };
    let mut w = TsFileWriter::create(out, opts.clone())?;
    for t in exp["tables"].as_array().into_iter().flatten() {
        let mut columns = Vec::new();
        for c in t["columns"].as_array().into_iter().flatten() {
            let ty = T::from_name(c["data_type"].as_str().unwrap_or("")).context("type")?;
            let cat = ColumnCategory::from_name(c["category"].as_str().unwrap_or(""))
                .context("category")?;
            let mut col = opts.column(c["name"].as_str().unwrap_or(""), ty, cat);
            // The C++ writer gives TAG columns the configured string encoding too.
            if matches!(cat, ColumnCategory::Field | ColumnCategory::Tag) {
                col.schema.encoding = configured_encoding(cfg, ty)?;
            }
            columns.push(col);
        }
        w.register_table(t["name"].as_str().unwrap_or(""), TableSchema { columns })?;
    }
    for d in exp["data"]["tables"].as_array().into_iter().flatten() {
        let rows = d["rows"].as_array().context("rows")?;
        if rows.is_empty() {
            continue;
        }
        let mut arrays: Vec<(String, ArrayRef)> = Vec::new();
        for (i, (c, ty)) in d["columns"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(d["types"].as_array().into_iter().flatten())
            .enumerate()
        {
            let ty = T::from_name(ty.as_str().unwrap_or("")).context("type")?;
            let vals: Vec<&Value> = rows.iter().map(|r| &r[i]).collect();
            arrays.push((c.as_str().unwrap_or("").to_string(), array(ty, &vals)));
        }
        w.write_table(
            d["table"].as_str().unwrap_or(""),
            "time",
            &RecordBatch::try_from_iter(arrays)?,
        )?;
    }
    w.close()?;
    Ok(())
}

/// One identity case: the official writer and ours on the same rows and configuration.
fn identity(dir: &Path, tmp: &Path, name: &str) -> anyhow::Result<()> {
    let json = dir.join(format!("tsfile/{name}.expected.json"));
    let exp: Value = serde_json::from_slice(&std::fs::read(&json)?)?;
    let theirs = tmp.join(format!("{name}.cpp.tsfile"));
    let script = crate::workspace_root().join("xtask/tsfile_cpp_write.py");
    crate::run_peer(
        Command::new("python3")
            .arg(&script)
            .arg(&json)
            .arg(&theirs)
            .arg("UNCOMPRESSED"),
        "tsfile_cpp_write.py failed",
        "",
    )?;
    let ours = tmp.join(format!("{name}.ours.tsfile"));
    write_like_cpp(&exp, C::Uncompressed, &ours)?;
    let (a, b) = (std::fs::read(&ours)?, std::fs::read(&theirs)?);
    if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
        bail!(
            "bytes differ from the C++ writer's at offset {i} (ours {} bytes, theirs {})",
            a.len(),
            b.len()
        );
    }
    Ok(())
}

/// `cargo xtask conformance tsfile-write`.
pub fn run(dir: &Path) -> anyhow::Result<Vec<CaseResult>> {
    let tmp = tempfile::tempdir()?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut written: Vec<(String, PathBuf, anyhow::Result<Value>)> = Vec::new();
    for c in table_cases() {
        let path = tmp.path().join(format!("{}.tsfile", c.name));
        let r = write_table_case(&c, &path, &mut rng);
        written.push((c.name.to_string(), path, r));
    }
    for c in tree_cases() {
        let path = tmp.path().join(format!("{}.tsfile", c.name));
        let r = write_tree_case(&c, &path, &mut rng);
        written.push((c.name.to_string(), path, r));
    }
    let plain: Vec<bool> = table_cases()
        .iter()
        .map(|c| c.opts.time_encoding == E::Plain)
        .chain(
            tree_cases()
                .iter()
                .map(|c| c.opts.time_encoding == E::Plain),
        )
        .collect();
    let mut answers = std::collections::HashMap::new();
    for want_plain in [false, true] {
        let files: Vec<PathBuf> = written
            .iter()
            .zip(&plain)
            .filter(|(w, p)| w.2.is_ok() && **p == want_plain)
            .map(|(w, _)| w.1.clone())
            .collect();
        if files.is_empty() {
            continue;
        }
        for (f, a) in files.iter().zip(official(&files, want_plain)?) {
            answers.insert(f.clone(), a);
        }
    }
    let mut results = Vec::new();
    for (name, path, r) in written {
        let needs_chunks = name.contains("multi_chunk") || name.contains("memory_threshold");
        let res = r.and_then(|expected| {
            let got = answers
                .remove(&path)
                .context("the official reader gave no answer")?;
            check_official(&expected, &got)?;
            if needs_chunks {
                let most = got["series"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(_, s)| s["chunks"].as_u64())
                    .max()
                    .unwrap_or(0);
                ensure!(most > 1, "every series has a single chunk");
            }
            check_ours(&expected, &path)
        });
        results.push(CaseResult::from_result(name, res));
    }
    for name in IDENTITY_CASES {
        if !dir.join(format!("tsfile/{name}.expected.json")).is_file() {
            continue;
        }
        // TSFILE_WRITE_KEEP=DIR keeps both files of each identity case for inspection.
        let keep = std::env::var_os("TSFILE_WRITE_KEEP").map(PathBuf::from);
        let r = identity(dir, keep.as_deref().unwrap_or(tmp.path()), name);
        results.push(CaseResult::from_result(format!("identity_{name}"), r));
    }
    Ok(results)
}
