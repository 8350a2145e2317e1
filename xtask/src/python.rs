//! The Python step of `cargo xtask ci`: a virtual environment in `target/py-venv` with the
//! test requirements of `python/requirements-test.txt`, the extension built once (debug) into
//! it with `maturin develop` in the shared target directory, then the pytest suite of
//! `python/tests` (which also runs the native `bazan` binary of `target/debug`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::workspace_root;

/// The cargo target directory (`CARGO_TARGET_DIR`, else `target/`).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("target"),
    }
}

/// A virtual environment at `venv` with `requirements` installed, created when missing;
/// returns its interpreter.
pub fn venv(venv: &Path, requirements: &Path) -> anyhow::Result<PathBuf> {
    let python = venv.join("bin").join("python");
    if !python.exists() {
        run(Command::new("python3").arg("-m").arg("venv").arg(venv))?;
    }
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(requirements))?;
    Ok(python)
}

/// Builds the extension into `venv` with `maturin develop` (`--release` when asked), reusing
/// the shared target directory so that nothing already built is compiled again.
pub fn develop(venv: &Path, release: bool) -> anyhow::Result<()> {
    let bin = venv.join("bin");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.clone()];
    paths.extend(std::env::split_paths(&path));
    let mut c = Command::new(bin.join("maturin"));
    c.arg("develop")
        .current_dir(workspace_root().join("python"))
        .env("VIRTUAL_ENV", venv)
        .env("PATH", std::env::join_paths(paths)?)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("CARGO");
    if release {
        c.arg("--release");
    }
    run(&mut c)
}

fn run(c: &mut Command) -> anyhow::Result<()> {
    eprintln!("$ {c:?}");
    let status = c.status().with_context(|| format!("cannot run {c:?}"))?;
    if !status.success() {
        bail!("{c:?} failed ({status})");
    }
    Ok(())
}

/// The CI step: venv, extension, the native CLI, pytest. pytest's exit code 5 (no test
/// collected) is a failure: the suite is never meant to be empty.
pub fn ci() -> anyhow::Result<()> {
    let root = workspace_root();
    let target = target_dir();
    let venv_dir = target.join("py-venv");
    let python = venv(
        &venv_dir,
        &root.join("python").join("requirements-test.txt"),
    )?;
    develop(&venv_dir, false)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(&cargo)
        .args([
            "build",
            "-p",
            "bazan-cli",
            "--bin",
            "bazan",
            "--features",
            "sql",
        ])
        .current_dir(&root))?;
    let mut c = Command::new(&python);
    c.args([
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "python/tests",
    ])
    .current_dir(&root)
    .env("BAZAN_CLI", target.join("debug").join("bazan"))
    .env("PYTHONDONTWRITEBYTECODE", "1");
    eprintln!("$ {c:?}");
    let status = c.status().context("cannot run pytest")?;
    match status.code() {
        Some(0) => Ok(()),
        Some(5) => bail!("pytest collected no tests in python/tests"),
        _ => bail!("the Python tests failed ({status})"),
    }
}
