//! `cargo xtask bench remote`: the realistic lake of `bench lake` ([`super::lake_data`],
//! `--size`, default 240 MB) in an S3 bucket (moto on a free loopback port, started and
//! stopped by the bench), read by bazan and by its peers through a counting proxy in this
//! process, so that requests (object GETs, HEADs, LISTs, PUTs) and response bytes are counted
//! the same way for everyone, with a timeline of each bazan figure's requests.
//! With `--latency-ms N` (the second pass; 20 by default) the proxy sleeps N ms before it
//! forwards each request, because a real bucket is not on loopback.
//!
//! Figures, each with wall time, GET requests and bytes, every tool on 2 threads
//! (`--threads N`):
//! - `map create` of the remote lake (the `bazan` CLI of the release build, as a process)
//!   against the same lake on local disk, and what it fetched of each columnar file;
//! - 100 rows deep in the quoted CSV and the nested NDJSON: `bazan slice` (the CLI, as a
//!   process: it loads the map too) vs polars and pyarrow;
//! - 256 random rows across the lake: the facade's `Lake::take` (in this process) on the
//!   map in the bucket and from a fresh lake (`create_map` + `take`) vs polars, pyarrow and
//!   Hugging Face `datasets` (with s3fs).
//!
//! The peers run in `target/py-remote-venv` (polars, pyarrow, datasets, s3fs, pinned below;
//! its own venv because s3fs pins a botocore older than the moto test venv's boto3).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use proxy::{Moto, Proxy, Traffic, http_put};

use super::lake_data;
use super::timing::load_average;
use crate::python::target_dir;
use crate::rng::XorShift;
use crate::workspace_root;

mod proxy;

/// The peers' packages, installed into `target/py-remote-venv`.
const PEER_PACKAGES: &[&str] = &[
    "polars==2.1.0",
    "pyarrow==26.0.1",
    "datasets==5.2.0",
    "s3fs==2026.9.0",
];

/// The bucket and the prefix of the lake in it.
const BUCKET: &str = "lake";
const PREFIX: &str = "real";

/// Rows of the deep slices and of the random take.
const SLICE_ROWS: u64 = 100;
const TAKE_ROWS: usize = 256;

/// A file of the lake: its name, format, rows, first global row (in the map) and size.
#[derive(Debug, Clone)]
struct LakeFile {
    name: String,
    format: &'static str,
    rows: u64,
    first: u64,
    size: u64,
}

fn format_of(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or("") {
        "csv" => "csv",
        "ndjson" => "ndjson",
        "parquet" => "parquet",
        _ => "arrow",
    }
}

