//! The coordinator of `cargo xtask bench sql --workers N` (feature `grpc`): maps the lake
//! when it has no map (as `sql_bench` does), registers it in a one-node session and in a session on the `bazan worker` processes given, then reads
//! one request a line from stdin and answers each with one JSON line on stdout, so that the
//! caller can read the CPU time of every process between two requests.
//!
//! Requests: `one\tQUERY` and `workers\tQUERY` run the query once to warm up and then `RUNS`
//! times on that session (`seconds`: the best wall time, `total_seconds`: all of them, with the
//! warm-up); `plan\tQUERY` plans it on the workers' session `RUNS` times without running it
//! (`seconds`: the best). A reply also holds the result's rows, its first cell when that is an
//! integer, and what the lake scans read.
//!
//! Usage: `sql_workers_bench LAKE THREADS RUNS URL[,URL…]`

#[cfg(feature = "grpc")]
fn main() {
    if let Err(e) = run() {
        eprintln!("sql_workers_bench: {e}");
        std::process::exit(1);
    }
}

#[cfg(not(feature = "grpc"))]
fn main() {
    eprintln!("sql_workers_bench: build with --features grpc");
    std::process::exit(2);
}

#[cfg(feature = "grpc")]
fn run() -> Result<(), Box<dyn std::error::Error>> {
    use std::io::{BufRead, Write};
    use std::path::Path;
    use std::time::Instant;

    let args: Vec<String> = std::env::args().skip(1).collect();
    let [lake, threads, runs, workers] = args.as_slice() else {
        return Err("usage: sql_workers_bench LAKE THREADS RUNS URL[,URL…]".into());
    };
    let threads: usize = threads.parse()?;
    let runs: usize = runs.parse::<usize>()?.max(1);
    let urls: Vec<&str> = workers.split(',').collect();
    if !Path::new(lake).join(".br_map.bazan").exists() {
        // As `sql_bench` maps it, so that both benches read the same map.
        bazan::create_map(Path::new(lake), &bazan::CreateOptions::default())?;
    }
    let one = bazan_sql::SqlSession::with_threads(threads)?;
    let t = Instant::now();
    one.register_lake("lake", Path::new(lake))?;
    let register = t.elapsed().as_secs_f64();
    let cluster = bazan_sql::cluster::Cluster::new(&urls)?;
    let many = bazan_sql::SqlSession::on_cluster(cluster, threads)?;
    many.register_lake("lake", Path::new(lake))?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}",
        serde_json::json!({"register_seconds": register, "runs": runs})
    )?;
    out.flush()?;
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let Some((mode, query)) = line.split_once('\t') else {
            return Err(format!("expected MODE<TAB>QUERY, got {line:?}").into());
        };
        let (mut best, mut total) = (f64::MAX, 0.0);
        let mut reply = serde_json::json!({"mode": mode, "query": query});
        match mode {
            "plan" => {
                for _ in 0..runs {
                    let t = Instant::now();
                    many.explain(query)?;
                    best = best.min(t.elapsed().as_secs_f64());
                }
            }
            "one" | "workers" => {
                let session = if mode == "one" { &one } else { &many };
                let mut last = None;
                for i in 0..=runs {
                    let t = Instant::now();
                    let got = session.sql_counted(query)?;
                    let s = t.elapsed().as_secs_f64();
                    total += s;
                    if i > 0 {
                        best = best.min(s);
                    }
                    last = Some(got);
                }
                let got = last.ok_or("no run")?;
                let rows: usize = got.batches.iter().map(|b| b.num_rows()).sum();
                reply["rows"] = rows.into();
                // The first cell when it is an integer (the bench's fact queries).
                let first = got.batches.iter().find(|b| b.num_rows() > 0).and_then(|b| {
                    let a = arrow_cast::cast(b.column(0), &arrow_schema::DataType::Int64).ok()?;
                    let a = a.as_any().downcast_ref::<arrow_array::Int64Array>()?;
                    (!arrow_array::Array::is_null(a, 0)).then(|| a.value(0))
                });
                reply["first"] = first.into();
                reply["rows_scanned"] = got.counts.rows_scanned.into();
                reply["blocks_read"] = got.counts.blocks_read.into();
                reply["notes"] = got.notes.into();
            }
            other => return Err(format!("unknown mode {other:?}").into()),
        }
        reply["seconds"] = best.into();
        reply["total_seconds"] = total.into();
        writeln!(out, "{reply}")?;
        out.flush()?;
    }
    Ok(())
}
