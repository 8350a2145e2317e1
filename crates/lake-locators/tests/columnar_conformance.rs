//! Conformance of the Parquet, ORC, Avro and Arrow IPC locators against the lake corpus
//! (`../shared/conformance/lake`, written by pyarrow, pyorc and fastavro): row counts, block
//! rows, statistics, sampled rows and slice segments.

use crate::common::{self, corpus, ext};
use std::path::Path;

use lake_locators::{ColumnStats, IndexOptions, ReadRequest, StatsColumns, registry};
use serde_json::Value;

const FORMATS: &[&str] = &["parquet", "orc", "avro", "arrow", "feather", "arrows"];

/// Reads local rows `[start, start+len)` of a corpus file as JSON rows.
fn read_rows(
    path: &Path,
    blocks: Option<&[lake_locators::Block]>,
    start: u64,
    len: u64,
    columns: Option<&[String]>,
) -> Vec<Value> {
    let locator = registry::for_extension(ext(path.to_str().unwrap())).unwrap();
    let request = ReadRequest {
        rows: start..start + len,
        blocks,
        schema: None,
        projection: columns,
        batch_size: 0,
    };
    common::read_rows(locator.as_ref(), path, &request)
}

/// Compares expected statistics with ours: Int64 and Utf8 exactly, Float64 bit for bit; other
/// types are not checked.
fn stats_mismatches(
    path: &str,
    expected: &serde_json::Map<String, Value>,
    ours: &lake_locators::Stats,
) -> Vec<String> {
    common::stats_mismatches(path, expected, ours, |ty, e, got| {
        if !matches!(ty, "int64" | "float64" | "utf8") {
            return None;
        }
        Some(match (ty, &e["min"], got) {
            (_, Value::Null, None) => true,
            ("int64", min, Some(ColumnStats::Int { min: a, max: b })) => {
                min.as_i64() == Some(*a) && e["max"].as_i64() == Some(*b)
            }
            ("float64", min, Some(ColumnStats::Float { min: a, max: b })) => {
                min.as_f64().map(f64::to_bits) == Some(a.to_bits())
                    && e["max"].as_f64().map(f64::to_bits) == Some(b.to_bits())
            }
            ("utf8", min, Some(ColumnStats::Str { min_str, max_str })) => {
                min.as_str() == Some(min_str) && e["max"].as_str() == Some(max_str)
            }
            _ => false,
        })
    })
}

/// Prints whether indexing a Parquet file with statistics read any data page, i.e. whether
/// the footer statistics were complete and exact (informational: both ways are correct).
fn report_parquet_stats_source(rel: &str, path: &Path, index: &lake_locators::FileIndex) {
    let data_end = common::parquet_data_end(index);
    let (_, ranges) = common::parquet_traced_index(path);
    let data: u64 = ranges
        .iter()
        .filter(|r| r.start < data_end)
        .map(|r| r.end - r.start)
        .sum();
    println!("{rel}: statistics read {data} bytes of data pages");
}

