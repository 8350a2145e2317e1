//! Conformance of the row-format locators (delimited, JSON family, MsgPack, XLSX) against the
//! lake corpus (`../shared/conformance/lake`, written by Python's csv/json/msgpack and
//! openpyxl): row counts, checkpoint byte offsets, inferred column types, sampled rows, slice
//! segments with projections and `stats_inferred`, through the registry as `lake-map` uses it.

use crate::common::{self, corpus, ext};
use std::path::Path;

use lake_locators::{Block, ColumnStats, FileIndex, IndexOptions, ReadRequest, registry, types};
use serde_json::Value;

const FORMATS: &[&str] = &[
    "csv", "tsv", "psv", "txt", "ndjson", "jsonl", "json", "msgpack", "xlsx",
];

fn index(path: &Path) -> FileIndex {
    let locator = registry::for_extension(ext(path.to_str().unwrap())).unwrap();
    locator
        .index(path, &IndexOptions::default())
        .unwrap_or_else(|e| panic!("index {}: {e}", path.display()))
}

/// Reads local rows `[start, start+len)` as JSON rows, with the index (`Some`) or directly.
fn read_rows(
    path: &Path,
    index: Option<&FileIndex>,
    start: u64,
    len: u64,
    columns: Option<&[String]>,
) -> Vec<Value> {
    let locator = registry::for_extension(ext(path.to_str().unwrap())).unwrap();
    common::read_rows(
        locator.as_ref(),
        path,
        &common::request(index, start..start + len, columns, 0),
    )
}

/// JSON equality with numbers compared numerically (xlsx integers are doubles in the file;
/// expected floats are Python reprs, ours shortest round-trip: both parse to the same f64).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        _ => a == b,
    }
}

/// Compares expected statistics with ours: Int64, Float64 and Utf8 by value; Boolean, Int32
/// and Date32 columns have none.
fn stats_mismatches(
    path: &str,
    expected: &serde_json::Map<String, Value>,
    ours: &lake_locators::Stats,
) -> Vec<String> {
    common::stats_mismatches(path, expected, ours, |ty, e, got| {
        Some(match (ty, got, &e["min"], &e["max"]) {
            (_, None, Value::Null, Value::Null) => true,
            ("int64", Some(ColumnStats::Int { min, max }), emin, emax) => {
                emin.as_i64() == Some(*min) && emax.as_i64() == Some(*max)
            }
            ("float64", Some(ColumnStats::Float { min, max }), emin, emax) => {
                emin.as_f64() == Some(*min) && emax.as_f64() == Some(*max)
            }
            ("utf8", Some(ColumnStats::Str { min_str, max_str }), emin, emax) => {
                emin.as_str() == Some(min_str) && emax.as_str() == Some(max_str)
            }
            ("bool" | "int32" | "date32", None, _, _) => true,
            _ => false,
        })
    })
}

