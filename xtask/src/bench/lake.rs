//! `cargo xtask bench lake`: the Lake Map on a generated lake (git-ignored, under
//! `target/bench-data`, generated once and reused), with DuckDB, polars and pyarrow as peers
//! in the same run, every tool on the same number of threads (`--threads N`, default every
//! core):
//!
//! - the lake: by default the realistic profile of [`super::lake_data`] (240 MB of quoted
//!   CRLF CSV, a wide CSV and nested NDJSON with varying key order, plus Parquet and Arrow IPC
//!   with many small batches; `--size 1g` for 1 GB); `--profile simple` is the old lake of
//!   quote-free, single-template files (1.2 GB), kept to show it did not get slower;
//! - `map create` with stats off and with the default stats vs each peer counting every row,
//!   warm (the best of 3, after every file was dropped from the page cache and read back once,
//!   as for a lake read from disk: see `settle_page_cache`) and cold (one run each right after
//!   the files were dropped from the cache); each peer's exact script is printed;
//! - one big CSV indexed on 1 thread and on 2 threads (and DuckDB counting it on as many);
//! - many files: the big CSV and NDJSON cut into 4 MiB parts, warm and cold, vs DuckDB
//!   counting them through globs ([`super::lake_parts`]);
//! - the peak RSS of `map create` (a child process each, from the kernel's `VmHWM`);
//! - a 100-row slice deep in the big CSV and NDJSON vs DuckDB `LIMIT 100 OFFSET k`;
//! - loading a 100,000-entry map, and 1M `locate_row` calls.
//!
//! `BAZAN_BENCH_LAKE=map cargo xtask bench lake` runs only the map load part, and
//! `BAZAN_BENCH_LAKE=many` only the many-small-files figures ([`super::lake_many`]), which
//! the full run ends with. The load average is
//! printed at the start and end: figures taken while the machine is busy are noisy.

use std::fs::{self, File};
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lake_map::{
    CreateOptions, HandlerRegistry, LakeMap, MapConfig, MapEntry, StatsColumns, UpdateOptions,
    assign_first_global_rows, create_map_with, load_map, load_map_file, update_map_with,
    write_map_to,
};

use super::lake_data;
use super::lake_parts;
use super::lake_peers::{self, Peer};
use super::timing::{best, load_average};

/// The generated files: name, rows.
const FILES: &[(&str, u64)] = &[
    ("p00.csv", 3_000_000),
    ("p01.ndjson", 2_000_000),
    ("p02.parquet", 2_500_000),
    ("p03.arrow", 2_000_000),
    ("p04.csv", 3_000_000),
    ("p05.ndjson", 2_000_000),
    ("p06.parquet", 2_500_000),
    ("p07.arrow", 2_000_000),
    ("p08.csv", 3_000_000),
    ("p09.ndjson", 2_000_000),
    ("p10.parquet", 2_500_000),
    ("p11.csv", 3_000_000),
    ("p12.parquet", 2_500_000),
];

/// Bumped whenever the generator changes, so an old lake is regenerated.
const VERSION: &str = "lake-bench-v1";

/// The lake of one run and its options.
struct Setup {
    lake: PathBuf,
    files: Vec<PathBuf>,
    rows: u64,
    threads: usize,
    /// The big CSV and NDJSON files (1 vs 2 threads, deep slices) and their rows.
    big_csv: (PathBuf, u64),
    big_ndjson: (PathBuf, u64),
}

/// Parses `--size` (`240m`, `1g`, `1500m`) into megabytes.
fn parse_size(s: &str) -> anyhow::Result<u64> {
    let s = s.trim().to_ascii_lowercase();
    let (num, unit) = match s.strip_suffix('g') {
        Some(n) => (n, 1000),
        None => (s.strip_suffix('m').unwrap_or(&s), 1),
    };
    let n: f64 = num
        .parse()
        .with_context(|| format!("--size {s}: not a size like 240m or 1g"))?;
    Ok((n * unit as f64) as u64)
}

