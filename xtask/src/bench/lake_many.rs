//! The many-small-files figures of `cargo xtask bench lake` (`BAZAN_BENCH_LAKE=many` runs
//! only these): a lake of tens of thousands of files of 2-6 KB in 97 × 31 nested folders, a
//! third each quoted CSV, nested NDJSON and Parquet, the shape a partitioned lake written by
//! many small jobs takes. Where a big file's cost is its bytes, here it is what the lake pays
//! per file: the walk, opening and reading each file, one map entry each.
//!
//! Figures, at 30,000 and 100,000 files (`--files N[,N…]` picks others), warm cache, every
//! tool on the same threads: `map create` against DuckDB `count(*)` over one glob per format
//! (its exact script printed, run in the same process run), with the CPU time split into user
//! and system; `map update` with nothing changed and with one file changed; the map's bytes
//! per file; loading the map (and decoding every entry); `bazan locate LAKE ROW` as a process
//! (the release binary built by `timing::release_bazan`, wall and CPU time, with `bazan
//! --version` as the floor of a process start); the Lake Doctor in metadata mode; and
//! each of them per file, from which a million files is worked out on paper
//! (`docs/benchmarks.md`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use lake_map::{CreateOptions, UpdateOptions, create_map_with, load_map, update_map_with};
use rayon::prelude::*;

use super::timing::best;
use crate::rng::XorShift;

/// Top-level folders, and folders in each.
pub const DIRS: (usize, usize) = (97, 31);

/// Bumped whenever the generator changes, so an old lake is generated again.
const VERSION: &str = "many-v1";

/// The file counts measured when `--files` is not given.
const DEFAULT_FILES: &[usize] = &[30_000, 100_000];

/// A generated lake.
#[derive(Debug, Clone)]
pub struct ManyLake {
    /// Its root.
    pub root: PathBuf,
    /// Data files.
    pub files: usize,
    /// Rows in all of them.
    pub rows: u64,
    /// Bytes in all of them.
    pub bytes: u64,
}

/// The relative path of file `k`: `dAA/eBB/part-KKKKKK.EXT`, the extension by `k % 3`.
pub fn file_path(k: usize) -> String {
    let (a, b) = DIRS;
    let ext = ["csv", "ndjson", "parquet"][k % 3];
    format!("d{:02}/e{:02}/part-{k:06}.{ext}", k % a, (k / a) % b)
}

/// The bytes and rows of file `k` (deterministic: its own generator, seeded by `k`).
fn file_bytes(k: usize) -> anyhow::Result<(Vec<u8>, u64)> {
    let mut g = XorShift(0x9e37_79b9_7f4a_7c15 ^ ((k as u64 + 1).wrapping_mul(0x2545_f491)));
    let target = 2_000 + g.below(4_001);
    let mut out = Vec::with_capacity(target as usize + 1024);
    let rows = match k % 3 {
        0 => super::lake_data::quoted_csv_to(&mut out, target, &mut g)?,
        1 => super::lake_data::events_ndjson_to(&mut out, target, &mut g)?,
        _ => {
            // About 45 bytes per row after the footer's ~1.3 KB.
            let rows = (target.saturating_sub(1_300) / 45).max(1);
            let batches = super::lake_data::columnar_batches(rows, rows, &mut g)?;
            let mut w = parquet::arrow::ArrowWriter::try_new(
                &mut out,
                super::lake_data::columnar_schema(),
                None,
            )?;
            for b in &batches {
                w.write(b)?;
            }
            w.close()?;
            rows
        }
    };
    Ok((out, rows))
}

/// Generates the lake of `files` files at `root` unless it is there already (a marker file
/// records the version and the totals).
pub fn generate(root: &Path, files: usize) -> anyhow::Result<ManyLake> {
    let marker = root.join(".generated");
    let stamp = format!("{VERSION} {files}");
    if let Ok(s) = fs::read_to_string(&marker)
        && let Some(rest) = s.strip_prefix(&format!("{stamp}\n"))
    {
        let v: Vec<u64> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if let [rows, bytes] = v[..] {
            return Ok(ManyLake {
                root: root.to_path_buf(),
                files,
                rows,
                bytes,
            });
        }
    }
    if root.exists() {
        fs::remove_dir_all(root)?;
    }
    println!(
        "generating {files} small files in {} x {} folders at {} (once)...",
        DIRS.0,
        DIRS.1,
        root.display()
    );
    for a in 0..DIRS.0 {
        for b in 0..DIRS.1 {
            fs::create_dir_all(root.join(format!("d{a:02}/e{b:02}")))?;
        }
    }
    let made: Vec<(u64, u64)> = (0..files)
        .into_par_iter()
        .map(|k| -> anyhow::Result<(u64, u64)> {
            let (bytes, rows) = file_bytes(k)?;
            let path = root.join(file_path(k));
            fs::write(&path, &bytes).with_context(|| path.display().to_string())?;
            Ok((rows, bytes.len() as u64))
        })
        .collect::<anyhow::Result<_>>()?;
    let rows = made.iter().map(|m| m.0).sum();
    let bytes = made.iter().map(|m| m.1).sum();
    fs::write(&marker, format!("{stamp}\n{rows} {bytes}\n"))?;
    Ok(ManyLake {
        root: root.to_path_buf(),
        files,
        rows,
        bytes,
    })
}

