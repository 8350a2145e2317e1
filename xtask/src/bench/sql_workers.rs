//! `cargo xtask bench sql --workers N`: the queries of `bench sql` (and a group by that parses
//! every column of the CSV and NDJSON files) on one node and on N `bazan worker` processes of
//! this machine, on the 1 GB `simple` lake.
//!
//! The workers are the release `bazan` binary (feature `sql`) on free loopback ports, each
//! with `--threads` of its share of the cores, stopped by PID when the bench ends (and by a
//! watchdog after [`LIFETIME`]). The coordinator is `crates/bazan-sql/examples/
//! sql_workers_bench.rs` (release, feature `grpc`): it keeps a one-node session and a session
//! on the workers open and runs one request at a time, so that between two requests this
//! bench reads the CPU time of every process (`/proc/PID/stat`) and the task lines each
//! worker printed (`task i/n HEAD: lake ROOT rows=R blocks=B`). Per query it reports the best
//! one-node and N-worker wall times of the rounds, the overhead, the planning time on the
//! workers' session, the coordinator's CPU per run, and per worker its CPU per run, tasks per
//! run and rows its scan tasks were given per run.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

/// The longest a worker of this bench lives, whatever happens to the bench.
const LIFETIME: Duration = Duration::from_secs(3600);

/// One `bazan worker` process, its watchdog and the lines it printed.
struct Worker {
    child: Child,
    watchdog: Child,
    url: String,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Worker {
    fn start(bin: &Path, threads: usize) -> anyhow::Result<Worker> {
        let mut child = Command::new(bin)
            .args(["worker", "--listen", "127.0.0.1:0", "--threads"])
            .arg(threads.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", bin.display()))?;
        let watchdog = Command::new("sh")
            .args([
                "-c",
                &format!("sleep {}; kill -9 {}", LIFETIME.as_secs(), child.id()),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start the watchdog")?;
        let stderr = child.stderr.take().context("no worker stderr")?;
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.split("listening on ").nth(1) {
                    let _ = tx.send(at.split_whitespace().next().unwrap_or("").to_string());
                }
                if let Ok(mut l) = sink.lock() {
                    l.push(line);
                }
            }
        });
        let mut worker = Worker {
            child,
            watchdog,
            url: String::new(),
            lines,
        };
        worker.url = rx
            .recv_timeout(Duration::from_secs(30))
            .context("the worker printed no address within 30 s")?;
        Ok(worker)
    }

    /// Lines printed so far.
    fn count(&self) -> usize {
        self.lines.lock().map_or(0, |l| l.len())
    }

    /// `(tasks, rows)` of the task lines printed from line `from` on.
    fn tasks_since(&self, from: usize) -> (u64, u64) {
        let lines = self.lines.lock().map(|l| l.clone()).unwrap_or_default();
        let mut tasks = 0;
        let mut rows = 0;
        for line in lines.iter().skip(from) {
            if !line.contains(": task ") {
                continue;
            }
            tasks += 1;
            for part in line.split_whitespace() {
                if let Some(r) = part.strip_prefix("rows=") {
                    rows += r.trim_end_matches(',').parse::<u64>().unwrap_or(0);
                }
            }
        }
        (tasks, rows)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = self.watchdog.kill();
        let _ = self.watchdog.wait();
    }
}

/// User + system CPU seconds of process `pid` so far (every thread), from `/proc/PID/stat`.
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("cannot read /proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces) in parentheses: state is field 3,
    // utime 14 and stime 15, in clock ticks.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| -> anyhow::Result<f64> {
        fields
            .get(i)
            .context("short /proc stat")?
            .parse::<f64>()
            .context("/proc stat field")
    };
    // SAFETY: sysconf reads a constant of the system; no memory is touched.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Ok((tick(11)? + tick(12)?) / hz)
}

