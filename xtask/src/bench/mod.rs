//! Benchmarks: figures side by side with the peer each issue names, as ratios from the same
//! run. `cargo xtask bench [NAME…]` re-runs xtask in a release build (`bench-inner`), so that
//! the debug `cargo xtask` stays quick to build while the figures come from optimised code.

use std::process::Command;

use anyhow::Context;

pub mod codecs;
pub mod doctor;
pub mod lake;
pub mod lake_data;
pub mod lake_many;
pub mod lake_parts;
pub mod lake_peers;
pub mod locators;
pub mod locators_rows;
pub mod python;
pub mod remote;
pub mod sql;
pub mod sql_queries;
pub mod sql_workers;
pub mod startup;
pub mod timing;
pub mod tsfile;
pub mod tsfile_write;

/// A registered benchmark: its name and the function that runs it and prints its figures.
pub struct Bench {
    /// The benchmark's name on the command line.
    pub name: &'static str,
    /// What it measures, for the listing.
    pub about: &'static str,
    /// Runs it (in the release build) and prints figures.
    pub run: fn() -> anyhow::Result<()>,
}

/// Every registered benchmark.
pub fn benches() -> Vec<Bench> {
    vec![
        Bench {
            name: "codecs",
            about: "tsfile-format: decode values/s per encoding on 1M values, LZ4/ZSTD GB/s",
            run: codecs::run,
        },
        Bench {
            name: "locators",
            about: "row formats: CSV/NDJSON indexing throughput and deep 100-row reads vs DuckDB",
            run: locators_rows::run,
        },
        Bench {
            // The second half of `locators`: both entries run under that name.
            name: "locators",
            about: "columnar formats: Parquet/ORC/Avro/Arrow index time and deep 100-row reads vs pyarrow/DuckDB",
            run: locators::run,
        },
        Bench {
            name: "lake",
            about: "Lake Map on a realistic lake (240 MB; --size 1g, --profile simple, --threads N): map create warm/cold, 1 vs 2 threads, peak RSS, deep slices vs DuckDB, polars, pyarrow; map load, locate_row",
            run: lake::run,
        },
        Bench {
            name: "doctor",
            about: "Lake Doctor: blake3 mode over the 1 GB lake vs b3sum, metadata mode over 100,000 files",
            run: doctor::run,
        },
        Bench {
            name: "tsfile",
            about: "TsFile: full read of `large` into Arrow and open+devices+series metadata of `table_many_devices` vs the official reader",
            run: tsfile::run,
        },
        Bench {
            name: "python",
            about: "Python package on the realistic lake (320 MB): fresh lake -> 256 random rows vs datasets, deep CSV slice vs polars/DuckDB, binding overhead vs the facade, random take vs datasets",
            run: python::run,
        },
        Bench {
            name: "tsfile-write",
            about: "TsFile writer: points/s writing the corpus `large` rows vs the official writer (write_arrow_batch)",
            run: tsfile_write::run,
        },
        Bench {
            name: "remote",
            about: "the realistic lake in an S3 bucket (moto behind a counting proxy, +20 ms per request): remote map create, deep slices and 256 random rows vs polars, pyarrow, datasets (time, GETs, bytes)",
            run: remote::run,
        },
        Bench {
            name: "sql",
            about: "bazan-sql on the 1 GB lake: count(*), deep _gid rows, selective filter (blocks read), group by vs DuckDB; with --workers N, one node against N bazan worker processes",
            run: sql::run,
        },
        Bench {
            name: "startup",
            about: "the command line as whole processes beside /bin/true: --version without and with sql, locate and sql count(*) on the sample lake (median wall, CPU, page faults, relocations)",
            run: startup::run,
        },
    ]
}

/// `cargo xtask bench [NAME…]`: builds xtask in release and runs the benchmarks there.
pub fn main(names: &[String]) -> anyhow::Result<u8> {
    if benches().is_empty() {
        println!("no benchmark is registered yet");
        return Ok(0);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "run",
            "--release",
            "--quiet",
            "--package",
            "xtask",
            "--",
            "bench-inner",
        ])
        .args(names)
        .current_dir(crate::workspace_root())
        .status()
        .context("cannot run cargo")?;
    Ok(status.code().unwrap_or(2).clamp(0, 255) as u8)
}

/// The `--flag value` (or `--flag=value`) options given after the benchmark names, read by
/// the benchmarks that take options ([`option`]).
static OPTIONS: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();

/// The value of the option `--name` given on the command line, if any.
pub fn option(name: &str) -> Option<String> {
    OPTIONS
        .get()?
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
}

/// Splits benchmark names from `--flag value` options.
fn split_options(args: &[String]) -> (Vec<String>, Vec<(String, String)>) {
    let mut names = Vec::new();
    let mut options = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.strip_prefix("--") {
            Some(flag) => match flag.split_once('=') {
                Some((n, v)) => options.push((n.to_string(), v.to_string())),
                None => options.push((flag.to_string(), it.next().cloned().unwrap_or_default())),
            },
            None => names.push(a.clone()),
        }
    }
    (names, options)
}

/// The release-build side of `cargo xtask bench`.
pub fn inner(args: &[String]) -> anyhow::Result<u8> {
    let (names, options) = split_options(args);
    let _ = OPTIONS.set(options);
    let names = &names[..];
    let all = benches();
    let mut failed = false;
    for bench in &all {
        if !names.is_empty() && !names.iter().any(|n| n == bench.name) {
            continue;
        }
        println!("== bench {}: {}", bench.name, bench.about);
        if let Err(err) = (bench.run)() {
            eprintln!("bench {} failed: {err:#}", bench.name);
            failed = true;
        }
    }
    for name in names {
        if !all.iter().any(|b| b.name == name) {
            let known: Vec<&str> = all.iter().map(|b| b.name).collect();
            eprintln!(
                "unknown benchmark {name:?}; registered: {}",
                known.join(", ")
            );
            failed = true;
        }
    }
    Ok(u8::from(failed))
}
