//! The mutation sweep: every good file of the `external` corpus (read in place) and of
//! `testdata/writers`, damaged in fixed ways — cut short at a quarter, a half, three
//! quarters and one byte before the end; one byte inverted at a third, a half and nine bytes
//! before the end (where footers keep their lengths); eight bytes zeroed sixteen from the
//! end — each copy written to a temporary folder under the file's name and extension, then
//! mapped and read by its built-in locator.
//!
//! A case passes when every copy of its file is either read or refused with a one-line error
//! that names the copy, and no panic escaped the locators. Panics a library raised and the
//! locators' guard turned into an error are counted and listed (they print nothing: the
//! quiet hook), since checks before the library should refuse such bytes first.

use std::fs;
use std::path::Path;

use anyhow::Context;
use serde_json::Value;

use super::CaseResult;
use super::external::{clean_error, count_panics, try_file};

/// The damaged copies of `data`, each with how it was damaged (a file too short for a way
/// of damage gets no copy of that kind).
fn mutants(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let n = data.len();
    let mut out = Vec::new();
    for (name, len) in [
        ("cut at 1/4", n / 4),
        ("cut at 1/2", n / 2),
        ("cut at 3/4", n * 3 / 4),
        ("cut 1 byte", n.saturating_sub(1)),
    ] {
        if len < n {
            out.push((name.to_string(), data[..len].to_vec()));
        }
    }
    for (name, at) in [
        ("byte at 1/3 inverted", n / 3),
        ("byte at 1/2 inverted", n / 2 + 1),
        ("byte 9 from the end inverted", n.saturating_sub(9)),
    ] {
        if at < n {
            let mut d = data.to_vec();
            d[at] ^= 0xFF;
            out.push((name.to_string(), d));
        }
    }
    if n >= 16 {
        let mut d = data.to_vec();
        d[n - 16..n - 8].fill(0);
        out.push(("8 bytes zeroed 16 from the end".to_string(), d));
    }
    out
}

/// Sweeps one file: `name` is the name its copies get (its extension picks the locator).
fn sweep(
    tmp: &Path,
    path: &Path,
    name: &str,
    guarded: &mut Vec<String>,
    copies: &mut usize,
) -> anyhow::Result<()> {
    let data = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    for (how, bytes) in mutants(&data) {
        *copies += 1;
        let copy = tmp.join(name);
        fs::write(&copy, &bytes).with_context(|| format!("cannot write {}", copy.display()))?;
        let outcome = try_file(&copy, name).with_context(|| how.clone())?;
        if outcome.guarded_panics > 0 {
            guarded.push(format!("{name} ({how})"));
        }
        let errors = [
            outcome.index.as_ref().err().map(|e| e.to_string()),
            outcome
                .read
                .as_ref()
                .and_then(|r| r.as_ref().err())
                .map(|e| e.to_string()),
        ];
        for text in errors.into_iter().flatten() {
            clean_error(&text, &copy).with_context(|| how.clone())?;
        }
    }
    Ok(())
}

/// The last path segment of a `lake_path`, safe as a file name.
fn file_name(lake_path: &str) -> String {
    lake_path
        .rsplit('/')
        .next()
        .unwrap_or(lake_path)
        .to_string()
}

/// Runs the sweep over the `external` corpus of `conformance` and `testdata/writers`.
pub fn run(conformance: &Path) -> anyhow::Result<Vec<CaseResult>> {
    count_panics();
    let tmp = tempfile::tempdir().context("cannot make a temporary folder")?;
    let mut out = Vec::new();
    let mut guarded = Vec::new();
    let mut inputs: Vec<(std::path::PathBuf, String)> = Vec::new();
    let dir = conformance.join("external");
    let expected: Value = serde_json::from_slice(
        &fs::read(dir.join("expected.json")).context("cannot read external/expected.json")?,
    )
    .context("expected.json is not JSON")?;
    for file in expected["files"].as_array().into_iter().flatten() {
        let (Some(rel), Some(lake_path)) = (file["file"].as_str(), file["lake_path"].as_str())
        else {
            continue;
        };
        inputs.push((dir.join(rel), file_name(lake_path)));
    }
    let writers = crate::workspace_root().join("testdata").join("writers");
    let mut made: Vec<_> = fs::read_dir(&writers)
        .with_context(|| format!("cannot list {}", writers.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e != "json"))
        .collect();
    made.sort();
    for p in made {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some(name) = name {
            inputs.push((p, name));
        }
    }
    let mut copies = 0;
    for (path, name) in &inputs {
        out.push(CaseResult::from_result(
            format!("mutations {name}"),
            sweep(tmp.path(), path, name, &mut guarded, &mut copies),
        ));
    }
    println!(
        "mutations: {} files, {copies} damaged copies; {} copies raised a library panic that \
         the guard turned into an error{}",
        inputs.len(),
        guarded.len(),
        if guarded.is_empty() {
            String::new()
        } else {
            format!(": {}", guarded.join(", "))
        }
    );
    Ok(out)
}
