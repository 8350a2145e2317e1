//! `cargo xtask bench startup`: the command line as whole processes beside `/bin/true`, the
//! floor of any process on the machine, in the same run: `bazan --version` of the binary
//! without and with `sql`, `bazan sql LAKE "select count(*) from lake"` and `bazan locate`
//! on the bundled sample lake. The commands run in interleaved rounds (each round runs every
//! command once), so that a change of load touches them alike; the figure is the median wall
//! time, with the median page faults and CPU time the kernel reports for the child
//! (`wait4`), and the dynamic loader's relative relocations of each binary
//! (`LD_DEBUG=statistics`), which is where a position-independent binary spends its start.
//!
//! Options: `--runs N` (rounds, default 300); `--build no` times the copies an earlier run
//! left in `target/bench-data` (`bazan`, `bazan-sql`) instead of building them first.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use super::timing::{load_average, release_bazan};

/// One command of the bench and its measurements.
struct Probe {
    label: String,
    program: PathBuf,
    args: Vec<String>,
    /// The goal as a multiple of `/bin/true`'s median, if the issue sets one.
    goal: Option<f64>,
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
    faults: Vec<u64>,
}

impl Probe {
    fn new(label: &str, program: &Path, args: &[&str], goal: Option<f64>) -> Self {
        Self {
            label: label.to_string(),
            program: program.to_path_buf(),
            args: args.iter().map(|a| a.to_string()).collect(),
            goal,
            wall: Vec::new(),
            cpu: Vec::new(),
            faults: Vec::new(),
        }
    }

    /// Runs the command once, output to `/dev/null`, and records its figures.
    fn run_once(&mut self) -> anyhow::Result<()> {
        let null = || std::fs::File::create("/dev/null").context("cannot open /dev/null");
        let t = Instant::now();
        let child = Command::new(&self.program)
            .args(&self.args)
            .stdout(Stdio::from(null()?))
            .stderr(Stdio::from(null()?))
            .spawn()
            .with_context(|| format!("cannot run {}", self.program.display()))?;
        let pid = libc::pid_t::try_from(child.id()).context("pid out of range")?;
        let mut status: libc::c_int = 0;
        // SAFETY: `rusage` is plain old data, for which all-zero bytes are a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our own child, not yet waited for (std waits only when asked);
        // `status` and `usage` are valid for writes for the duration of the call.
        let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        let wall = t.elapsed();
        ensure!(got == pid, "wait4 on {} failed", self.program.display());
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            bail!(
                "{} {} failed (wait status {status})",
                self.program.display(),
                self.args.join(" ")
            );
        }
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec.max(0) as u64)
                + Duration::from_micros(t.tv_usec.max(0) as u64)
        };
        self.wall.push(wall);
        self.cpu.push(tv(usage.ru_utime) + tv(usage.ru_stime));
        self.faults
            .push(usage.ru_minflt.max(0) as u64 + usage.ru_majflt.max(0) as u64);
        Ok(())
    }
}

fn median<T: Ord + Copy>(v: &[T]) -> Option<T> {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.get(s.len() / 2).copied()
}

/// The relative relocations the dynamic loader applies when `bin` starts, from glibc's
/// `LD_DEBUG=statistics` (`None` where that is not available).
fn relative_relocations(bin: &Path) -> Option<u64> {
    let out = Command::new(bin)
        .arg("--version")
        .env("LD_DEBUG", "statistics")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    text.lines()
        .find_map(|l| l.split_once("number of relative relocations:"))
        .and_then(|(_, n)| n.trim().parse().ok())
}

