//! What the freshness check of map answers costs: loads the lake at `LAKE` (mapping it first
//! when it has no map), then prints one JSON line with the best of `RUNS` times of
//! `Lake::check_all_fresh` and of `select count(*) from lake` with the check and with
//! `set_trust_map(true)`, in milliseconds (docs/sql.md, "Freshness check cost").
//!
//! Usage: `fresh_cost LAKE RUNS`

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("fresh_cost: {e}");
        std::process::exit(1);
    }
}

/// The best of `runs` timings of `f`, in milliseconds.
fn best(
    runs: usize,
    mut f: impl FnMut() -> Result<(), Box<dyn std::error::Error>>,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut best = f64::INFINITY;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(best)
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [lake, runs] = args.as_slice() else {
        return Err("usage: fresh_cost LAKE RUNS".into());
    };
    let runs: usize = runs.parse()?;
    let root = Path::new(lake);
    if !root.join(".br_map.bazan").exists() {
        bazan::create_map(root, &bazan::CreateOptions::default())?;
    }
    let loaded = Arc::new(bazan::load_map(root)?);
    let files = loaded.map().total_files();
    let check = best(runs, || Ok(loaded.check_all_fresh()?))?;
    let checked = bazan_sql::SqlSession::with_threads(2)?;
    checked.register_lake_map("lake", Arc::clone(&loaded))?;
    let mut trusted = bazan_sql::SqlSession::with_threads(2)?;
    trusted.set_trust_map(true);
    trusted.register_lake_map("lake", Arc::clone(&loaded))?;
    let q = "select count(*) from lake";
    let count_checked = best(runs, || Ok(checked.sql(q).map(|_| ())?))?;
    let count_trusted = best(runs, || Ok(trusted.sql(q).map(|_| ())?))?;
    println!(
        "{{\"files\": {files}, \"check_all_fresh_ms\": {check:.2}, \"count_checked_ms\": {count_checked:.2}, \"count_trusted_ms\": {count_trusted:.2}}}"
    );
    Ok(())
}
