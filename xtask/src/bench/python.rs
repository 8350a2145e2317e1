//! `cargo xtask bench python`: the Python package against its peers on the realistic lake
//! (`lake_data`, 320 MB so that the quoted CSV is 120 MB). The extension is built in release
//! into its own venv (`target/py-bench-venv`, with Hugging Face `datasets`), then
//! `python/bench/bench.py` measures bazan, `datasets`, polars and DuckDB in one run; this
//! module adds the binding-overhead figure: the same deep slice through the facade in Rust.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;

use super::lake_data;
use crate::python::{develop, target_dir, venv};
use crate::workspace_root;

/// Megabytes of text of the lake: 3/8 of it is the quoted CSV (120 MB).
const MB: u64 = 320;

fn secs(v: &serde_json::Value, key: &str) -> Option<f64> {
    v.get(key).and_then(serde_json::Value::as_f64)
}

fn ms(s: f64) -> String {
    format!("{:.2} ms", s * 1e3)
}

fn ratio(v: &serde_json::Value, peer: &str, ours: &str) -> String {
    match (secs(v, peer), secs(v, ours)) {
        (Some(p), Some(o)) if o > 0.0 => format!("{:.1}x ({} vs {})", p / o, ms(p), ms(o)),
        _ => "peer unavailable".into(),
    }
}

/// Runs the benchmark and prints its figures.
pub fn run() -> anyhow::Result<()> {
    let root = workspace_root();
    let target = target_dir();
    let lake = target.join("bench-data").join(format!("python-lake-{MB}m"));
    lake_data::generate(&lake, MB)?;
    let venv_dir = target.join("py-bench-venv");
    let python = venv(
        &venv_dir,
        &root.join("python").join("bench").join("requirements.txt"),
    )?;
    develop(&venv_dir, true)?;
    let threads = match super::option("threads") {
        Some(t) => t.parse().context("--threads takes a number")?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let results = target.join("bench-data").join("python-bench.json");
    let mut c = std::process::Command::new(&python);
    c.arg(root.join("python").join("bench").join("bench.py"))
        .arg(&lake)
        .arg(&results)
        .args(["--threads", &threads.to_string()])
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_DATASETS_OFFLINE", "1")
        .env("POLARS_MAX_THREADS", threads.to_string())
        .env("RAYON_NUM_THREADS", threads.to_string());
    eprintln!("$ {c:?}");
    let status = c.status().context("cannot run python/bench/bench.py")?;
    anyhow::ensure!(status.success(), "python/bench/bench.py failed ({status})");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&results)?)?;

    // The same deep slices through the facade, on the map bench.py left in the lake: the
    // file's own columns, and every lake column.
    let b = &r["binding"];
    let start = b["start"].as_u64().context("results: binding.start")?;
    let len = b["len"].as_u64().context("results: binding.len")?;
    let own: Vec<String> = b["columns"]
        .as_array()
        .context("results: binding.columns")?
        .iter()
        .filter_map(|c| c.as_str().map(String::from))
        .collect();
    let runs = b["runs"].as_u64().unwrap_or(30);
    let map = Arc::new(bazan::load_map(&lake)?);
    let facade = |columns: Option<Vec<String>>| -> anyhow::Result<f64> {
        let options = bazan::ScanOptions {
            columns,
            ..bazan::ScanOptions::default()
        };
        let mut best = f64::MAX;
        // As many runs as bench.py gives the Python side of the same slice. Each run frees
        // its result before the clock stops, as the Python side does (`.num_rows` of a table
        // that is dropped on return).
        for _ in 0..runs {
            let t = Instant::now();
            let batches = map.scan(start..start + len, &options)?.collect_batches()?;
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            drop(batches);
            best = best.min(t.elapsed().as_secs_f64());
            anyhow::ensure!(rows as u64 == len, "the facade returned {rows} rows");
        }
        Ok(best)
    };
    let rust_own = facade(Some(own.clone()))?;
    let rust_all = facade(None)?;
    let f = &r["first_256"];
    let lake_bytes = r["lake_bytes"].as_f64().unwrap_or(f64::NAN);
    println!(
        "python: lake {:.1} MB, {threads} threads for every tool; results in {}",
        lake_bytes / 1e6,
        results.display()
    );
    println!(
        "  fresh lake -> 256 random rows (create_map + take vs datasets load_dataset + select): cold (median of three) {}, warm (best of three) {}",
        ratio(f, "datasets_cold_s", "bazan_cold_s"),
        ratio(f, "datasets_warm_s", "bazan_warm_s")
    );
    let runs = |key: &str| -> String {
        f.get(key)
            .and_then(serde_json::Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(serde_json::Value::as_f64)
                    .map(ms)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_else(|| "?".into())
    };
    println!(
        "    cold runs: bazan {}; datasets {}",
        runs("bazan_cold_runs_s"),
        runs("datasets_cold_runs_s")
    );
    if let Some(err) = f.get("datasets").and_then(|v| v.as_str()) {
        println!("    datasets: {err}");
    }
    println!(
        "    extra disk: map {:.2} MB ({:.3}% of the lake); datasets cache {:.1} MB",
        secs(f, "map_bytes").unwrap_or(0.0) / 1e6,
        secs(f, "map_bytes").unwrap_or(0.0) / lake_bytes * 100.0,
        secs(f, "datasets_cache_bytes").unwrap_or(f64::NAN) / 1e6
    );
    let d = &r["deep_slice"];
    println!(
        "  1,000 rows ({} columns) at 90% of {} ({:.0} MB): vs polars scan_csv.slice cold {}, warm {}; vs DuckDB LIMIT/OFFSET cold {}, warm {}",
        d["columns"].as_u64().unwrap_or(0),
        d["file"].as_str().unwrap_or("?"),
        secs(d, "file_mb").unwrap_or(0.0),
        ratio(d, "polars_cold_s", "bazan_cold_s"),
        ratio(d, "polars_warm_s", "bazan_warm_s"),
        ratio(d, "duckdb_cold_s", "bazan_cold_s"),
        ratio(d, "duckdb_warm_s", "bazan_warm_s")
    );
    println!(
        "    the same rows with all {} lake columns: warm {}",
        d["lake_columns"].as_u64().unwrap_or(0),
        secs(d, "bazan_all_columns_warm_s").map_or("?".into(), ms)
    );
    let overhead = |label: &str, py: f64, rust: f64| {
        let over = py - rust;
        let budget = rust * 0.10 + 50e-6;
        println!(
            "  binding overhead, {label}: Python {} vs facade in Rust {}: +{:.1} us ({:.1}%), budget 10% + 50 us = {:.1} us: {}",
            ms(py),
            ms(rust),
            over * 1e6,
            over / rust * 100.0,
            budget * 1e6,
            if over <= budget { "met" } else { "NOT met" }
        );
    };
    overhead(
        &format!("the file's {} columns", own.len()),
        secs(b, "python_best_s").unwrap_or(f64::NAN),
        rust_own,
    );
    overhead(
        &format!(
            "all {} lake columns",
            d["lake_columns"].as_u64().unwrap_or(0)
        ),
        secs(b, "python_all_columns_best_s").unwrap_or(f64::NAN),
        rust_all,
    );
    println!(
        "    pyarrow alone importing that all-columns result (C data import + Table): {}",
        secs(b, "pyarrow_import_all_columns_s").map_or("?".into(), ms)
    );
    for (part, v) in r["take_1024"].as_object().into_iter().flatten() {
        // New random rows every call; bazan's decoded-block cache fills from the second call.
        println!(
            "  take 1,024 random rows, {part}: vs datasets on its Arrow cache (warm): steady {}; cache off {}; first call {}, second {}",
            ratio(v, "datasets_warm_s", "bazan_warm_s"),
            ratio(v, "datasets_warm_s", "bazan_no_cache_warm_s"),
            ratio(v, "datasets_warm_s", "bazan_first_call_s"),
            ratio(v, "datasets_warm_s", "bazan_second_call_s"),
        );
        println!(
            "    bazan cold (files out of the page cache, map just loaded) {}; decoded blocks kept {:.1} MB{}",
            secs(v, "bazan_cold_s").map_or("?".into(), ms),
            secs(v, "bazan_cached_bytes").unwrap_or(0.0) / 1e6,
            secs(v, "bazan_stride4096_warm_s")
                .map_or(String::new(), |s| format!("; stride 4,096 warm {}", ms(s)))
        );
        println!(
            "    datasets (the faster is the peer): select(indices) {}, dataset[indices] {}",
            secs(v, "datasets_select_warm_s").map_or("?".into(), ms),
            secs(v, "datasets_getitem_warm_s").map_or("?".into(), ms),
        );
    }
    training(&python, &lake, threads)
}

