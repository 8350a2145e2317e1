//! `bazan worker` processes and `bazan sql --workers` (feature `sql`): three workers on
//! loopback ports started here (each stopped by PID when its guard drops, and by a watchdog
//! process after [`LIFETIME`] whatever happens to the test) answer as one node does, each runs
//! tasks, a worker killed during a query fails that query naming it within the documented
//! bound, the next query runs on the others, and a restarted worker is used again. The same
//! over the lake in a bucket of a real S3 server (moto on 127.0.0.1, which CI installs: a
//! machine without it fails that test, naming the package). Also: map answers (`count(*)`,
//! `_gid` alone) fail `Stale` after a file changes, unless `--trust-map`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::bazan;

/// The longest a worker of these tests lives.
const LIFETIME: Duration = Duration::from_secs(600);

/// A query on a killed worker must fail within this (`FAILURE_BOUND` of bazan-sql, 10 s, plus
/// the time a debug build needs to wind the query down).
const FAIL_WITHIN: Duration = Duration::from_secs(20);

/// One `bazan worker` process and the lines it printed.
struct WorkerProc {
    child: Child,
    watchdog: Child,
    port: u16,
    lines: Arc<Mutex<Vec<String>>>,
}

impl WorkerProc {
    /// Starts a worker on `127.0.0.1:port` (0: a free port, read back from its first line).
    fn start(port: u16) -> WorkerProc {
        WorkerProc::start_with(port, &[])
    }

