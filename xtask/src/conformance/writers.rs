//! Conformance suite `writers`: the files other projects' writers made in `testdata/writers`
//! (`cargo xtask fixtures writers`: fastavro, pyorc, pyarrow, DuckDB, Python's csv and json,
//! the official TsFile writer; see `fixtures/writers.rs` for each file and its class of issue
//! 23) against their reference reader's answer in its `expected.json`:
//!
//! * a file with `rows` must map with the handler of its format and the reference's row
//!   count (and top-level columns when given), without a panic, guarded or not; `read` must
//!   return as many rows, or refuse the file as a documented unsupported feature with a
//!   one-line error naming it;
//! * a file with `encoding` (Latin-1 CSV) must be refused under the default UTF-8 with a
//!   one-line error naming the file, its row and byte offset, and map and scan the
//!   reference's rows in a lake created with that encoding (the facade `bazan`);
//! * a file with `cells` (row, column, value as the reference reads them) must scan those
//!   string cells through the facade (missing fields of ragged CSV rows are null);
//! * a TsFile is mapped and scanned in a lake through the facade (its handler lives there);
//! * a damaged file (`refused`: the reference reader's error) must be refused by the index
//!   or the read with a one-line error naming it, without a panic; and in a lake beside a
//!   good file, `bazan::create_map` must fail with a one-line error naming it, and with
//!   `skip_errors` map the good file and list the damaged one alone.
//!
//! Panics are counted on every thread (the facade maps on worker threads): one, even turned
//! into an error by the locators' guard, fails the file.
//!
//! Known gaps (a wrong answer of ours, listed in [`KNOWN_GAPS`] with the reason) fail with
//! the [`GAP`] prefix: `cargo xtask conformance writers` fails on them, the test lists them.
//! A listed file that passes fails the suite, so the list cannot go stale.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Once};

use anyhow::{Context, bail, ensure};
use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use serde_json::Value;

use super::CaseResult;
use super::external::{GAP, clean_error, count_panics, try_file};

/// Files whose check fails because of a known wrong answer of ours: (file, reason).
pub const KNOWN_GAPS: &[(&str, &str)] = &[];

/// Panics of any thread (the facade maps on worker threads) since the suite started.
static ALL_PANICS: AtomicU32 = AtomicU32::new(0);

/// Counts the panics of every thread, then defers to the hooks installed before.
fn count_all_panics() {
    static ONCE: Once = Once::new();
    count_panics();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            ALL_PANICS.fetch_add(1, Ordering::Relaxed);
            previous(info);
        }));
    });
}

/// Runs `f` (facade calls) and fails when it raised a panic on any thread, guarded or not.
fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> anyhow::Result<T> {
    let before = ALL_PANICS.load(Ordering::Relaxed);
    let out = f();
    let panics = ALL_PANICS.load(Ordering::Relaxed) - before;
    ensure!(panics == 0, "{what}: {panics} panic(s) inside the facade");
    Ok(out)
}

/// The good file beside each damaged one in its lake.
const GOOD_NAME: &str = "good.csv";

fn rows_of(file: &Value) -> anyhow::Result<u64> {
    file["rows"]
        .as_u64()
        .context("expected.json: file without rows")
}

/// A lake in a temporary folder holding copies of `files` (the fixtures stay untouched).
fn lake_of(files: &[(&Path, &str)]) -> anyhow::Result<tempfile::TempDir> {
    let root = tempfile::tempdir()?;
    for (from, name) in files {
        fs::copy(from, root.path().join(name))
            .with_context(|| format!("cannot copy {}", from.display()))?;
    }
    Ok(root)
}

/// Maps the lake at `root` through the facade and scans every row; returns the rows mapped
/// and the batches scanned.
fn map_and_scan(
    root: &Path,
    options: &bazan::CreateOptions,
) -> anyhow::Result<(u64, Vec<RecordBatch>)> {
    let created =
        no_panic("map create", || bazan::create_map(root, options))?.context("map create")?;
    let lake = Arc::new(created.lake);
    let total = lake.total_rows();
    let batches = no_panic("scan", || {
        lake.scan(0..total, &bazan::ScanOptions::default())
            .and_then(|r| r.collect_batches())
    })?
    .context("scan")?;
    Ok((total, batches))
}

fn rows_in(batches: &[RecordBatch]) -> u64 {
    batches.iter().map(|b| b.num_rows() as u64).sum()
}

