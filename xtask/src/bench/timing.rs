//! Timing helpers shared by the benchmarks: the best of several warm runs of our code, and the
//! best time a Python peer script reports for itself.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// The best wall time of `runs` runs of `f`, with what that run returned.
pub fn best<T>(
    runs: usize,
    mut f: impl FnMut() -> anyhow::Result<T>,
) -> anyhow::Result<(Duration, T)> {
    let mut best: Option<(Duration, T)> = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f()?;
        let d = t.elapsed();
        if best.as_ref().is_none_or(|(b, _)| d < *b) {
            best = Some((d, v));
        }
    }
    best.context("no run")
}

/// Runs `script` with `python3 -c` and reads the seconds it prints on its last line: the peer
/// times itself, so the interpreter's start-up is not counted.
pub fn python_seconds(script: &str) -> anyhow::Result<Duration> {
    let out = Command::new("python3")
        .args(["-c", script])
        .output()
        .context("cannot run python3")?;
    if !out.status.success() {
        bail!("peer failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let secs: f64 = text
        .trim()
        .lines()
        .last()
        .unwrap_or("")
        .parse()
        .context("peer printed no time")?;
    Ok(Duration::from_secs_f64(secs))
}

/// Python lines that connect DuckDB as `con` on `threads` threads, its progress bar off (it
/// prints to stdout on queries over 2 s, where the bench scripts print their time).
pub fn duckdb_connect(threads: usize) -> String {
    format!(
        "import duckdb\ncon = duckdb.connect()\ncon.execute('SET threads TO {threads}')\ncon.execute('SET enable_progress_bar = false')\n"
    )
}

/// True when `python3 -c "import MODULES"` works (`modules` as in an import statement).
pub fn python_imports(modules: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success())
}
