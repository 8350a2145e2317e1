//! The bazan-sql side of `cargo xtask bench sql`: registers a lake, runs each query `RUNS`
//! times (after one warm-up run when `RUNS` > 1) and prints, per query, one JSON line with
//! the best wall time, the rows returned and what the lake scan read.
//!
//! Usage: `sql_bench LAKE THREADS RUNS QUERY…`

use std::path::Path;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("sql_bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [lake, threads, runs, queries @ ..] = args.as_slice() else {
        return Err("usage: sql_bench LAKE THREADS RUNS QUERY…".into());
    };
    let threads: usize = threads.parse()?;
    let runs: usize = runs.parse()?;
    if !Path::new(lake).join(".br_map.bazan").exists() {
        bazan::create_map(Path::new(lake), &bazan::CreateOptions::default())?;
    }
    let session = bazan_sql::SqlSession::with_threads(threads)?;
    let t = Instant::now();
    session.register_lake("lake", Path::new(lake))?;
    let register = t.elapsed().as_secs_f64();
    println!("{}", serde_json::json!({"register_seconds": register}));
    for q in queries {
        let mut best = f64::MAX;
        let mut last = None;
        if runs > 1 {
            // One warm-up run, as the DuckDB side of the bench gets.
            session.sql_counted(q)?;
        }
        for _ in 0..runs.max(1) {
            let t = Instant::now();
            let out = session.sql_counted(q)?;
            best = best.min(t.elapsed().as_secs_f64());
            last = Some(out);
        }
        let out = last.ok_or("no run")?;
        let rows: usize = out.batches.iter().map(|b| b.num_rows()).sum();
        // The first cell when it is an integer (the bench's fact queries).
        let first = out.batches.iter().find(|b| b.num_rows() > 0).and_then(|b| {
            arrow_cast::cast(b.column(0), &arrow_schema::DataType::Int64)
                .ok()
                .and_then(|a| {
                    use arrow_array::Array;
                    let a = a.as_any().downcast_ref::<arrow_array::Int64Array>()?;
                    (!a.is_null(0)).then(|| a.value(0))
                })
        });
        println!(
            "{}",
            serde_json::json!({
                "query": q,
                "seconds": best,
                "rows": rows,
                "first": first,
                "files_opened": out.counts.files_opened,
                "blocks_read": out.counts.blocks_read,
                "blocks_total": out.counts.blocks_total,
                "rows_scanned": out.counts.rows_scanned,
            })
        );
    }
    Ok(())
}