/// The training-loop figures of `python/bench/training.py` (one shuffled epoch, batch 256,
/// bazan against `datasets`, each run in its own process for its peak RSS).
fn training(
    python: &std::path::Path,
    lake: &std::path::Path,
    threads: usize,
) -> anyhow::Result<()> {
    let results = target_dir().join("bench-data").join("python-training.json");
    let mut c = std::process::Command::new(python);
    c.arg(
        workspace_root()
            .join("python")
            .join("bench")
            .join("training.py"),
    )
    .arg(lake)
    .arg(&results)
    .args(["--threads", &threads.to_string()])
    .env("HF_HUB_OFFLINE", "1")
    .env("HF_DATASETS_OFFLINE", "1")
    .env("RAYON_NUM_THREADS", threads.to_string());
    eprintln!("$ {c:?}");
    let status = c.status().context("cannot run python/bench/training.py")?;
    anyhow::ensure!(
        status.success(),
        "python/bench/training.py failed ({status})"
    );
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&results)?)?;
    println!(
        "  training loop: one shuffled epoch, batch 256, {threads} threads; results in {}",
        results.display()
    );
    for mode in [
        "bazan_global",
        "bazan_block",
        "datasets_map",
        "datasets_iterable",
    ] {
        let v = &r[mode];
        if let Some(err) = v.get("error") {
            println!("    {mode}: failed: {err}");
            continue;
        }
        let Some(epoch) = secs(v, "epoch_s") else {
            continue;
        };
        let rows = secs(v, "rows").unwrap_or(0.0);
        let build = secs(v, "build_s").unwrap_or(0.0);
        let first = secs(&r[format!("{mode}_first")], "first_batch_s");
        println!(
            "    {mode}: {:.0} rows/s ({rows:.0} rows in {:.2} s){}; first shuffled batch from a fresh lake {}; peak RSS {:.0} MB",
            rows / epoch,
            epoch,
            if build > 0.0 {
                format!(
                    ", {:.0} rows/s with the cache build ({:.2} s)",
                    rows / (epoch + build),
                    build
                )
            } else {
                String::new()
            },
            first.map_or("?".into(), ms),
            secs(v, "peak_rss").unwrap_or(0.0) / 1e6,
        );
        println!("      call: {}", r["calls"][mode].as_str().unwrap_or("?"));
    }
    Ok(())
}