/// The storage options every bazan call gets (the proxy as endpoint).
fn storage_options(endpoint: &str) -> Vec<(String, String)> {
    [
        ("aws_endpoint", endpoint),
        ("aws_allow_http", "true"),
        ("aws_access_key_id", "x"),
        ("aws_secret_access_key", "y"),
        ("aws_region", "us-east-1"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// One measured figure: wall time and the traffic of its best run (`None`: the tool
/// failed, with why).
struct Figure {
    tool: String,
    time: Duration,
    traffic: Traffic,
    note: String,
    failed: Option<String>,
    /// The `id` of the first row returned (the deep slices are checked with it).
    first_id: Option<u64>,
}

/// The `id` member of the first line of NDJSON output.
fn first_id_of_ndjson(out: &[u8]) -> Option<u64> {
    let line = out.split(|&b| b == b'\n').next()?;
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    v.get("id")?.as_u64()
}

/// Fails `f` unless its first row's `id` is `want` (the deep slices read the right rows).
fn check_first(mut f: Figure, want: u64) -> Figure {
    if f.failed.is_none() && f.first_id != Some(want) {
        f.failed = Some(format!("first row has id {:?}, not {want}", f.first_id));
    }
    f
}

impl Figure {
    fn line(&self) -> String {
        match &self.failed {
            Some(why) if self.traffic.gets > 0 => format!(
                "    {:<34} failed: {why} ({} GETs, {} bytes by then)",
                self.tool,
                self.traffic.gets,
                group(self.traffic.bytes)
            ),
            Some(why) => format!("    {:<34} failed: {why}", self.tool),
            None => format!(
                "    {:<34} {:>10.1} ms {:>7} GETs {:>12} bytes{}{}",
                self.tool,
                self.time.as_secs_f64() * 1e3,
                self.traffic.gets,
                group(self.traffic.bytes),
                self.traffic.others(),
                if self.note.is_empty() {
                    String::new()
                } else {
                    format!("  ({})", self.note)
                }
            ),
        }
    }
}

fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The run of everything: where things are.
struct Bench {
    proxy: Proxy,
    python: PathBuf,
    bazan: PathBuf,
    lake: PathBuf,
    files: Vec<LakeFile>,
    threads: usize,
    runs: usize,
    /// How long a peer may take before it is stopped and reported as unfinished.
    timeout: Duration,
    peers_seen: std::collections::BTreeSet<String>,
    /// The peers to run (`--peers`, all three by default).
    peers: Vec<String>,
    /// Where every figure's request timeline is written (`--log-requests`).
    log: Option<PathBuf>,
}

impl Bench {
    fn url(&self) -> String {
        format!("s3://{BUCKET}/{PREFIX}")
    }

    /// Whether the peer `tool` runs in this bench (`--peers`).
    fn runs_peer(&self, tool: &str) -> bool {
        self.peers.iter().any(|p| p == tool)
    }

    /// Appends the request timeline of `figure` to the `--log-requests` file.
    fn log(&self, title: &str, figure: &Figure) {
        let Some(path) = &self.log else {
            return;
        };
        let mut text = format!(
            "== {title}: {} ({} ms, {} GETs{}, {} bytes)\n",
            figure.tool,
            figure.time.as_millis(),
            figure.traffic.gets,
            figure.traffic.others(),
            group(figure.traffic.bytes)
        );
        for line in figure.traffic.timeline() {
            text.push_str(&line);
            text.push('\n');
        }
        use std::io::Write;
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        if let Err(e) = written {
            eprintln!("cannot write {}: {e}", path.display());
        }
    }

    /// Runs `bazan ARGS` through the proxy `runs` times; the best run's time and traffic.
    fn cli(&self, tool: &str, args: &[String], remote: bool) -> anyhow::Result<Figure> {
        let mut best: Option<Figure> = None;
        for _ in 0..self.runs {
            let mut c = Command::new(&self.bazan);
            c.args(args)
                .env("RAYON_NUM_THREADS", self.threads.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if remote {
                for (k, v) in storage_options(&self.proxy.endpoint()) {
                    c.arg("--storage-option").arg(format!("{k}={v}"));
                }
            }
            let ((time, out), traffic) = self.proxy.measure(|| {
                let t = Instant::now();
                let out = c.output().context("cannot run bazan")?;
                Ok((t.elapsed(), out))
            })?;
            if !out.status.success() {
                bail!(
                    "bazan {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            if best.as_ref().is_none_or(|b| time < b.time) {
                best = Some(Figure {
                    tool: tool.into(),
                    time,
                    traffic,
                    note: String::new(),
                    failed: None,
                    first_id: first_id_of_ndjson(&out.stdout),
                });
            }
        }
        best.context("no run")
    }

    /// Runs a peer `runs` times; its best self-timed run and that run's traffic. Prints the
    /// peer's exact set-up and calls the first time it runs each.
    fn peer(&mut self, tool: &str, task: &str, files: serde_json::Value) -> Figure {
        let spec = serde_json::json!({
            "tool": tool, "task": task, "endpoint": self.proxy.endpoint(),
            "bucket": BUCKET, "threads": self.threads, "files": files,
        });
        let script = workspace_root().join("xtask/src/bench/remote_peer.py");
        let mut best: Option<Figure> = None;
        for _ in 0..self.runs {
            let mut c = Command::new(&self.python);
            c.arg(&script)
                .arg(spec.to_string())
                .env("POLARS_MAX_THREADS", self.threads.to_string());
            let run = self.proxy.measure(|| output_within(&mut c, self.timeout));
            let (out, traffic) = match run {
                Ok((Some(out), traffic)) => (out, traffic),
                Ok((None, traffic)) => {
                    let mut f = failed(
                        tool,
                        format!(
                            "did not finish within {} s (stopped)",
                            self.timeout.as_secs()
                        ),
                    );
                    f.traffic = traffic;
                    return f;
                }
                Err(e) => return failed(tool, format!("{e:#}")),
            };
            let text = String::from_utf8_lossy(&out.stdout);
            let last = text.trim().lines().last().unwrap_or("");
            let r: serde_json::Value = match serde_json::from_str(last) {
                Ok(v) => v,
                Err(_) => {
                    let err = String::from_utf8_lossy(&out.stderr);
                    let tail: String = err.trim().lines().last().unwrap_or("").into();
                    return failed(tool, format!("no result ({})", tail));
                }
            };
            let key = format!("{tool} {task} {}", r["calls"]);
            if self.peers_seen.insert(key) {
                println!("    --- {tool}: set-up (untimed)");
                for l in r["setup"].as_str().unwrap_or("").lines() {
                    println!("      {l}");
                }
                println!("    --- {tool}: timed calls");
                for call in r["calls"].as_array().into_iter().flatten() {
                    println!("      {}", call.as_str().unwrap_or(""));
                }
            }
            if let Some(err) = r["error"].as_str() {
                return failed(tool, err.to_string());
            }
            let time = Duration::from_secs_f64(r["seconds"].as_f64().unwrap_or(f64::NAN));
            if best.as_ref().is_none_or(|b| time < b.time) {
                best = Some(Figure {
                    tool: tool.into(),
                    time,
                    traffic,
                    note: format!("{} rows", r["rows"]),
                    failed: None,
                    first_id: r["first_id"].as_u64(),
                });
            }
        }
        best.unwrap_or_else(|| failed(tool, "no run".into()))
    }

    fn file(&self, name: &str) -> anyhow::Result<&LakeFile> {
        self.files
            .iter()
            .find(|f| f.name == name)
            .with_context(|| format!("{name} is not in the map"))
    }
}

fn failed(tool: &str, why: String) -> Figure {
    Figure {
        tool: tool.into(),
        time: Duration::ZERO,
        traffic: Traffic::default(),
        note: String::new(),
        failed: Some(why),
        first_id: None,
    }
}

/// The peers' venv (created when missing) and its interpreter.
fn peer_venv() -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("py-remote-venv");
    let python = dir.join("bin").join("python");
    if !python.exists() {
        let t = Instant::now();
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&dir)
            .status()?
            .success();
        anyhow::ensure!(ok, "python3 -m venv {} failed", dir.display());
        let ok = Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(PEER_PACKAGES)
            .status()?
            .success();
        anyhow::ensure!(ok, "pip install {} failed", PEER_PACKAGES.join(" "));
        println!(
            "peer venv {} made in {:.0} s ({})",
            dir.display(),
            t.elapsed().as_secs_f64(),
            PEER_PACKAGES.join(" ")
        );
    }
    Ok(python)
}

/// Runs the benchmark and prints its figures.
pub fn run() -> anyhow::Result<()> {
    let threads: usize = match super::option("threads") {
        Some(t) => t.parse().context("--threads takes a number")?,
        None => 2,
    };
    let runs: usize = match super::option("runs") {
        Some(r) => r.parse().context("--runs takes a number")?,
        None => 2,
    };
    let latency: u64 = match super::option("latency-ms") {
        Some(l) => l.parse().context("--latency-ms takes a number")?,
        None => 20,
    };
    let timeout = Duration::from_secs(match super::option("peer-timeout") {
        Some(t) => t.parse().context("--peer-timeout takes seconds")?,
        None => 300,
    });
    let mb = match super::option("size") {
        Some(s) => s
            .trim_end_matches(['m', 'M'])
            .parse()
            .context("--size takes megabytes, e.g. 240m")?,
        None => 240,
    };
    let peers: Vec<String> = match super::option("peers") {
        Some(p) if p == "none" => Vec::new(),
        Some(p) => p.split(',').map(|t| t.trim().to_string()).collect(),
        None => ["polars", "pyarrow", "datasets"].map(String::from).to_vec(),
    };
    let log = super::option("log-requests").map(PathBuf::from);
    if let Some(l) = &log {
        // One file per run.
        let _ = std::fs::remove_file(l);
    }
    let bazan = match super::option("bazan") {
        Some(p) => PathBuf::from(p),
        None => target_dir().join("release").join("bazan"),
    };
    anyhow::ensure!(
        bazan.exists(),
        "{} is missing: cargo build --release -p bazan-cli --features sql",
        bazan.display()
    );
    let lake = target_dir()
        .join("bench-data")
        .join(format!("lake-real-{mb}m"));
    lake_data::generate(&lake, mb)?;
    let python = if peers.is_empty() {
        PathBuf::from("python3")
    } else {
        peer_venv()?
    };
    let moto = Moto::start()?;
    http_put(moto.port, &format!("/{BUCKET}"), None)?;
    let t = Instant::now();
    let mut sizes = BTreeMap::new();
    let mut total = 0;
    for name in lake_data::FILES {
        let path = lake.join(name);
        let key = format!("/{BUCKET}/{PREFIX}/{name}");
        http_put(moto.port, &key, Some(&path))?;
        let size = std::fs::metadata(&path)?.len();
        total += size;
        sizes.insert(key, size);
    }
    println!(
        "remote: lake {} ({} files, {:.1} MB) uploaded to moto on 127.0.0.1:{} in {:.1} s; {threads} threads for every tool, best of {runs} runs; bazan {}",
        lake.display(),
        lake_data::FILES.len(),
        total as f64 / 1e6,
        moto.port,
        t.elapsed().as_secs_f64(),
        bazan.display()
    );
    server_cost(moto.port);
    let proxy = Proxy::start(moto.port, sizes)?;
    let mut b = Bench {
        proxy,
        python,
        bazan,
        lake,
        files: Vec::new(),
        threads,
        runs,
        timeout,
        peers_seen: Default::default(),
        peers,
        log,
    };
    println!("load average at the start: {}", load_average());
    for ms in [0, latency] {
        b.proxy.set_delay(ms);
        println!();
        println!("== added latency per request: {ms} ms");
        pass(&mut b)?;
    }
    println!();
    println!("load average at the end: {}", load_average());
    drop(moto);
    Ok(())
}

/// Prints what one GET costs moto itself (no proxy, no added latency) for each object: a
/// 1-byte range, best of three, through boto3. moto reads and copies the whole object under
/// a lock of its own for every GET whatever its range, so a request's cost grows with the
/// object's size, and requests of one object wait for each other: a real store's ranged GET
/// does not.
fn server_cost(port: u16) {
    let script = format!(
        r#"
import boto3, time
s3 = boto3.client('s3', endpoint_url='http://127.0.0.1:{port}', aws_access_key_id='x',
                  aws_secret_access_key='y', region_name='us-east-1')
for o in s3.list_objects_v2(Bucket='{BUCKET}', Prefix='{PREFIX}/')['Contents']:
    best = 1e9
    for _ in range(3):
        t = time.perf_counter()
        s3.get_object(Bucket='{BUCKET}', Key=o['Key'], Range='bytes=0-0')['Body'].read()
        best = min(best, time.perf_counter() - t)
    print(f"      {{o['Key'].split('/')[-1]:<16}} {{o['Size']:>12,}} bytes: {{best * 1e3:6.1f}} ms")
"#
    );
    println!("moto's own time for a 1-byte ranged GET of each object (no proxy; best of 3):");
    match Command::new("python3").arg("-c").arg(&script).output() {
        Ok(out) if out.status.success() => print!("{}", String::from_utf8_lossy(&out.stdout)),
        Ok(out) => println!(
            "      not measured: {}",
            String::from_utf8_lossy(&out.stderr)
                .trim()
                .lines()
                .last()
                .unwrap_or("")
        ),
        Err(e) => println!("      not measured: {e}"),
    }
}

/// The three figures at the proxy's current delay.
fn pass(b: &mut Bench) -> anyhow::Result<()> {
    let url = b.url();
    let threads = b.threads.to_string();
    // 1. map create, remote and local.
    println!("  map create (bazan CLI, --threads {threads}, stats on):");
    let remote = b.cli(
        "bazan map create s3://… (proxy)",
        &[
            "map".into(),
            "create".into(),
            url.clone(),
            "--threads".into(),
            threads.clone(),
        ],
        true,
    )?;
    println!("{}", remote.line());
    b.log("map create", &remote);
    let local = b.cli(
        "bazan map create (local disk)",
        &[
            "map".into(),
            "create".into(),
            b.lake.display().to_string(),
            "--threads".into(),
            threads.clone(),
        ],
        false,
    )?;
    println!(
        "{}",
        local
            .line()
            .replace("0 GETs            0 bytes", "(local disk: no requests)")
    );
    for name in lake_data::FILES {
        let key = format!("/{BUCKET}/{PREFIX}/{name}");
        let size = std::fs::metadata(b.lake.join(name))?.len();
        let (gets, asked) = remote.traffic.per_key.get(&key).copied().unwrap_or((0, 0));
        let share = asked as f64 / size as f64 * 100.0;
        let goal = match format_of(name) {
            "parquet" | "arrow" if share <= 1.0 => "; columnar goal <= 1%: met",
            "parquet" | "arrow" => "; columnar goal <= 1%: NOT met",
            _ => "",
        };
        println!(
            "      {name:<16} {:>12} bytes: {gets} GETs asked {} bytes ({share:.3}% of the file{goal})",
            group(size),
            group(asked),
        );
    }
    // The map's files and global rows (through the facade, once).
    if b.files.is_empty() {
        let lake = load(b)?;
        for e in lake.map().to_entries() {
            b.files.push(LakeFile {
                format: format_of(&e.path),
                name: e.path.rsplit('/').next().unwrap_or(&e.path).to_string(),
                rows: e.row_count,
                first: e.first_global_row,
                size: e.size_bytes,
            });
        }
    }
    // 2. 100 rows deep in the quoted CSV and the NDJSON.
    for name in [lake_data::BIG_CSV, lake_data::BIG_NDJSON] {
        let f = b.file(name)?.clone();
        let local = f.rows * 9 / 10;
        let global = f.first + local;
        println!(
            "  {SLICE_ROWS} rows at local row {local} of {name} ({:.1} MB, global row {global}):",
            f.size as f64 / 1e6
        );
        let ours = b.cli(
            "bazan slice (CLI process)",
            &[
                "slice".into(),
                url.clone(),
                "--start".into(),
                global.to_string(),
                "--len".into(),
                SLICE_ROWS.to_string(),
                "--format".into(),
                "ndjson".into(),
            ],
            true,
        )?;
        let ours = check_first(ours, local);
        println!("{}", ours.line());
        b.log(&format!("slice {name}"), &ours);
        // Where the process's time went: the requests it made, as the proxy saw them.
        for line in ours.traffic.timeline() {
            println!("        {line}");
        }
        let spec = serde_json::json!([{
            "key": format!("{PREFIX}/{name}"), "format": f.format,
            "start": local, "len": SLICE_ROWS,
        }]);
        let mut peers = Vec::new();
        for tool in ["polars", "pyarrow"] {
            if !b.runs_peer(tool) {
                continue;
            }
            let p = check_first(b.peer(tool, "slice", spec.clone()), local);
            println!("{}", p.line());
            peers.push(p);
        }
        goals_slice(&ours, &peers);
    }
    // 3. 256 random rows across the lake.
    random_rows(b)?;
    Ok(())
}

fn load(b: &Bench) -> anyhow::Result<bazan::Lake> {
    let options = bazan::LoadOptions {
        storage_options: storage_options(&b.proxy.endpoint()).into_iter().collect(),
        map: None,
    };
    Ok(bazan::load_map_with(Path::new(&b.url()), &options)?)
}

/// The ratios of the deep-slice goals: bytes against the best peer, time against the best
/// peer.
fn goals_slice(ours: &Figure, peers: &[Figure]) {
    let ok: Vec<&Figure> = peers.iter().filter(|p| p.failed.is_none()).collect();
    let Some(least) = ok.iter().map(|p| p.traffic.bytes).min() else {
        println!("      no peer finished");
        return;
    };
    let fastest = ok.iter().map(|p| p.time).min().unwrap_or_default();
    println!(
        "      vs the best peer: {:.0}x fewer bytes (goal 100x), {:.1}x faster (goal 20x with 20 ms latency)",
        least as f64 / ours.traffic.bytes.max(1) as f64,
        fastest.as_secs_f64() / ours.time.as_secs_f64()
    );
}

/// 256 random global rows: the facade's take (map in the bucket; and from a fresh lake,
/// `create_map` included) vs the peers.
fn random_rows(b: &mut Bench) -> anyhow::Result<()> {
    let total: u64 = b.files.iter().map(|f| f.rows).sum();
    let mut g = XorShift(0x9e37_79b9_7f4a_7c15);
    let rows: Vec<u64> = (0..TAKE_ROWS).map(|_| g.below(total)).collect();
    println!("  {TAKE_ROWS} random rows across the lake ({total} rows, seed fixed):");
    // The default stride first, then a map of 4,096-row checkpoints (smaller blocks of the
    // text files, so fewer bytes per random row); the map in the bucket ends with the default.
    let mut ours = Vec::new();
    for stride in [bazan::CreateOptions::default().stride, 4096] {
        let (on_map, fresh) = take_figures(b, &rows, stride)?;
        println!("{}", on_map.line());
        per_file(&on_map);
        println!("{}", fresh.line());
        b.log("take on the map", &on_map);
        b.log("take from a fresh lake", &fresh);
        ours.push((on_map, fresh));
    }
    let (on_map, fresh) = ours.swap_remove(0);
    let (on_map_4k, _) = ours.swap_remove(0);
    // The same rows per file, as local rows, for the peers.
    let mut per_file: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    for &r in &rows {
        if let Some((i, f)) = b
            .files
            .iter()
            .enumerate()
            .find(|(_, f)| r >= f.first && r < f.first + f.rows)
        {
            per_file.entry(i).or_default().push(r - f.first);
        }
    }
    let spec: Vec<serde_json::Value> = per_file
        .iter()
        .map(|(&i, locals)| {
            let f = &b.files[i];
            serde_json::json!({"key": format!("{PREFIX}/{}", f.name), "format": f.format, "rows": locals})
        })
        .collect();
    let spec = serde_json::Value::Array(spec);
    let mut peers = Vec::new();
    for tool in ["polars", "pyarrow", "datasets"] {
        if !b.runs_peer(tool) {
            continue;
        }
        let p = b.peer(tool, "take", spec.clone());
        println!("{}", p.line());
        peers.push(p);
    }
    let ok: Vec<&Figure> = peers.iter().filter(|p| p.failed.is_none()).collect();
    if let Some(least) = ok.iter().map(|p| p.traffic.bytes).min() {
        println!(
            "      vs the best peer: {:.1}x fewer bytes on the map ({:.1}x with stride 4,096), {:.1}x fewer from a fresh lake (goal 5x)",
            least as f64 / on_map.traffic.bytes.max(1) as f64,
            least as f64 / on_map_4k.traffic.bytes.max(1) as f64,
            least as f64 / fresh.traffic.bytes.max(1) as f64
        );
    }
    match peers
        .iter()
        .find(|p| p.tool == "datasets" && p.failed.is_none())
    {
        Some(d) => println!(
            "      vs datasets: {:.1}x faster from a fresh lake, map create included (goal 10x); {:.1}x on the map",
            d.time.as_secs_f64() / fresh.time.as_secs_f64(),
            d.time.as_secs_f64() / on_map.time.as_secs_f64()
        ),
        None => println!("      datasets did not finish: no ratio"),
    }
    Ok(())
}

/// What a figure fetched of each object: GETs and the bytes their ranges asked for.
fn per_file(f: &Figure) {
    for (key, (gets, asked)) in &f.traffic.per_key {
        let name = key.rsplit('/').next().unwrap_or(key);
        println!(
            "      {name:<16} {gets:>4} GETs asked {:>12} bytes",
            group(*asked)
        );
    }
}

/// The facade's take of `rows` through the proxy, best of the runs: on the map in the bucket
/// (made with `stride`, untimed, when not the default) after `load_map_with`, and from a
/// fresh lake (`create_map` with `stride`, then take).
fn take_figures(b: &Bench, rows: &[u64], stride: u64) -> anyhow::Result<(Figure, Figure)> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(b.threads)
        .build()?;
    let options = bazan::CreateOptions {
        threads: Some(b.threads),
        stride,
        storage_options: storage_options(&b.proxy.endpoint()).into_iter().collect(),
        ..Default::default()
    };
    let label = if stride == bazan::CreateOptions::default().stride {
        String::new()
    } else {
        format!(", stride {}", group(stride))
    };
    let take = |lake: &Arc<bazan::Lake>| -> anyhow::Result<()> {
        let n = pool
            .install(|| lake.take(rows, &bazan::ScanOptions::default()))?
            .num_rows();
        anyhow::ensure!(n == rows.len(), "take returned {n} rows");
        Ok(())
    };
    let mut on_map: Option<Figure> = None;
    let mut fresh: Option<Figure> = None;
    for _ in 0..b.runs {
        let (time, traffic) = b.proxy.measure(|| {
            let t = Instant::now();
            let lake = Arc::new(bazan::create_map(Path::new(&b.url()), &options)?.lake);
            take(&lake)?;
            Ok(t.elapsed())
        })?;
        if fresh.as_ref().is_none_or(|f| time < f.time) {
            fresh = Some(Figure {
                tool: format!("bazan create_map + take{label}"),
                time,
                traffic,
                note: "fresh lake".into(),
                failed: None,
                first_id: None,
            });
        }
        let (time, traffic) = b.proxy.measure(|| {
            let t = Instant::now();
            let lake = Arc::new(load(b)?);
            take(&lake)?;
            Ok(t.elapsed())
        })?;
        if on_map.as_ref().is_none_or(|f| time < f.time) {
            on_map = Some(Figure {
                tool: format!("bazan load_map + take{label}"),
                time,
                traffic,
                note: String::new(),
                failed: None,
                first_id: None,
            });
        }
    }
    if stride != bazan::CreateOptions::default().stride {
        // Leave the default map in the bucket for the next figures.
        bazan::create_map(
            Path::new(&b.url()),
            &bazan::CreateOptions {
                stride: bazan::CreateOptions::default().stride,
                ..options
            },
        )?;
    }
    Ok((on_map.context("no run")?, fresh.context("no run")?))
}

/// Runs `c` and collects its output, unless it runs longer than `timeout`: then it is killed
/// (by its process id) and the answer is `None`.
fn output_within(
    c: &mut Command,
    timeout: Duration,
) -> anyhow::Result<Option<std::process::Output>> {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run the peer")?;
    // Read the pipes on threads so that a chatty child never blocks on a full pipe.
    let mut out = child.stdout.take().context("no stdout")?;
    let mut err = child.stderr.take().context("no stderr")?;
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut v);
        v
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    Ok(status.map(|status| std::process::Output {
        status,
        stdout,
        stderr,
    }))
}
