//! The Python step of `cargo xtask ci`: a virtual environment in `target/py-venv` with the
//! test requirements of `python/requirements-test.txt`, the extension installed into it
//! (editable, as `maturin develop` does) from the debug build the Rust tests already made, then
//! the pytest suite of `python/tests` (which also runs the native `bazan` binary of
//! `target/debug`).
//!
//! Why not `maturin develop` in CI: it builds the extension crate alone, so cargo resolves the
//! features of DataFusion, tokio and the rest for that crate only, which differ from the
//! workspace's `--all-features` test build (`proto`, `distributed`, the dev-dependencies), and
//! it compiled the whole DataFusion stack a second time (about 10 minutes of a 2-core CI run).
//! `cargo build --workspace --all-features --lib --bins --tests --examples` resolves features
//! exactly as `cargo test --workspace --all-features` does, so it reuses every unit the tests
//! built and adds only pyo3 and the `cdylib`. The package metadata, including the console
//! script, still comes from maturin itself (`maturin pep517 write-dist-info`), so a broken
//! `pyproject.toml` still fails CI.

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

/// Builds the workspace as `cargo test --workspace --all-features` resolves it (so nothing the
/// tests built is compiled again; this also makes `target/debug/bazan` with `sql`), then
/// installs the extension into `venv` the way `maturin develop` does for this mixed project:
/// the `cdylib` as `python/bazan/_bazan.abi3.so`, a `.pth` file naming `python/`, the
/// `.dist-info` that maturin writes from `pyproject.toml`, and its console scripts.
fn install_from_workspace_build(venv: &Path, python: &Path) -> anyhow::Result<()> {
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(&cargo)
        .args([
            "build",
            "--workspace",
            "--all-features",
            "--lib",
            "--bins",
            "--tests",
            "--examples",
        ])
        // What maturin sets: an extension module does not link libpython.
        .env("PYO3_BUILD_EXTENSION_MODULE", "1")
        .env("PYO3_PYTHON", python)
        .current_dir(&root))?;
    let built = target_dir().join("debug").join("lib_bazan.so");
    let package = root.join("python").join("bazan");
    let module = package.join("_bazan.abi3.so");
    // A new inode rather than writing over a library some interpreter may have mapped.
    let _ = std::fs::remove_file(&module);
    std::fs::copy(&built, &module)
        .with_context(|| format!("cannot copy {} to {}", built.display(), module.display()))?;

    let out = Command::new(python)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .context("cannot ask the venv's interpreter for its site-packages")?;
    if !out.status.success() {
        bail!("{} could not name its site-packages", python.display());
    }
    let site = PathBuf::from(String::from_utf8(out.stdout)?.trim());
    let python_dir = root.join("python");
    std::fs::write(
        site.join("bazan.pth"),
        format!("{}\n", python_dir.display()),
    )?;
    for entry in std::fs::read_dir(&site)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("bazan-") && name.ends_with(".dist-info") {
            std::fs::remove_dir_all(&path)?;
        }
    }
    run(Command::new(venv.join("bin").join("maturin"))
        .args(["pep517", "write-dist-info", "--metadata-directory"])
        .arg(&site)
        .current_dir(&python_dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("CARGO"))?;
    let dist_info = std::fs::read_dir(&site)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("bazan-") && n.ends_with(".dist-info"))
        })
        .context("maturin wrote no bazan-*.dist-info")?;
    std::fs::write(dist_info.join("INSTALLER"), "cargo-xtask\n")?;
    let entry_points = dist_info.join("entry_points.txt");
    let text = std::fs::read_to_string(&entry_points)
        .with_context(|| format!("cannot read {}", entry_points.display()))?;
    for (name, target) in console_scripts(&text) {
        let (module, function) = target
            .split_once(':')
            .with_context(|| format!("console script {name} = {target}: no `module:function`"))?;
        let script = venv.join("bin").join(&name);
        std::fs::write(
            &script,
            format!(
                "#!{}\nimport sys\nfrom {module} import {function}\nsys.exit({function}())\n",
                python.display()
            ),
        )?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

/// The `name = module:function` lines of the `[console_scripts]` section of an
/// `entry_points.txt`.
fn console_scripts(text: &str) -> Vec<(String, String)> {
    let mut in_section = false;
    let mut scripts = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == "[console_scripts]";
        } else if in_section && let Some((name, target)) = line.split_once('=') {
            scripts.push((name.trim().to_owned(), target.trim().to_owned()));
        }
    }
    scripts
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
    install_from_workspace_build(&venv_dir, &python)?;
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

#[cfg(test)]
mod tests {
    #[test]
    fn console_scripts_come_from_their_section_only() {
        let text = "[console_scripts]\nbazan = bazan._cli:main\n\n[gui_scripts]\nx = y:z\n";
        assert_eq!(
            super::console_scripts(text),
            vec![("bazan".to_owned(), "bazan._cli:main".to_owned())]
        );
    }
}