/// The coordinator process and its pipes.
struct Coordinator {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Coordinator {
    fn ask(&mut self, mode: &str, query: &str) -> anyhow::Result<Value> {
        writeln!(self.stdin, "{mode}\t{query}")?;
        self.stdin.flush()?;
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            let status = self.child.wait()?;
            bail!("the coordinator ended ({status}) on {mode} {query}");
        }
        serde_json::from_str(&line).context("coordinator output")
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one query measured on the workers, per run, in the round of its best wall time.
#[derive(Clone, Default)]
struct PerRun {
    seconds: f64,
    coordinator_cpu: f64,
    worker_cpu: Vec<f64>,
    worker_tasks: Vec<f64>,
    worker_rows: Vec<f64>,
}

/// Builds `args` of cargo in release in the workspace.
fn cargo_build(args: &[&str]) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet"])
        .args(args)
        .current_dir(crate::workspace_root())
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!("cargo build {} failed", args.join(" "));
    }
    Ok(())
}

/// Runs the bench with `n` workers.
pub fn run(n: usize) -> anyhow::Result<()> {
    if n == 0 {
        bail!("--workers takes at least 1");
    }
    let root = crate::workspace_root();
    let lake = root.join("target").join("bench-data").join("lake");
    super::lake::generate(&lake)?;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let threads = match super::option("threads") {
        Some(t) => t.parse().context("--threads takes a number")?,
        None => cores,
    };
    let worker_threads = (threads / n).max(1);
    let rounds: usize = match super::option("rounds") {
        Some(r) => r.parse().context("--rounds takes a number")?,
        None => 2,
    };
    let mut queries: Vec<(&str, String)> = Vec::new();
    queries.push((
        "group by code over the CSV+NDJSON files, every column",
        "select code, count(*), sum(v), min(x), max(x), sum(id) from lake \
         where _path like '%.csv' or _path like '%.ndjson' group by code"
            .to_string(),
    ));
    println!(
        "sql --workers {n}: lake {}; one node on {threads} threads, {n} workers of {worker_threads} \
         threads each ({cores} cores)",
        lake.display()
    );
    // `--build no`: the release binaries already there (a shared target dir whose build queue
    // is long); by default both are built first.
    let build = super::option("build").is_none_or(|b| b != "no");
    if build {
        cargo_build(&["-p", "bazan-cli", "--features", "sql"])?;
        cargo_build(&[
            "-p",
            "bazan-sql",
            "--features",
            "grpc",
            "--example",
            "sql_workers_bench",
        ])?;
    }
    let release = root.join("target").join("release");
    // A copy of the binary just built: another build of the shared target dir (without the
    // `sql` feature) may replace `target/release/bazan` while the bench runs.
    let bin = root
        .join("target")
        .join("bench-data")
        .join("bazan-sql-workers");
    std::fs::copy(release.join("bazan"), &bin).context("cannot copy the bazan binary")?;
    let workers = (0..n)
        .map(|_| Worker::start(&bin, worker_threads))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let urls: Vec<&str> = workers.iter().map(|w| w.url.as_str()).collect();
    println!("workers: {}", urls.join(", "));
    let runs = 3;
    let mut child = Command::new(release.join("examples").join("sql_workers_bench"))
        .arg(&lake)
        .arg(threads.to_string())
        .arg(runs.to_string())
        .arg(urls.join(","))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start sql_workers_bench")?;
    let mut coordinator = Coordinator {
        stdin: child.stdin.take().context("no stdin")?,
        stdout: BufReader::new(child.stdout.take().context("no stdout")?),
        child,
    };
    let mut first = String::new();
    coordinator.stdout.read_line(&mut first)?;
    let first: Value = serde_json::from_str(&first).context("coordinator's first line")?;
    let register = first["register_seconds"].as_f64().unwrap_or(f64::NAN);
    let pid = coordinator.child.id();
    let mut facts = Vec::new();
    for q in super::sql_queries::FACTS {
        let r = coordinator.ask("one", q)?;
        facts.push(
            r["first"]
                .as_i64()
                .with_context(|| format!("{q}: no integer"))?,
        );
    }
    queries.splice(
        0..0,
        super::sql_queries::queries_from(facts[0], facts[1]).queries,
    );

    // Each run of a request is `runs` timed runs after one warm-up.
    let per = (runs + 1) as f64;
    let mut one_best = vec![f64::INFINITY; queries.len()];
    let mut one_cpu = vec![0.0; queries.len()];
    let mut plan_best = vec![f64::INFINITY; queries.len()];
    let mut best: Vec<Option<PerRun>> = vec![None; queries.len()];
    let mut scanned = vec![Value::Null; queries.len()];
    for round in 1..=rounds.max(1) {
        println!("sql --workers: round {round} of {}", rounds.max(1));
        for (i, (_, q)) in queries.iter().enumerate() {
            let c0 = cpu_seconds(pid)?;
            let r = coordinator.ask("one", q)?;
            let s = r["seconds"].as_f64().unwrap_or(f64::NAN);
            if s < one_best[i] {
                one_best[i] = s;
                one_cpu[i] = (cpu_seconds(pid)? - c0) / per;
            }
            scanned[i] = r["rows_scanned"].clone();

            let marks: Vec<usize> = workers.iter().map(Worker::count).collect();
            let w0 = workers
                .iter()
                .map(|w| cpu_seconds(w.child.id()))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let c0 = cpu_seconds(pid)?;
            let r = coordinator.ask("workers", q)?;
            let c1 = cpu_seconds(pid)?;
            let w1 = workers
                .iter()
                .map(|w| cpu_seconds(w.child.id()))
                .collect::<anyhow::Result<Vec<_>>>()?;
            // Lines arrive on the reader threads a moment after the task started.
            std::thread::sleep(Duration::from_millis(50));
            let s = r["seconds"].as_f64().unwrap_or(f64::NAN);
            if best[i].as_ref().is_none_or(|b| s < b.seconds) {
                let (tasks, rows): (Vec<f64>, Vec<f64>) = workers
                    .iter()
                    .zip(&marks)
                    .map(|(w, m)| {
                        let (t, r) = w.tasks_since(*m);
                        (t as f64 / per, r as f64 / per)
                    })
                    .unzip();
                best[i] = Some(PerRun {
                    seconds: s,
                    coordinator_cpu: (c1 - c0) / per,
                    worker_cpu: w0.iter().zip(&w1).map(|(a, b)| (b - a) / per).collect(),
                    worker_tasks: tasks,
                    worker_rows: rows,
                });
            }
            let p = coordinator.ask("plan", q)?;
            plan_best[i] = plan_best[i].min(p["seconds"].as_f64().unwrap_or(f64::NAN));
        }
    }

    println!(
        "map load on the coordinator: {:.4} s (each worker loads the map again for every query)",
        register
    );
    println!(
        "{:<54} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}  per worker: cpu s, tasks, rows",
        "query", "one node", "workers", "overhead", "plan", "coord cpu", "one cpu"
    );
    for (i, (name, _)) in queries.iter().enumerate() {
        let Some(b) = &best[i] else { continue };
        let per_worker: Vec<String> = (0..n)
            .map(|w| {
                format!(
                    "{:.3} s, {:.0}, {:.0}",
                    b.worker_cpu[w], b.worker_tasks[w], b.worker_rows[w]
                )
            })
            .collect();
        println!(
            "{name:<54} {:>8.4} s {:>8.4} s {:>+8.4} s {:>7.4} s {:>7.3} s {:>7.3} s  {}",
            one_best[i],
            b.seconds,
            b.seconds - one_best[i],
            plan_best[i],
            b.coordinator_cpu,
            one_cpu[i],
            per_worker.join(" | ")
        );
    }
    println!(
        "rows scanned on one node: {}",
        scanned
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "each request: one warm-up run and {runs} timed runs (best kept); CPU per run is the \
         CPU of the whole request / {}; a worker's rows are those its scan tasks were given",
        runs + 1
    );
    Ok(())
}