/// A copy of the bundled sample lake with its map, made with `bin`.
fn sample_lake(bin: &Path) -> anyhow::Result<PathBuf> {
    let root = crate::workspace_root();
    let lake = root.join("target").join("bench-data").join("startup-lake");
    if !lake.join(".br_map.bazan").exists() {
        let _ = std::fs::remove_dir_all(&lake);
        let status = Command::new("cp")
            .arg("-r")
            .arg(root.join("testdata").join("lake"))
            .arg(&lake)
            .status()
            .context("cannot run cp")?;
        ensure!(status.success(), "cannot copy testdata/lake");
        let status = Command::new(bin)
            .args(["map", "create"])
            .arg(&lake)
            .stdout(Stdio::null())
            .status()
            .context("cannot run bazan map create")?;
        ensure!(
            status.success(),
            "bazan map create {} failed",
            lake.display()
        );
    }
    Ok(lake)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Runs the benchmark and prints its figures.
pub fn run() -> anyhow::Result<()> {
    let runs: usize = match super::option("runs") {
        Some(r) => r.parse().context("--runs takes a number")?,
        None => 300,
    };
    let (plain, sql) = if super::option("build").as_deref() == Some("no") {
        let dir = crate::workspace_root().join("target").join("bench-data");
        (dir.join("bazan"), dir.join("bazan-sql"))
    } else {
        (release_bazan(&[])?, release_bazan(&["sql"])?)
    };
    ensure!(
        plain.exists() && sql.exists(),
        "no {} or {}: run without --build no first",
        plain.display(),
        sql.display()
    );
    let lake = sample_lake(&plain)?;
    let lake_s = lake.to_string_lossy().into_owned();
    let mut probes = vec![
        Probe::new("/bin/true", Path::new("/bin/true"), &[], None),
        Probe::new("bazan --version", &plain, &["--version"], Some(2.0)),
        Probe::new(
            "bazan --version (with sql)",
            &sql,
            &["--version"],
            Some(2.0),
        ),
        Probe::new(
            "bazan locate LAKE 3",
            &plain,
            &["locate", &lake_s, "3"],
            None,
        ),
        Probe::new(
            "bazan sql LAKE \"select count(*) from lake\"",
            &sql,
            &["sql", &lake_s, "select count(*) from lake"],
            Some(4.0),
        ),
    ];
    println!(
        "startup: {runs} interleaved rounds; load average before: {}",
        load_average()
    );
    for p in &probes {
        println!("$ {} {}", p.program.display(), p.args.join(" "));
    }
    // One round first, not counted: the page cache holds the binaries afterwards.
    for p in &mut probes {
        p.run_once()?;
        p.wall.clear();
        p.cpu.clear();
        p.faults.clear();
    }
    for _ in 0..runs {
        for p in &mut probes {
            p.run_once()?;
        }
    }
    let floor = median(&probes[0].wall).context("no run")?;
    println!(
        "{:<46} {:>10} {:>10} {:>8} {:>8} {:>7} {:>12}",
        "process", "median", "CPU", "faults", "x true", "goal", "relocations"
    );
    for p in &probes {
        let wall = median(&p.wall).context("no run")?;
        let cpu = median(&p.cpu).context("no run")?;
        let faults = median(&p.faults).context("no run")?;
        let times = wall.as_secs_f64() / floor.as_secs_f64();
        let goal = p.goal.map_or("-".to_string(), |g| {
            format!("{}{g:.0}x", if times <= g { "<=" } else { "> " })
        });
        let relocs = if p.program.starts_with("/bin") {
            "-".to_string()
        } else {
            relative_relocations(&p.program).map_or("?".to_string(), |n| n.to_string())
        };
        println!(
            "{:<46} {:>10} {:>10} {faults:>8} {times:>7.2}x {goal:>7} {relocs:>12}",
            p.label,
            ms(wall),
            ms(cpu)
        );
    }
    for (label, bin) in [("bazan", &plain), ("bazan (with sql)", &sql)] {
        let size = std::fs::metadata(bin).map(|m| m.len()).unwrap_or(0);
        println!("binary {label}: {:.1} MB", size as f64 / 1e6);
    }
    println!("load average after: {}", load_average());
    Ok(())
}