/// DuckDB's script counting the lake's rows through one glob per format, on `threads`
/// threads: the best of `runs` runs.
pub fn duckdb_script(root: &Path, threads: usize, runs: usize) -> String {
    let d = root.display();
    format!(
        "import time\n{}best = 1e9\nfor _ in range({runs}):\n    t = time.perf_counter()\n    n = con.execute(\"select count(*) from read_csv('{d}/**/*.csv', header=true)\").fetchone()[0]\n    n += con.execute(\"select count(*) from read_json('{d}/**/*.ndjson', format='newline_delimited')\").fetchone()[0]\n    n += con.execute(\"select count(*) from read_parquet('{d}/**/*.parquet')\").fetchone()[0]\n    best = min(best, time.perf_counter() - t)\nprint(n)\nprint(best)\n",
        super::timing::duckdb_connect(threads)
    )
}

/// User and system CPU seconds of this process so far.
fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage writes the struct it is given and nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return (0.0, 0.0);
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(u.ru_utime), s(u.ru_stime))
}

/// The best wall time of `runs` runs of `f`, with the user and system CPU seconds of that
/// run and its result.
fn best_with_cpu<T>(
    runs: usize,
    mut f: impl FnMut() -> anyhow::Result<T>,
) -> anyhow::Result<(Duration, (f64, f64), T)> {
    let mut out: Option<(Duration, (f64, f64), T)> = None;
    for _ in 0..runs {
        let (u0, s0) = cpu_times();
        let t = Instant::now();
        let v = f()?;
        let d = t.elapsed();
        let (u1, s1) = cpu_times();
        if out.as_ref().is_none_or(|(b, _, _)| d < *b) {
            out = Some((d, (u1 - u0, s1 - s0), v));
        }
    }
    out.context("no run")
}

