//! `cargo xtask bench python`: the Python package against its peers on the realistic lake
//! (`lake_data`, 320 MB so that the quoted CSV is 120 MB). The extension is built in release
//! and installed as a wheel into its own venv (`target/py-bench-venv`, with Hugging Face
//! `datasets`), then `python/bench/bench.py` measures bazan, `datasets`, polars and DuckDB in
//! one run; this module adds the binding-overhead figure: the same deep slice through the
//! facade in Rust. `python/bench/training.py` then measures training epochs.
//!
//! The venv: when the test venv `target/py-venv` exists (`cargo xtask ci` makes it, with
//! torch, Ray and the other test requirements: 6.4 GB), the bench venv sees its packages
//! through a `.pth` line and pip adds only what the bench needs beyond them (`datasets` and
//! its dependencies: 8 s on the 2-core bench machine); a venv of its own downloads everything
//! again (191 s and 6.4 GB there), which is what happens when there is no test venv.
//!
//! The extension: `maturin build --release` and a `pip install` of the wheel, not `maturin
//! develop`, which writes the library into `python/bazan/` where the test venv imports it
//! from (and where a debug build copied by a test run in the same tree would be measured
//! instead of the release one).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;

use super::lake_data;
use crate::python::{target_dir, venv};
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
    layer_on_test_venv(&venv_dir, &target.join("py-venv"))?;
    let python = venv(
        &venv_dir,
        &root.join("python").join("bench").join("requirements.txt"),
    )?;
    install_release_wheel(&venv_dir, &python)?;
    let threads = match super::option("threads") {
        Some(t) => t.parse().context("--threads takes a number")?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    // `--part training`: the training-loop figures alone.
    if super::option("part").as_deref() == Some("training") {
        return training(&python, &lake, threads);
    }
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

/// Creates `venv` (when missing) over the packages of the test venv `base` (when present): a
/// `.pth` line naming `base`'s site-packages, so that pip finds the test requirements
/// installed and adds only the bench's own.
fn layer_on_test_venv(venv: &Path, base: &Path) -> anyhow::Result<()> {
    let python = venv.join("bin").join("python");
    let base_python = base.join("bin").join("python");
    if python.exists() || !base_python.exists() {
        return Ok(());
    }
    let site = |python: &Path| -> anyhow::Result<PathBuf> {
        let out = Command::new(python)
            .args([
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ])
            .output()
            .with_context(|| format!("cannot run {}", python.display()))?;
        anyhow::ensure!(
            out.status.success(),
            "{} named no site-packages",
            python.display()
        );
        Ok(PathBuf::from(String::from_utf8(out.stdout)?.trim()))
    };
    let base_site = site(&base_python)?;
    let status = Command::new(&base_python)
        .args(["-c", "import sys; print(sys.version_info[:2])"])
        .output()?;
    let base_version = String::from_utf8(status.stdout)?;
    let status = Command::new("python3")
        .arg("-m")
        .arg("venv")
        .arg(venv)
        .status()?;
    anyhow::ensure!(
        status.success(),
        "python3 -m venv {} failed",
        venv.display()
    );
    let out = Command::new(&python)
        .args(["-c", "import sys; print(sys.version_info[:2])"])
        .output()?;
    anyhow::ensure!(
        String::from_utf8(out.stdout)? == base_version,
        "{} and {} are different Python versions: remove {} to install every package into it",
        python.display(),
        base_python.display(),
        venv.display()
    );
    std::fs::write(
        site(&python)?.join("_bazan_test_venv.pth"),
        format!("{}\n", base_site.display()),
    )?;
    Ok(())
}

/// Builds the extension in release (`maturin build --release`) and installs the wheel into
/// `venv` (replacing the one installed before).
fn install_release_wheel(venv: &Path, python: &Path) -> anyhow::Result<()> {
    let wheels = target_dir().join("py-bench-wheels");
    if wheels.exists() {
        std::fs::remove_dir_all(&wheels)?;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![venv.join("bin")];
    paths.extend(std::env::split_paths(&path));
    // maturin's own script: the venv's, else the test venv's it is layered on (`python -m
    // maturin` looks for the script beside the interpreter only).
    let maturin = [venv, &target_dir().join("py-venv")]
        .iter()
        .map(|v| v.join("bin").join("maturin"))
        .find(|m| m.exists())
        .unwrap_or_else(|| PathBuf::from("maturin"));
    let mut c = Command::new(maturin);
    c.args(["build", "--release", "--out"])
        .arg(&wheels)
        .current_dir(workspace_root().join("python"))
        .env("VIRTUAL_ENV", venv)
        .env("PATH", std::env::join_paths(paths)?)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("CARGO");
    eprintln!("$ {c:?}");
    anyhow::ensure!(c.status()?.success(), "maturin build --release failed");
    let wheel = std::fs::read_dir(&wheels)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .context("maturin built no wheel")?;
    let mut c = Command::new(python);
    c.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--force-reinstall",
    ])
    .arg(&wheel);
    eprintln!("$ {c:?}");
    anyhow::ensure!(
        c.status()?.success(),
        "pip install {} failed",
        wheel.display()
    );
    Ok(())
}

