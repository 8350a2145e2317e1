//! The lake commands: `bazan map create|show`, `bazan locate` and `bazan slice`, over
//! `lake-map`. JSON shapes are those of `cli.md`; human output is aligned tables.

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use bazan::lake::{Created, parse_stats_option, stats_columns_to_json};
use bazan::{CreateOptions, Fingerprint, Lake, Progress, ProgressFn};

use crate::Outcome;
use crate::output::{Format, RowWriter, display_width};
use crate::read::quiet_broken_pipe;

/// Arguments of `bazan map`.
#[derive(Debug, clap::Args)]
pub(crate) struct MapArgs {
    #[command(subcommand)]
    command: MapCommand,
}

#[derive(Debug, clap::Subcommand)]
enum MapCommand {
    /// Build LAKE/.br_map.bazan (atomically).
    Create(CreateArgs),
    /// Print the map of a lake.
    Show(ShowArgs),
    /// Bring LAKE/.br_map.bazan up to date, indexing only new and changed files.
    Update(UpdateArgs),
}

/// Arguments of `bazan map update`.
#[derive(Debug, clap::Args)]
struct UpdateArgs {
    /// The lake root.
    lake: PathBuf,
    /// Leave unreadable files out of the map and list them at the end (exit 1).
    #[arg(long)]
    skip_errors: bool,
    /// Worker threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Print what changed as JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `bazan map create`.
#[derive(Debug, clap::Args)]
struct CreateArgs {
    /// The lake root.
    lake: PathBuf,
    /// Rows per checkpoint of row formats (> 0).
    #[arg(long, default_value_t = bazan::lake::DEFAULT_STRIDE)]
    stride: u64,
    /// Fingerprint mode: metadata (size + mtime) or blake3 (also the content digest).
    #[arg(long, default_value = "metadata")]
    fingerprint: String,
    /// Statistics: all, none, or a comma-separated list of columns.
    #[arg(long, default_value = "all")]
    stats: String,
    /// Text encoding of CSV, TSV, PSV and TXT files: utf-8 (bytes that are not UTF-8 are
    /// refused with row and byte offset) or latin-1 (every byte is a character). Stored in
    /// the map: later reads and `map update` use it too.
    #[arg(long, default_value = "utf-8", value_name = "ENCODING")]
    encoding: String,
    /// Leave unreadable files out of the map and list them at the end (exit 1).
    #[arg(long)]
    skip_errors: bool,
    /// Worker threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the map as `map show --json` does.
    #[arg(long)]
    json: bool,
}

/// Arguments of `bazan map show`.
#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// The lake root.
    lake: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// Arguments of `bazan locate`.
#[derive(Debug, clap::Args)]
pub(crate) struct LocateArgs {
    /// The lake root.
    lake: PathBuf,
    /// The global row.
    row: u64,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// Arguments of `bazan slice`.
#[derive(Debug, clap::Args)]
pub(crate) struct SliceArgs {
    /// The lake root.
    lake: PathBuf,
    /// First global row.
    #[arg(long)]
    start: u64,
    /// Rows (clamped at the end of the lake).
    #[arg(long)]
    len: u64,
    /// Columns to print, in this order (comma-separated).
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// The `--map` location of this run, if given.
static MAP_LOCATION: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// Records `--map` for the commands that load or write a map.
pub(crate) fn set_map_location(map: Option<String>) {
    let _ = MAP_LOCATION.set(map);
}

/// The `--map` location of this run.
pub(crate) fn map_location() -> Option<String> {
    MAP_LOCATION.get().cloned().flatten()
}

/// Loads the map of a lake, with a hint to build it.
pub(crate) fn load(lake: &Path) -> anyhow::Result<Lake> {
    let options = bazan::LoadOptions {
        map: map_location(),
        ..Default::default()
    };
    bazan::load_map_with(lake, &options).with_context(|| {
        format!(
            "cannot load the map of {} (build it with `bazan map create`)",
            lake.display()
        )
    })
}

/// `bazan map …`.
pub(crate) fn run_map(args: MapArgs) -> anyhow::Result<Outcome> {
    match args.command {
        MapCommand::Create(a) => create(a),
        MapCommand::Update(a) => update(a),
        MapCommand::Show(a) => {
            let lake = load(&a.lake)?;
            if a.json {
                print_json(&lake.to_json()?)?;
            } else {
                print_show(&lake)?;
            }
            Ok(Outcome::Ok)
        }
    }
}

fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

fn progress_bar(enabled: bool) -> Option<indicatif::ProgressBar> {
    if !enabled || !io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} indexing [{bar:30}] {bytes}/{total_bytes} {msg} ({eta})",
    )
    .map(|s| s.progress_chars("=> "));
    if let Ok(style) = style {
        bar.set_style(style);
    }
    Some(bar)
}

/// The progress callback drawing `bar`.
fn bar_progress(bar: &Option<indicatif::ProgressBar>) -> Option<ProgressFn> {
    bar.clone().map(|bar| {
        Arc::new(move |p: Progress| {
            bar.set_length(p.total_bytes);
            bar.set_position(p.done_bytes);
            bar.set_message(format!("{}/{} files", p.done_files, p.total_files));
        }) as ProgressFn
    })
}

/// A build that failed on one data file says how to map the others.
fn skip_hint(e: bazan::Error) -> anyhow::Error {
    use bazan::ErrorKind::{Corrupt, UnsupportedFormat};
    let file_failed = matches!(e.kind(), Corrupt | UnsupportedFormat) && e.path().is_some();
    if file_failed {
        anyhow::anyhow!("{e} (use --skip-errors to map the other files and list this one)")
    } else {
        e.into()
    }
}

/// Files left out with `--skip-errors`: one `error:` line each, then exit 1.
fn report_failures(failures: &[bazan::lake::FileFailure]) -> Outcome {
    for f in failures {
        eprintln!("error: skipped {}: {}", f.path, f.message);
    }
    if failures.is_empty() {
        Outcome::Ok
    } else {
        eprintln!(
            "{} file(s) could not be indexed and are not in the map",
            failures.len()
        );
        Outcome::Problem
    }
}

fn update(a: UpdateArgs) -> anyhow::Result<Outcome> {
    let bar = progress_bar(true);
    let options = CreateOptions {
        skip_errors: a.skip_errors,
        threads: a.threads,
        progress: bar_progress(&bar),
        map: map_location(),
        ..CreateOptions::default()
    };
    let report = bazan::update_map(&a.lake, &options);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let u = report.map_err(skip_hint)?;
    let map = u.map.map();
    if a.json {
        print_json(&u.to_json())?;
    } else {
        let mut out = io::stdout().lock();
        writeln!(
            out,
            "map {} {} in {:.3} s: {} added, {} modified, {} removed, {} kept",
            u.map.map_path().display(),
            if u.created { "created" } else { "updated" },
            u.elapsed.as_secs_f64(),
            u.added.len(),
            u.modified.len(),
            u.removed.len(),
            u.kept
        )?;
        if !u.created {
            let lists: [(&str, &Vec<String>); 3] = [
                ("added", &u.added),
                ("modified", &u.modified),
                ("removed", &u.removed),
            ];
            for (what, paths) in lists {
                for p in paths {
                    writeln!(out, "{what:<9} {p}")?;
                }
            }
        }
        writeln!(
            out,
            "{} files, {} rows, {} bytes",
            map.total_files(),
            map.total_rows(),
            map.total_bytes()
        )?;
    }
    Ok(report_failures(&u.failures))
}

fn create(a: CreateArgs) -> anyhow::Result<Outcome> {
    let bar = progress_bar(true);
    let progress = bar_progress(&bar);
    let options = CreateOptions {
        stride: a.stride,
        fingerprint: a.fingerprint.parse::<Fingerprint>()?,
        stats: parse_stats_option(&a.stats),
        text_encoding: bazan::text_encoding(&a.encoding)?,
        skip_errors: a.skip_errors,
        threads: a.threads,
        progress,
        map: map_location(),
        ..CreateOptions::default()
    };
    let report = bazan::create_map(&a.lake, &options);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let report = report.map_err(skip_hint)?;
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    if a.json {
        print_json(&report.to_json()?)?;
    } else {
        print_summary(&report)?;
    }
    Ok(report_failures(&report.failures))
}

/// Right-aligns numeric columns and left-aligns the rest.
fn table(header: &[&str], rows: &[Vec<String>], numeric: &[bool]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| display_width(h)).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(display_width(c));
        }
    }
    let line = |cells: &[String]| -> String {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .zip(numeric)
            .map(|((c, &w), &num)| {
                let pad = " ".repeat(w.saturating_sub(display_width(c)));
                if num {
                    format!("{pad}{c}")
                } else {
                    format!("{c}{pad}")
                }
            })
            .collect();
        parts.join("  ").trim_end().to_string()
    };
    let mut out = line(&header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

fn print_summary(report: &Created) -> anyhow::Result<()> {
    let map = report.lake.map();
    let mut per_format: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
    for e in map.entries() {
        let t = per_format.entry(e.format).or_default();
        t.0 += 1;
        t.1 += e.row_count;
        t.2 += e.size_bytes;
    }
    let mut rows: Vec<Vec<String>> = per_format
        .iter()
        .map(|(f, (n, r, b))| vec![f.to_string(), n.to_string(), r.to_string(), b.to_string()])
        .collect();
    rows.push(vec![
        "total".into(),
        map.total_files().to_string(),
        map.total_rows().to_string(),
        map.total_bytes().to_string(),
    ]);
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "map written to {} in {:.3} s",
        report.lake.map_path().display(),
        report.elapsed.as_secs_f64()
    )?;
    write!(
        out,
        "{}",
        table(
            &["format", "files", "rows", "bytes"],
            &rows,
            &[false, true, true, true]
        )
    )?;
    Ok(())
}