#[test]
fn columnar_files_match_expected() {
    let Some(dir) = corpus() else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("expected.json")).unwrap();
    let expected: Value = serde_json::from_str(&text).unwrap();
    let lake = dir.join("lake");
    let mut checks = 0usize;
    let mut failures = Vec::new();
    let mut indexes = std::collections::BTreeMap::new();
    for f in expected["files"].as_array().unwrap() {
        let format = f["format"].as_str().unwrap();
        if !FORMATS.contains(&format) {
            continue;
        }
        let rel = f["path"].as_str().unwrap();
        let path = lake.join(rel);
        let locator = registry::for_extension(format).unwrap();
        let index = locator
            .index(
                &path,
                &IndexOptions {
                    stride: 65_536,
                    stats: StatsColumns::All,
                },
            )
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        checks += 1;
        if index.row_count != f["row_count"].as_u64().unwrap() {
            failures.push(format!(
                "{rel}: row_count {} != {}",
                index.row_count, f["row_count"]
            ));
        }
        checks += 1;
        let block_rows: Vec<u64> = index.blocks.iter().map(|b| b.row_count).collect();
        let want: Vec<u64> = f["block_rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        if block_rows != want {
            failures.push(format!("{rel}: block rows {block_rows:?} != {want:?}"));
        }
        checks += 1;
        let columns: Vec<(String, String)> = index
            .schema
            .fields()
            .iter()
            .map(|f| {
                (
                    f.name().clone(),
                    lake_locators::types::type_name(f.data_type()),
                )
            })
            .collect();
        let want_cols: Vec<(String, String)> = f["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().into(),
                    c["type"].as_str().unwrap().into(),
                )
            })
            .collect();
        if columns != want_cols {
            failures.push(format!("{rel}: columns {columns:?} != {want_cols:?}"));
        }
        checks += 1;
        let bad = stats_mismatches(
            rel,
            expected["stats"][rel].as_object().unwrap(),
            index.stats.as_ref().unwrap(),
        );
        if !bad.is_empty() {
            failures.extend(bad);
        }
        if format == "parquet" {
            report_parquet_stats_source(rel, &path, &index);
        }
        indexes.insert(rel.to_string(), index);
    }
    for s in expected["samples"].as_array().unwrap() {
        let rel = s["path"].as_str().unwrap();
        let Some(index) = indexes.get(rel) else {
            continue;
        };
        let local = s["local_row"].as_u64().unwrap();
        let path = lake.join(rel);
        for blocks in [Some(index.blocks.as_slice()), None] {
            checks += 1;
            let got = read_rows(&path, blocks, local, 1, None);
            if got.len() != 1 || got[0] != s["values"] {
                failures.push(format!(
                    "{rel} row {local} (blocks: {}): expected {}, got {got:?}",
                    blocks.is_some(),
                    s["values"]
                ));
            }
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
            if let Some(index) = indexes.get(rel) {
                let start = seg["local_start"].as_u64().unwrap();
                checks += 1;
                let got = read_rows(
                    &lake.join(rel),
                    Some(&index.blocks),
                    start,
                    len as u64,
                    columns.as_deref(),
                );
                let want = &all_rows[offset..offset + len];
                if got.as_slice() != want {
                    failures.push(format!(
                        "{rel} slice {start}+{len} ({}): rows differ",
                        slice["why"]
                    ));
                }
            }
            offset += len;
        }
    }
    println!(
        "columnar conformance: {}/{checks} checks pass",
        checks - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Reads a whole file through a locator, returning whether it succeeded (errors are fine
/// here; a panic fails the test).
fn index_and_read(path: &Path) -> bool {
    let locator = registry::for_extension(ext(path.to_str().unwrap())).unwrap();
    let Ok(index) = locator.index(path, &IndexOptions::default()) else {
        return false;
    };
    for blocks in [Some(index.blocks.as_slice()), None] {
        let request = ReadRequest {
            rows: 0..u64::MAX,
            blocks,
            ..Default::default()
        };
        if let Ok(batches) = locator.read(path, &request) {
            for b in batches {
                if b.is_err() {
                    break;
                }
            }
        }
    }
    true
}

#[test]
fn corrupted_copies_of_corpus_files_never_panic() {
    let Some(dir) = corpus() else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("expected.json")).unwrap();
    let expected: Value = serde_json::from_str(&text).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut variants = 0;
    for f in expected["files"].as_array().unwrap() {
        let format = f["format"].as_str().unwrap();
        if !FORMATS.contains(&format) || f["size_bytes"].as_u64().unwrap() > 1 << 20 {
            continue;
        }
        let good = std::fs::read(dir.join("lake").join(f["path"].as_str().unwrap())).unwrap();
        let target = tmp.path().join(format!("x.{format}"));
        let n = good.len();
        // Truncations at 24 points, then single-byte changes at 48 deterministic places
        // (denser near the end, where the footers are).
        let mut copies: Vec<Vec<u8>> = (0..24).map(|i| good[..n * i / 24].to_vec()).collect();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for i in 0..48 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = if i % 2 == 0 {
                (state % n as u64) as usize
            } else {
                n - 1 - (state % (n as u64).min(512)) as usize
            };
            let mut c = good.clone();
            c[at] = c[at].wrapping_add(1 + (state >> 32) as u8 % 254);
            copies.push(c);
        }
        for c in copies {
            std::fs::write(&target, &c).unwrap();
            index_and_read(&target);
            variants += 1;
        }
    }
    println!("{variants} corrupted copies read without a panic");
}
