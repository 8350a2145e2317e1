//! `cargo xtask bench doctor`: Lake Doctor's two modes.
//!
//! - BLAKE3 mode over the generated mixed lake of `bench lake` (over 1 GB, its generator is
//!   reused, under `target/bench-data/lake`) next to `b3sum` hashing the same files in the
//!   same run (`cargo install b3sum`; "peer unavailable" when it is missing). Goal: at least
//!   0.8x b3sum's throughput. The doctor's digests are checked against b3sum's.
//! - Metadata mode over 100,000 small files (`target/bench-data/doctor-100k`, generated once
//!   with its map). Goal: at least 200,000 files/s.
//!
//! Times are the best of several warm runs (the page cache holds the lake after the first).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};
use lake_doctor::{DoctorOptions, DoctorReport, Verdict, diagnose};
use lake_map::{CreateOptions, Fingerprint, LakeMap, MapConfig, StatsColumns, load_map};

use super::timing::best;

/// Small files of the metadata-mode lake.
const SMALL_FILES: usize = 100_000;
/// Files per directory of the metadata-mode lake.
const PER_DIR: usize = 1_000;
/// Bumped whenever the small-file generator changes.
const SMALL_VERSION: &str = "doctor-100k-v1";

fn check_healthy(report: &DoctorReport, map: &LakeMap) -> anyhow::Result<()> {
    ensure!(
        report.verdict() == Verdict::Healthy && report.healthy == map.total_files() as u64,
        "a fresh map is not healthy: {report:?}"
    );
    Ok(())
}

/// Runs the benchmark.
pub fn run() -> anyhow::Result<()> {
    let data = crate::workspace_root().join("target").join("bench-data");
    blake3_mode(&data.join("lake"))?;
    metadata_mode(&data.join("doctor-100k"))
}

fn blake3_mode(lake: &Path) -> anyhow::Result<()> {
    super::lake::generate(lake)?;
    // The map stays in memory: the lake's map file belongs to `bench lake`.
    let options = CreateOptions {
        config: MapConfig {
            fingerprint: Fingerprint::Blake3,
            stats_columns: StatsColumns::None,
            ..MapConfig::default()
        },
        dry_run: true,
        ..CreateOptions::default()
    };
    let map = lake_map::create_map_with(lake, &options)?.map;
    let bytes = map.total_bytes();
    ensure!(
        bytes >= 1_000_000_000,
        "the bench lake has only {bytes} bytes"
    );
    println!(
        "blake3 mode: {} files, {:.2} GB at {}",
        map.total_files(),
        bytes as f64 / 1e9,
        lake.display()
    );
    let doctor = DoctorOptions::default();
    let warm = diagnose(&map, &doctor)?;
    check_healthy(&warm, &map)?;
    ensure!(warm.hashed_bytes == bytes, "not every byte was hashed");
    let (ours, _) = best(5, || {
        let r = diagnose(&map, &doctor)?;
        check_healthy(&r, &map)?;
        Ok(())
    })?;
    let ours_gbs = bytes as f64 / ours.as_secs_f64() / 1e9;
    let files: Vec<PathBuf> = map.entries().map(|e| lake.join(e.path)).collect();
    let peer = match b3sum(&files) {
        Ok(digests) => {
            for (e, d) in map.entries().zip(&digests) {
                ensure!(
                    e.blake3 == Some(d.as_str()),
                    "{}: b3sum says {d}, the map {:?}",
                    e.path,
                    e.blake3
                );
            }
            let (t, _) = best(5, || b3sum(&files))?;
            Some(t)
        }
        Err(err) => {
            println!("peer unavailable: b3sum ({err:#}); install it with `cargo install b3sum`");
            None
        }
    };
    match peer {
        Some(t) => {
            let theirs_gbs = bytes as f64 / t.as_secs_f64() / 1e9;
            println!(
                "{:<48} {:>8.3}s {:>7.2} GB/s   b3sum {:>7.3}s {:>7.2} GB/s   ratio {:.2}x (goal >= 0.8x)",
                "doctor, blake3 mode, whole lake",
                ours.as_secs_f64(),
                ours_gbs,
                t.as_secs_f64(),
                theirs_gbs,
                ours_gbs / theirs_gbs
            );
        }
        None => println!(
            "{:<48} {:>8.3}s {:>7.2} GB/s",
            "doctor, blake3 mode, whole lake",
            ours.as_secs_f64(),
            ours_gbs
        ),
    }
    Ok(())
}

/// Hashes the files with `b3sum --no-names` and returns the digests in the same order.
fn b3sum(files: &[PathBuf]) -> anyhow::Result<Vec<String>> {
    let out = Command::new("b3sum")
        .arg("--no-names")
        .args(files)
        .output()
        .context("cannot run b3sum")?;
    if !out.status.success() {
        bail!(
            "b3sum failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8(out.stdout).context("b3sum printed non-UTF-8")?;
    let digests: Vec<String> = text.lines().map(|l| l.trim().to_string()).collect();
    ensure!(
        digests.len() == files.len(),
        "b3sum printed {} lines",
        digests.len()
    );
    Ok(digests)
}

fn metadata_mode(root: &Path) -> anyhow::Result<()> {
    let map = small_lake(root)?;
    let doctor = DoctorOptions::default();
    check_healthy(&diagnose(&map, &doctor)?, &map)?;
    let (t, _) = best(5, || {
        let r = diagnose(&map, &doctor)?;
        check_healthy(&r, &map)?;
        Ok(())
    })?;
    let (t_all, _) = best(5, || {
        let m = load_map(root)?;
        Ok(diagnose(&m, &doctor)?)
    })?;
    let n = map.total_files() as f64;
    println!(
        "{:<48} {:>8.3}s {:>9.0} files/s (goal >= 200,000); with the map load {:.3}s, {:.0} files/s",
        format!("doctor, metadata mode, {} small files", map.total_files()),
        t.as_secs_f64(),
        n / t.as_secs_f64(),
        t_all.as_secs_f64(),
        n / t_all.as_secs_f64()
    );
    Ok(())
}

/// The 100,000-file lake and its map (metadata fingerprint), made once and reused.
fn small_lake(root: &Path) -> anyhow::Result<LakeMap> {
    let marker = root.join(".generated");
    if fs::read_to_string(&marker).is_ok_and(|s| s == SMALL_VERSION)
        && let Ok(map) = load_map(root)
        && map.total_files() == SMALL_FILES
    {
        return Ok(map);
    }
    if root.exists() {
        fs::remove_dir_all(root)?;
    }
    println!(
        "generating {SMALL_FILES} small files at {} (once)...",
        root.display()
    );
    for i in 0..SMALL_FILES {
        let dir = root.join(format!("d{:03}", i / PER_DIR));
        if i % PER_DIR == 0 {
            fs::create_dir_all(&dir)?;
        }
        fs::write(
            dir.join(format!("f{i:06}.csv")),
            format!("id,v\n{i},{}\n", i * 7),
        )?;
    }
    let options = CreateOptions {
        config: MapConfig {
            stats_columns: StatsColumns::None,
            ..MapConfig::default()
        },
        ..CreateOptions::default()
    };
    let map = lake_map::create_map_with(root, &options)?.map;
    fs::write(&marker, SMALL_VERSION)?;
    Ok(map)
}