/// The text of row `row` of string column `column` in the scanned batches (None: null).
fn cell(batches: &[RecordBatch], row: u64, column: &str) -> anyhow::Result<Option<String>> {
    let mut at = row;
    for batch in batches {
        let n = batch.num_rows() as u64;
        if at >= n {
            at -= n;
            continue;
        }
        let i = usize::try_from(at)?;
        let array = batch
            .column_by_name(column)
            .with_context(|| format!("no column {column:?} in the scan"))?;
        if array.is_null(i) {
            return Ok(None);
        }
        let text = if let Some(a) = array.as_string_opt::<i32>() {
            a.value(i).to_string()
        } else if let Some(a) = array.as_string_opt::<i64>() {
            a.value(i).to_string()
        } else if let Some(a) = array.as_string_view_opt() {
            a.value(i).to_string()
        } else {
            bail!("column {column:?} is {}, not a string", array.data_type())
        };
        return Ok(Some(text));
    }
    bail!("row {row} is past the scan")
}

/// The reference's cells (`cells`: row, column, value) against a scan of a lake holding the
/// file alone, created with `options`.
fn check_cells(
    path: &Path,
    name: &str,
    cells: &[Value],
    options: &bazan::CreateOptions,
) -> anyhow::Result<()> {
    let lake = lake_of(&[(path, name)])?;
    let (_, batches) = map_and_scan(lake.path(), options)?;
    for want in cells {
        let row = want["row"].as_u64().context("cell without a row")?;
        let column = want["column"].as_str().context("cell without a column")?;
        let got = cell(&batches, row, column)?;
        let value = want["value"].as_str();
        ensure!(
            got.as_deref() == value,
            "row {row} column {column}: {got:?}, the reference says {value:?}"
        );
    }
    Ok(())
}

fn options() -> bazan::CreateOptions {
    bazan::CreateOptions {
        threads: Some(1),
        ..bazan::CreateOptions::default()
    }
}

fn check_rows(path: &Path, name: &str, file: &Value) -> anyhow::Result<()> {
    let format = file["format"].as_str().context("file without a format")?;
    let rows = rows_of(file)?;
    let outcome = try_file(path, name)?;
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
            clean_error(&e.to_string(), path)?;
            println!("refused: {e}");
        }
        Some(Err(e)) => bail!("mapped {rows} rows, read failed: {e}"),
        None => bail!("no read"),
    }
    Ok(())
}

/// A Latin-1 CSV: refused as UTF-8 (row and byte offset), read in a Latin-1 lake.
fn check_encoding(path: &Path, name: &str, file: &Value, encoding: &str) -> anyhow::Result<()> {
    let rows = rows_of(file)?;
    let outcome = try_file(path, name)?;
    ensure!(outcome.guarded_panics == 0, "library panic(s) under UTF-8");
    let error = match (outcome.index, outcome.read) {
        (Err(e), _) | (Ok(_), Some(Err(e))) => e.to_string(),
        (Ok(index), _) => bail!(
            "{} says it is not UTF-8 ({}), but it mapped as UTF-8 with {} rows",
            file["reference"].as_str().unwrap_or("the reference"),
            file["utf8_refused"].as_str().unwrap_or("?"),
            index.row_count
        ),
    };
    clean_error(&error, path)?;
    ensure!(
        error.contains("row") && error.contains("byte"),
        "the UTF-8 error names no row and byte offset: {error}"
    );
    let lake = lake_of(&[(path, name)])?;
    let opts = bazan::CreateOptions {
        text_encoding: bazan::text_encoding(encoding)?,
        ..options()
    };
    let (mapped, batches) = map_and_scan(lake.path(), &opts)?;
    let scanned = rows_in(&batches);
    ensure!(
        mapped == rows && scanned == rows,
        "as {encoding}: mapped {mapped} and scanned {scanned} rows, the reference says {rows}"
    );
    Ok(())
}

/// A file whose handler lives in the facade (TsFile): mapped and scanned in a lake.
fn check_in_lake(path: &Path, name: &str, file: &Value) -> anyhow::Result<()> {
    let rows = rows_of(file)?;
    let lake = lake_of(&[(path, name)])?;
    let (mapped, batches) = map_and_scan(lake.path(), &options())?;
    let scanned = rows_in(&batches);
    ensure!(
        mapped == rows && scanned == rows,
        "mapped {mapped} and scanned {scanned} rows, {} says {rows}",
        file["reference"].as_str().unwrap_or("the reference")
    );
    Ok(())
}

