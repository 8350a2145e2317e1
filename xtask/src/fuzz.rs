//! `cargo xtask fuzz [TARGET…] [--seconds N]`: the libFuzzer targets of `fuzz/` run for a
//! bounded time, on the pinned stable toolchain, without cargo-fuzz.
//!
//! The targets are built as cargo-fuzz builds them with `--sanitizer none` (libFuzzer's
//! coverage instrumentation: `-Cpasses=sancov-module` and its LLVM options, all stable
//! flags), in the `smoke` profile of `fuzz/Cargo.toml`: dependencies unoptimised, the
//! scanners optimised. That build takes about three minutes on two cores from a cold cache,
//! where the AddressSanitizer release build of `cargo fuzz` takes over thirty; the scanners'
//! differential checks (vector path, portable path, random range splits) are what find bugs
//! there, and they panic on any difference with or without a sanitizer.
//!
//! Each target starts from a seed corpus made of the repository's own test files (the first
//! 4 KiB of each CSV or NDJSON file under `testdata/`, behind option bytes) plus whatever an
//! earlier run left in `target/fuzz-smoke/corpus/`. A crash fails the task and prints the
//! input (hex) and where libFuzzer saved it. `cargo xtask ci` runs the CSV and JSON scanner
//! targets for [`CI_SECONDS`] each.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Seconds each target runs in `cargo xtask ci`.
pub const CI_SECONDS: u64 = 60;

/// The targets `cargo xtask fuzz` runs when none is named: the row scanners (issue 21).
pub const SCANNER_TARGETS: &[&str] = &["csv_scan", "json_scan"];

/// Largest input libFuzzer makes (the scanners' interesting cases are short).
const MAX_LEN: usize = 4096;

/// Entry point of `cargo xtask fuzz`.
pub fn main(args: &[String]) -> anyhow::Result<u8> {
    let mut seconds = CI_SECONDS;
    let mut targets: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                seconds = it
                    .next()
                    .context("--seconds takes a number")?
                    .parse()
                    .context("--seconds takes a number")?;
            }
            t if t.starts_with('-') => {
                bail!("unknown option {t:?} (usage: cargo xtask fuzz [TARGET…] [--seconds N])")
            }
            t => targets.push(t.to_string()),
        }
    }
    if targets.is_empty() {
        targets = SCANNER_TARGETS.iter().map(|t| t.to_string()).collect();
    }
    let names: Vec<&str> = targets.iter().map(String::as_str).collect();
    run(&names, seconds)?;
    Ok(0)
}

