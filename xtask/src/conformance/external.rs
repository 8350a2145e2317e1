//! Conformance suite `external`: the real-world files of `../shared/conformance/external`
//! (the formats' own test data, read in place, never copied) against the independent readers'
//! answers in its `expected.json`. Good files (`strict`) must map with the expected handler,
//! row count and top-level columns, and `read` must return as many rows; `ambiguous` files
//! must not panic, and when they map, `read` must agree with the map; `loose` files must map;
//! damaged (`bad`) files must be refused with a one-line error naming the file, by the index
//! or by the read, and never panic. A per-class summary (format × status) is printed.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Once;

use anyhow::{Context, bail, ensure};
use lake_locators::{FileIndex, IndexOptions, Locator, ReadRequest, StatsColumns, registry};
use serde_json::Value;

use super::CaseResult;

thread_local! {
    /// Panics seen on this thread (guarded or not) since the last [`take_panics`].
    static PANICS: Cell<u32> = const { Cell::new(0) };
}

/// Counts every panic of this thread, then defers to the hook installed before (the quiet
/// hook of the locators stays silent for guarded panics).
pub(super) fn count_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        lake_locators::columnar::quiet_guarded_panics();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|p| p.set(p.get() + 1));
            previous(info);
        }));
    });
}

/// The files whose reading raised a panic that the locators' guard turned into an error
/// (the last resort: the checks before the libraries should have refused them).
static GUARDED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn take_panics() -> u32 {
    PANICS.with(|p| p.replace(0))
}

/// The start of the failures that are known gaps rather than wrong answers: a good file
/// refused with a clean one-line error that is not (yet) a documented unsupported feature,
/// or column names spelled otherwise than the reference reader spells them. The test in
/// `cargo test -p xtask` lists them and fails only on the others (a panic, a row count that
/// differs, a damaged file read as rows, an error without the file's name or on several
/// lines); `cargo xtask conformance external` fails on both.
pub const GAP: &str = "gap: ";

/// What mapping and reading one file gave.
pub(super) struct Outcome {
    /// The index, or the error.
    pub(super) index: Result<FileIndex, lake_locators::Error>,
    /// Rows `read` returned over the whole file, or its error (None when the index failed).
    pub(super) read: Option<Result<u64, lake_locators::Error>>,
    /// Panics raised inside the locators (turned into errors by their guard).
    pub(super) guarded_panics: u32,
}

/// Maps and reads the file at `path` with the built-in locator of `lake_path`'s extension.
pub(super) fn try_file(path: &Path, lake_path: &str) -> anyhow::Result<Outcome> {
    let ext = lake_path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    // TsFile's locator is the facade's (lake-locators knows no TsFile).
    let locator: std::sync::Arc<dyn Locator> = if ext == "tsfile" {
        std::sync::Arc::new(bazan::tsfile::TsFileLocator)
    } else {
        registry::for_extension(&ext).with_context(|| format!("no locator for .{ext}"))?
    };
    take_panics();
    let options = IndexOptions {
        stats: StatsColumns::None,
        ..IndexOptions::default()
    };
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let index = locator.index(path, &options);
        let read = index
            .as_ref()
            .ok()
            .map(|idx| read_all(&*locator, path, idx));
        (index, read)
    }));
    let panics = take_panics();
    if panics > 0 {
        GUARDED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(lake_path.to_string());
    }
    match caught {
        Ok((index, read)) => Ok(Outcome {
            index,
            read,
            guarded_panics: panics,
        }),
        Err(_) => bail!("a panic escaped the locator (not turned into an error)"),
    }
}

/// Reads every row of an indexed file and returns how many came back.
fn read_all(
    locator: &dyn Locator,
    path: &Path,
    index: &FileIndex,
) -> Result<u64, lake_locators::Error> {
    let request = ReadRequest {
        rows: 0..index.row_count,
        blocks: Some(&index.blocks),
        schema: Some(index.schema.clone()),
        projection: None,
        batch_size: 0,
    };
    let mut rows = 0;
    for batch in locator.read(path, &request)? {
        rows += batch?.num_rows() as u64;
    }
    Ok(rows)
}

/// An error text is one line and names the file.
pub(super) fn clean_error(text: &str, path: &Path) -> anyhow::Result<()> {
    ensure!(!text.contains('\n'), "error spans lines: {text:?}");
    ensure!(
        text.contains(&path.display().to_string()),
        "error does not name the file: {text}"
    );
    Ok(())
}

/// How a good file passed: read as the readers say, or refused as a documented unsupported
/// feature ([`lake_locators::Error::Unsupported`], one line naming the file), which the
/// issue's rule accepts ("fails for that file alone with an error naming the feature").
enum Verdict {
    Read,
    Refused,
}

/// A clean refusal of a good file, printed with its reason.
fn refused(text: &str, path: &Path) -> anyhow::Result<Verdict> {
    clean_error(text, path)?;
    println!("refused: {text}");
    Ok(Verdict::Refused)
}

