//! `cargo xtask bench locators`, row formats: indexing throughput of the CSV and NDJSON
//! locators with statistics off and on, and a 100-row read at a deep offset (checkpoint seek,
//! structural skip, parse of the wanted rows only), side by side with DuckDB's `count(*)` and
//! `LIMIT 100 OFFSET k` on the same files in the same run.
//!
//! The files (over 200 MB each) are generated once under `target/bench-data/` (git-ignored)
//! and reused while their size matches.

use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use lake_locators::csv::DelimitedLocator;
use lake_locators::json::JsonLocator;
use lake_locators::{FileIndex, IndexOptions, Locator, ReadRequest, StatsColumns};

/// Rows of each generated file (about 210 MB of CSV and 370 MB of NDJSON).
const ROWS: u64 = 6_200_000;

/// Runs the row-format half of the benchmark.
pub fn run() -> anyhow::Result<()> {
    let dir = crate::workspace_root().join("target").join("bench-data");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let csv = dir.join("rows.csv");
    let ndjson = dir.join("rows.ndjson");
    generate(&csv, false)?;
    generate(&ndjson, true)?;
    let peer = super::timing::python_imports("duckdb");
    if !peer {
        println!("peer unavailable: DuckDB (pip install duckdb) cannot be imported by python3");
    }
    for (path, locator, reader) in [
        (&csv, &DelimitedLocator as &dyn Locator, "read_csv"),
        (&ndjson, &JsonLocator as &dyn Locator, "read_json"),
    ] {
        bench_file(path, locator, reader, peer)?;
    }
    Ok(())
}