#[test]
fn row_formats_match_expected_json() {
    let Some(dir) = corpus() else { return };
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let lake = dir.join("lake");
    let stride = expected["checkpoint_stride"].as_u64().unwrap();
    assert_eq!(stride, IndexOptions::default().stride);
    let mut indexes = std::collections::BTreeMap::new();
    let mut failures: Vec<String> = Vec::new();
    let mut checks = 0usize;
    let mut check = |ok: bool, what: String, failures: &mut Vec<String>| {
        checks += 1;
        if !ok {
            failures.push(what);
        }
    };
    for file in expected["files"].as_array().unwrap() {
        let rel = file["path"].as_str().unwrap();
        if !FORMATS.contains(&file["format"].as_str().unwrap()) {
            continue;
        }
        let path = lake.join(rel);
        let idx = index(&path);
        // Statistics off takes a cheaper classification path; it must infer the same.
        let quick = registry::for_extension(ext(rel))
            .unwrap()
            .index(
                &path,
                &IndexOptions {
                    stats: lake_locators::StatsColumns::None,
                    ..IndexOptions::default()
                },
            )
            .unwrap();
        // The same blocks, without their statistics.
        let bare: Vec<_> = idx
            .blocks
            .iter()
            .map(|b| Block {
                stats: None,
                ..b.clone()
            })
            .collect();
        check(
            quick.schema == idx.schema && quick.blocks == bare && quick.stats.is_none(),
            format!("{rel}: index without statistics differs"),
            &mut failures,
        );
        // Block statistics (of the delimited formats) join into the file's, column by column.
        let delimited = ["csv", "tsv", "psv", "txt"].contains(&file["format"].as_str().unwrap());
        for (column, whole) in idx.stats.iter().flatten().filter(|_| delimited) {
            let parts: Vec<_> = idx
                .blocks
                .iter()
                .filter_map(|b| b.stats.as_ref()?.get(column))
                .collect();
            let ints = || {
                parts.iter().filter_map(|s| match s {
                    ColumnStats::Int { min, max } => Some((*min, *max)),
                    _ => None,
                })
            };
            let floats = || {
                parts.iter().filter_map(|s| match s {
                    ColumnStats::Float { min, max } => Some((*min, *max)),
                    _ => None,
                })
            };
            let joined = match whole {
                ColumnStats::Int { .. } => ints()
                    .map(|b| b.0)
                    .min()
                    .zip(ints().map(|b| b.1).max())
                    .map(|(min, max)| ColumnStats::Int { min, max }),
                ColumnStats::Float { .. } => floats()
                    .map(|b| b.0)
                    .reduce(f64::min)
                    .zip(floats().map(|b| b.1).reduce(f64::max))
                    .map(|(min, max)| ColumnStats::Float { min, max }),
                ColumnStats::Str { .. } => continue,
            };
            check(
                joined.as_ref() == Some(whole),
                format!("{rel}: block statistics of {column} join to {joined:?}, not {whole:?}"),
                &mut failures,
            );
        }
        let rows = file["row_count"].as_u64().unwrap();
        check(
            idx.row_count == rows,
            format!("{rel}: row_count {} != {rows}", idx.row_count),
            &mut failures,
        );
        check(
            idx.blocks.iter().map(|b| b.row_count).sum::<u64>() == idx.row_count,
            format!("{rel}: block rows do not add up"),
            &mut failures,
        );
        let expected_format = match (file["format"].as_str().unwrap(), file["layout"].as_str()) {
            (_, Some("array")) => "json_array",
            (_, Some("lines")) => "ndjson",
            (f, _) => f,
        };
        check(
            idx.format == expected_format,
            format!("{rel}: format {} != {expected_format}", idx.format),
            &mut failures,
        );
        if let Some(cps) = file.get("checkpoints").and_then(Value::as_array) {
            let ours: Vec<(u64, Option<u64>)> = idx
                .blocks
                .iter()
                .map(|b| (b.first_row, b.first_byte))
                .collect();
            let theirs: Vec<(u64, Option<u64>)> = cps
                .iter()
                .map(|c| (c[0].as_u64().unwrap(), c[1].as_u64()))
                .collect();
            check(
                ours == theirs,
                format!("{rel}: checkpoints {ours:?} != {theirs:?}"),
                &mut failures,
            );
        } else {
            // XLSX: logical blocks of `stride` rows without byte positions.
            let ok = idx
                .blocks
                .iter()
                .enumerate()
                .all(|(i, b)| b.first_row == i as u64 * stride && b.first_byte.is_none());
            check(
                ok,
                format!("{rel}: logical blocks {:?}", idx.blocks),
                &mut failures,
            );
        }
        // Column types are inferred from values, so a file without rows has nothing to infer
        // from (all columns Utf8 by docs/lake-map.md §9); only their names are compared then.
        let ours: Vec<(String, String)> = idx
            .schema
            .fields()
            .iter()
            .map(|f| (f.name().clone(), types::type_name(f.data_type())))
            .collect();
        let theirs: Vec<(String, String)> = file["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["type"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        if rows > 0 {
            check(
                ours == theirs,
                format!("{rel}: columns {ours:?} != {theirs:?}"),
                &mut failures,
            );
        } else if !ours.is_empty() {
            let names = |v: &[(String, String)]| v.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
            check(
                names(&ours) == names(&theirs),
                format!("{rel}: column names {ours:?} != {theirs:?}"),
                &mut failures,
            );
        }
        if let Some(e) = expected["stats_inferred"].get(rel) {
            let bad = stats_mismatches(rel, e.as_object().unwrap(), idx.stats.as_ref().unwrap());
            check(bad.is_empty(), bad.join("; "), &mut failures);
        }
        indexes.insert(rel.to_string(), (path, idx));
    }
    for sample in expected["samples"].as_array().unwrap() {
        let rel = sample["path"].as_str().unwrap();
        let Some((path, idx)) = indexes.get(rel) else {
            continue;
        };
        let local = sample["local_row"].as_u64().unwrap();
        for (how, got) in [
            ("indexed", read_rows(path, Some(idx), local, 1, None)),
            ("direct", read_rows(path, None, local, 1, None)),
        ] {
            let ok = got.len() == 1 && same(&got[0], &sample["values"]);
            check(
                ok,
                format!("{rel} row {local} ({how}): {got:?} != {}", sample["values"]),
                &mut failures,
            );
        }
    }
    for slice in expected["slices"].as_array().unwrap() {
        let columns: Option<Vec<String>> = slice["columns"]
            .as_array()
            .map(|c| c.iter().map(|v| v.as_str().unwrap().to_string()).collect());
        let all_rows = slice["rows"].as_array().unwrap();
        let mut offset = 0usize;
        for seg in slice["segments"].as_array().unwrap() {
            let rel = seg["path"].as_str().unwrap();
            let len = seg["len"].as_u64().unwrap() as usize;
            if let Some((path, idx)) = indexes.get(rel) {
                let start = seg["local_start"].as_u64().unwrap();
                let got = read_rows(path, Some(idx), start, len as u64, columns.as_deref());
                let want = &all_rows[offset..offset + len];
                let ok = got.len() == len && got.iter().zip(want).all(|(a, b)| same(a, b));
                check(
                    ok,
                    format!(
                        "slice {:?} segment {rel} {start}+{len}: first got {:?}, want {:?}",
                        slice["why"],
                        got.first(),
                        want.first()
                    ),
                    &mut failures,
                );
            }
            offset += len;
        }
    }
    println!(
        "row-format conformance: {} of {checks} checks pass",
        checks - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Reading past the end, and reading with a stale block list, behave.
#[test]
fn reads_clamp_at_the_end() {
    let Some(dir) = corpus() else { return };
    let path = dir.join("lake/big/stride_200k.csv");
    let idx = index(&path);
    let got = read_rows(&path, Some(&idx), 199_998, 10, None);
    assert_eq!(got.len(), 2);
    assert_eq!(read_rows(&path, Some(&idx), 300_000, 10, None).len(), 0);
    let bad = [Block {
        first_byte: Some(1 << 40),
        ..idx.blocks[0].clone()
    }];
    let locator = registry::for_extension("csv").unwrap();
    let request = ReadRequest {
        rows: 0..1,
        blocks: Some(&bad),
        schema: Some(idx.schema.clone()),
        projection: None,
        batch_size: 0,
    };
    assert!(locator.read(&path, &request).is_err());
}

/// Truncated and corrupted copies of the small corpus files: indexing and reading (with the
/// intact file's index, as a stale map would) return errors or rows, never panic.
#[test]
fn damaged_copies_never_panic() {
    let Some(dir) = corpus() else { return };
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut runs = 0;
    for file in expected["files"].as_array().unwrap() {
        let rel = file["path"].as_str().unwrap();
        let size = file["size_bytes"].as_u64().unwrap();
        if !FORMATS.contains(&file["format"].as_str().unwrap()) || size == 0 || size > 60_000 {
            continue;
        }
        let original = std::fs::read(dir.join("lake").join(rel)).unwrap();
        let idx = index(&dir.join("lake").join(rel));
        let locator = registry::for_extension(ext(rel)).unwrap();
        let copy = tmp.path().join(format!("damaged.{}", ext(rel)));
        for round in 0..24 {
            let mut data = original.clone();
            if round % 3 == 0 {
                data.truncate((next() % size) as usize);
            } else {
                for _ in 0..1 + round % 4 {
                    let at = (next() % size) as usize;
                    data[at] = (next() & 0xff) as u8;
                }
            }
            std::fs::write(&copy, &data).unwrap();
            let _ = locator.index(&copy, &IndexOptions::default());
            for rows in [
                0..5,
                idx.row_count / 2..idx.row_count / 2 + 3,
                idx.row_count.saturating_sub(1)..idx.row_count + 2,
            ] {
                let request = ReadRequest {
                    rows,
                    blocks: Some(&idx.blocks),
                    schema: Some(idx.schema.clone()),
                    projection: None,
                    batch_size: 0,
                };
                if let Ok(batches) = locator.read(&copy, &request) {
                    for batch in batches {
                        let _ = batch;
                    }
                }
            }
            runs += 1;
        }
    }
    assert!(runs > 0);
}