/// User plus system CPU seconds of this process's waited-for children so far.
fn children_cpu() -> f64 {
    // SAFETY: getrusage writes the struct it is given and nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_CHILDREN is always valid.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return 0.0;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// Wall and CPU times of `runs` runs of one process.
struct ProcessTimes {
    best: Duration,
    median: Duration,
    /// The least and the median CPU time (user + system) of a run.
    cpu_best: Duration,
    cpu_median: Duration,
}

/// The times of `runs` runs of the process `bin args`, which must succeed.
fn process_times(bin: &Path, args: &[&str], runs: usize) -> anyhow::Result<ProcessTimes> {
    let mut times = Vec::with_capacity(runs);
    let mut cpu = Vec::with_capacity(runs);
    for _ in 0..runs {
        let c0 = children_cpu();
        let t = Instant::now();
        let out = Command::new(bin).args(args).output()?;
        times.push(t.elapsed());
        cpu.push(Duration::from_secs_f64((children_cpu() - c0).max(0.0)));
        if !out.status.success() {
            bail!(
                "{} {} failed: {}",
                bin.display(),
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    times.sort();
    cpu.sort();
    Ok(ProcessTimes {
        best: times[0],
        median: times[runs / 2],
        cpu_best: cpu[0],
        cpu_median: cpu[runs / 2],
    })
}

/// Runs `f` on a pool of `threads` threads.
fn on_threads<T: Send>(
    threads: usize,
    f: impl FnOnce() -> anyhow::Result<T> + Send,
) -> anyhow::Result<T> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?
        .install(f)
}

/// Runs the figures at every file count asked for.
pub fn run(dir: &Path) -> anyhow::Result<()> {
    let threads = match super::option("threads") {
        Some(t) => t.parse().context("--threads takes a number")?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let counts: Vec<usize> = match super::option("files") {
        Some(list) => list
            .split(',')
            .map(|n| n.trim().replace('_', "").parse())
            .collect::<Result<_, _>>()
            .context("--files takes numbers like 30000,100000")?,
        None => DEFAULT_FILES.to_vec(),
    };
    let duck = super::timing::python_imports("duckdb");
    if !duck {
        println!("peer unavailable: DuckDB cannot be imported by python3");
    }
    for n in counts {
        let lake = generate(&dir.join(format!("many-{n}")), n)?;
        one(&lake, threads, duck)?;
    }
    Ok(())
}

/// The figures of one lake.
fn one(lake: &ManyLake, threads: usize, duck: bool) -> anyhow::Result<()> {
    let root = &lake.root;
    let n = lake.files as f64;
    println!();
    println!(
        "many small files: {} files ({} x {} folders, a third each quoted CSV, nested NDJSON, Parquet), {} rows, {:.1} MB, {threads} threads for every tool",
        lake.files,
        DIRS.0,
        DIRS.1,
        lake.rows,
        lake.bytes as f64 / 1e6
    );
    let create = || {
        on_threads(threads, || {
            let m = create_map_with(root, &CreateOptions::default())?.map;
            Ok(m.total_rows())
        })
    };
    // The first run reads every file into the page cache.
    create()?;
    let (t_create, (user_create, sys_create), rows) = best_with_cpu(3, create)?;
    ensure!(
        rows == lake.rows,
        "map create counted {rows} rows, the generator wrote {}",
        lake.rows
    );
    let map_bytes = fs::metadata(root.join(".br_map.bazan"))?.len();
    let mut line = format!(
        "  map create (default stats, warm, best of 3) {:>8.3}s  (user {user_create:.2}s, system {sys_create:.2}s; {:.1} us per file)",
        t_create.as_secs_f64(),
        t_create.as_secs_f64() * 1e6 / n
    );
    if duck {
        let script = duckdb_script(root, threads, 3);
        println!("  DuckDB (python3 -c SCRIPT, timing itself, the best of 3):\n{script}");
        match super::lake_peers::run_counting_script("DuckDB", &script) {
            Ok((duck_rows, t)) => {
                if duck_rows != lake.rows {
                    println!(
                        "  note: DuckDB counted {duck_rows} rows, bazan {}",
                        lake.rows
                    );
                }
                line.push_str(&format!(
                    "\n  DuckDB count(*), one glob per format      {:>8.3}s  bazan is {:.2}x faster (goal >= 3x)",
                    t.as_secs_f64(),
                    t.as_secs_f64() / t_create.as_secs_f64()
                ));
            }
            Err(e) => line.push_str(&format!("\n  note: {e:#}")),
        }
    }
    println!("{line}");
    println!(
        "  map file                                   {:>8.1} MB  {:.0} bytes per file (goal <= 200)",
        map_bytes as f64 / 1e6,
        map_bytes as f64 / n
    );

    // Update with nothing changed.
    let update = |expect_modified: usize| {
        on_threads(threads, || {
            let r = update_map_with(root, &UpdateOptions::default())?;
            if r.modified.len() != expect_modified || !r.added.is_empty() || !r.removed.is_empty() {
                bail!(
                    "update re-indexed {:?}, added {} and removed {} files",
                    r.modified,
                    r.added.len(),
                    r.removed.len()
                );
            }
            Ok(r.map.total_rows())
        })
    };
    let (t_none, (user, sys), _) = best_with_cpu(5, || update(0))?;
    println!(
        "  map update, nothing changed (best of 5)    {:>8.4}s  (goal <= 0.050 s; {:.2} us per file; CPU user {:.3}s + system {:.3}s)",
        t_none.as_secs_f64(),
        t_none.as_secs_f64() * 1e6 / n,
        user,
        sys
    );
    // Update with one CSV file changed: each run adds a row to it (a new size, so the change
    // is seen whatever the file system's clock); only the update is timed.
    let probe = root.join(file_path(0));
    let original = fs::read(&probe)?;
    let mut t_one = Duration::MAX;
    let mut cpu_one = f64::MAX;
    for version in 1..=5 {
        let mut text = original.clone();
        for r in 0..version {
            text.extend_from_slice(
                format!("{r},2026-01-01T00:00:00Z,cust-000001,1.00,1,true,,FR,0.000\r\n")
                    .as_bytes(),
            );
        }
        fs::write(&probe, &text)?;
        let (u0, s0) = cpu_times();
        let t = Instant::now();
        update(1)?;
        let d = t.elapsed();
        let (u1, s1) = cpu_times();
        if d < t_one {
            t_one = d;
            cpu_one = (u1 - u0) + (s1 - s0);
        }
    }
    fs::write(&probe, &original)?;
    update(1)?;
    println!(
        "  map update, one file changed (best of 5)   {:>8.4}s  create is {:.1}x slower (goal >= 10x); CPU {:.3}s, create's {:.3}s: {:.1}x",
        t_one.as_secs_f64(),
        t_create.as_secs_f64() / t_one.as_secs_f64(),
        cpu_one,
        user_create + sys_create,
        (user_create + sys_create) / cpu_one
    );
    // The update splices the old file: record batches after a change in row count keep their
    // first rows uncompressed. The load, locate and doctor below read this map.
    let spliced_bytes = fs::metadata(root.join(".br_map.bazan"))?.len();
    println!(
        "  map file after the updates                 {:>8.1} MB  {:.0} bytes per file",
        spliced_bytes as f64 / 1e6,
        spliced_bytes as f64 / n
    );

    // Load, locate as a process, doctor.
    let (t_load, m) = best(20, || Ok(load_map(root)?))?;
    let (t_check, _) = best(20, || {
        let m = load_map(root)?;
        m.check_entries()?;
        Ok(m)
    })?;
    println!(
        "  load the map (best of 20)                  {:>8.3}ms ({:.1} ns per file); with every entry decoded and checked (what update and doctor read) {:.3} ms ({:.1} ns per file)",
        t_load.as_secs_f64() * 1e3,
        t_load.as_secs_f64() * 1e9 / n,
        t_check.as_secs_f64() * 1e3,
        t_check.as_secs_f64() * 1e9 / n
    );
    let bin = super::timing::release_bazan(&[])?;
    let row = (lake.rows / 2).to_string();
    let root_s = root.display().to_string();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let locate = process_times(&bin, &["locate", &root_s, &row], 30)?;
    let version = process_times(&bin, &["--version"], 30)?;
    println!(
        "  bazan locate LAKE {row} (process, 30 runs)  wall best {:.2} ms, median {:.2} ms; CPU best {:.2} ms, median {:.2} ms (goal <= 3 ms)",
        ms(locate.best),
        ms(locate.median),
        ms(locate.cpu_best),
        ms(locate.cpu_median)
    );
    println!(
        "  bazan --version (process, 30 runs)         wall best {:.2} ms, median {:.2} ms; CPU best {:.2} ms, median {:.2} ms",
        ms(version.best),
        ms(version.median),
        ms(version.cpu_best),
        ms(version.cpu_median)
    );
    let doctor = lake_doctor::DoctorOptions::default();
    let (t_doc, _) = best(3, || {
        let r = on_threads(threads, || Ok(lake_doctor::diagnose(&m, &doctor)?))?;
        ensure!(
            r.modified.is_empty() && r.missing.is_empty() && r.unindexed.is_empty(),
            "the doctor finds the lake changed"
        );
        Ok(())
    })?;
    println!(
        "  doctor, metadata mode (best of 3)          {:>8.4}s  ({:.2} us per file)",
        t_doc.as_secs_f64(),
        t_doc.as_secs_f64() * 1e6 / n
    );
    println!(
        "  per file: create {:.1} us, update (none changed) {:.2} us, load {:.1} ns, doctor {:.2} us, map {:.0} bytes",
        t_create.as_secs_f64() * 1e6 / n,
        t_none.as_secs_f64() * 1e6 / n,
        t_load.as_secs_f64() * 1e9 / n,
        t_doc.as_secs_f64() * 1e6 / n,
        map_bytes as f64 / n
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files spread over the folders, a third of each format, each between 2 and about
    /// 6.5 KB, and the same bytes on every call.
    #[test]
    fn files_have_the_shape_asked_for() {
        for k in 0..30 {
            let (bytes, rows) = match file_bytes(k) {
                Ok(b) => b,
                Err(e) => panic!("file {k}: {e:#}"),
            };
            assert!(rows > 0, "file {k}");
            assert!(
                (1_900..=6_600).contains(&bytes.len()),
                "file {k}: {} bytes",
                bytes.len()
            );
            match file_bytes(k) {
                Ok((again, _)) => assert_eq!(again, bytes, "file {k}"),
                Err(e) => panic!("file {k}: {e:#}"),
            }
        }
        assert_eq!(file_path(0), "d00/e00/part-000000.csv");
        assert_eq!(file_path(98), "d01/e01/part-000098.parquet");
        assert_eq!(file_path(97 * 31 + 1), "d01/e00/part-003008.parquet");
    }
}