/// Writes `ROWS` rows (`gid`, `code`, `v` with some nulls, `x`) unless a file of the same
/// content size is already there.
fn generate(path: &Path, json: bool) -> anyhow::Result<()> {
    let marker = path.with_extension(format!(
        "{}.rows{ROWS}",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    if path.is_file() && marker.is_file() {
        return Ok(());
    }
    let started = Instant::now();
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    if !json {
        writeln!(out, "gid,code,v,x")?;
    }
    // A small deterministic generator (xorshift), so that runs compare the same bytes.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut code = String::new();
    for gid in 0..ROWS {
        let r = next();
        code.clear();
        code.push('k');
        for i in 0..(2 + r % 6) {
            code.push(char::from(LETTERS[((r >> (8 + 5 * i)) % 36) as usize]));
        }
        let v = (r >> 32) as i64 % 200_000 - 100_000;
        let x = ((r >> 20) % 2_000_000) as f64 / 100.0 - 10_000.0;
        let null_v = r % 20 == 0;
        if json {
            if null_v {
                writeln!(
                    out,
                    "{{\"gid\":{gid},\"code\":\"{code}\",\"v\":null,\"x\":{x}}}"
                )?;
            } else {
                writeln!(
                    out,
                    "{{\"gid\":{gid},\"code\":\"{code}\",\"v\":{v},\"x\":{x}}}"
                )?;
            }
        } else if null_v {
            writeln!(out, "{gid},{code},,{x}")?;
        } else {
            writeln!(out, "{gid},{code},{v},{x}")?;
        }
    }
    out.flush()?;
    std::fs::write(&marker, b"")?;
    println!(
        "generated {} ({:.0} MB) in {:.1} s",
        path.display(),
        size(path)? as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn size(path: &Path) -> anyhow::Result<u64> {
    Ok(std::fs::metadata(path)?.len())
}

/// CPU seconds this thread has used (user + system, from `/proc/thread-self/stat`), so that
/// "per core" figures hold on a machine shared with other jobs; `None` off Linux.
fn thread_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on every Linux configuration in practice.
    Some(ticks as f64 / 100.0)
}

/// The best of `n` runs of `f` (the page cache is warm after the first): wall time and the
/// thread's CPU seconds of that run.
fn best_of<T>(
    n: usize,
    mut f: impl FnMut() -> anyhow::Result<T>,
) -> anyhow::Result<(Duration, Option<f64>, T)> {
    let mut best: Option<(Duration, Option<f64>, T)> = None;
    for _ in 0..n {
        let cpu0 = thread_cpu();
        let t = Instant::now();
        let v = f()?;
        let d = t.elapsed();
        let cpu = thread_cpu().zip(cpu0).map(|(b, a)| b - a);
        if best.as_ref().is_none_or(|(b, _, _)| d < *b) {
            best = Some((d, cpu, v));
        }
    }
    best.context("no run")
}

/// `" (thread CPU ...)"` throughput for a CPU time, or nothing.
fn per_cpu(bytes: u64, cpu: Option<f64>, unit: f64, name: &str) -> String {
    match cpu {
        Some(c) if c > 0.0 => format!(
            " (thread CPU {c:.2} s = {:.2} {name})",
            bytes as f64 / unit / c
        ),
        _ => String::new(),
    }
}

fn index(locator: &dyn Locator, path: &Path, stats: StatsColumns) -> anyhow::Result<FileIndex> {
    Ok(locator.index(
        path,
        &IndexOptions {
            stats,
            ..IndexOptions::default()
        },
    )?)
}

fn bench_file(path: &Path, locator: &dyn Locator, reader: &str, peer: bool) -> anyhow::Result<()> {
    let bytes = size(path)?;
    let gb = bytes as f64 / 1e9;
    println!("-- {} ({:.0} MB)", path.display(), bytes as f64 / 1e6);
    let (off, off_cpu, idx) = best_of(3, || index(locator, path, StatsColumns::None))?;
    let (on, on_cpu, _) = best_of(3, || index(locator, path, StatsColumns::All))?;
    if idx.row_count != ROWS {
        bail!(
            "{}: indexed {} rows, wrote {ROWS}",
            path.display(),
            idx.row_count
        );
    }
    let off_gbs = gb / off.as_secs_f64();
    let on_mbs = bytes as f64 / 1e6 / on.as_secs_f64();
    println!(
        "index, stats off: {:.3} s = {off_gbs:.2} GB/s{} (goal >= 1 GB/s); {} checkpoints",
        off.as_secs_f64(),
        per_cpu(bytes, off_cpu, 1e9, "GB/s"),
        idx.blocks.len()
    );
    println!(
        "index, stats on:  {:.3} s = {on_mbs:.0} MB/s{} (goal >= 250 MB/s)",
        on.as_secs_f64(),
        per_cpu(bytes, on_cpu, 1e6, "MB/s")
    );
    // A deep offset that is not on a checkpoint, so the read skips almost a whole stride.
    let k = ROWS * 9 / 10 + 65_000;
    let mut reads = Vec::new();
    let mut rows = 0;
    for _ in 0..31 {
        let request = ReadRequest {
            rows: k..k + 100,
            blocks: Some(&idx.blocks),
            schema: Some(idx.schema.clone()),
            projection: None,
            batch_size: 0,
        };
        let t = Instant::now();
        rows = 0;
        for batch in locator.read(path, &request)? {
            rows += batch?.num_rows();
        }
        reads.push(t.elapsed());
    }
    reads.sort();
    let ours = reads[reads.len() / 2];
    if rows != 100 {
        bail!("{}: the deep read returned {rows} rows", path.display());
    }
    println!(
        "100 rows at offset {k}: {:.3} ms (median of {})",
        ours.as_secs_f64() * 1e3,
        reads.len()
    );
    if !peer {
        return Ok(());
    }
    let duck = duckdb(path, reader, k)?;
    let count_gbs = gb / duck.count;
    println!(
        "DuckDB {reader} count(*), 1 thread: {:.3} s = {count_gbs:.2} GB/s -> ours (stats off) {:.1}x",
        duck.count,
        off_gbs / count_gbs
    );
    println!(
        "DuckDB {reader} LIMIT 100 OFFSET {k}, 1 thread: {:.1} ms -> ours {:.0}x faster (goal >= 50x)",
        duck.offset * 1e3,
        duck.offset / ours.as_secs_f64()
    );
    Ok(())
}

struct Duck {
    /// Seconds of the best `count(*)`.
    count: f64,
    /// Seconds of the best `LIMIT 100 OFFSET k`.
    offset: f64,
}

/// Times DuckDB on the same file: `count(*)` and `LIMIT 100 OFFSET k`, best of 3 each, one
/// thread (the goals are per core).
fn duckdb(path: &Path, reader: &str, k: u64) -> anyhow::Result<Duck> {
    const SCRIPT: &str = r#"
import duckdb, sys, time
path, reader, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
con = duckdb.connect()
con.execute("SET threads=1")
con.execute("SET enable_progress_bar=false")
def best(sql):
    b = None
    for _ in range(3):
        t = time.perf_counter()
        rows = con.execute(sql).fetchall()
        d = time.perf_counter() - t
        b = d if b is None or d < b else b
    return b, rows
src = f"{reader}('{path}')"
count, rows = best(f"SELECT count(*) FROM {src}")
offset, got = best(f"SELECT * FROM {src} LIMIT 100 OFFSET {k}")
assert len(got) == 100, len(got)
print(count, offset, rows[0][0])
"#;
    let file: PathBuf = path.to_path_buf();
    let out = Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(&file)
        .arg(reader)
        .arg(k.to_string())
        .output()
        .context("cannot run python3")?;
    if !out.status.success() {
        bail!("DuckDB failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // The figures are the last line (anything DuckDB printed before is ignored).
    let last = text.lines().last().unwrap_or_default();
    let parts: Vec<&str> = last.split_whitespace().collect();
    let [count, offset, rows] = parts.as_slice() else {
        bail!("unexpected DuckDB output {text:?}");
    };
    if rows.parse::<u64>()? != ROWS {
        bail!("DuckDB counted {rows} rows, we wrote {ROWS}");
    }
    Ok(Duck {
        count: count.parse()?,
        offset: offset.parse()?,
    })
}