fn check_good(dir: &Path, file: &Value) -> anyhow::Result<Verdict> {
    let path = dir.join(str_of(file, "file")?);
    let lake_path = str_of(file, "lake_path")?;
    let status = str_of(file, "status")?;
    if file["format"].as_str() == Some("tsfile") {
        return tsfile_index::dump::dump_path(&path)
            .map(|_| Verdict::Read)
            .context("the TsFile does not load");
    }
    let outcome = try_file(&path, lake_path)?;
    let index = match (&outcome.index, status) {
        (Ok(index), _) => index,
        (Err(e @ lake_locators::Error::Unsupported { .. }), _) | (Err(e), "ambiguous") => {
            return refused(&e.to_string(), &path);
        }
        (Err(e), _) => {
            clean_error(&e.to_string(), &path)?;
            bail!("{GAP}not mapped: {e}")
        }
    };
    if outcome.guarded_panics > 0 {
        bail!(
            "mapped, but after {} guarded panic(s)",
            outcome.guarded_panics
        );
    }
    let read = match outcome.read {
        Some(Ok(n)) => n,
        Some(Err(e @ lake_locators::Error::Unsupported { .. })) => {
            return refused(&e.to_string(), &path);
        }
        Some(Err(e)) if status == "ambiguous" => return refused(&e.to_string(), &path),
        Some(Err(e)) => bail!("mapped {} rows, read failed: {e}", index.row_count),
        None => bail!("no read"),
    };
    ensure!(
        read == index.row_count,
        "mapped {} rows, read returned {read}",
        index.row_count
    );
    if status != "strict" {
        return Ok(Verdict::Read);
    }
    let format = str_of(file, "format")?;
    ensure!(
        index.format == format,
        "handler {} instead of {format}",
        index.format
    );
    let rows = file["rows"].as_u64().context("strict file without rows")?;
    ensure!(
        index.row_count == rows,
        "{} rows, the readers say {rows}",
        index.row_count
    );
    if let Some(columns) = file["columns"].as_array() {
        let want: Vec<&str> = columns.iter().filter_map(Value::as_str).collect();
        let got: Vec<&str> = index
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        ensure!(
            got == want,
            "{GAP}columns {got:?}, the readers say {want:?}"
        );
    }
    Ok(Verdict::Read)
}

fn check_bad(dir: &Path, bad: &Value) -> anyhow::Result<()> {
    let path = dir.join(str_of(bad, "file")?);
    let outcome = try_file(&path, str_of(bad, "lake_path")?)?;
    // A file whose damage the reference reader tolerates, or that it cannot read for its
    // own reasons (not damage), may map when `read` agrees with the map (and with the
    // reference's row count when it has one).
    let reference_rows = bad["reference"]["read_rows"].as_u64();
    let reads_it = bad["reference_reads_it"].as_bool().unwrap_or(false)
        || bad["intent"].as_str() == Some("unreadable_by_reference");
    match (&outcome.index, &outcome.read) {
        (Err(e), _) => clean_error(&e.to_string(), &path),
        (Ok(_), Some(Err(e))) => clean_error(&e.to_string(), &path),
        (Ok(index), Some(Ok(n)))
            if reads_it && *n == index.row_count && reference_rows.is_none_or(|r| r == *n) =>
        {
            Ok(())
        }
        (Ok(index), Some(Ok(n))) => bail!(
            "must be refused ({}), but mapped {} rows and read {n}",
            bad["reference"]["error"].as_str().unwrap_or("damaged"),
            index.row_count
        ),
        (Ok(_), None) => bail!("no read"),
    }
}

/// Runs the suite over the conformance folder.
pub fn run(conformance: &Path) -> anyhow::Result<Vec<CaseResult>> {
    let dir = conformance.join("external");
    let expected: Value = serde_json::from_slice(
        &fs::read(dir.join("expected.json")).context("cannot read external/expected.json")?,
    )
    .context("expected.json is not JSON")?;
    count_panics();
    let mut out = Vec::new();
    // Per class: passed, of which refused as unsupported, total.
    let mut classes: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut tally = |class: String, result: &CaseResult, refused: bool| {
        let entry = classes.entry(class).or_default();
        entry.2 += 1;
        if result.failure.is_none() {
            entry.0 += 1;
            entry.1 += usize::from(refused);
        }
    };
    for file in array(&expected, "files")? {
        let class = format!(
            "{} {}",
            file["format"].as_str().unwrap_or("(none)"),
            file["status"].as_str().unwrap_or("?")
        );
        let verdict = check_good(&dir, file);
        let refused = matches!(verdict, Ok(Verdict::Refused));
        let result = CaseResult::from_result(
            format!("{class} {}", str_of(file, "file")?),
            verdict.map(|_| ()),
        );
        tally(class, &result, refused);
        out.push(result);
    }
    for bad in array(&expected, "bad")? {
        let lake_path = str_of(bad, "lake_path")?;
        let ext = lake_path.rsplit_once('.').map_or("", |(_, e)| e);
        let class = format!("{ext} bad");
        let result = CaseResult::from_result(
            format!("{class} {}", str_of(bad, "file")?),
            check_bad(&dir, bad),
        );
        tally(class, &result, false);
        out.push(result);
    }
    let guarded = std::mem::take(&mut *GUARDED.lock().unwrap_or_else(|p| p.into_inner()));
    println!(
        "external: {} file(s) raised a library panic that the guard turned into an error{}",
        guarded.len(),
        if guarded.is_empty() {
            String::new()
        } else {
            format!(": {}", guarded.join(", "))
        }
    );
    println!("external, per class: passed/total (of the passed, refused as unsupported)");
    for (class, (passed, refused, total)) in &classes {
        let note = if *refused > 0 {
            format!(" ({refused} refused)")
        } else {
            String::new()
        };
        println!("  {class:24} {passed}/{total}{note}");
    }
    Ok(out)
}

fn str_of<'a>(v: &'a Value, key: &str) -> anyhow::Result<&'a str> {
    v[key]
        .as_str()
        .with_context(|| format!("expected.json: missing string {key}"))
}

fn array<'a>(v: &'a Value, key: &str) -> anyhow::Result<&'a Vec<Value>> {
    v[key]
        .as_array()
        .with_context(|| format!("expected.json: missing array {key}"))
}
