//! `cargo xtask bench sql`: bazan-sql (DataFusion over the lake map) against DuckDB in the
//! same run with the same thread count, on the generated lake of `bench lake` (`simple`
//! profile: 32M rows in CSV, NDJSON, Parquet and Arrow IPC files, `id` sorted across files).
//! Arrow files are left out of both sides (DuckDB reads no Arrow IPC without pyarrow): our
//! queries filter `_path not like '%.arrow'`, which the map answers without reading.
//!
//! Figures (issue 20): `count(*)` of the lake; 100 rows by `_gid` range deep in a CSV vs
//! DuckDB `LIMIT 100 OFFSET k`; a selective filter on the sorted `id` (blocks read / blocks of
//! the lake, as the scan counts them); a full `group by` on the Parquet files and on the
//! CSV+NDJSON files. The two sides alternate in rounds (`--rounds N`, default 3): each side's
//! best over the rounds is reported with the spread of the rounds' ratios. Our side runs
//! `crates/bazan-sql/examples/sql_bench.rs` in a release build, so xtask does not link
//! DataFusion.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use super::sql_queries::{FACTS, OurQueries, queries_from};
use super::timing::{duckdb_connect, python_imports, python_seconds};

/// Runs the benchmark (with `--workers N`: [`super::sql_workers::run`]).
pub fn run() -> anyhow::Result<()> {
    if let Some(n) = super::option("workers") {
        return super::sql_workers::run(n.parse().context("--workers takes a number")?);
    }
    let dir = crate::workspace_root().join("target").join("bench-data");
    let lake = dir.join("lake");
    super::lake::generate(&lake)?;
    let threads = match super::option("threads") {
        Some(t) => t.parse().context("--threads takes a number")?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&lake)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "csv" || e == "ndjson" || e == "parquet")
        })
        .collect();
    files.sort();
    let deep_csv = lake.join("p08.csv");
    println!(
        "sql: lake {} ({threads} threads on both sides)",
        lake.display()
    );

    let ours_queries = our_queries(&lake, threads)?;
    let (a, b) = ours_queries.id_range;
    let queries: Vec<String> = ours_queries
        .queries
        .iter()
        .map(|(_, q)| q.clone())
        .collect();
    if !python_imports("duckdb") {
        println!("peer unavailable: python3 -m pip install duckdb");
    }
    let list = |ext: &str| -> String {
        let items: Vec<String> = files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .map(|p| format!("'{}'", p.display()))
            .collect();
        format!("[{}]", items.join(", "))
    };
    let (csv, nd, pq) = (list("csv"), list("ndjson"), list("parquet"));
    let all = format!(
        "(select id, code, v, x from read_csv({csv}, header=true) union all \
         select id, code, v, x from read_json({nd}, format='newline_delimited') union all \
         select id, code, v, x from read_parquet({pq}))"
    );
    let rows_text = format!(
        "(select code, v, x from read_csv({csv}, header=true) union all \
         select code, v, x from read_json({nd}, format='newline_delimited'))"
    );
    let duck = [
        format!("select count(*) from {all}"),
        format!(
            "select * from read_csv('{}', header=true) limit 100 offset 2900000",
            deep_csv.display()
        ),
        format!("select count(*), sum(v) from {all} where id between {a} and {b}"),
        format!("select code, count(*), sum(v), avg(x) from read_parquet({pq}) group by code"),
        format!("select code, count(*), sum(v), avg(x) from {rows_text} group by code"),
    ];
    let names: Vec<&str> = ours_queries.queries.iter().map(|(n, _)| *n).collect();
    // Rounds alternate the two sides (all our queries, then each DuckDB query), so that a
    // machine whose speed drifts over minutes slows both alike; each side reports its best
    // over all rounds, and the spread of the per-round ratios is printed beside it.
    let rounds: usize = match super::option("rounds") {
        Some(r) => r.parse().context("--rounds takes a number")?,
        None => 3,
    };
    let mut results: Vec<Value> = Vec::new();
    let mut best_ours = vec![f64::INFINITY; queries.len()];
    let mut best_duck: Vec<Option<f64>> = vec![None; duck.len()];
    let mut duck_error: Vec<Option<String>> = vec![None; duck.len()];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); queries.len()];
    for round in 1..=rounds.max(1) {
        println!("sql: round {round} of {}", rounds.max(1));
        let r = ours(&lake, threads, 3, &queries)?;
        for (i, (q, sql)) in r.iter().zip(&duck).enumerate() {
            let ours_s = q["seconds"].as_f64().unwrap_or(f64::NAN);
            best_ours[i] = best_ours[i].min(ours_s);
            match duckdb_best(threads, sql) {
                Ok(d) => {
                    let d = d.as_secs_f64();
                    best_duck[i] = Some(best_duck[i].map_or(d, |b: f64| b.min(d)));
                    ratios[i].push(d / ours_s);
                }
                Err(e) => duck_error[i] = Some(e.to_string()),
            }
        }
        results = r;
    }
    println!(
        "{:<46} {:>12} {:>12} {:>9} {:>15}  scan",
        "query", "bazan-sql", "DuckDB", "ratio", "rounds' ratios"
    );
    for (i, (name, r)) in names.iter().zip(&results).enumerate() {
        let ours_s = best_ours[i];
        let (theirs_text, ratio) = match (best_duck[i], &duck_error[i]) {
            (Some(d), _) => (format!("{d:.4} s"), format!("{:.2}x", d / ours_s)),
            (None, Some(e)) => (format!("n/a ({e})"), "-".into()),
            (None, None) => ("n/a".into(), "-".into()),
        };
        let lo = ratios[i].iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios[i].iter().copied().fold(0.0, f64::max);
        let spread = if ratios[i].is_empty() {
            "-".to_string()
        } else {
            format!("{lo:.2}-{hi:.2}x")
        };
        println!(
            "{name:<46} {:>10.4} s {theirs_text:>12} {ratio:>9} {spread:>15}  blocks {}/{} read, {} rows scanned",
            ours_s, r["blocks_read"], r["blocks_total"], r["rows_scanned"]
        );
    }
    println!(
        "both sides ran each query once to warm up, then 3 times (best kept), in each round; DuckDB as:"
    );
    for sql in &duck {
        println!(
            "  python3 -c \"import duckdb; c = duckdb.connect(); c.execute('set threads={threads}'); c.execute('set enable_progress_bar=false'); c.execute(\\\"{sql}\\\").fetchall()\""
        );
    }
    Ok(())
}