fn setup(dir: &Path) -> anyhow::Result<Setup> {
    let threads = match super::option("threads") {
        Some(t) => t.parse().context("--threads takes a number")?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let profile = super::option("profile").unwrap_or_else(|| "realistic".into());
    match profile.as_str() {
        "simple" => {
            let lake = dir.join("lake");
            generate(&lake)?;
            let files = FILES.iter().map(|f| lake.join(f.0)).collect();
            let rows = FILES.iter().map(|f| f.1).sum();
            Ok(Setup {
                big_csv: (lake.join("p08.csv"), 3_000_000),
                big_ndjson: (lake.join("p09.ndjson"), 2_000_000),
                lake,
                files,
                rows,
                threads,
            })
        }
        "realistic" => {
            let mb = parse_size(&super::option("size").unwrap_or_else(|| "240m".into()))?;
            let lake = dir.join(format!("lake-real-{mb}m"));
            let counts = super::lake_data::generate(&lake, mb)?;
            let files: Vec<PathBuf> = lake_data::FILES.iter().map(|f| lake.join(f)).collect();
            let rows_of = |name: &str| {
                lake_data::FILES
                    .iter()
                    .position(|f| *f == name)
                    .map_or(0, |i| counts[i])
            };
            Ok(Setup {
                big_csv: (lake.join(lake_data::BIG_CSV), rows_of(lake_data::BIG_CSV)),
                big_ndjson: (
                    lake.join(lake_data::BIG_NDJSON),
                    rows_of(lake_data::BIG_NDJSON),
                ),
                rows: counts.iter().sum(),
                lake,
                files,
                threads,
            })
        }
        other => bail!("--profile {other}: realistic (default) or simple"),
    }
}

/// Runs `f` on a pool of `threads` workers, as `bazan map create --threads N` does.
fn on_threads<T: Send>(
    threads: usize,
    f: impl FnOnce() -> anyhow::Result<T> + Send,
) -> anyhow::Result<T> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?
        .install(f)
}

/// `map create` of `lake` on `threads` threads; returns the rows.
fn create(lake: &Path, stats: StatsColumns, threads: usize) -> anyhow::Result<u64> {
    let options = CreateOptions {
        config: MapConfig {
            stats_columns: stats,
            ..MapConfig::default()
        },
        ..CreateOptions::default()
    };
    on_threads(threads, || {
        Ok(create_map_with(lake, &options)?.map.total_rows())
    })
}

/// The many-files figure ([`lake_parts`]): `map create` of the parts of the big CSV and
/// NDJSON, warm and cold, against DuckDB counting them through globs on as many threads.
fn many_files(s: &Setup, duck: bool) -> anyhow::Result<()> {
    let dir = s
        .lake
        .with_file_name(format!("{}-parts", file_name(&s.lake)));
    let files = lake_parts::parts(&s.big_csv.0, &s.big_ndjson.0, &dir)?;
    let rows = s.big_csv.1 + s.big_ndjson.1;
    let bytes: u64 = files
        .iter()
        .map(|p| fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum();
    println!();
    println!(
        "many files: {} parts of about {:.1} MB ({:.1} MB in all: {} and {} cut at record ends)",
        files.len(),
        lake_parts::PART_BYTES as f64 / 1e6,
        bytes as f64 / 1e6,
        file_name(&s.big_csv.0),
        file_name(&s.big_ndjson.0)
    );
    if duck {
        println!(
            "--- DuckDB\n{}",
            lake_parts::duckdb_script(&dir, s.threads, 3)
        );
    }
    let mut figures = Vec::new();
    for (stats, label) in [
        (StatsColumns::None, "stats off"),
        (StatsColumns::All, "default stats"),
    ] {
        let (warm, n) = best(3, || create(&dir, stats.clone(), s.threads))?;
        if n != rows {
            bail!(
                "{}: map create counted {n} rows, the parts hold {rows}",
                dir.display()
            );
        }
        drop_page_cache(&files)?;
        let (cold, _) = best(1, || create(&dir, stats.clone(), s.threads))?;
        figures.push((label, warm, cold));
    }
    let (mut duck_warm, mut duck_cold) = (None, None);
    if duck {
        match lake_parts::duckdb(&dir, s.threads, 3) {
            Ok((n, t)) => {
                if n != rows {
                    println!("note: DuckDB counted {n} rows, the parts hold {rows}");
                }
                duck_warm = Some(t);
                drop_page_cache(&files)?;
                duck_cold = lake_parts::duckdb(&dir, s.threads, 1).ok().map(|r| r.1);
            }
            Err(e) => println!("note: {e:#}"),
        }
    }
    settle_page_cache(&files)?;
    for (label, warm, cold) in figures {
        report(
            &format!("many files, warm, {label}"),
            warm,
            &[(Peer::DuckDb, duck_warm)],
        );
        report(
            &format!("many files, cold, {label}"),
            cold,
            &[(Peer::DuckDb, duck_cold)],
        );
    }
    Ok(())
}

/// The child process side of the peak RSS figure: one `map create` (spec
/// `threads:stats:lake`, stats `off` or `on`), then the peak resident set from the kernel.
fn rss_child(spec: &str) -> anyhow::Result<()> {
    let mut parts = spec.splitn(3, ':');
    let threads: usize = parts.next().unwrap_or("1").parse()?;
    let stats = match parts.next() {
        Some("off") => StatsColumns::None,
        _ => StatsColumns::All,
    };
    let lake = PathBuf::from(parts.next().unwrap_or("."));
    create(&lake, stats, threads)?;
    let status = fs::read_to_string("/proc/self/status")?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .context("no VmHWM in /proc/self/status")?;
    println!("peak_rss_kb {kb}");
    Ok(())
}

/// Peak RSS in MB of a `map create` run in a child process.
fn peak_rss(lake: &Path, threads: usize, stats: &str) -> anyhow::Result<f64> {
    let out = std::process::Command::new(std::env::current_exe()?)
        .args(["bench-inner", "lake"])
        .env(
            "BAZAN_BENCH_LAKE_RSS",
            format!("{threads}:{stats}:{}", lake.display()),
        )
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("peak_rss_kb "))
        .and_then(|v| v.trim().parse().ok())
        .with_context(|| {
            format!(
                "the RSS child printed no figure: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    Ok(kb as f64 / 1e3)
}

/// CPU seconds (user + system) this process has used so far, every thread counted.
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        // SAFETY: getrusage writes into the zeroed struct we own; no other effect.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above: the kernel fills `u`, a valid struct of ours.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } == 0 {
            let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
            return t(u.ru_utime) + t(u.ru_stime);
        }
    }
    0.0
}

