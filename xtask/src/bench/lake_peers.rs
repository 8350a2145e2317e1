//! The peers of `cargo xtask bench lake`: DuckDB, polars and pyarrow counting the rows of the
//! same files with the same number of threads, each timing itself in a Python script (the
//! interpreter's start-up and the imports are not counted). Every script is printed once,
//! exactly as it runs, so that a reader can repeat the figure.
//!
//! What each peer does per kind of file:
//!
//! | file     | DuckDB                         | polars                       | pyarrow                        |
//! |----------|--------------------------------|------------------------------|--------------------------------|
//! | CSV      | `count(*)` over `read_csv`     | `scan_csv().select(len())`   | `csv.read_csv` (full load)     |
//! | NDJSON   | `count(*)` over `read_json`    | `scan_ndjson().select(len())`| `json.read_json` (full load)   |
//! | Parquet  | `count(*)` (footer)            | `scan_parquet` (footer)      | `ParquetFile.metadata`         |
//! | Arrow    | pyarrow, batch headers only    | `scan_ipc().select(len())`   | batch headers (memory map)     |
//!
//! DuckDB has no built-in Arrow IPC file reader, so its script counts those files as pyarrow
//! does: from the footer's record batch list, reading each batch's header through a memory
//! map without touching its buffers.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};

/// A peer tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// DuckDB (`pip install duckdb`).
    DuckDb,
    /// polars (`pip install polars`).
    Polars,
    /// pyarrow (`pip install pyarrow`).
    PyArrow,
}

impl Peer {
    /// Every peer, in report order.
    pub const ALL: [Peer; 3] = [Peer::DuckDb, Peer::Polars, Peer::PyArrow];

    /// The peer's name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Peer::DuckDb => "DuckDB",
            Peer::Polars => "polars",
            Peer::PyArrow => "pyarrow",
        }
    }

    /// The Python module that must import.
    fn module(self) -> &'static str {
        match self {
            Peer::DuckDb => "duckdb",
            Peer::Polars => "polars",
            Peer::PyArrow => "pyarrow",
        }
    }

    /// True when python3 can import the peer.
    pub fn available(self) -> bool {
        super::timing::python_imports(self.module())
    }

    /// The script's set-up (not timed): imports with `threads` threads.
    fn setup(self, threads: usize) -> String {
        match self {
            Peer::DuckDb => format!(
                "import pyarrow as pa\n{}",
                super::timing::duckdb_connect(threads)
            ),
            Peer::Polars => format!(
                "import os\nos.environ['POLARS_MAX_THREADS'] = '{threads}'\nimport polars as pl"
            ),
            Peer::PyArrow => format!(
                "import pyarrow as pa, pyarrow.csv as pc, pyarrow.json as pj, pyarrow.parquet as pq\npa.set_cpu_count({threads})\npa.set_io_thread_count({threads})"
            ),
        }
    }

    /// The statement that adds the rows of `file` to `n`.
    fn count(self, file: &str) -> String {
        let ext = file.rsplit('.').next().unwrap_or("");
        let arrow_footer = format!(
            "r = pa.ipc.open_file(pa.memory_map({file:?})); n += sum(r.get_batch(i).num_rows for i in range(r.num_record_batches))"
        );
        match (self, ext) {
            (Peer::DuckDb | Peer::PyArrow, "arrow") => arrow_footer,
            (Peer::DuckDb, "csv") => format!(
                "n += con.execute(\"select count(*) from read_csv('{file}', header=true)\").fetchone()[0]"
            ),
            (Peer::DuckDb, "ndjson") => format!(
                "n += con.execute(\"select count(*) from read_json('{file}', format='newline_delimited')\").fetchone()[0]"
            ),
            (Peer::DuckDb, _) => format!(
                "n += con.execute(\"select count(*) from read_parquet('{file}')\").fetchone()[0]"
            ),
            (Peer::Polars, "csv") => {
                format!("n += pl.scan_csv({file:?}).select(pl.len()).collect().item()")
            }
            (Peer::Polars, "ndjson") => {
                format!("n += pl.scan_ndjson({file:?}).select(pl.len()).collect().item()")
            }
            (Peer::Polars, "parquet") => {
                format!("n += pl.scan_parquet({file:?}).select(pl.len()).collect().item()")
            }
            (Peer::Polars, _) => {
                format!("n += pl.scan_ipc({file:?}).select(pl.len()).collect().item()")
            }
            (Peer::PyArrow, "csv") => format!(
                "n += pc.read_csv({file:?}, parse_options=pc.ParseOptions(newlines_in_values=True)).num_rows"
            ),
            (Peer::PyArrow, "ndjson") => format!("n += pj.read_json({file:?}).num_rows"),
            (Peer::PyArrow, _) => format!("n += pq.ParquetFile({file:?}).metadata.num_rows"),
        }
    }

    /// The timed body that counts every row of `files`.
    pub fn body(self, files: &[PathBuf]) -> String {
        let mut body = String::from("n = 0\n");
        for f in files {
            body.push_str(&self.count(&f.display().to_string()));
            body.push('\n');
        }
        body
    }

    /// The whole script: set-up, then the best of `runs` runs of the body; prints the row
    /// count and the best time in seconds.
    pub fn script(self, files: &[PathBuf], threads: usize, runs: usize) -> String {
        let body: Vec<String> = self
            .body(files)
            .lines()
            .map(|l| format!("    {l}"))
            .collect();
        format!(
            "import time\n{}\nbest = 1e9\nfor _ in range({runs}):\n    t = time.perf_counter()\n{}\n    best = min(best, time.perf_counter() - t)\nprint(n)\nprint(best)\n",
            self.setup(threads),
            body.join("\n")
        )
    }

    /// Runs [`Peer::script`]: the rows counted and the best time.
    pub fn run(
        self,
        files: &[PathBuf],
        threads: usize,
        runs: usize,
    ) -> anyhow::Result<(u64, Duration)> {
        run_counting_script(self.name(), &self.script(files, threads, runs))
    }
}

