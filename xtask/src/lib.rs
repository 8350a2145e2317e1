//! The library behind `cargo xtask`: every task is a function here, so that the integration
//! tests of `xtask/tests` run the same code (tidy, conformance suites) as the command line.
//!
//! Tasks:
//! - `ci`: exactly what CI runs (fmt check, clippy with `-D warnings`, the workspace tests, the
//!   Python package's tests in their own virtual environment, `ci-python` runs that step alone;
//!   then the CSV and JSON scanner fuzz targets for a bounded time);
//! - `tidy`: house rules on the source tree (also an ordinary `#[test]`);
//! - `conformance [SUITE…]`: the registered suites against `../shared/conformance`;
//! - `bench [NAME…]`: the registered benchmarks, in a release build, with peers where installed;
//! - `fixtures`: regenerates `testdata/` deterministically;
//! - `fuzz [TARGET…] [--seconds N]`: libFuzzer targets of `fuzz/` for a bounded time (the row
//!   scanners by default; `ci` runs them for a minute each).

pub mod bench;
pub mod conformance;
pub mod fixtures;
pub mod fuzz;
pub mod python;
pub mod rng;
pub mod tidy;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Runs a peer (a `python3` script) and returns its output. A peer that cannot start or
/// fails is "peer unavailable", with the last line of its error output (`fallback` when it
/// printed none) and `hint` after it.
pub fn run_peer(
    cmd: &mut Command,
    fallback: &str,
    hint: &str,
) -> anyhow::Result<std::process::Output> {
    let out = cmd
        .output()
        .context("peer unavailable: cannot run python3")?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = stderr
            .lines()
            .last()
            .unwrap_or(fallback)
            .trim_start_matches("peer unavailable: ");
        bail!("peer unavailable: {why}{hint}");
    }
    Ok(out)
}

/// The workspace root (the parent of `xtask/`).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// The shared folder beside the checkout (`../shared`), or `BAZAN_SHARED` when set.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("BAZAN_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("..").join("shared"),
    }
}

/// The conformance corpora (`../shared/conformance`).
pub fn conformance_dir() -> PathBuf {
    shared_dir().join("conformance")
}

const USAGE: &str = "usage: cargo xtask <ci | ci-python | tidy | conformance [SUITE…] | bench [NAME…] | fixtures | fuzz [TARGET…] [--seconds N]>";

/// Runs one task from its command-line arguments and returns the process exit code.
pub fn run(args: &[String]) -> anyhow::Result<u8> {
    let Some((task, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return Ok(2);
    };
    match task.as_str() {
        "ci" => ci(),
        "ci-python" => python::ci().map(|()| 0),
        "tidy" => {
            let problems = tidy::check(&workspace_root())?;
            for p in &problems {
                eprintln!("{p}");
            }
            if problems.is_empty() {
                println!("tidy: ok");
                Ok(0)
            } else {
                eprintln!("tidy: {} problem(s)", problems.len());
                Ok(1)
            }
        }
        "conformance" => conformance::main(rest),
        "bench" => bench::main(rest),
        "bench-inner" => bench::inner(rest),
        "fixtures" => fixtures::main(rest),
        "fuzz" => fuzz::main(rest),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(0)
        }
        other => {
            eprintln!("unknown task {other:?}\n{USAGE}");
            Ok(2)
        }
    }
}

/// Runs a command in the workspace root and fails when it fails.
pub fn cmd(program: &str, args: &[&str]) -> anyhow::Result<()> {
    eprintln!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(workspace_root())
        .status()
        .with_context(|| format!("cannot run {program}"))?;
    if !status.success() {
        bail!("`{program} {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

fn ci() -> anyhow::Result<u8> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    cmd(&cargo, &["fmt", "--all", "--", "--check"])?;
    cmd(
        &cargo,
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            // Every feature: `bazan sql` (bazan-cli/sql), the plan codec and the
            // distributed tests of bazan-sql (proto, distributed).
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    cmd(&cargo, &["test", "--workspace", "--all-features"])?;
    python::ci()?;
    fuzz::run(fuzz::SCANNER_TARGETS, fuzz::CI_SECONDS)?;
    Ok(0)
}
