//! Conformance suite `writers`: the files other projects' writers made in `testdata/writers`
//! (`cargo xtask fixtures writers`: fastavro, pyorc) against their reference reader's answer
//! in its `expected.json`. Every file must map with the handler of its format and the
//! reference's row count (and top-level columns when given), without a panic, guarded or
//! not; `read` must return as many rows, or refuse the file as a documented unsupported
//! feature with a one-line error naming it.

use std::fs;
use std::path::Path;

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::CaseResult;
use super::external::{clean_error, count_panics, try_file};

fn check(dir: &Path, file: &Value) -> anyhow::Result<()> {
    let name = file["file"]
        .as_str()
        .context("expected.json: file without a name")?;
    let path = dir.join(name);
    let format = file["format"].as_str().context("file without a format")?;
    let rows = file["rows"].as_u64().context("file without rows")?;
    let outcome = try_file(&path, name)?;
    ensure!(
        outcome.guarded_panics == 0,
        "{} library panic(s) turned into errors by the guard",
        outcome.guarded_panics
    );
    let index = match outcome.index {
        Ok(index) => index,
        Err(e) => bail!("not mapped: {e}"),
    };
    ensure!(
        index.format == format,
        "handler {} instead of {format}",
        index.format
    );
    ensure!(
        index.row_count == rows,
        "{} rows, {} says {rows}",
        index.row_count,
        file["reference"].as_str().unwrap_or("the reference")
    );
    if let Some(columns) = file["columns"].as_array() {
        let want: Vec<&str> = columns.iter().filter_map(Value::as_str).collect();
        let got: Vec<&str> = index
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        ensure!(got == want, "columns {got:?}, the reference says {want:?}");
    }
    match outcome.read {
        Some(Ok(n)) => ensure!(n == rows, "mapped {rows} rows, read returned {n}"),
        Some(Err(e @ lake_locators::Error::Unsupported { .. })) => {
            clean_error(&e.to_string(), &path)?;
            println!("refused: {e}");
        }
        Some(Err(e)) => bail!("mapped {rows} rows, read failed: {e}"),
        None => bail!("no read"),
    }
    Ok(())
}

/// Runs the suite over `testdata/writers` (the conformance folder is not used).
pub fn run(_conformance: &Path) -> anyhow::Result<Vec<CaseResult>> {
    let dir = crate::workspace_root().join("testdata/writers");
    let expected: Value = serde_json::from_slice(
        &fs::read(dir.join("expected.json"))
            .context("cannot read testdata/writers/expected.json")?,
    )
    .context("expected.json is not JSON")?;
    count_panics();
    let files = expected["files"]
        .as_array()
        .context("expected.json: missing array files")?;
    Ok(files
        .iter()
        .map(|file| {
            let case = format!(
                "{} {}",
                file["format"].as_str().unwrap_or("?"),
                file["file"].as_str().unwrap_or("?")
            );
            CaseResult::from_result(case, check(&dir, file))
        })
        .collect())
}