/// Runs a peer's `script` (`python3 -c`) that prints the rows it counted, then its best time
/// in seconds, as the last two lines: those two (`name` in the error of a failed run).
pub fn run_counting_script(name: &str, script: &str) -> anyhow::Result<(u64, Duration)> {
    let out = Command::new("python3")
        .args(["-c", script])
        .output()
        .context("cannot run python3")?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.trim().lines().last().unwrap_or("").to_string();
        bail!("{name} failed: {last}");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.trim().lines().rev();
    let secs: f64 = lines
        .next()
        .unwrap_or("")
        .parse()
        .context("peer printed no time")?;
    let rows: u64 = lines
        .next()
        .unwrap_or("")
        .parse()
        .context("peer printed no count")?;
    Ok((rows, Duration::from_secs_f64(secs)))
}

/// DuckDB's `LIMIT 100 OFFSET k` over one file, with `threads` threads: the best of 3.
pub fn duckdb_limit_offset(
    file: &std::path::Path,
    offset: u64,
    threads: usize,
) -> anyhow::Result<Duration> {
    let f = file.display().to_string();
    let reader = match file.extension().and_then(|e| e.to_str()) {
        Some("csv") => format!("read_csv('{f}', header=true)"),
        Some("ndjson") => format!("read_json('{f}', format='newline_delimited')"),
        _ => format!("read_parquet('{f}')"),
    };
    let script = format!(
        "import time\n{}best = 1e9\nfor _ in range(3):\n    t = time.perf_counter()\n    con.execute(\"select * from {reader} limit 100 offset {offset}\").fetchall()\n    best = min(best, time.perf_counter() - t)\nprint(best)\n",
        super::timing::duckdb_connect(threads)
    );
    super::timing::python_seconds(&script)
}