fn print_show(lake: &Lake) -> anyhow::Result<()> {
    let map = lake.map();
    let c = map.config();
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "map schema {}, stride {}, fingerprint {}, stats {}",
        map.map_schema(),
        c.checkpoint_stride_rows,
        c.fingerprint,
        stats_columns_to_json(&c.stats_columns)
    )?;
    if c.text_encoding != bazan::TextEncoding::Utf8 {
        writeln!(out, "text encoding {}", c.text_encoding)?;
    }
    writeln!(
        out,
        "{} files, {} rows, {} bytes",
        map.total_files(),
        map.total_rows(),
        map.total_bytes()
    )?;
    let rows: Vec<Vec<String>> = map
        .entries()
        .map(|e| {
            let blocks = map.blocks(e.index).map(|b| b.len()).unwrap_or(0);
            vec![
                e.path.to_string(),
                e.format.to_string(),
                e.row_count.to_string(),
                e.first_global_row.to_string(),
                e.size_bytes.to_string(),
                blocks.to_string(),
            ]
        })
        .collect();
    write!(
        out,
        "{}",
        table(
            &["path", "format", "rows", "first_row", "bytes", "blocks"],
            &rows,
            &[false, false, true, true, true, true]
        )
    )?;
    Ok(())
}

/// `bazan locate`.
pub(crate) fn run_locate(a: LocateArgs) -> anyhow::Result<Outcome> {
    let lake = load(&a.lake)?;
    if a.json {
        print_json(&lake.locate_json(a.row)?)?;
        return Ok(Outcome::Ok);
    }
    let l = lake.locate_row(a.row)?;
    let block = match &l.block {
        Some(b) => format!(
            "{} (rows {}..{}, first byte {})",
            b.ordinal,
            b.first_row,
            b.first_row + b.row_count,
            b.first_byte.map_or("-".to_string(), |v| v.to_string())
        ),
        None => "- (no locators)".to_string(),
    };
    let rows = vec![
        vec!["global_row".to_string(), l.global_row.to_string()],
        vec!["path".to_string(), l.path.clone()],
        vec!["format".to_string(), l.format.clone()],
        vec!["local_row".to_string(), l.local_row.to_string()],
        vec!["block".to_string(), block],
    ];
    let text = table(&["field", "value"], &rows, &[false, false]);
    // The header line is noise for a key/value listing.
    let body: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    print!("{body}");
    Ok(Outcome::Ok)
}

/// `bazan slice`.
pub(crate) fn run_slice(a: SliceArgs) -> anyhow::Result<Outcome> {
    let lake = load(&a.lake)?;
    let stdout = io::stdout().lock();
    let mut writer = RowWriter::new(a.format, io::BufWriter::new(stdout));
    let mut failure = None;
    'segments: for segment in lake.plan_slice(a.start, a.len) {
        // Rows of a file are written only once all of them were read, so that a file that
        // fails half-way prints nothing.
        let batches = lake
            .read_segment(&segment, a.columns.as_deref())
            .and_then(|it| {
                it.collect::<Result<Vec<_>, _>>()
                    .map_err(bazan::Error::from)
            });
        match batches {
            Ok(batches) => {
                for b in &batches {
                    if let Err(e) = writer.write_batch(b) {
                        return quiet_broken_pipe(e);
                    }
                }
            }
            Err(err) => {
                failure = Some(err);
                break 'segments;
            }
        }
    }
    match writer.finish().and_then(|mut out| out.flush()) {
        Ok(()) => {}
        Err(e) => return quiet_broken_pipe(e),
    }
    match failure {
        Some(err) => Err(err.into()),
        None => Ok(Outcome::Ok),
    }
}
