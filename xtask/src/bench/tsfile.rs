//! `cargo xtask bench tsfile`: our TsFile reader next to the official one (the Python package
//! `tsfile` 2.5.0 over its C++ core) in the same run, on two corpus files:
//!
//! * full read of `large` (4 devices × 50,000 rows × 5 fields = 1,000,000 points) into Arrow:
//!   ours `TsFileReader::open` + `query_table` (all columns, batches of 65,536); the peer
//!   `TsFileReader(path)` + `query_table(table, columns, batch_size=65536)` +
//!   `read_arrow_batch()` until the end;
//! * open + list devices + all series metadata of `table_many_devices` (300 devices): ours
//!   `open` + `devices()` + `timeseries()` of each; the peer `TsFileReader(path)` +
//!   `get_all_devices()` + `get_timeseries_metadata()`;
//! * the same full read as a process: `bazan tsfile query large.tsfile --table telemetry
//!   --format arrow > /dev/null` (the release binary, built here if needed), wall time from
//!   spawn to exit, next to the official reader's in-process figure; and `bazan --version`,
//!   the floor of any process (start-up and exit).
//!
//! Each figure is the best of several runs; the load average before and after is printed.
//! The peer is installed with pip when missing; when it cannot be imported the bench prints
//! "peer unavailable" and our figures only.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use tsfile_index::TsFileReader;
use tsfile_index::query::TableQuery;

use super::timing::{self, load_average, python_seconds};

/// Runs of each measurement, ours and the official reader's alike; the best is reported.
/// Figures of a few milliseconds on a 2-core machine that is often building something else
/// need this many tries for the best to show the program rather than its neighbours.
const RUNS: usize = 15;
/// Points of the `large` case (4 devices × 50,000 rows × 5 fields).
const LARGE_POINTS: f64 = 1_000_000.0;

/// Runs the benchmark.
pub fn run() -> anyhow::Result<()> {
    let corpus = crate::conformance_dir().join("tsfile");
    let large = corpus.join("large.tsfile");
    let many = corpus.join("table_many_devices.tsfile");
    if !large.is_file() || !many.is_file() {
        println!(
            "corpus not found at {}: nothing to measure",
            corpus.display()
        );
        return Ok(());
    }
    println!("load average before: {}", load_average());
    let (ours_read, rows) = best(|| read_large(&large))?;
    let (ours_meta, series) = best(|| metadata(&many))?;
    let process = match timing::release_bazan(&[]) {
        Ok(bin) => {
            let query = [
                "tsfile",
                "query",
                &large.display().to_string(),
                "--table",
                "telemetry",
                "--format",
                "arrow",
            ]
            .map(str::to_string);
            let bytes = output_bytes(&bin, &query)?;
            let (q, ()) = best(|| run_process(&bin, &query))?;
            let (v, ()) = best(|| run_process(&bin, &["--version".to_string()]))?;
            Some((q, bytes, v))
        }
        Err(e) => {
            println!("bazan binary unavailable, no process figure: {e:#}");
            None
        }
    };
    let peer = peer_available();
    let peer_read = if peer {
        Some(peer_time(&PEER_READ.replace("{path}", &py_path(&large)))?)
    } else {
        None
    };
    let peer_meta = if peer {
        Some(peer_time(&PEER_META.replace("{path}", &py_path(&many)))?)
    } else {
        None
    };
    println!(
        "{:<64} {:>12} {:>12} {:>8} {:>16}",
        "measurement", "ours", "official", "ratio", "ours points/s"
    );
    row(
        &format!("full read of large into Arrow ({rows} rows)"),
        ours_read,
        peer_read,
        Some(LARGE_POINTS / ours_read.as_secs_f64()),
    );
    row(
        &format!("open + devices + series of table_many_devices ({series} series)"),
        ours_meta,
        peer_meta,
        None,
    );
    if let Some((q, bytes, v)) = process {
        row(
            &format!("process: bazan tsfile query large --format arrow ({bytes} B)"),
            q,
            peer_read,
            Some(LARGE_POINTS / q.as_secs_f64()),
        );
        row("process: bazan --version (start-up floor)", v, None, None);
    }
    if let Some(p) = peer_read {
        println!(
            "official reader points/s on large: {:.0}",
            LARGE_POINTS / p.as_secs_f64()
        );
    }
    println!("load average after: {}", load_average());
    if !peer {
        println!(
            "peer unavailable: the Python package tsfile==2.5.0 (pip install tsfile==2.5.0 pyarrow) cannot be imported by python3"
        );
    }
    Ok(())
}