/// The training-loop figures of `python/bench/training.py` (one shuffled epoch, batch 256,
/// bazan against `datasets`, each run in its own process for its peak RSS), and the goals of
/// issue 48: `shuffle="global"` at least as fast as `datasets`' random access on its cache,
/// `shuffle="block"` at least 3 times that, the first shuffled batch from a fresh lake at
/// least 10 times sooner than `datasets`'.
fn training(python: &Path, lake: &Path, threads: usize) -> anyhow::Result<()> {
    let results = target_dir().join("bench-data").join("python-training.json");
    let mut c = Command::new(python);
    c.arg(
        workspace_root()
            .join("python")
            .join("bench")
            .join("training.py"),
    )
    .arg(lake)
    .arg(&results)
    .args(["--threads", &threads.to_string()]);
    if let Some(only) = super::option("only") {
        c.args(["--only", &only]);
    }
    c.env("HF_HUB_OFFLINE", "1")
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
        "  training loop: one shuffled epoch, batch 256, {threads} threads, files in the page cache; results in {}",
        results.display()
    );
    let rate = |mode: &str, with_build: bool| -> Option<f64> {
        let v = &r[mode];
        let build = if with_build {
            secs(v, "build_s").unwrap_or(0.0)
        } else {
            0.0
        };
        Some(secs(v, "rows")? / (secs(v, "epoch_s")? + build))
    };
    let modes = [
        "bazan_global",
        "bazan_block",
        "datasets_map",
        "datasets_iterable",
    ];
    for mode in modes {
        let v = &r[mode];
        if let Some(err) = v.get("error") {
            println!("    {mode}: failed: {err}");
            continue;
        }
        let Some(rows_s) = rate(mode, false) else {
            continue;
        };
        let build = secs(v, "build_s")
            .filter(|b| *b > 0.0)
            .map_or(String::new(), |b| {
                format!(
                    "; with the cache build ({b:.2} s, {:.0} MB on disk) {:.0} rows/s",
                    secs(v, "cache_bytes").unwrap_or(0.0) / 1e6,
                    rate(mode, true).unwrap_or(f64::NAN)
                )
            });
        println!(
            "    {mode}: {rows_s:.0} rows/s ({:.0} rows in {:.2} s){build}; peak RSS {:.0} MB",
            secs(v, "rows").unwrap_or(0.0),
            secs(v, "epoch_s").unwrap_or(f64::NAN),
            secs(v, "peak_rss").unwrap_or(0.0) / 1e6,
        );
        let f = &r[format!("{mode}_first")];
        if let Some(err) = f.get("error") {
            println!("      first shuffled batch: failed: {err}");
        } else {
            println!(
                "      first shuffled batch from a fresh lake: cold {} (median of {}), warm {}; peak RSS {:.0} MB",
                secs(f, "cold_s").map_or("?".into(), ms),
                f["cold_runs_s"].as_array().map_or(0, Vec::len),
                secs(f, "warm_s").map_or("?".into(), ms),
                secs(f, "peak_rss").unwrap_or(0.0) / 1e6,
            );
        }
        println!("      call: {}", r["calls"][mode].as_str().unwrap_or("?"));
    }
    for first in ["bazan_first", "datasets_first"] {
        println!(
            "    first batch, {first}: {}",
            r["calls"][first].as_str().unwrap_or("?")
        );
    }
    let goal = |label: &str, ratio: Option<f64>, at_least: f64| match ratio {
        Some(x) => println!(
            "    goal {label}: {x:.2}x (>= {at_least}x): {}",
            if x >= at_least { "met" } else { "NOT met" }
        ),
        None => println!("    goal {label}: peer unavailable"),
    };
    let peer = rate("datasets_map", false);
    let vs = |ours: &str| Some(rate(ours, false)? / peer?);
    goal(
        "global epoch vs datasets random access on its cache",
        vs("bazan_global"),
        1.0,
    );
    goal(
        "block epoch vs datasets random access on its cache",
        vs("bazan_block"),
        3.0,
    );
    // The peer's first batch: the sooner of its two ways.
    let first = |mode: &str, key: &str| secs(&r[format!("{mode}_first")], key);
    for key in ["cold_s", "warm_s"] {
        let peer = [first("datasets_map", key), first("datasets_iterable", key)]
            .into_iter()
            .flatten()
            .reduce(f64::min);
        for ours in ["bazan_global", "bazan_block"] {
            goal(
                &format!(
                    "first shuffled batch, {ours}, {}",
                    key.trim_end_matches("_s")
                ),
                first(ours, key).zip(peer).map(|(o, p)| p / o),
                10.0,
            );
        }
    }
    Ok(())
}