/// A damaged file: refused alone, cleanly, and skipped with `skip_errors`.
fn check_refused(path: &Path, name: &str, good: &Path) -> anyhow::Result<()> {
    let outcome = try_file(path, name)?;
    ensure!(
        outcome.guarded_panics == 0,
        "{} library panic(s) turned into errors by the guard",
        outcome.guarded_panics
    );
    match (&outcome.index, &outcome.read) {
        (Err(e), _) | (Ok(_), Some(Err(e))) => clean_error(&e.to_string(), path)?,
        (Ok(index), Some(Ok(n))) => bail!(
            "the reference refuses it, but it mapped {} rows and read {n}",
            index.row_count
        ),
        (Ok(_), None) => bail!("no read"),
    }
    let lake = lake_of(&[(path, name), (good, GOOD_NAME)])?;
    match no_panic("map create", || bazan::create_map(lake.path(), &options()))? {
        Ok(created) => bail!(
            "map create of a lake holding it succeeded ({} rows)",
            created.lake.total_rows()
        ),
        Err(e) => {
            let text = e.to_string();
            ensure!(
                !text.contains('\n'),
                "map create error spans lines: {text:?}"
            );
            ensure!(
                text.contains(name),
                "map create error does not name the file: {text}"
            );
        }
    }
    let skipping = bazan::CreateOptions {
        skip_errors: true,
        ..options()
    };
    let created = no_panic("map create with skip_errors", || {
        bazan::create_map(lake.path(), &skipping)
    })?
    .context("with skip_errors")?;
    let failed: Vec<&str> = created.failures.iter().map(|f| f.path.as_str()).collect();
    ensure!(
        failed == [name],
        "with skip_errors the refused files are {failed:?}, not [{name:?}]"
    );
    ensure!(
        created.lake.total_files() == 1,
        "with skip_errors {} file(s) mapped instead of {GOOD_NAME} alone",
        created.lake.total_files()
    );
    Ok(())
}

fn check(dir: &Path, good: &Path, file: &Value) -> anyhow::Result<()> {
    let name = file["file"]
        .as_str()
        .context("expected.json: file without a name")?;
    let path = dir.join(name);
    if file.get("refused").is_some() {
        return check_refused(&path, name, good);
    }
    let mut options = options();
    if let Some(encoding) = file["encoding"].as_str() {
        check_encoding(&path, name, file, encoding)?;
        options.text_encoding = bazan::text_encoding(encoding)?;
    } else if file["format"].as_str() == Some("tsfile") {
        check_in_lake(&path, name, file)?;
    } else {
        check_rows(&path, name, file)?;
    }
    match file["cells"].as_array() {
        Some(cells) => check_cells(&path, name, cells, &options),
        None => Ok(()),
    }
}

/// A known gap's failure gets the [`GAP`] prefix and its reason; a listed file that passes
/// is a failure of its own.
fn with_gaps(name: &str, result: anyhow::Result<()>) -> anyhow::Result<()> {
    let Some((_, reason)) = KNOWN_GAPS.iter().find(|(file, _)| *file == name) else {
        return result;
    };
    match result {
        Ok(()) => bail!("listed in KNOWN_GAPS ({reason}) but passes: remove it from the list"),
        Err(e) => bail!("{GAP}{reason}: {e:#}"),
    }
}

/// Runs the suite over `testdata/writers` (the conformance folder is not used).
pub fn run(_conformance: &Path) -> anyhow::Result<Vec<CaseResult>> {
    let dir = crate::workspace_root().join("testdata/writers");
    let expected: Value = serde_json::from_slice(
        &fs::read(dir.join("expected.json"))
            .context("cannot read testdata/writers/expected.json")?,
    )
    .context("expected.json is not JSON")?;
    count_all_panics();
    let scratch = tempfile::tempdir()?;
    let good = scratch.path().join(GOOD_NAME);
    fs::write(&good, "id,name\n1,a\n2,b\n")?;
    let files = expected["files"]
        .as_array()
        .context("expected.json: missing array files")?;
    for note in expected["notes"].as_array().into_iter().flatten() {
        println!("writers: not made: {}", note.as_str().unwrap_or("?"));
    }
    Ok(files
        .iter()
        .map(|file| {
            let name = file["file"].as_str().unwrap_or("?");
            let classes: Vec<String> = file["classes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| c.to_string())
                .collect();
            let case = format!(
                "{} [{}] {name}",
                file["format"].as_str().unwrap_or("?"),
                classes.join(",")
            );
            CaseResult::from_result(case, with_gaps(name, check(&dir, &good, file)))
        })
        .collect())
}