fn row(what: &str, ours: Duration, peer: Option<Duration>, points: Option<f64>) {
    let peer_s = peer.map_or("-".to_string(), fmt);
    let ratio = peer.map_or("-".to_string(), |p| {
        format!("{:.1}x", p.as_secs_f64() / ours.as_secs_f64())
    });
    let points = points.map_or("-".to_string(), |p| format!("{p:.0}"));
    println!(
        "{what:<64} {:>12} {peer_s:>12} {ratio:>8} {points:>16}",
        fmt(ours)
    );
}

fn fmt(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// The best time of [`RUNS`] runs of `f`, and what that run returned.
fn best<T>(f: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<(Duration, T)> {
    timing::best(RUNS, f)
}

/// Open `large` and read every row of its table into Arrow batches; returns the row count.
fn read_large(path: &Path) -> anyhow::Result<usize> {
    let reader = TsFileReader::open(path)?;
    let query = TableQuery {
        batch_size: 65_536,
        ..TableQuery::default()
    };
    let mut rows = 0;
    for batch in reader.query_table("telemetry", &query)? {
        rows += batch?.num_rows();
    }
    if rows != 200_000 {
        bail!("read {rows} rows of large, expected 200000");
    }
    Ok(rows)
}

/// Open `table_many_devices`, list its devices and read every series' metadata.
fn metadata(path: &Path) -> anyhow::Result<usize> {
    let reader = TsFileReader::open(path)?;
    let mut series = 0;
    for device in reader.devices()? {
        series += reader.timeseries(&device?)?.len();
    }
    Ok(series)
}

/// Runs `bin args` with stdout to `/dev/null`, as a shell redirection would.
fn run_process(bin: &Path, args: &[String]) -> anyhow::Result<()> {
    let null = std::fs::File::create("/dev/null").context("cannot open /dev/null")?;
    let status = Command::new(bin)
        .args(args)
        .stdout(Stdio::from(null))
        .status()
        .with_context(|| format!("cannot run {}", bin.display()))?;
    if !status.success() {
        bail!("{} {} failed: {status}", bin.display(), args.join(" "));
    }
    Ok(())
}

/// The bytes `bin args` writes to stdout (one run, outside the timings).
fn output_bytes(bin: &Path, args: &[String]) -> anyhow::Result<usize> {
    let out = Command::new(bin)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {}", bin.display()))?;
    if !out.status.success() {
        bail!(
            "{} {} failed: {}",
            bin.display(),
            args.join(" "),
            out.status
        );
    }
    Ok(out.stdout.len())
}

const PEER_READ: &str = r#"
from tsfile import TsFileReader
r = TsFileReader({path})
cols = [c.get_column_name() for c in r.get_table_schema('telemetry').get_columns()]
rs = r.query_table('telemetry', cols, batch_size=65536)
n = 0
while True:
    b = rs.read_arrow_batch()
    if b is None:
        break
    n += b.num_rows
rs.close()
r.close()
assert n == 200000, n
"#;

const PEER_META: &str = r#"
from tsfile import TsFileReader
r = TsFileReader({path})
d = r.get_all_devices()
m = r.get_timeseries_metadata()
assert len(d) == 300 and len(m) == 300
r.close()
"#;

fn py_path(p: &Path) -> String {
    format!("{:?}", p.display().to_string())
}

/// True when `import tsfile, pyarrow` works, after trying to install them once.
fn peer_available() -> bool {
    let import = || super::timing::python_imports("tsfile, pyarrow");
    if import() {
        return true;
    }
    let _ = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "tsfile==2.5.0",
            "pyarrow",
        ])
        .status();
    import()
}

/// Best time in seconds of `body` over [`RUNS`] runs in one Python process (after a warm-up
/// run, as ours are warmed by the page cache of the first run).
fn peer_time(body: &str) -> anyhow::Result<Duration> {
    let indented: Vec<String> = body.lines().map(|l| format!("    {l}")).collect();
    let script = format!(
        "import time\ndef once():\n{}\nonce()\nbest = 1e9\nfor _ in range({RUNS}):\n    t = time.perf_counter()\n    once()\n    best = min(best, time.perf_counter() - t)\nprint(best)\n",
        indented.join("\n")
    );
    python_seconds(&script)
}