/// Builds `targets` and runs each for `seconds`; fails on the first crash.
pub fn run(targets: &[&str], seconds: u64) -> anyhow::Result<()> {
    let root = crate::workspace_root();
    let work = root.join("target").join("fuzz-smoke");
    let bins = build(&root, &work, targets)?;
    for (target, bin) in targets.iter().zip(&bins) {
        let corpus = work.join("corpus").join(target);
        let seeds = work.join("seeds").join(target);
        let artifacts = work.join("artifacts").join(target);
        // Crashes of an earlier run are not this run's findings.
        let _ = std::fs::remove_dir_all(&artifacts);
        for dir in [&corpus, &seeds, &artifacts] {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let n = write_seeds(&root.join("testdata"), target, &seeds)?;
        eprintln!("fuzz: {target} for {seconds} s ({n} seed files from testdata/)");
        let out = Command::new(bin)
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-max_len={MAX_LEN}"))
            .arg("-timeout=60")
            .arg("-rss_limit_mb=4096")
            .arg("-print_final_stats=1")
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .arg(&corpus)
            .arg(&seeds)
            .output()
            .with_context(|| format!("cannot run {}", bin.display()))?;
        let log = String::from_utf8_lossy(&out.stderr);
        let summary: Vec<&str> = log
            .lines()
            .filter(|l| l.starts_with("stat::") || l.starts_with("Done "))
            .collect();
        eprintln!("fuzz: {target}: {}", summary.join("; "));
        if !out.status.success() {
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            for line in tail.iter().rev() {
                eprintln!("  {line}");
            }
            let crashes = crash_files(&artifacts)?;
            for crash in &crashes {
                let bytes = std::fs::read(crash).unwrap_or_default();
                eprintln!(
                    "fuzz: {target} found an input that fails: {} ({} bytes)\n  hex: {}",
                    crash.display(),
                    bytes.len(),
                    hex(&bytes)
                );
            }
            let again: Vec<String> = crashes
                .iter()
                .map(|c| format!("{} {}", bin.display(), c.display()))
                .collect();
            bail!(
                "fuzz target {target} failed ({}); reproduce with: {}",
                out.status,
                again.join("; ")
            );
        }
    }
    Ok(())
}

/// Builds the targets with libFuzzer's coverage instrumentation and returns their paths.
fn build(root: &Path, work: &Path, targets: &[&str]) -> anyhow::Result<Vec<PathBuf>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let host = host_triple(&cargo)?;
    // The flags cargo-fuzz passes for `--sanitizer none`; `--target` keeps them off build
    // scripts and proc macros, as cargo-fuzz does.
    let rustflags = [
        "-Cpasses=sancov-module",
        "-Cllvm-args=-sanitizer-coverage-level=4",
        "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
        "-Cllvm-args=-sanitizer-coverage-pc-table",
        "-Cllvm-args=-sanitizer-coverage-trace-compares",
        "--cfg",
        "fuzzing",
        "-Cdebug-assertions",
        "-Coverflow-checks",
    ]
    .join(" ");
    let target_dir = work.join("build");
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(root.join("fuzz"))
        .args(["build", "--profile", "smoke", "--target", &host])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("RUSTFLAGS", &rustflags)
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    for t in targets {
        cmd.args(["--bin", t]);
    }
    eprintln!(
        "$ RUSTFLAGS=\"{rustflags}\" cargo build --profile smoke --target {host} --target-dir {} {} (in fuzz/)",
        target_dir.display(),
        targets
            .iter()
            .map(|t| format!("--bin {t}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let status = cmd.status().context("cannot run cargo")?;
    if !status.success() {
        bail!("building the fuzz targets failed ({status})");
    }
    let dir = target_dir.join(&host).join("smoke");
    Ok(targets.iter().map(|t| dir.join(t)).collect())
}

/// The host's target triple, from `rustc -vV`.
fn host_triple(cargo: &str) -> anyhow::Result<String> {
    // `cargo` and `rustc` sit side by side in a toolchain; fall back to the one on PATH.
    let rustc = Path::new(cargo)
        .parent()
        .map(|d| d.join("rustc"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("rustc"));
    let out = Command::new(&rustc)
        .arg("-vV")
        .output()
        .with_context(|| format!("cannot run {}", rustc.display()))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .context("rustc -vV printed no host triple")
}

/// Writes the seed inputs of `target` into `dir` and returns how many there are: for each
/// test file of the target's kind, its first bytes behind each of four option prefixes
/// (statistics on and off, a short and a long split range).
fn write_seeds(testdata: &Path, target: &str, dir: &Path) -> anyhow::Result<usize> {
    let exts: &[&str] = match target {
        "csv_scan" => &["csv", "tsv", "psv", "txt"],
        "json_scan" => &["ndjson", "jsonl", "json"],
        _ => return Ok(0),
    };
    let mut files = Vec::new();
    collect(testdata, exts, &mut files)?;
    files.sort();
    let mut n = 0;
    for (i, file) in files.iter().enumerate() {
        let data =
            std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
        let body = &data[..data.len().min(MAX_LEN - 2)];
        for (j, head) in [[0x01u8, 0x00], [0x83, 0x02], [0x07, 0x40], [0x84, 0xff]]
            .iter()
            .enumerate()
        {
            let mut input = head.to_vec();
            input.extend_from_slice(body);
            let path = dir.join(format!("seed-{i:03}-{j}"));
            std::fs::write(&path, input)
                .with_context(|| format!("cannot write {}", path.display()))?;
            n += 1;
        }
    }
    Ok(n)
}

fn collect(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries {
        let path = e?.path();
        if path.is_dir() {
            collect(&path, exts, out)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e.to_ascii_lowercase().as_str()))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// The files libFuzzer wrote into `dir` (crash-, timeout-, oom- and leak- inputs).
fn crash_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        out.push(e?.path());
    }
    out.sort();
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_the_test_files_behind_each_option_prefix() {
        let tmp = std::env::temp_dir().join(format!("xtask-fuzz-seeds-{}", std::process::id()));
        let data = tmp.join("data");
        let out = tmp.join("out");
        std::fs::create_dir_all(data.join("deep")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(data.join("a.csv"), b"x,y\n1,2\n").unwrap();
        std::fs::write(data.join("deep").join("b.TSV"), vec![b'z'; 10_000]).unwrap();
        std::fs::write(data.join("c.ndjson"), b"{}\n").unwrap();
        assert_eq!(write_seeds(&data, "csv_scan", &out).unwrap(), 8);
        let first = std::fs::read(out.join("seed-000-0")).unwrap();
        assert_eq!(first, b"\x01\x00x,y\n1,2\n");
        let long = std::fs::read(out.join("seed-001-3")).unwrap();
        assert_eq!(long.len(), MAX_LEN);
        assert_eq!(&long[..2], &[0x84, 0xff]);
        assert_eq!(write_seeds(&data, "decode_int", &out).unwrap(), 0);
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn hex_is_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xff]), "000fff");
    }
}
