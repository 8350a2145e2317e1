//! `cargo xtask bench tsfile-write`: write throughput in points/s for the rows of the corpus
//! `large` case (4 devices × 50,000 rows × 5 FIELD columns, default codecs, LZ4), our
//! `TsFileWriter` against the official writer (`TsFileWriter.write_arrow_batch` of the Python
//! package `tsfile` 2.5.0, C++ core), both timed from the rows in memory to the closed file.

use std::process::Command;
use std::time::Instant;

use anyhow::Context;
use tsfile_index::TsFileReader;
use tsfile_index::query::TableQuery;
use tsfile_index::writer::{TsFileWriter, WriterOptions};

const PEER_PY: &str = include_str!("tsfile_write_peer.py");
const ROUNDS: usize = 7;
/// Writes per round and side: the peer writes this many times per process (the best is a
/// warm one), and ours as many times in a row, so both figures are the best of as many.
const REPS: usize = 3;
const TABLE: &str = "telemetry";

/// Runs the benchmark and prints the figures.
pub fn run() -> anyhow::Result<()> {
    let src = crate::conformance_dir().join("tsfile/large.tsfile");
    if !src.is_file() {
        println!("skipped: {} is absent", src.display());
        return Ok(());
    }
    let reader = TsFileReader::open(&src).context("our reader on large.tsfile")?;
    let schema = reader
        .table_schema(TABLE)
        .context("large.tsfile has no table telemetry")?
        .clone();
    let batch = reader.read_table(TABLE, &TableQuery::default())?;
    let fields = schema
        .columns
        .iter()
        .filter(|c| c.category == tsfile_format::types::ColumnCategory::Field)
        .count();
    let points = batch.num_rows() * fields;
    let tmp = tempfile::tempdir()?;
    // `TSFILE_WRITE_OURS_ONLY=N` runs only our writer, N times, for profiling it alone
    // (the peer's process would dominate a profile of the whole benchmark).
    if let Some(n) = std::env::var("TSFILE_WRITE_OURS_ONLY")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        let mut best = f64::INFINITY;
        for round in 0..n {
            let path = tmp.path().join(format!("ours{round}.tsfile"));
            let start = Instant::now();
            let mut w = TsFileWriter::create(&path, WriterOptions::default())?;
            w.register_table(TABLE, schema.clone())?;
            w.write_table(TABLE, "time", &batch)?;
            w.close()?;
            best = best.min(start.elapsed().as_secs_f64());
            std::fs::remove_file(&path)?;
        }
        println!(
            "ours only  {points} points in {:.1} ms (best of {n}): {:.1} M points/s",
            best * 1e3,
            points as f64 / best / 1e6
        );
        return Ok(());
    }
    let script = tmp.path().join("tsfile_write_peer.py");
    std::fs::write(&script, PEER_PY)?;
    // Rounds alternate ours (REPS writes with and REPS without the final sync; the official
    // writer does not sync) and the official writer (REPS writes in one process), so that a
    // load change on the machine hits both; each figure is the best write.
    let (mut sync_best, mut best, mut peer_best) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    let (mut size, mut peer_size, mut peer_points) = (0, 0, 0.0);
    for round in 0..ROUNDS {
        for sync in [true, true, true, false, false, false] {
            let path = tmp.path().join(format!("ours{round}{sync}.tsfile"));
            let opts = WriterOptions {
                sync_on_close: sync,
                ..WriterOptions::default()
            };
            let start = Instant::now();
            let mut w = TsFileWriter::create(&path, opts)?;
            w.register_table(TABLE, schema.clone())?;
            w.write_table(TABLE, "time", &batch)?;
            w.close()?;
            let t = start.elapsed().as_secs_f64();
            if sync {
                sync_best = sync_best.min(t);
            } else {
                best = best.min(t);
            }
            size = std::fs::metadata(&path)?.len();
            std::fs::remove_file(&path)?;
        }
        let out = crate::run_peer(
            Command::new("python3")
                .arg(&script)
                .arg(&src)
                .arg(TABLE)
                .arg(REPS.to_string()),
            "the peer script failed",
            "",
        )?;
        let peer: serde_json::Value = serde_json::from_slice(&out.stdout).context("peer output")?;
        peer_best = peer["seconds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_f64)
            .fold(peer_best, f64::min);
        peer_points = peer["points"].as_f64().unwrap_or(0.0);
        peer_size = peer["bytes"].as_u64().unwrap_or(0);
    }
    let mps = |p: f64, t: f64| p / t / 1e6;
    let points_f = points as f64;
    println!(
        "ours+sync  {points} points ({} rows) in {:.1} ms (best of {}): {:.1} M points/s",
        batch.num_rows(),
        sync_best * 1e3,
        ROUNDS * REPS,
        mps(points_f, sync_best)
    );
    println!(
        "ours       {points} points in {:.1} ms (best of {}): {:.1} M points/s, {size} bytes",
        best * 1e3,
        ROUNDS * REPS,
        mps(points_f, best)
    );
    println!(
        "official   {peer_points} points in {:.1} ms (best of {}): {:.1} M points/s, {peer_size} bytes",
        peer_best * 1e3,
        ROUNDS * REPS,
        mps(peer_points, peer_best)
    );
    println!(
        "ratio      ours / official throughput = {:.2}x (with sync {:.2}x)",
        mps(points_f, best) / mps(peer_points, peer_best),
        mps(points_f, sync_best) / mps(peer_points, peer_best)
    );
    Ok(())
}