    /// [`WorkerProc::start`] with `env` added to the worker's environment.
    fn start_with(port: u16, env: &[(&str, String)]) -> WorkerProc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bazan"))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .args([
                "worker",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--threads",
                "2",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bazan worker");
        let watchdog = watchdog(child.id());
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().expect("piped stderr");
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.split("listening on http://").nth(1) {
                    let _ = tx.send(at.split_whitespace().next().unwrap_or("").to_string());
                }
                sink.lock().expect("lines").push(line);
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("worker on port {port} did not start: {lines:?}"));
        let port = addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {addr:?}"));
        WorkerProc {
            child,
            watchdog,
            port,
            lines,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Lines of the tasks it ran.
    fn tasks(&self) -> usize {
        self.lines
            .lock()
            .expect("lines")
            .iter()
            .filter(|l| l.contains(": task "))
            .count()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A process that kills `pid` after [`LIFETIME`] (the guard of a process a test started, in
/// case the test process itself dies without dropping it).
fn watchdog(pid: u32) -> Child {
    Command::new("sh")
        .args([
            "-c",
            &format!("sleep {}; kill -9 {pid}", LIFETIME.as_secs()),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the watchdog")
}

impl Drop for WorkerProc {
    fn drop(&mut self) {
        self.kill();
        let _ = self.watchdog.kill();
        let _ = self.watchdog.wait();
    }
}

/// The conformance lake (`../shared/conformance/lake/lake`), or `None` with a reason.
fn conformance_lake() -> Option<PathBuf> {
    let shared = match std::env::var_os("BAZAN_SHARED") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    let lake = shared.join("conformance/lake/lake");
    if lake.is_dir() {
        Some(lake)
    } else {
        println!("skipped: no conformance lake at {}", lake.display());
        None
    }
}

/// The files below `src` that [`kept`] accepts (no hidden files, no map), as `(relative
/// path, path)`.
fn kept_files(src: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(src).expect("read dir") {
        let entry = entry.expect("dir entry");
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        let r = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let path = entry.path();
        if path.is_dir() {
            kept_files(&path, &r, out);
        } else if kept(&r) {
            out.push((r, path));
        }
    }
}

/// The files of the conformance lake the tests query: every format, of the large files the
/// Parquet one.
fn kept(r: &str) -> bool {
    (r.ends_with(".parquet") || !r.starts_with("big/")) && r != "msgpack/stream.msgpack"
}

/// A mapped copy of the conformance lake: every format, of the large files the Parquet one.
fn mapped_lake() -> Option<tempfile::TempDir> {
    let src = conformance_lake()?;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut files = Vec::new();
    kept_files(&src, "", &mut files);
    for (rel, path) in files {
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&path, &to).expect("copy");
    }
    let root = dir.path().to_str().expect("utf-8 path");
    let made = bazan(&["map", "create", root]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    Some(dir)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `bazan sql` with `args` after the lake and query, as NDJSON rows sorted by their text.
fn sql(root: &str, query: &str, args: &[&str]) -> Result<Vec<Value>, String> {
    sql_with(&[], root, query, args)
}

/// [`sql`] with `env` added to the process's environment.
fn sql_with(
    env: &[(&str, String)],
    root: &str,
    query: &str,
    args: &[&str],
) -> Result<Vec<Value>, String> {
    let mut all = vec!["sql", root, query, "--format", "ndjson", "--threads", "2"];
    all.extend_from_slice(args);
    let out: Output = Command::new(env!("CARGO_BIN_EXE_bazan"))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(&all)
        .output()
        .expect("bazan runs");
    if !out.status.success() {
        return Err(text(&out.stderr));
    }
    let mut rows: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect();
    rows.sort_by_key(|r| r.to_string());
    Ok(rows)
}

/// Equal rows, floats to 1e-9 relative (sums add in another order on several workers).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn workers_answer_as_one_node_and_survive_a_killed_worker() {
    let Some(dir) = mapped_lake() else {
        return;
    };
    let root = dir.path().to_str().expect("utf-8 path");
    let ts = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tsfile/table.tsfile"
    );
    let ts_spec = format!("t={ts}");
    let mut workers: Vec<WorkerProc> = (0..3).map(|_| WorkerProc::start(0)).collect();
    let urls: Vec<String> = workers.iter().map(WorkerProc::url).collect();
    let list = urls.join(",");

    let queries = [
        "select _path, count(*), sum(v), count(qty), min(price), max(price) from lake group by _path",
        "select code, count(*), sum(v) from lake where code is not null group by code",
        "select count(*), sum(v), count(name) from lake where _gid between 1000 and 100000",
        "select a.code, count(*) from lake a join lake b on a._gid = b._gid + 1 \
         where a._gid between 40000 and 60000 and b._path like 'big/%' group by a.code",
        "select count(*), min(time), max(time) from t",
    ];
    for q in queries {
        let one = sql(root, q, &["--table", &ts_spec]).unwrap_or_else(|e| panic!("{q}: {e}"));
        let many = sql(root, q, &["--table", &ts_spec, "--workers", &list])
            .unwrap_or_else(|e| panic!("{q} on workers: {e}"));
        assert!(!one.is_empty(), "{q}: no rows");
        assert!(
            one.len() == many.len() && one.iter().zip(&many).all(|(a, b)| same(a, b)),
            "{q}:\none node: {one:?}\nworkers: {many:?}"
        );
    }
    for w in &workers {
        assert!(
            w.tasks() > 0,
            "worker {} ran no task: {:?}",
            w.url(),
            w.lines
        );
    }

    // EXPLAIN shows the stages and which worker runs which task.
    let plan = sql(
        root,
        &format!("explain {}", queries[0]),
        &["--workers", &list],
    )
    .expect("explain on workers");
    let plan: String = plan.iter().map(|r| format!("{}\n", r["plan"])).collect();
    assert!(plan.contains("DistributedExec"), "{plan}");
    assert!(
        plan.contains("Stage 1: task 0 -> http://127.0.0.1:"),
        "{plan}"
    );

    // A worker killed during a long query: the query fails in bounded time, naming it.
    let long = "select count(*), sum(a.v + b.v) from lake a join lake b \
                on a._gid % 5000 = b._gid % 5000 where a._path like 'big/%'";
    let victim_url = workers[1].url();
    let victim_port = workers[1].port;
    let before = workers[1].tasks();
    let started = Instant::now();
    let query = {
        let (root, list, long) = (root.to_string(), list.clone(), long.to_string());
        std::thread::spawn(move || sql(&root, &long, &["--workers", &list]))
    };
    while workers[1].tasks() == before && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(workers[1].tasks() > before, "the victim got no task");
    std::thread::sleep(Duration::from_millis(300));
    let killed_at = Instant::now();
    workers[1].kill();
    let result = query.join().expect("query thread");
    let waited = killed_at.elapsed();
    let err = match result {
        Err(e) => e,
        Ok(rows) => panic!(
            "the query finished before the kill ({:?} after start): make it longer: {rows:?}",
            killed_at - started
        ),
    };
    println!("killed worker: the query failed {waited:?} after the kill: {err}");
    assert!(waited < FAIL_WITHIN, "failed after {waited:?}: {err}");
    assert!(
        err.contains(&victim_url.replace("http://", "")),
        "the error does not name {victim_url}: {err}"
    );

    // The next query runs on the other two (the dead one is left out with a note).
    let q = queries[0];
    let one = sql(root, q, &[]).expect("one node");
    let out = bazan(&[
        "sql",
        root,
        q,
        "--format",
        "ndjson",
        "--threads",
        "2",
        "--workers",
        &list,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&victim_url),
        "no note on the dead worker: {}",
        text(&out.stderr)
    );
    let mut rows: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("row"))
        .collect();
    rows.sort_by_key(|r| r.to_string());
    assert!(one.iter().zip(&rows).all(|(a, b)| same(a, b)) && one.len() == rows.len());

    // Restarted on the same port, the worker is used again.
    workers[1] = WorkerProc::start(victim_port);
    let many = sql(root, q, &["--workers", &list]).expect("with the restarted worker");
    assert!(one.iter().zip(&many).all(|(a, b)| same(a, b)) && one.len() == many.len());
    assert!(workers[1].tasks() > 0, "the restarted worker ran no task");
}

#[test]
fn map_answers_fail_stale_after_a_change_unless_trusted() {
    let Some(dir) = mapped_lake() else {
        return;
    };
    let root = dir.path().to_str().expect("utf-8 path");
    let changed = dir.path().join("alpha.csv");
    let mut bytes = std::fs::read(&changed).expect("read alpha.csv");
    bytes.extend_from_slice(b"\n");
    std::fs::write(&changed, bytes).expect("grow alpha.csv");
    for q in [
        "select count(*) from lake",
        "select _gid from lake where _path = 'alpha.csv'",
        "select min(_gid), max(_gid) from lake",
    ] {
        let err = sql(root, q, &[]).expect_err("stale");
        assert!(
            err.contains("alpha.csv") && err.contains("stale"),
            "{q}: {err}"
        );
        let rows = sql(root, q, &["--trust-map"]).unwrap_or_else(|e| panic!("{q}: {e}"));
        assert!(!rows.is_empty(), "{q}");
    }
}

/// A moto S3 server on a free loopback port (`python3 -m moto.server`), killed by PID when
/// dropped (and by a watchdog after [`LIFETIME`]).
struct Moto {
    child: Child,
    watchdog: Child,
    port: u16,
}

impl Moto {
    /// Starts moto and waits until it accepts connections. Without moto this fails, naming
    /// the package: CI installs it, and a test that cannot run must not pass.
    fn start(log: &Path) -> Moto {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let mut child = Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).expect("moto's log file"))
            .spawn()
            .expect("python3 runs (moto needs it: python3 -m pip install 'moto[server]')");
        let watchdog = watchdog(child.id());
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            let exited = child.try_wait().ok().flatten();
            if exited.is_some() || Instant::now() > deadline {
                let _ = child.kill();
                let said = std::fs::read_to_string(log).unwrap_or_default();
                panic!(
                    "moto did not start on 127.0.0.1:{port} ({exited:?}); install it with \
                     python3 -m pip install 'moto[server]': {said}"
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Moto {
            child,
            watchdog,
            port,
        }
    }

    /// The environment that points a process's S3 client at this server, as a worker reads
    /// its credentials from its own environment.
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", format!("http://127.0.0.1:{}", self.port)),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing-secret".into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
    }

    /// `PUT /key` with `body` (a bucket when `key` has no `/`); moto checks no signature.
    fn put(&self, key: &str, body: &[u8]) {
        let path: String = key
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to moto");
        write!(
            s,
            "PUT /{path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        )
        .expect("send");
        s.write_all(body).expect("send the body");
        let mut reply = Vec::new();
        let _ = s.read_to_end(&mut reply);
        let reply = text(&reply);
        assert!(reply.starts_with("HTTP/1.1 200"), "PUT {key}: {reply}");
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = self.watchdog.kill();
        let _ = self.watchdog.wait();
    }
}

#[test]
fn workers_answer_as_one_node_over_a_lake_in_a_bucket() {
    let Some(src) = conformance_lake() else {
        return;
    };
    let logs = tempfile::tempdir().expect("temp dir");
    let moto = Moto::start(&logs.path().join("moto.log"));
    moto.put("lake", b"");
    let mut files = Vec::new();
    kept_files(&src, "", &mut files);
    for (rel, path) in &files {
        let body = std::fs::read(path).expect("read a lake file");
        moto.put(&format!("lake/conf/{rel}"), &body);
    }
    // A table-model TsFile in the lake: its rows are lake rows like any file's.
    let ts = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tsfile/table.tsfile"
    );
    moto.put(
        "lake/conf/ts/table.tsfile",
        &std::fs::read(ts).expect("read the TsFile"),
    );
    let env = moto.env();
    let root = "s3://lake/conf";
    let made = Command::new(env!("CARGO_BIN_EXE_bazan"))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(["map", "create", root])
        .output()
        .expect("bazan runs");
    assert!(made.status.success(), "{}", text(&made.stderr));

    // Two workers, each with the credentials in its own environment.
    let workers: Vec<WorkerProc> = (0..2).map(|_| WorkerProc::start_with(0, &env)).collect();
    let list = workers
        .iter()
        .map(WorkerProc::url)
        .collect::<Vec<_>>()
        .join(",");
    let queries = [
        // Every format of the lake, file by file.
        "select _path, count(*), sum(v), count(qty), min(price), max(price), count(name) \
         from lake group by _path",
        "select count(*), sum(v), count(name), min(day) from lake where _gid between 1000 and 100000",
        "select a.code, count(*) from lake a join lake b on a._gid = b._gid + 1 \
         where a._gid between 40000 and 60000 and b._path like 'big/%' group by a.code",
        "select site, count(*), min(time), max(time), sum(f_int64), avg(f_double) from lake \
         where _path like '%.tsfile' group by site",
    ];
    for q in queries {
        let one = sql_with(&env, root, q, &[]).unwrap_or_else(|e| panic!("{q}: {e}"));
        let many = sql_with(&env, root, q, &["--workers", &list])
            .unwrap_or_else(|e| panic!("{q} on workers: {e}"));
        assert!(!one.is_empty(), "{q}: no rows");
        assert!(
            one.len() == many.len() && one.iter().zip(&many).all(|(a, b)| same(a, b)),
            "{q}:\none node: {one:?}\nworkers: {many:?}"
        );
    }
    // Every format answered: each uploaded file that the map kept is a group of the first query.
    let per_file = sql_with(&env, root, queries[0], &[]).expect("group by _path");
    let groups: Vec<&str> = per_file
        .iter()
        .filter_map(|r| r["_path"].as_str())
        .collect();
    for ext in [
        ".csv", ".tsv", ".psv", ".ndjson", ".jsonl", ".json", ".parquet", ".orc", ".avro",
        ".arrow", ".arrows", ".feather", ".msgpack", ".xlsx", ".tsfile",
    ] {
        assert!(
            groups.iter().any(|p| p.ends_with(ext)),
            "no {ext} file in {groups:?}"
        );
    }
    // Each worker read its own blocks from the bucket.
    for w in &workers {
        let lines = w.lines.lock().expect("lines").clone();
        assert!(
            lines
                .iter()
                .any(|l| l.contains(": task ") && l.contains("lake s3://lake/conf rows=")),
            "worker {} read nothing from the bucket: {lines:?}",
            w.url()
        );
    }
}
