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

/// The 1, 5 and 15 minute load averages (Linux), to tell whether the machine was quiet.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// The release `bazan` binary with `features` (`&[]` or `&["sql"]`), built (or found up to
/// date) by cargo and copied to `target/bench-data/bazan[-FEATURES]`: the builds of the two
/// feature sets write the same `target/release/bazan`, and another build of the shared target
/// dir may replace it while a bench runs.
pub fn release_bazan(features: &[&str]) -> anyhow::Result<std::path::PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut c = Command::new(cargo);
    c.args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "bazan-cli",
        "--bin",
        "bazan",
    ])
    .current_dir(crate::workspace_root());
    if !features.is_empty() {
        c.args(["--features", &features.join(",")]);
    }
    let status = c.status().context("cannot run cargo")?;
    if !status.success() {
        bail!("{c:?} failed ({status})");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target"));
    let dir = target.join("bench-data");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut name = String::from("bazan");
    for f in features {
        name.push('-');
        name.push_str(f);
    }
    let copy = dir.join(name);
    // Replaced by rename, so that a process still running the old copy is not disturbed.
    let tmp = copy.with_extension("tmp");
    std::fs::copy(target.join("release").join("bazan"), &tmp)
        .with_context(|| format!("cannot copy the bazan binary to {}", tmp.display()))?;
    std::fs::rename(&tmp, &copy).with_context(|| format!("cannot write {}", copy.display()))?;
    Ok(copy)
}
