//! Conformance suite `lake`: the Lake Map built over `../shared/conformance/lake/lake` (copied
//! to a temporary directory first, because the corpus is read-only) against
//! `expected.json`: files (order, format → handler mapping, row counts, first global rows,
//! sizes, columns, block rows, checkpoints), skipped files, totals, every sample through
//! `locate` + `slice`, every slice request (with projections), `stats` and `stats_inferred`.

use std::fs;
use std::path::Path;

use anyhow::{Context, bail, ensure};
use arrow_array::RecordBatch;
use lake_locators::{ColumnStats, rows};
use lake_map::{CreateOptions, HandlerRegistry, LakeMap, MapConfig, create_map_with, load_map};
use serde_json::Value;

use super::CaseResult;

/// Copies a directory tree (files and directories only; the corpus has no links).
pub fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(to).with_context(|| format!("mkdir {}", to.display()))?;
    for entry in fs::read_dir(from).with_context(|| format!("read {}", from.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else if kind.is_file() {
            fs::copy(entry.path(), &dest)
                .with_context(|| format!("copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Runs the suite over the conformance folder.
pub fn run(conformance: &Path) -> anyhow::Result<Vec<CaseResult>> {
    let dir = conformance.join("lake");
    let expected: Value = serde_json::from_slice(
        &fs::read(dir.join("expected.json")).context("cannot read lake/expected.json")?,
    )
    .context("expected.json is not JSON")?;
    let tmp = tempfile::tempdir()?;
    let lake = tmp.path().join("lake");
    copy_tree(&dir.join(str_of(&expected, "lake_dir")?), &lake)?;
    let registry = HandlerRegistry::builtin();
    let stride = expected["checkpoint_stride"].as_u64().unwrap_or(65_536);
    let options = CreateOptions {
        config: MapConfig {
            checkpoint_stride_rows: stride,
            ..MapConfig::default()
        },
        registry: registry.clone(),
        // Every failing file becomes a failing case instead of stopping the suite.
        skip_errors: true,
        ..CreateOptions::default()
    };
    let mut out = Vec::new();
    let report = create_map_with(&lake, &options).context("map create failed")?;
    for f in &report.failures {
        out.push(CaseResult::fail(
            format!("index {}", f.path),
            f.message.clone(),
        ));
    }
    let map = load_map(&lake).context("the written map does not load")?;
    out.push(CaseResult::from_result(
        "map round trip",
        (|| {
            ensure!(
                map.to_entries() == report.map.to_entries(),
                "loaded entries differ"
            );
            Ok(())
        })(),
    ));
    out.push(CaseResult::from_result(
        "totals",
        check_totals(&map, &expected),
    ));
    out.push(CaseResult::from_result(
        "order",
        check_order(&map, &expected),
    ));
    for file in array(&expected, "files")? {
        let path = str_of(file, "path")?;
        out.push(CaseResult::from_result(
            format!("file {path}"),
            check_file(&map, file),
        ));
    }
    for skipped in array(&expected, "skipped")? {
        let path = str_of(skipped, "path")?;
        out.push(CaseResult::from_result(
            format!("skipped {path}"),
            match map.find(path) {
                Some(_) => Err(anyhow::anyhow!(
                    "indexed, but must be skipped ({})",
                    str_of(skipped, "reason").unwrap_or("?")
                )),
                None => Ok(()),
            },
        ));
    }
    for sample in array(&expected, "samples")? {
        let g = sample["global_row"]
            .as_u64()
            .context("sample without global_row")?;
        out.push(CaseResult::from_result(
            format!("sample {g}"),
            check_sample(&map, &registry, sample),
        ));
    }
    for (i, slice) in array(&expected, "slices")?.iter().enumerate() {
        let why = slice["why"].as_str().unwrap_or("");
        out.push(CaseResult::from_result(
            format!("slice {i} ({why})"),
            check_slice(&map, &registry, slice),
        ));
    }
    for key in ["stats", "stats_inferred"] {
        let Some(stats) = expected[key].as_object() else {
            bail!("expected.json has no {key} object");
        };
        for (path, cols) in stats {
            out.push(CaseResult::from_result(
                format!("{key} {path}"),
                check_stats(&map, path, cols),
            ));
        }
    }
    Ok(out)
}

fn str_of<'a>(v: &'a Value, key: &str) -> anyhow::Result<&'a str> {
    v[key]
        .as_str()
        .with_context(|| format!("missing string {key:?}"))
}

fn array<'a>(v: &'a Value, key: &str) -> anyhow::Result<&'a Vec<Value>> {
    v[key]
        .as_array()
        .with_context(|| format!("missing array {key:?}"))
}

fn check_totals(map: &LakeMap, expected: &Value) -> anyhow::Result<()> {
    let got = (
        map.total_files() as u64,
        map.total_rows(),
        map.total_bytes(),
    );
    let want = (
        expected["total_files"].as_u64().unwrap_or(u64::MAX),
        expected["total_rows"].as_u64().unwrap_or(u64::MAX),
        expected["total_bytes"].as_u64().unwrap_or(u64::MAX),
    );
    ensure!(got == want, "files/rows/bytes {got:?}, expected {want:?}");
    Ok(())
}

fn check_order(map: &LakeMap, expected: &Value) -> anyhow::Result<()> {
    let got: Vec<&str> = map.entries().map(|e| e.path).collect();
    let want: Vec<&str> = array(expected, "files")?
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    if got != want {
        let at = got
            .iter()
            .zip(&want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        bail!(
            "order differs at position {at}: got {:?}, expected {:?} ({} vs {} files)",
            got.get(at),
            want.get(at),
            got.len(),
            want.len()
        );
    }
    Ok(())
}

/// The handler name (`docs/lake-map.md` §4) an extension must map to.
fn expected_handler(ext: &str, layout: Option<&str>) -> String {
    match ext {
        "arrow" | "feather" | "ipc" => "arrow_ipc".into(),
        "arrows" => "arrow_stream".into(),
        "jsonl" | "json" => match layout {
            Some("array") => "json_array".into(),
            _ => "ndjson".into(),
        },
        "mpk" => "msgpack".into(),
        other => other.into(),
    }
}

fn check_file(map: &LakeMap, file: &Value) -> anyhow::Result<()> {
    let path = str_of(file, "path")?;
    let e = map.find(path).context("not in the map")?;
    let want_format = expected_handler(str_of(file, "format")?, file["layout"].as_str());
    ensure!(
        e.format == want_format,
        "format {:?}, expected {want_format:?}",
        e.format
    );
    let want = |k: &str| file[k].as_u64().unwrap_or(u64::MAX);
    ensure!(
        e.row_count == want("row_count"),
        "row_count {}, expected {}",
        e.row_count,
        want("row_count")
    );
    ensure!(
        e.first_global_row == want("first_global_row"),
        "first_global_row {}, expected {}",
        e.first_global_row,
        want("first_global_row")
    );
    ensure!(
        e.size_bytes == want("size_bytes"),
        "size_bytes {}, expected {}",
        e.size_bytes,
        want("size_bytes")
    );
    let schema = e.schema_value()?.context("no schema_json")?;
    let got_cols: Vec<(String, String)> = schema
        .as_array()
        .context("schema_json is not an array")?
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or("").to_string(),
                c["type"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let want_cols: Vec<(String, String)> = array(file, "columns")?
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or("").to_string(),
                c["type"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    // A schemaless file without rows has nothing to infer types from (docs/lake-map.md §9:
    // all-empty columns are Utf8), so only its column names are compared, where it has any.
    let schemaless = !matches!(
        str_of(file, "format")?,
        "parquet" | "orc" | "avro" | "arrow" | "feather" | "arrows"
    );
    if schemaless && e.row_count == 0 {
        let names = |v: &[(String, String)]| v.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
        ensure!(
            got_cols.is_empty() || names(&got_cols) == names(&want_cols),
            "column names {:?}, expected {:?}",
            names(&got_cols),
            names(&want_cols)
        );
    } else {
        ensure!(
            got_cols == want_cols,
            "columns {got_cols:?}, expected {want_cols:?}"
        );
    }
    let blocks = map.blocks(e.index)?;
    let sum: u64 = blocks.iter().map(|b| b.row_count).sum();
    ensure!(
        sum == e.row_count,
        "blocks hold {sum} rows, the file {}",
        e.row_count
    );
    for (i, b) in blocks.iter().enumerate() {
        let first: u64 = blocks[..i].iter().map(|b| b.row_count).sum();
        ensure!(
            b.ordinal == i as u64 && b.first_row == first,
            "block {i} has ordinal {} first_row {}",
            b.ordinal,
            b.first_row
        );
    }
    if let Some(rows) = file["block_rows"].as_array() {
        let want: Vec<u64> = rows.iter().filter_map(Value::as_u64).collect();
        let got: Vec<u64> = blocks.iter().map(|b| b.row_count).collect();
        ensure!(got == want, "block rows {got:?}, expected {want:?}");
    }
    if let Some(cps) = file["checkpoints"].as_array() {
        for cp in cps {
            let (row, byte) = (cp[0].as_u64().unwrap_or(0), cp[1].as_u64());
            let b = blocks
                .iter()
                .find(|b| b.first_row == row)
                .with_context(|| format!("no block starts at checkpoint row {row}"))?;
            ensure!(
                b.first_byte == byte,
                "block at row {row} starts at byte {:?}, expected {byte:?}",
                b.first_byte
            );
        }
    }
    Ok(())
}

/// JSON equality with numbers compared by value (integers exactly, floats as f64).
fn same(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (a.as_u64(), b.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => a.as_f64() == b.as_f64(),
            },
        },
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        _ => want == got,
    }
}

fn batch_rows(batches: &[RecordBatch]) -> Vec<Value> {
    batches
        .iter()
        .flat_map(|b| (0..b.num_rows()).map(move |r| rows::row_value(b, r)))
        .collect()
}

fn check_sample(map: &LakeMap, registry: &HandlerRegistry, sample: &Value) -> anyhow::Result<()> {
    let g = sample["global_row"].as_u64().context("no global_row")?;
    let l = map.locate_row(g)?;
    let path = str_of(sample, "path")?;
    let local = sample["local_row"].as_u64().unwrap_or(u64::MAX);
    ensure!(
        l.entry().path == path && l.local_row == local,
        "located at {}:{}, expected {path}:{local}",
        l.entry().path,
        l.local_row
    );
    if map.blocks(l.index)?.iter().any(|b| b.row_count > 0) {
        let b = l.block.as_ref().context("no block for the row")?;
        ensure!(
            b.row_range().contains(&local),
            "block {} does not hold local row {local}",
            b.ordinal
        );
    }
    let slices = map.slice(g, 1, None, registry)?;
    ensure!(
        slices.len() == 1,
        "slice of one row touched {} files",
        slices.len()
    );
    let got = batch_rows(&slices[0].batches);
    ensure!(
        got.len() == 1,
        "slice of one row returned {} rows",
        got.len()
    );
    ensure!(
        same(&sample["values"], &got[0]),
        "row {}, expected {}",
        got[0],
        sample["values"]
    );
    Ok(())
}

fn check_slice(map: &LakeMap, registry: &HandlerRegistry, slice: &Value) -> anyhow::Result<()> {
    let start = slice["start"].as_u64().context("no start")?;
    let len = slice["len"].as_u64().context("no len")?;
    let columns: Option<Vec<String>> = slice["columns"].as_array().map(|cols| {
        cols.iter()
            .filter_map(|c| c.as_str().map(str::to_string))
            .collect()
    });
    let plan: Vec<(String, u64, u64)> = map
        .plan_slice(start, len)
        .iter()
        .map(|s| (map.entry(s.index).path.to_string(), s.local_start, s.len))
        .collect();
    let want_plan: Vec<(String, u64, u64)> = array(slice, "segments")?
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap_or("").to_string(),
                s["local_start"].as_u64().unwrap_or(0),
                s["len"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    ensure!(
        plan == want_plan,
        "segments {plan:?}, expected {want_plan:?}"
    );
    let files = map.slice(start, len, columns.as_deref(), registry)?;
    let mut got = Vec::new();
    for f in &files {
        if let Some(cols) = &columns {
            for b in &f.batches {
                let names: Vec<String> = b
                    .schema()
                    .fields()
                    .iter()
                    .map(|x| x.name().clone())
                    .collect();
                ensure!(
                    names == *cols,
                    "{}: columns {names:?}, expected {cols:?}",
                    f.path
                );
            }
        }
        got.extend(batch_rows(&f.batches));
    }
    let want = array(slice, "rows")?;
    ensure!(
        got.len() == want.len(),
        "{} rows, expected {}",
        got.len(),
        want.len()
    );
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        ensure!(same(w, g), "row {i} of the slice: {g}, expected {w}");
    }
    Ok(())
}

fn check_stats(map: &LakeMap, path: &str, cols: &Value) -> anyhow::Result<()> {
    let e = map.find(path).context("not in the map")?;
    let stats = e.stats()?.context("no stats_json")?;
    let cols = cols.as_object().context("stats entry is not an object")?;
    for (name, want) in cols {
        let got = stats.get(name);
        match (want["min"].is_null(), got) {
            (true, None) => {}
            (true, Some(g)) => bail!("{name}: stats {g:?} for an all-null column"),
            (false, None) => bail!(
                "{name}: no stats, expected min {} max {}",
                want["min"],
                want["max"]
            ),
            (false, Some(g)) => {
                let (min, max) = match g {
                    ColumnStats::Int { min, max } => (Value::from(*min), Value::from(*max)),
                    ColumnStats::Float { min, max } => (Value::from(*min), Value::from(*max)),
                    ColumnStats::Str { min_str, max_str } => {
                        (Value::from(min_str.as_str()), Value::from(max_str.as_str()))
                    }
                };
                ensure!(
                    same(&want["min"], &min) && same(&want["max"], &max),
                    "{name}: min {min} max {max}, expected {} {}",
                    want["min"],
                    want["max"]
                );
            }
        }
    }
    for name in stats.keys() {
        ensure!(
            cols.contains_key(name),
            "stats for {name:?}, which the answers leave out"
        );
    }
    Ok(())
}