/// The five queries of the bench on the lake at `lake`, after the facts they need (answered
/// from the map, by `sql_bench`).
pub(super) fn our_queries(lake: &Path, threads: usize) -> anyhow::Result<OurQueries> {
    let facts = ours(lake, threads, 1, &FACTS.map(String::from))?;
    Ok(queries_from(cell_i64(&facts, 0)?, cell_i64(&facts, 1)?))
}

/// Runs the example binary on the lake (creating the map first when it has none) and
/// returns one JSON object per query.
fn ours(
    lake: &Path,
    threads: usize,
    runs: usize,
    queries: &[String],
) -> anyhow::Result<Vec<Value>> {
    if !lake.join(".br_map.bazan").exists() {
        println!(
            "sql: mapping {} with default statistics (once)",
            lake.display()
        );
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "run",
            "--release",
            "--quiet",
            "--package",
            "bazan-sql",
            "--example",
            "sql_bench",
            "--",
        ])
        .arg(lake)
        .arg(threads.to_string())
        .arg(runs.to_string())
        .args(queries)
        .current_dir(crate::workspace_root())
        .output()
        .context("cannot run cargo")?;
    if !out.status.success() {
        bail!("sql_bench failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut results = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).context("sql_bench output")?;
        if v.get("query").is_some() {
            results.push(v);
        }
    }
    Ok(results)
}

/// The first cell of the first row a fact query printed.
fn cell_i64(results: &[Value], i: usize) -> anyhow::Result<i64> {
    results
        .get(i)
        .and_then(|r| r["first"].as_i64())
        .with_context(|| format!("fact query {i} returned no integer"))
}

/// DuckDB's best time of 3 runs of `sql` on `threads` threads, after one warm-up.
fn duckdb_best(threads: usize, sql: &str) -> anyhow::Result<Duration> {
    let script = format!(
        "import time\n{}q = {sql:?}\ncon.execute(q).fetchall()\nbest = 1e9\nfor _ in range(3):\n    t = time.perf_counter()\n    con.execute(q).fetchall()\n    best = min(best, time.perf_counter() - t)\nprint(best)\n",
        duckdb_connect(threads)
    );
    python_seconds(&script)
}