/// The least CPU time (user + system, all threads) of `runs` runs of `f`: unlike wall time,
/// hardly changed by other processes on a busy machine.
fn least_cpu<T>(runs: usize, mut f: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<f64> {
    let mut least = f64::INFINITY;
    for _ in 0..runs {
        let before = cpu_seconds();
        f()?;
        least = least.min(cpu_seconds() - before);
    }
    Ok(least)
}

/// One line of the report: our time, then each peer's with the ratio peer/ours.
fn report(what: &str, ours: Duration, peers: &[(Peer, Option<Duration>)]) {
    let mut line = format!("{what:<46} {:>8.3}s", ours.as_secs_f64());
    for (peer, t) in peers {
        match t {
            Some(t) => line.push_str(&format!(
                "  {} {:.3}s ({:.2}x)",
                peer.name(),
                t.as_secs_f64(),
                t.as_secs_f64() / ours.as_secs_f64()
            )),
            None => line.push_str(&format!("  {} -", peer.name())),
        }
    }
    println!("{line}");
}

/// Runs the benchmark.
pub fn run() -> anyhow::Result<()> {
    let dir = crate::workspace_root().join("target").join("bench-data");
    // `BAZAN_BENCH_LAKE=map` runs only the map load and `locate_row` part, which needs no
    // generated lake and takes seconds instead of minutes.
    if std::env::var("BAZAN_BENCH_LAKE").is_ok_and(|v| v == "map") {
        return map_load_and_locate(&dir);
    }
    // `BAZAN_BENCH_LAKE=many` runs only the many-small-files figures (`lake_many`).
    if std::env::var("BAZAN_BENCH_LAKE").is_ok_and(|v| v == "many") {
        return super::lake_many::run(&dir);
    }
    if let Ok(spec) = std::env::var("BAZAN_BENCH_LAKE_RSS") {
        return rss_child(&spec);
    }
    let s = setup(&dir)?;
    let bytes: u64 = s
        .files
        .iter()
        .map(|p| fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum();
    println!(
        "lake: {} files, {} rows, {:.3} GB at {}; {} threads for every tool; load average {} at start",
        s.files.len(),
        s.rows,
        bytes as f64 / 1e9,
        s.lake.display(),
        s.threads,
        load_average()
    );
    for f in &s.files {
        let len = fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        println!("  {:<16} {:>9.1} MB", file_name(f), len as f64 / 1e6);
    }
    settle_page_cache(&s.files)?;
    let peers: Vec<Peer> = Peer::ALL.into_iter().filter(|p| p.available()).collect();
    for p in Peer::ALL {
        if !peers.contains(&p) {
            println!(
                "peer unavailable: {} cannot be imported by python3",
                p.name()
            );
        }
    }
    println!("peer commands (python3 -c SCRIPT, each timing itself; the best of 3 warm runs):");
    for p in &peers {
        println!("--- {}\n{}", p.name(), p.script(&s.files, s.threads, 3));
    }

    // Warm page cache: the best of 3 runs.
    let (off, n_off) = best(3, || create(&s.lake, StatsColumns::None, s.threads))?;
    let (on, n_on) = best(3, || create(&s.lake, StatsColumns::All, s.threads))?;
    if n_off != s.rows || n_on != s.rows {
        bail!(
            "map create counted {n_off}/{n_on} rows, the generator wrote {}",
            s.rows
        );
    }
    let mut warm = Vec::new();
    for p in &peers {
        match p.run(&s.files, s.threads, 3) {
            Ok((rows, t)) => {
                if rows != s.rows {
                    println!("note: {} counted {rows} rows, bazan {}", p.name(), s.rows);
                }
                warm.push((*p, Some(t)));
            }
            Err(e) => {
                println!("note: {e:#}");
                warm.push((*p, None));
            }
        }
    }
    // Cold page cache: one run each after every file was dropped from the cache.
    drop_page_cache(&s.files)?;
    let (cold_off, _) = best(1, || create(&s.lake, StatsColumns::None, s.threads))?;
    drop_page_cache(&s.files)?;
    let (cold_on, _) = best(1, || create(&s.lake, StatsColumns::All, s.threads))?;
    let mut cold = Vec::new();
    for p in &peers {
        drop_page_cache(&s.files)?;
        cold.push((*p, p.run(&s.files, s.threads, 1).ok().map(|r| r.1)));
    }
    settle_page_cache(&s.files)?;
    println!();
    println!("map create vs counting every row (ratio = peer time / bazan time; > 1 is ahead):");
    report("warm, stats off", off, &warm);
    report("warm, default stats", on, &warm);
    let cpu_off = least_cpu(2, || create(&s.lake, StatsColumns::None, s.threads))?;
    let cpu_on = least_cpu(2, || create(&s.lake, StatsColumns::All, s.threads))?;
    println!(
        "  bazan CPU time (user+system, all threads; least of 2): stats off {cpu_off:.3}s, default stats {cpu_on:.3}s ({:.0} / {:.0} MB per CPU second)",
        bytes as f64 / 1e6 / cpu_off,
        bytes as f64 / 1e6 / cpu_on
    );
    report("cold, stats off", cold_off, &cold);
    report("cold, default stats", cold_on, &cold);

    // One big file: 1 thread vs 2 threads.
    let (big, big_rows) = &s.big_csv;
    println!();
    println!(
        "one file, {} ({:.1} MB, {big_rows} rows): 1 vs 2 threads",
        file_name(big),
        fs::metadata(big)?.len() as f64 / 1e6
    );
    let duck = peers.contains(&Peer::DuckDb);
    for stats in [StatsColumns::None, StatsColumns::All] {
        let label = if stats == StatsColumns::None {
            "stats off"
        } else {
            "default stats"
        };
        let options = lake_locators::IndexOptions {
            stats: stats.clone(),
            ..lake_locators::IndexOptions::default()
        };
        // 1 and 2 threads alternate, the best of three each: a slow spell of the machine
        // then weighs on both counts, not on one (back-to-back runs gave 1.43x where
        // alternating ones gave 1.88x on a noisy VM).
        let mut best_of = [Duration::MAX; 2];
        for _ in 0..3 {
            for (k, threads) in [1, 2].into_iter().enumerate() {
                let (t, n) = best(1, || {
                    on_threads(threads, || {
                        use lake_locators::Locator as _;
                        Ok(lake_locators::csv::DelimitedLocator
                            .index(big, &options)?
                            .row_count)
                    })
                })?;
                if n != *big_rows {
                    bail!(
                        "{}: indexed {n} rows, the generator wrote {big_rows}",
                        big.display()
                    );
                }
                best_of[k] = best_of[k].min(t);
            }
        }
        let mut times = Vec::new();
        for (k, threads) in [1, 2].into_iter().enumerate() {
            let t = best_of[k];
            let theirs = if duck {
                Peer::DuckDb
                    .run(std::slice::from_ref(big), threads, 3)
                    .ok()
                    .map(|r| r.1)
            } else {
                None
            };
            report(
                &format!("index, {label}, {threads} thread(s)"),
                t,
                &[(Peer::DuckDb, theirs)],
            );
            let cpu = least_cpu(2, || {
                on_threads(threads, || {
                    use lake_locators::Locator as _;
                    Ok(lake_locators::csv::DelimitedLocator.index(big, &options)?)
                })
            })?;
            println!(
                "  CPU time {cpu:.3}s: {:.0} MB per CPU second",
                fs::metadata(big)?.len() as f64 / 1e6 / cpu
            );
            times.push(t);
        }
        println!(
            "  {label}: 2 threads are {:.2}x faster than 1 (goal >= 1.8x)",
            times[0].as_secs_f64() / times[1].as_secs_f64()
        );
    }

    many_files(&s, duck)?;

    // Peak RSS of map create, in a child process each.
    println!();
    for (stats, label) in [("off", "stats off"), ("on", "default stats")] {
        let mb = peak_rss(&s.lake, s.threads, stats)?;
        let biggest = s
            .files
            .iter()
            .map(|p| fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .max()
            .unwrap_or(0);
        println!(
            "peak RSS of map create, {label}, {} threads: {mb:.1} MB (largest file {:.1} MB)",
            s.threads,
            biggest as f64 / 1e6
        );
    }

    // Deep 100-row slices (the map with default stats is on disk now).
    println!();
    let map = load_map(&s.lake)?;
    let registry = HandlerRegistry::builtin();
    for (file, rows) in [&s.big_csv, &s.big_ndjson] {
        let name = file_name(file);
        let local = rows * 85 / 100;
        let e = map.find(&name).context("file not in the map")?;
        let start = e.first_global_row + local;
        let (ours, got) = best(5, || {
            let m = load_map(&s.lake)?;
            let sl = m.slice(start, 100, None, &registry)?;
            Ok(sl
                .iter()
                .flat_map(|f| f.batches.iter())
                .map(RecordBatch::num_rows)
                .sum::<usize>())
        })?;
        if got != 100 {
            bail!("{name}: the slice returned {got} rows");
        }
        let theirs = if duck {
            lake_peers::duckdb_limit_offset(file, local, s.threads).ok()
        } else {
            None
        };
        report(
            &format!("100 rows at local {local} of {name} (load+slice)"),
            ours,
            &[(Peer::DuckDb, theirs)],
        );
    }
    update_after_one_change(&s.lake, s.threads)?;
    println!("load average at end: {}", load_average());
    println!();
    map_load_and_locate(&dir)?;
    super::lake_many::run(&dir)?;
    Ok(())
}

/// `map update` after one small file of the lake changed, against `map create` of the same
/// tree (default statistics, warm cache). The probe file is removed again afterwards and the
/// map brought back to the lake without it.
fn update_after_one_change(lake: &Path, threads: usize) -> anyhow::Result<()> {
    println!();
    let probe = lake.join("zz_update_probe.csv");
    fs::write(&probe, "id,v\n1,2\n")?;
    let files = create_map_with(lake, &CreateOptions::default())?
        .map
        .total_files();
    let (created, _) = best(3, || create(lake, StatsColumns::All, threads))?;
    // Each run grows the probe by one row: a new size, so the change is seen even when the
    // file system's clock (a few ms on Linux) gives the write the mtime of the last one. Only
    // the update is timed.
    let mut updated = Duration::MAX;
    for version in 1..=5u64 {
        let mut text = String::from("id,v\n");
        for r in 0..=version {
            text.push_str(&format!("{r},3\n"));
        }
        fs::write(&probe, text)?;
        let started = Instant::now();
        on_threads(threads, || {
            let report = update_map_with(lake, &UpdateOptions::default())?;
            if report.modified.len() != 1 || report.kept + 1 != files {
                bail!(
                    "update re-indexed {:?} and kept {} of {files} files",
                    report.modified,
                    report.kept
                );
            }
            Ok(report.map.total_rows())
        })?;
        updated = updated.min(started.elapsed());
    }
    println!(
        "map update after one small file changed ({files} files): {:.4}s vs map create {:.3}s: {:.0}x faster (goal >= 10x)",
        updated.as_secs_f64(),
        created.as_secs_f64(),
        created.as_secs_f64() / updated.as_secs_f64()
    );
    fs::remove_file(&probe)?;
    update_map_with(lake, &UpdateOptions::default())?;
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn map_load_and_locate(dir: &Path) -> anyhow::Result<()> {
    let root = dir.join("map100k");
    fs::create_dir_all(&root)?;
    let mut entries: Vec<MapEntry> = (0..100_000u64)
        .map(|i| MapEntry {
            path: format!("year={}/month={:02}/part-{i:06}.parquet", 2000 + i / 5000, i % 12 + 1),
            format: "parquet".into(),
            size_bytes: 1_000_000 + i,
            mtime_ms: 1_764_400_000_000 + i as i64,
            row_count: 1000 + i % 977,
            first_global_row: 0,
            row_groups_json: format!(
                r#"[{{"ordinal":0,"first_row":0,"row_count":{},"first_byte":4,"total_byte_size":90000,"compressed_size":80000,"columns":null}}]"#,
                1000 + i % 977
            ),
            blake3: None,
            stats_json: Some(format!(r#"{{"id":{{"min":{i},"max":{}}}}}"#, i + 999)),
            schema_json: Some(r#"[{"name":"id","nullable":false,"type":"int64"}]"#.into()),
        })
        .collect();
    assign_first_global_rows(&mut entries);
    let map = LakeMap::from_entries(&root, MapConfig::default(), &entries)?;
    let path = root.join(".br_map.bazan");
    write_map_to(&map, &path)?;
    let size = fs::metadata(&path)?.len();
    let (load, m) = best(20, || Ok(load_map_file(&root, &path)?))?;
    println!(
        "{:<44} {:>9.3}ms {:>12} {:>8}  (goal <= 5 ms; map file {:.1} MB)",
        "load a 100,000-entry map (mmap, zero-copy)",
        load.as_secs_f64() * 1e3,
        "-",
        "-",
        size as f64 / 1e6
    );
    let total = m.total_rows();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rows = Vec::with_capacity(1_000_000);
    for _ in 0..1_000_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rows.push(x % total);
    }
    // The first pass parses (and caches) each touched entry's blocks.
    let mut sink = 0u64;
    for &g in &rows {
        sink = sink.wrapping_add(m.locate_row(g)?.local_row);
    }
    let (t, s) = best(3, || {
        let mut s = 0u64;
        for &g in &rows {
            s = s.wrapping_add(m.locate_row(g)?.local_row);
        }
        Ok(s)
    })?;
    let (t_idx, _) = best(3, || {
        let mut s = 0u64;
        for &g in &rows {
            s = s.wrapping_add(m.locate_index(g)?.1);
        }
        Ok(s)
    })?;
    // What a caller that also wants the file pays: the entry's fields read from the map.
    let (t_entry, _) = best(3, || {
        let mut s = 0u64;
        for &g in &rows {
            let l = m.locate_row(g)?;
            s = s.wrapping_add(l.entry().path.len() as u64 + l.local_row);
        }
        Ok(s)
    })?;
    anyhow::ensure!(s == sink, "locate_row is not deterministic");
    println!(
        "{:<44} {:>8.1}ns {:>12} {:>8}  (goal <= 1 us; binary search alone {:.1} ns)",
        "locate_row, 1M random rows (per call)",
        t.as_secs_f64() * 1e9 / 1e6,
        "-",
        "-",
        t_idx.as_secs_f64() * 1e9 / 1e6
    );
    println!(
        "{:<44} {:>8.1}ns {:>12} {:>8}",
        "locate_row + entry(), 1M random rows",
        t_entry.as_secs_f64() * 1e9 / 1e6,
        "-",
        "-",
    );
    Ok(())
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("code", DataType::Utf8, false),
        Field::new("v", DataType::Int64, true),
        Field::new("x", DataType::Float64, true),
    ]))
}

/// Puts the lake's files in the page cache as a lake read from disk has them: each file is
/// dropped from the cache and read back once. Files the generator has just written sit in
/// the cache as the write path left them (on Linux 6.x often as 4 KiB pages), which every
/// memory map of them pays for page by page; read back, readahead caches them in large
/// folios, as any file read from disk. Both tools are then measured on the same warm cache.
fn settle_page_cache(files: &[PathBuf]) -> anyhow::Result<()> {
    if drop_page_cache(files)? {
        use std::io::Read;
        let mut buf = vec![0u8; 1 << 20];
        for f in files {
            let mut file = File::open(f)?;
            while file.read(&mut buf)? > 0 {}
        }
        println!("page cache: every file dropped and read back once (as from disk)");
    }
    Ok(())
}

/// Drops every file from the page cache (a cold cache: the next read comes from the disk);
/// false when the kernel refused (the figures are then warm ones).
fn drop_page_cache(files: &[PathBuf]) -> anyhow::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        for f in files {
            let file = File::open(f)?;
            // Written pages must be clean before they can be dropped.
            file.sync_all()?;
            // SAFETY: a plain system call on an open descriptor; it only advises the kernel.
            let err =
                unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            if err != 0 {
                println!(
                    "page cache: posix_fadvise failed on {} (error {err}); left as it is",
                    f.display()
                );
                return Ok(false);
            }
        }
        Ok(true)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = files;
        Ok(false)
    }
}

/// The rows of the generated lake, from a deterministic generator.
struct Gen(crate::rng::XorShift);

impl Gen {
    fn row(&mut self) -> (String, i64, f64) {
        let r = self.0.next_u64();
        let code = format!(
            "c{:03}-{}",
            r % 997,
            ["abcd", "wxyz", "mnop", "qrst"][(r >> 20) as usize % 4]
        );
        let v = ((r >> 8) % 2_000_001) as i64 - 1_000_000;
        let x = (((r >> 30) % 2_000_000) as f64 - 1_000_000.0) / 100.0;
        (code, v, x)
    }
}

pub(crate) fn generate(lake: &Path) -> anyhow::Result<()> {
    let marker = lake.join(".generated");
    if fs::read_to_string(&marker).is_ok_and(|s| s == VERSION) {
        return Ok(());
    }
    if lake.exists() {
        fs::remove_dir_all(lake)?;
    }
    fs::create_dir_all(lake)?;
    println!("generating the bench lake at {} (once)...", lake.display());
    let mut gid = 0i64;
    let mut g = Gen(crate::rng::XorShift(0x9e37_79b9_7f4a_7c15));
    for (name, rows) in FILES {
        let path = lake.join(name);
        let ext = name.rsplit('.').next().unwrap_or("");
        match ext {
            "csv" | "ndjson" => {
                let mut w = BufWriter::with_capacity(1 << 20, File::create(&path)?);
                if ext == "csv" {
                    writeln!(w, "id,code,v,x")?;
                }
                for _ in 0..*rows {
                    let (code, v, x) = g.row();
                    if ext == "csv" {
                        writeln!(w, "{gid},{code},{v},{x}")?;
                    } else {
                        writeln!(w, r#"{{"id":{gid},"code":"{code}","v":{v},"x":{x}}}"#)?;
                    }
                    gid += 1;
                }
                w.flush()?;
            }
            _ => {
                let file = File::create(&path)?;
                let mut batches = Vec::new();
                let mut left = *rows;
                while left > 0 {
                    let n = left.min(250_000);
                    let mut ids = Vec::with_capacity(n as usize);
                    let mut codes = Vec::with_capacity(n as usize);
                    let mut vs = Vec::with_capacity(n as usize);
                    let mut xs = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        let (code, v, x) = g.row();
                        ids.push(gid);
                        codes.push(code);
                        vs.push(v);
                        xs.push(x);
                        gid += 1;
                    }
                    let cols: Vec<ArrayRef> = vec![
                        Arc::new(Int64Array::from(ids)),
                        Arc::new(StringArray::from(codes)),
                        Arc::new(Int64Array::from(vs)),
                        Arc::new(Float64Array::from(xs)),
                    ];
                    batches.push(RecordBatch::try_new(schema(), cols)?);
                    left -= n;
                }
                if ext == "parquet" {
                    use parquet::file::properties::WriterProperties;
                    let props = WriterProperties::builder()
                        .set_compression(parquet::basic::Compression::SNAPPY)
                        .set_max_row_group_row_count(Some(500_000))
                        .build();
                    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema(), Some(props))?;
                    for b in &batches {
                        w.write(b)?;
                    }
                    w.close()?;
                } else {
                    let mut w =
                        arrow_ipc::writer::FileWriter::try_new(BufWriter::new(file), &schema())?;
                    for b in &batches {
                        w.write(b)?;
                    }
                    w.finish()?;
                }
            }
        }
    }
    fs::write(marker, VERSION)?;
    Ok(())
}
